"""The CPU profile of a simulation: Shadow's own threads and each host's
programs, sampled from /proc (runner.execute.child_cpu)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from runner.execute.child_cpu import ChildCpuSampler, read_stat

TICK = os.sysconf("SC_CLK_TCK")
SHADOW = 4000


def _process(proc: Path, pid: int, ppid: int, ticks: tuple[int, int], comm: str, cwd: Path) -> None:
    """A fake /proc entry: stat with its parent and CPU ticks, comm, cwd."""
    entry = proc / str(pid)
    entry.mkdir(parents=True)
    # Fields after the command: state, ppid, then 9 more before utime and stime.
    rest = ["S", str(ppid)] + ["0"] * 9 + [str(ticks[0]), str(ticks[1])] + ["0"] * 10
    (entry / "stat").write_text(f"{pid} ({comm}) " + " ".join(rest) + "\n")
    (entry / "comm").write_text(comm + "\n")
    (entry / "cwd").symlink_to(cwd)


def test_a_sample_charges_each_child_to_its_host_and_program(tmp_path: Path) -> None:
    proc, hosts = tmp_path / "proc", tmp_path / "run" / "shadow.data" / "hosts"
    for host in ("relay1", "client1"):
        (hosts / host).mkdir(parents=True)
    _process(proc, SHADOW, os.getpid(), (3 * TICK, 5 * TICK), "shadow", tmp_path / "run")
    _process(proc, 4001, SHADOW, (2 * TICK, TICK), "tor", hosts / "relay1")
    _process(proc, 4002, SHADOW, (TICK, 0), "tor", hosts / "client1")
    _process(proc, 4003, SHADOW, (TICK, TICK), "tgen", hosts / "client1")
    # Not Shadow's child, and a child of Shadow outside a host's directory.
    _process(proc, 4004, 1, (9 * TICK, 0), "tor", hosts / "relay1")
    _process(proc, 4005, SHADOW, (9 * TICK, 0), "helper", tmp_path)
    # A command name with a space and a bracket in it is read whole.
    _process(proc, 4006, SHADOW, (TICK, 0), "odd) name", hosts / "relay1")
    sampler = ChildCpuSampler(SHADOW, proc=proc)
    sampler.sample()
    profile = sampler.stop()
    assert (profile.shadow_user_s, profile.shadow_system_s) == (3.0, 5.0)
    assert profile.programs == {
        "relay1": {"tor": 3.0, "odd) name": 1.0},
        "client1": {"tor": 1.0, "tgen": 2.0},
    }
    record = profile.as_record(total_s=20.0)
    assert record["not_sampled_s"] == 20.0 - 8.0 - 7.0
    assert list(record["programs_s"]) == ["client1", "relay1"]  # type: ignore[call-overload]


def test_a_process_that_is_gone_reads_as_none(tmp_path: Path) -> None:
    assert read_stat(999_999_999, tmp_path) is None


def test_a_running_child_is_sampled_while_it_works(tmp_path: Path) -> None:
    host = tmp_path / "hosts" / "relay1"
    host.mkdir(parents=True)
    # Half a second of CPU, then it waits to be stopped, as Shadow's programs do.
    busy = "end = time.process_time() + 0.5\nwhile time.process_time() < end: pass\n"
    code = "import time\n" + busy + "print(flush=True)\ntime.sleep(30)"
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=host, stdout=subprocess.PIPE, text=True
    )
    sampler = ChildCpuSampler(os.getpid(), interval=0.05).start()
    try:
        assert child.stdout is not None
        child.stdout.readline()  # its work is done
        time.sleep(0.3)  # a few samples since
    finally:
        profile = sampler.stop()
        child.kill()
        child.wait()
    (seconds,) = profile.programs["relay1"].values()
    assert seconds >= 0.45
