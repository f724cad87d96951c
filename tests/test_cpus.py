"""Runs at once: how many, how many Shadow threads each, and on which CPUs."""

import os
import stat
import threading
from pathlib import Path

import pytest

from runner.bench.scaling import SECTION, add_rows, job_counts, only_variants
from runner.cli import build_parser
from runner.errors import RunError
from runner.execute import placement as cpus_module
from runner.execute.cluster.options import SlurmOptions, parse_executor
from runner.execute.placement import OFF, OWN_CPUS, SHARED, CpuSlots, choose_placement
from runner.execute.simulate import run_shadow
from runner.experiments import load_spec


def test_every_core_runs_a_run_as_far_as_the_runs_go() -> None:
    eight = list(range(8))
    assert (choose_placement(4, cpus=eight).jobs, choose_placement(4, cpus=eight).threads) == (4, 2)
    assert (choose_placement(30, cpus=eight).jobs, choose_placement(30, cpus=eight).threads) == (
        8,
        1,
    )
    assert choose_placement(1, cpus=eight).threads == 8  # one run alone gets every core
    assert choose_placement(1, cpus=eight, hosts=5).threads == 5  # a thread per host at most
    assert choose_placement(30, cpus=eight, jobs=2).threads == 4
    assert choose_placement(30, cpus=eight, threads=4).jobs == 2


def test_memory_limits_the_runs_at_once() -> None:
    placement = choose_placement(30, cpus=list(range(16)), run_mib=4096, memory_mib=20 * 1024)
    assert placement.jobs == 4  # 4 x 4 GiB fit in 90% of 20 GiB, 5 do not
    assert placement.threads == 4


def test_slots_are_disjoint_and_cover_the_cpus() -> None:
    slots = CpuSlots(choose_placement(8, cpus=[3, 5, 7, 9, 11, 13]))
    taken: list[frozenset[int]] = []
    hold = threading.Barrier(6)

    def take() -> None:
        with slots.take() as cpus:
            assert cpus is not None
            taken.append(cpus)
            hold.wait(timeout=5)  # all six at once

    threads = [threading.Thread(target=take) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(min(c) for c in taken) == [3, 5, 7, 9, 11, 13]
    assert all(len(c) == 1 for c in taken)


def test_without_own_cpus_shadow_is_not_confined() -> None:
    for mode in (OFF, SHARED):
        with CpuSlots(choose_placement(2, cpus=[0, 1], pinning=mode)).take() as cpus:
            assert cpus is None


def test_more_threads_than_cpus_turn_pinning_off() -> None:
    placement = choose_placement(4, cpus=[0, 1], jobs=4)
    assert placement.pinning == OFF and "pinning is off" in placement.note
    with pytest.raises(ValueError, match="own-cpus, off, shared"):
        choose_placement(4, cpus=[0, 1], pinning="sometimes")


def test_cli_offers_the_pinning_modes() -> None:
    args = build_parser().parse_args(["run", "x.yaml", "--pinning", "off", "--threads", "3"])
    assert (args.pinning, args.threads, args.executor) == ("off", 3, "local")
    assert set(cpus_module.PINNING_MODES) == {OWN_CPUS, OFF, SHARED}


STAND_IN = """#!/bin/sh
# Records how it was started: its arguments and the CPUs it may use.
echo "$@" > args
grep Cpus_allowed_list /proc/self/status > cpus
mkdir -p shadow.data
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to confine to 1")
def test_shadow_is_confined_to_its_cpus_and_told_whether_to_pin(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(STAND_IN)
    shadow.chmod(shadow.stat().st_mode | stat.S_IEXEC)
    cpu = max(os.sched_getaffinity(0))
    run_shadow(tmp_path, str(shadow), 1, cpus=frozenset({cpu}))
    assert (tmp_path / "cpus").read_text().split() == ["Cpus_allowed_list:", str(cpu)]
    assert "--use-cpu-pinning true" in (tmp_path / "args").read_text()
    run_shadow(tmp_path, str(shadow), 2, pin=False)
    assert "--parallelism 2 --use-cpu-pinning false" in (tmp_path / "args").read_text()
    assert (tmp_path / "cpus").read_text().split()[1] != str(cpu)  # every CPU again


def test_executor_option() -> None:
    assert parse_executor("local").kind == "local"
    assert parse_executor("tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    slurm = parse_executor("slurm:queue=short,cores=4,memory=16GiB,walltime=02:00:00,jobs=8")
    assert slurm.slurm == SlurmOptions("short", 4, "16GiB", "02:00:00", 8, None)
    assert parse_executor("slurm").slurm == SlurmOptions()
    for bad, why in (
        ("dask", "not an executor"),
        ("slurm:cores=four", "cores must be a whole number"),
        ("slurm:cores=0", "cores must be at least 1"),
        ("slurm:nodes=2", "unknown key 'nodes'"),
        ("slurm:walltime=2h", "walltime must look like HH:MM:SS"),
        ("slurm:memory=lots", "memory must look like 4GiB"),
        ("slurm:queue", "'queue' is not KEY=VALUE"),
    ):
        with pytest.raises(RunError, match=why):
            parse_executor(bad)


def test_scaling_counts_and_table(tmp_path: Path) -> None:
    assert job_counts(1) == [1]
    assert job_counts(2) == [1, 2]
    assert job_counts(12) == [1, 2, 4, 8, 12]
    out = tmp_path / "results.md"
    out.write_text("# Benchmarks\n\n| a |\n|---|\n| 1 |\n\n## Memory per process\n\ntext\n")
    add_rows(out, ["| row 1 |\n"])
    add_rows(out, ["| row 2 |\n"])
    text = out.read_text()
    assert text.count(SECTION) == 1
    assert text.index("## Memory per process") < text.index("| row 1 |") < text.index("| row 2 |")
    assert text.startswith("# Benchmarks\n\n| a |")


def test_scaling_times_a_run_alone_by_keeping_the_variants_named() -> None:
    spec = load_spec(Path("configs/conflux-small.yaml"))
    first = spec.variants[0].name
    alone = only_variants(spec, [first])
    assert [v.name for v in alone.variants] == [first]
    with pytest.raises(ValueError, match="no variant nosuch"):
        only_variants(spec, ["nosuch"])


def test_a_second_runner_keeps_off_the_cpus_another_has_claimed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.execute.cpu_claims import CLAIMS_ENV, claimed_cpus, holder
    from runner.execute.placement import OFF, OWN_CPUS, Placement, without

    monkeypatch.setenv(CLAIMS_ENV, str(tmp_path))
    with claimed_cpus([0, 1]) as (mine, taken):
        assert (mine, taken) == ([0, 1], [])
        assert holder(0) == str(os.getpid())
        # Another runner (another open file: flock locks are per open file).
        with claimed_cpus([0, 1, 2, 3]) as (second, held):
            assert (second, held) == ([2, 3], [0, 1])
            asked = Placement(4, 1, OWN_CPUS, (0, 1, 2, 3))
            placed = without(asked, held, "pid 1")
            assert (placed.jobs, placed.cpus, placed.pinning) == (2, (2, 3), OWN_CPUS)
            assert "pinned by another runner" in placed.note
        # None left: unpinned, saying so.
        with claimed_cpus([0, 1]) as (none, held):
            assert none == [] and held == [0, 1]
            assert without(Placement(2, 1, OWN_CPUS, (0, 1)), held, "pid 1").pinning == OFF
    # Released when the first runner's pool ends.
    with claimed_cpus([0, 1]) as (again, held):
        assert again == [0, 1] and held == []
