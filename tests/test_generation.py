"""Networks generated in worker processes: runs at once generate in
parallel, and each starts simulating as soon as its own network exists."""

from __future__ import annotations

import os
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.execute import run_all as run_module
from runner.execute.generation import Generators
from runner.execute.run_all import run_experiment
from runner.layout import Layout
from runner.network.backends import SHADOW
from runner.network.generate import Tools, generate_run
from runner.tools.prereqs import find
from tests.conftest import needs_tor, read_manifest
from tests.specs import ci_small_data, spec_of

# Long beside a run's own generation (about 1 s, several on a loaded machine),
# so that the runs beside the slow one finish theirs while it still waits.
SLOW_S = 8.0


def busy_target(seconds: float) -> Path:
    """Holds the interpreter for ``seconds``, as deriving keys does."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return Path(str(os.getpid()))


def slow_first_run(*args: Any) -> Path:
    """generate_run, SLOW_S seconds late for conflux-off/seed-1."""
    variant, seed = args[1], args[2]
    if (variant.name, seed) == ("conflux-off", 1):
        time.sleep(SLOW_S)
    return generate_run(*args)


def test_runs_generate_in_worker_processes_of_their_own() -> None:
    with Generators(2, target=busy_target) as generate, ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: generate(0.5), range(2)))
    pids = {g.pid for g in done}
    assert os.getpid() not in pids
    assert len(pids) == 2  # at once, in two workers
    for g in done:
        assert 0.4 <= g.cpu_s < 5  # the worker's own CPU time, measured there


RECORDING_SHADOW = """#!/bin/sh
# Stands in for Shadow: notes when it started, in the run's directory.
date +%s.%N > simulate-started
echo "Progress: 100% — simulated: 00:15:00.000/00:15:00" >&2
mkdir -p shadow.data/hosts
"""


@needs_tor
def test_no_run_waits_for_anothers_generation(
    ci_small_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(RECORDING_SHADOW)
    shadow.chmod(shadow.stat().st_mode | stat.S_IEXEC)
    paths = {n: str(find(n).path) for n in ("tor", "tor-gencert", "faketime")}
    paths.update(shadow=str(shadow), tgen="/usr/bin/true", oniontrace="/usr/bin/true")
    spec = spec_of(ci_small_data(ci_small_text))
    layout = Layout(tmp_path / "results", spec.name)
    monkeypatch.setattr(
        run_module, "Generators", lambda jobs: Generators(jobs, target=slow_first_run)
    )
    outcomes = run_experiment(spec, layout, [], 2, Tools(paths, {}), SHADOW)
    assert {o.status for o in outcomes} == {"complete"}

    def started(variant: str, seed: int) -> float:
        run_dir = layout.run_dir(variant, seed)
        found = list(run_dir.rglob("simulate-started"))
        assert found, f"{variant}/seed-{seed}: the stand-in never ran"
        return float(found[0].read_text())

    slow = started("conflux-off", 1)
    others = [started("conflux-off", 2), started("conflux-on", 1), started("conflux-on", 2)]
    # The runs beside the slow one simulated while it was still generating.
    assert sum(t < slow - 1.0 for t in others) >= 2
    generated = read_manifest(layout.run_dir("conflux-off", 2))["cpu_phases_s"]["generate"]
    assert 0 < generated < SLOW_S  # its own CPU, not the slow one's wait
    # Shadow's options that cut its CPU and change no simulated byte.
    config = yaml.safe_load((layout.run_dir("conflux-off", 2) / "shadow.yaml").read_text())
    assert config["experimental"] == {"use_worker_spinning": False, "use_memory_manager": True}


SCRIPT = """
from pathlib import Path
from runner.execute.generation import Generators
print("top of the script")
with Generators(1, target=Path) as generate:
    print("generated", generate("somewhere").run_dir)
"""


@pytest.mark.parametrize("how", ["stdin", "script"])
def test_workers_never_rerun_the_callers_script(how: str, tmp_path: Path) -> None:
    """A script without a main guard, or one read from standard input, runs
    its top once: the workers import the generator, not the caller."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    argv = [sys.executable, "-"] if how == "stdin" else [sys.executable, str(script)]
    proc = subprocess.run(
        argv,
        input=SCRIPT if how == "stdin" else None,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["top of the script", "generated somewhere"]
