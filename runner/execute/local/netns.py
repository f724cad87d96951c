"""Run a local network in a network namespace of its own.

tor binds no outbound connection to a loopback address, so on the shared
loopback every host reaches relays from 127.0.0.1 and a relay cannot tell
clients apart. In a namespace of its own the network gets private addresses
(10.0.0.0/8) on a loopback interface nobody else sees: each tor binds its
connections to its own address (``OutboundBindAddress``), as hosts on a
real network would, and nothing in the namespace can reach anything outside
it. The whole run (processes, control-port waits, CPU readings) happens in a
child runner inside the namespace; it reports progress and its result on
stdout, one line each.

    python -m runner.execute.local.netns REQUEST_JSON
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from runner.errors import RunError
from runner.execute.local.processes import LocalRan
from runner.execute.local.procs import die_with_parent, register, unregister
from runner.manifest import RunRecord, read_run
from runner.network.backends import unshare_command

REQUEST = "local-run.json"
CONNECTIONS = "connections.txt"  # TCP connections at the end of the measured period


def run_in_namespace(
    run_dir: Path,
    record: RunRecord,
    programs: dict[str, str],
    measure_s: float,
    on_progress: Callable[[int], None] | None = None,
) -> LocalRan:
    """``run_local`` inside a new network namespace (``record``: as
    run_local takes it; the child reads the run's own)."""
    request = run_dir / REQUEST
    # The child reads the run's record itself: nothing writes it while it runs.
    request.write_text(json.dumps({"programs": programs, "measure_s": measure_s}))
    cmd = [*unshare_command(), sys.executable, "-m", "runner.execute.local.netns", str(request)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=die_with_parent,
    )
    register(proc)
    result: dict[str, Any] | None = None
    error = ""
    try:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            kind, _, body = line.rstrip("\n").partition(" ")
            if kind == "progress" and on_progress is not None:
                on_progress(int(body))
            elif kind == "result":
                result = json.loads(body)
            elif kind == "error":
                error = json.loads(body)
        stderr = proc.stderr.read()
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()
        unregister(proc)
        request.unlink(missing_ok=True)
    if error:
        raise RunError(error)
    if code != 0 or result is None:
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        raise RunError(f"the run in its own network namespace failed (status {code}):\n{tail}")
    return LocalRan(**result)


def _setup_loopback(addresses: list[str]) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for address in addresses:
        subprocess.run(["ip", "addr", "add", f"{address}/32", "dev", "lo"], check=True)


def _record_connections(path: Path) -> None:
    """Who is connected to whom, for checking addresses after the run."""
    try:
        listing = subprocess.run(
            ["ss", "-tnH", "state", "established"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return
    path.write_text(listing)


def main(request_path: str) -> int:
    from runner.execute.local import processes as local_run

    die_with_parent()  # unshare's credentials change may have cleared it
    request = json.loads(Path(request_path).read_text())
    run_dir = Path(request_path).parent
    record = read_run(run_dir)

    def stop(signum: int, frame: object) -> None:
        local_run.cancel.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        _setup_loopback([info["ip"] for info in record.hosts.values()])
        ran = local_run.run_local(
            run_dir,
            record,
            request["programs"],
            request["measure_s"],
            lambda pct: print(f"progress {pct}", flush=True),
            before_stop=lambda: _record_connections(run_dir / CONNECTIONS),
        )
    except (RunError, OSError, subprocess.CalledProcessError) as exc:
        print(f"error {json.dumps(str(exc))}", flush=True)
        return 1
    print(f"result {json.dumps(asdict(ran))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
