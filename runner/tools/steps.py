"""One step of a build: its command's output appended to the build's log,
and on failure an error naming the step, the log and its last lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

from runner.console import TERMINAL
from runner.errors import PrerequisiteError


def logged_step(
    name: str,
    step: str,
    argv: list[str],
    cwd: Path,
    log: Path,
    env: dict[str, str] | None = None,
    stdin: Path | None = None,
    hint: str = "",
) -> None:
    TERMINAL.out(f"{name}: {step}")
    try:
        code = _run_into(argv, cwd, log, env, stdin)
    except FileNotFoundError as exc:
        # The log's folder went away under the build (it was deleted by hand,
        # or by a build that did not wait for the lock).
        gone = ""
        if exc.filename == str(log):
            gone = f" (was {log.parent} deleted while the build ran?)"
        raise PrerequisiteError(f"{name}: {step}: {exc.strerror}: {exc.filename}{gone}") from None
    if code != 0:
        raise PrerequisiteError(
            f"{name}: {step} failed (exit {code}); see {log}:\n{_tail(log)}"
            + (f"\n{hint}" if hint else "")
        )


def _run_into(
    argv: list[str], cwd: Path, log: Path, env: dict[str, str] | None, stdin: Path | None
) -> int:
    """Run ``argv`` with its output appended to ``log``; its exit code (127: not started)."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        handle = stdin.open() if stdin else None
        try:
            return subprocess.run(
                argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=handle, env=env
            ).returncode
        except OSError as exc:
            out.write(f"{exc}\n")
            return 127
        finally:
            if handle:
                handle.close()


def _tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-15:])
    except OSError as exc:
        return f"(the log cannot be read: {exc})"
