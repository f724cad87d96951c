"""Experiments on real cluster engines: a Dask scheduler with worker processes,
and a single-node Slurm whose jobs are Dask workers (dask-jobqueue).

The first tests use stand-ins for Shadow, tgen and oniontrace (real tor
generates the networks), so they run wherever tor, dask and, for Slurm,
slurm-wlm and munge are installed; the last run ci-small with real Shadow
through both engines and compare the tables.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from runner.execute.placement import OFF, OWN_CPUS
from runner.execute.run_all import RunOutcome, run_experiment
from runner.layout import Layout
from runner.network.backends import SHADOW
from runner.spec.model import Spec
from tests.cluster_fixtures import (
    DaskCluster,
    processes_mentioning,
    stand_ins,
    start_dask,
    start_slurm,
)
from tests.conftest import CI_SMALL, ROOT, needs_shadow, needs_tor, read_manifest
from tests.specs import ci_small as ci_small_spec

pytest.importorskip("distributed", reason="dask.distributed is not installed (make setup)")

from runner.execute.cluster.dask import DaskExecutor  # noqa: E402
from runner.execute.cluster.options import SlurmOptions  # noqa: E402
from runner.execute.cluster.slurm import SlurmExecutor  # noqa: E402


@pytest.fixture
def stand_in_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = stand_ins(tmp_path / "stand-ins")
    for name, value in env.items():
        monkeypatch.setenv(name, value)  # Slurm jobs inherit the client's environment
    return env


@pytest.fixture
def dask_cluster(tmp_path: Path, stand_in_env: dict[str, str]) -> Iterator[DaskCluster]:
    yield from start_dask(tmp_path / "dask", stand_in_env)


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    # Short: a UNIX socket path has a length limit.
    directory = Path(f"/tmp/tornet-slurm-{os.getpid()}")
    try:
        for env in start_slurm(directory):
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            yield env
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def ci_small(seeds: tuple[int, ...] = (1, 2), variants: tuple[str, ...] = ()) -> Spec:
    spec = ci_small_spec()
    kept = tuple(v for v in spec.variants if not variants or v.name in variants)
    return replace(spec, seeds=seeds, variants=kept)


def statuses(outcomes: list[RunOutcome]) -> dict[tuple[str, int], str]:
    return {(o.variant, o.seed): o.status for o in outcomes}


@needs_tor
@pytest.mark.slow
@pytest.mark.simulation(
    "a Dask cluster of 2 workers on this machine: ci-small's 4 runs with a stand-in for Shadow, "
    "twice"
)
def test_dask_runs_every_run_reports_failures_and_skips_complete_runs(
    dask_cluster: DaskCluster,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    spec = ci_small()
    layout = Layout(tmp_path / "results", spec.name)
    executor = DaskExecutor(dask_cluster.address, OWN_CPUS)
    outcomes = run_experiment(spec, layout, [], backend=SHADOW, executor=executor)
    assert statuses(outcomes) == {
        ("conflux-off", 1): "complete",
        ("conflux-off", 2): "complete",
        ("conflux-on", 1): "complete",
        ("conflux-on", 2): "complete",
    }
    placements = [read_manifest(o.run_dir)["placement"] for o in outcomes]
    assert all(p["node"] and p["threads"] >= 1 for p in placements)
    cores = len(os.sched_getaffinity(0))
    if cores >= 2:
        # The two workers share this host: each takes half its CPUs, and pins inside.
        # (Dask may hand every run to one worker; the blocks are what matters.)
        blocks = {tuple(p["cpus"]) for p in placements}
        assert 1 <= len(blocks) <= 2 and all(len(b) == cores // 2 for b in blocks)
        assert len(set().union(*blocks)) == sum(len(b) for b in blocks)  # disjoint
        assert {p["cpu_pinning"] for p in placements} == {True}
    err = capfd.readouterr().err
    # The workers' phases and Shadow's percentages reach the client's display.
    # (A percentage shows whenever a status line is printed while it is set.)
    assert "conflux-on/seed-2 simulate" in err and re.search(r"simulate (10|100)%", err)
    # Each run's end; the last leaves no status line (the caller's last line ends the runs).
    assert all(f"{o.variant}/seed-{o.seed}: done" in err for o in outcomes)
    assert "4/4 runs finished" not in err

    again = run_experiment(spec, layout, [], backend=SHADOW, executor=executor)
    assert set(statuses(again).values()) == {"skipped"}


@needs_tor
@pytest.mark.slow
@pytest.mark.simulation(
    "a Dask cluster of 2 workers on this machine: ci-small's 4 runs with a stand-in for Shadow "
    "that fails conflux-on"
)
def test_dask_failed_runs_are_reported_and_the_others_go_on(
    tmp_path: Path, stand_in_env: dict[str, str]
) -> None:
    for cluster in start_dask(tmp_path / "dask", {**stand_in_env, "STANDIN_FAIL": "1"}):
        spec = ci_small()
        layout = Layout(tmp_path / "results", spec.name)
        outcomes = run_experiment(
            spec, layout, [], backend=SHADOW, executor=DaskExecutor(cluster.address, OFF)
        )
        assert statuses(outcomes) == {
            ("conflux-off", 1): "complete",
            ("conflux-off", 2): "complete",
            ("conflux-on", 1): "failed",
            ("conflux-on", 2): "failed",
        }
        failed = next(o for o in outcomes if o.status == "failed")
        assert failed.error and "shadow exited with status 1" in failed.error
        assert "(worker tcp://127.0.0.1:" in failed.error  # says where it failed
        assert read_manifest(failed.run_dir)["status"] == "failed"


@needs_tor
@pytest.mark.slow
@pytest.mark.simulation("a Dask cluster of 1 worker without Shadow, given 1 run")
def test_a_node_without_shadow_says_so(tmp_path: Path, stand_in_env: dict[str, str]) -> None:
    lacking = {**stand_in_env, "TORNET_SHADOW": str(tmp_path / "no-shadow-here")}
    for cluster in start_dask(tmp_path / "dask", lacking, workers=1):
        spec = ci_small(seeds=(1,), variants=("conflux-off",))
        layout = Layout(tmp_path / "results", spec.name)
        (outcome,) = run_experiment(
            spec, layout, [], backend=SHADOW, executor=DaskExecutor(cluster.address, OFF)
        )
        assert outcome.status == "failed" and outcome.error
        assert "lacks a prerequisite" in outcome.error and "shadow:" in outcome.error
        assert f"node {os.uname().nodename}" in outcome.error


def _worker_running(program: str, timeout: float = 60) -> int:
    """The pid of the Dask worker process that runs ``program``: the parent
    of a process running it, other than this test's own process (which
    runs it too, to read its version)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in processes_mentioning(program):
            pid = line.split(":")[0]
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue  # it has ended
            parent = int(next(x.split()[1] for x in status.splitlines() if x.startswith("PPid")))
            if parent != os.getpid():
                return parent
        time.sleep(0.2)
    raise AssertionError(f"{program} never started")


def _kill_the_worker_of(program: str, killed: list[int]) -> None:
    worker = _worker_running(program)
    killed.append(worker)
    os.kill(worker, signal.SIGKILL)


@needs_tor
@pytest.mark.slow
@pytest.mark.simulation(
    "a Dask cluster of 2 workers on this machine: 1 run with a stand-in for Shadow, whose "
    "worker is killed, then retried"
)
def test_a_run_whose_worker_is_killed_is_retried(
    tmp_path: Path, stand_in_env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    slow = {**stand_in_env, "STANDIN_SLOW": "seed-1", "STANDIN_SLOW_SLEEP": "8"}
    for cluster in start_dask(tmp_path / "dask", slow):
        spec = ci_small(seeds=(1,), variants=("conflux-off",))
        layout = Layout(tmp_path / "results", spec.name)
        killed: list[int] = []
        killer = threading.Thread(
            target=_kill_the_worker_of, args=(stand_in_env["TORNET_SHADOW"], killed)
        )
        killer.start()
        (outcome,) = run_experiment(
            spec, layout, [], backend=SHADOW, executor=DaskExecutor(cluster.address, OFF)
        )
        killer.join()
        assert killed, "the worker was not killed"
        assert outcome.status == "complete", outcome.error
        assert "its worker was lost" in capfd.readouterr().err
        # The killed worker's Shadow died with it; the retry ran to the end.
        assert not processes_mentioning(stand_in_env["TORNET_SHADOW"])
        assert read_manifest(outcome.run_dir)["status"] == "complete"


@needs_tor
@pytest.mark.slow
@pytest.mark.simulation(
    "Slurm on this machine: ci-small's 4 runs as jobs with a stand-in for Shadow that fails "
    "conflux-on"
)
def test_slurm_jobs_run_the_runs(
    slurm: dict[str, str],
    tmp_path: Path,
    stand_in_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STANDIN_FAIL", "1")
    spec = ci_small()
    layout = Layout(tmp_path / "results", spec.name)
    options = SlurmOptions(cores=1, memory="1GiB", walltime="00:10:00")
    outcomes = run_experiment(
        spec, layout, [], backend=SHADOW, executor=SlurmExecutor(options, OWN_CPUS)
    )
    assert statuses(outcomes) == {
        ("conflux-off", 1): "complete",
        ("conflux-off", 2): "complete",
        ("conflux-on", 1): "failed",
        ("conflux-on", 2): "failed",
    }
    jobs = {
        read_manifest(o.run_dir)["placement"]["slurm_job"]
        for o in outcomes
        if o.status == "complete"
    }
    assert None not in jobs
    sacct = subprocess.run(
        ["sacct", "-c", "--name", "tornet-run", "-n", "-o", "JobID,JobName,State"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert jobs <= {line.split()[0] for line in sacct.splitlines()}, sacct
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and processes_mentioning("distributed.cli.dask_worker"):
        time.sleep(0.5)
    assert not processes_mentioning("distributed.cli.dask_worker")
    # A job whose worker has gone may still be completing (state CG) for a
    # moment on a busy machine: the queue must empty, not be empty at once.
    queue = "?"
    while time.monotonic() < deadline + 30:
        queue = subprocess.run(
            ["squeue", "-h"], capture_output=True, text=True, check=True
        ).stdout.strip()
        if not queue:
            break
        time.sleep(0.5)
    assert queue == ""


def _experiment(results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "runner", "experiment", str(CI_SMALL)]
    return subprocess.run(
        [*command, "--results", str(results), *args], cwd=ROOT, capture_output=True, text=True
    )


# The runs table's columns that say what ran, not where or how long.
_RAN = ("variant", "seed", "status", "backend", "identity", "identity_parts", "versions")


def _what_ran(table: Path) -> list[tuple[str, ...]]:
    with table.open(newline="") as f:
        return [
            tuple(row[c] for c in _RAN) + (row["measured_clients"],) for row in csv.DictReader(f)
        ]


@needs_shadow
@pytest.mark.shadow
@pytest.mark.slow
@pytest.mark.simulation(
    "ci-small's 4 Shadow runs on a Dask cluster of 2 workers, then as Slurm jobs, then the "
    "regression check"
)
def test_ci_small_on_dask_and_on_slurm_gives_the_tables_of_a_local_run(
    slurm: dict[str, str], tmp_path: Path
) -> None:
    """Real Shadow: ci-small through a Dask cluster (scheduler + 2 worker
    processes) and through Slurm jobs; every run completes, both give the
    same tables, and those match the Shadow baseline that a run on this
    machine's pool wrote (the regression check)."""
    for cluster in start_dask(tmp_path / "dask", {}):
        on_dask = _experiment(tmp_path / "dask-results", "--executor", cluster.address)
        assert on_dask.returncode == 0, on_dask.stdout + on_dask.stderr[-3000:]
    # The same relay keys make the same network, to the byte (docs/reproducibility.md).
    shutil.copytree(
        tmp_path / "dask-results" / "ci-small" / "keys",
        tmp_path / "slurm-results" / "ci-small" / "keys",
    )
    on_slurm = _experiment(
        tmp_path / "slurm-results", "--executor", "slurm:cores=1,memory=2GiB,walltime=00:30:00"
    )
    assert on_slurm.returncode == 0, on_slurm.stdout + on_slurm.stderr[-3000:]
    assert "4/4 runs complete" in on_dask.stdout and "4/4 runs complete" in on_slurm.stdout
    dask_tables = sorted((tmp_path / "dask-results" / "ci-small").glob("*.csv"))
    assert len(dask_tables) >= 5
    for table in dask_tables:
        twin = tmp_path / "slurm-results" / "ci-small" / table.name
        if table.name == "runs.csv":
            # The runs table records where and how long each run took too.
            assert _what_ran(table) == _what_ran(twin)
            continue
        assert table.read_bytes() == twin.read_bytes(), f"{table.name} differs"
    regress = subprocess.run(
        [sys.executable, "-m", "runner", "regress", str(CI_SMALL), "--skip-run"]
        + ["--results", str(tmp_path / "slurm-results")]
        + ["--baseline", str(ROOT / "results" / "baselines" / "ci-small.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert regress.returncode == 0, regress.stdout + regress.stderr
