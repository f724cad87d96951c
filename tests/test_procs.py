"""A runner that was interrupted starts no process after: one started
while the interrupt was stopping the others is stopped as it starts."""

from __future__ import annotations

import subprocess

from runner.execute.local.procs import allow_starts, kill_all, register, unregister


def test_a_process_started_after_kill_all_is_stopped_until_starts_are_allowed() -> None:
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(["sleep", "30"])
        started.append(proc)
        register(proc)
        return proc

    try:
        running = start()
        kill_all()
        assert running.poll() is not None
        late = start()  # a run that was generating when the interrupt came
        assert late.poll() is not None
        allow_starts()
        assert start().poll() is None
    finally:
        allow_starts()
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            unregister(proc)
