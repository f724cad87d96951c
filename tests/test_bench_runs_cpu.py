"""``runner bench runs``: the CPU an experiment's runs recorded, from
its run records (runner/bench/runs_cpu.py); no simulation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runner.bench.runs_cpu import runs_cpu
from runner.tables.runs import RunRow
from tests.conftest import fixture_spec


def test_cpu_per_run_counts_complete_runs_that_recorded_it() -> None:
    spec = fixture_spec("conflux-small-pilot")
    long = replace(spec, variant_measure={"plain": 600.0, "conflux": 1800.0})
    rows = [
        RunRow("plain", 1, "complete", cpu_s=100.0),
        RunRow("plain", 2, "complete", cpu_s=140.0),
        RunRow("conflux", 1, "complete", cpu_s=420.0),
        RunRow("conflux", 2, "failed", cpu_s=9999.0),  # not a run of the design's
        RunRow("confluxm", 1, "complete"),  # recorded no CPU
    ]
    found = runs_cpu(long, rows)
    assert found is not None
    assert (found.runs, found.variants) == (3, 2)
    assert found.mean_s == pytest.approx(220.0) and found.median_s == pytest.approx(140.0)
    assert found.cheapest == ("plain", pytest.approx(120.0))
    assert found.dearest == ("conflux", pytest.approx(420.0))
    simulated = 2 * (long.duration.bootstrap + 600.0) + long.duration.bootstrap + 1800.0
    assert found.per_simulated_s == pytest.approx(660.0 / simulated)


def test_no_run_that_recorded_its_cpu_gives_nothing() -> None:
    spec = fixture_spec("conflux-small-pilot")
    assert runs_cpu(spec, [RunRow("plain", 1, "failed", cpu_s=5.0)]) is None
    assert runs_cpu(spec, []) is None
