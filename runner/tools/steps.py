"""One step of a build: its command's output appended to the build's log,
and on failure an error naming the step, the log and its last lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
    print(f"{name}: {step}", flush=True)
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        handle = stdin.open() if stdin else None
        try:
            code = subprocess.run(
                argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=handle, env=env
            ).returncode
        except OSError as exc:
            out.write(f"{exc}\n")
            code = 127
        finally:
            if handle:
                handle.close()
    if code != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise PrerequisiteError(
            f"{name}: {step} failed (exit {code}); see {log}:\n{tail}"
            + (f"\n{hint}" if hint else "")
        )
