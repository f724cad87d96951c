"""Run Shadow on a generated run directory: the Shadow backend's execution
(runner.execute.execution)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from runner.errors import RunError
from runner.execute.child_cpu import ChildCpuSampler
from runner.execute.execution import Ran
from runner.execute.local.procs import die_with_parent, register, unregister
from runner.execute.placement import Placement, choose_placement
from runner.layout import SHADOW_DATA
from runner.manifest import read_run, record_cpu_profile
from runner.network.backends import Backend
from runner.network.capacity import experiment_size, machine_memory_mib
from runner.spec.model import Spec

_PROGRESS = re.compile(r"Progress:\s+(\d+)%")


def _failure_summary(log: Path, limit: int = 6) -> str:
    """The lines of shadow.log that say which processes failed, if any."""
    if not log.is_file():
        return ""
    hits = []
    with log.open(errors="replace") as handle:
        for line in handle:
            if "ERROR" in line or "exited with" in line or "killed by signal" in line:
                hits.append(line.rstrip())
    return "\n".join(hits[-limit:])


def _start_child(cpus: frozenset[int] | None) -> None:
    """For ``preexec_fn``: die with the runner; keep to ``cpus`` if given."""
    die_with_parent()
    if cpus:
        os.sched_setaffinity(0, cpus)


def run_shadow(
    run_dir: Path,
    shadow: str,
    parallelism: int,
    on_progress: Callable[[int], None] | None = None,
    cpus: frozenset[int] | None = None,
    pin: bool = True,
) -> tuple[float, dict[str, object]]:
    """Simulate ``run_dir``; return the CPU seconds Shadow and the processes
    it ran used (user and system), and where they went (Shadow's own
    threads, each host's programs: runner.execute.child_cpu). RunError if
    Shadow fails or a process misbehaves.

    ``cpus``: the CPUs this Shadow may use (it pins its threads inside them);
    ``pin`` False turns Shadow's CPU pinning off.

    Shadow's stdout goes to ``shadow.log`` and its stderr (progress, errors)
    to ``shadow.stderr``. Shadow runs in its own process group so that an
    interrupt stops it and every process it started.
    """
    data = run_dir / SHADOW_DATA
    if data.exists():  # left by an interrupted attempt; Shadow refuses to overwrite
        shutil.rmtree(data)
    log = run_dir / "shadow.log"
    with log.open("w") as out, (run_dir / "shadow.stderr").open("w") as err:
        proc = subprocess.Popen(
            [
                shadow,
                "--parallelism",
                str(parallelism),
                "--use-cpu-pinning",
                "true" if pin else "false",
                "shadow.yaml",
            ],
            cwd=run_dir,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: _start_child(cpus),
        )
        register(proc)
        sampler = ChildCpuSampler(proc.pid).start()
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                err.write(line)
                match = _PROGRESS.search(line)
                if match and on_progress is not None:
                    on_progress(int(match.group(1)))
            # wait4, not wait: the exit's resource usage counts Shadow's
            # threads and every process it ran and reaped.
            _, status, usage = os.wait4(proc.pid, 0)
            code = os.waitstatus_to_exitcode(status)
            proc.returncode = code
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            profile = sampler.stop()
            unregister(proc)
    if code != 0:
        summary = _failure_summary(log)
        raise RunError(
            f"shadow exited with status {code} (see {log})" + (f":\n{summary}" if summary else "")
        )
    cpu_s = round(usage.ru_utime + usage.ru_stime, 3)
    return cpu_s, profile.as_record(cpu_s)


class ShadowExecution:
    """Several simulations at once, each on CPUs of its own, as many as the
    cores and the memory allow."""

    def placement(
        self,
        spec: Spec,
        backend: Backend,
        runs: int,
        jobs: int | None,
        threads: int | None,
        pinning: str,
    ) -> Placement:
        size = experiment_size(spec, backend, 1)
        return choose_placement(
            runs,
            jobs=jobs,
            threads=threads,
            pinning=pinning,
            run_mib=size.run_mib,
            memory_mib=machine_memory_mib(),
            hosts=size.hosts,
        )

    def run(
        self,
        run_dir: Path,
        programs: dict[str, str],
        measure_s: float,
        threads: int,
        phase: Callable[[str], None],
        on_progress: Callable[[int], None],
        cpus: frozenset[int] | None,
        pin: bool,
    ) -> Ran:
        """Simulate the run (its shadow.yaml says for how long); its CPU is
        Shadow's and that of every process it ran."""
        phase("simulate")
        started = time.monotonic()
        cpu_s, profile = run_shadow(run_dir, programs["shadow"], threads, on_progress, cpus, pin)
        record = record_cpu_profile(read_run(run_dir), profile)
        return Ran(record, cpu_s, time.monotonic() - started, 0.0)
