"""`runner plan` on a real pilot: conflux-small's first round under Shadow
(5 seeds, 3 variants, 2 measured clients), its tables and the manifests'
CPU and host counts kept as a fixture."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.experiments import load_spec
from runner.layout import Layout
from runner.tables.sources import run_sources, write_runs
from tests.conftest import FIXTURES, ROOT

PILOT = FIXTURES / "conflux-small-pilot"


def _results(tmp_path: Path) -> tuple[Path, Path]:
    """A results folder holding the pilot's tables, runs table and manifests."""
    spec = tmp_path / "conflux-small.yaml"
    spec.write_text((PILOT / "spec.yaml").read_text())
    layout = Layout(tmp_path / "results", "conflux-small")
    layout.experiment_dir.mkdir(parents=True)
    for name in ("transfers", "clients", "relay_load"):
        with gzip.open(PILOT / f"{name}.csv.gz", "rt") as handle:
            layout.table_csv(name).write_text(handle.read())
    for run in json.loads((PILOT / "runs.json").read_text()):
        run_dir = layout.run_dir(run["variant"], run["seed"])
        run_dir.mkdir(parents=True)
        (run_dir / "manifest.json").write_text(json.dumps(run))
    # The runs table, as collect writes it with the tables.
    write_runs(layout, run_sources(load_spec(spec), layout))
    return spec, layout.experiment_dir


def _plan(tmp_path: Path, spec: Path, *args: str) -> str:
    """``runner plan`` on ``spec`` with the pilot's results; its text."""
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "plan", str(spec), *args]
        + ["--results", str(tmp_path / "results"), "--backend", "shadow"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_plan_reads_a_pilot_and_prices_each_design(tmp_path: Path) -> None:
    spec, experiment = _results(tmp_path)
    text = _plan(tmp_path, spec, "--cores", "16")
    assert "seeds 1, 2, 3, 4, 5, 3 variants, 2 measured clients" in text
    for name in (
        "conflux-shortens-10mb",
        "conflux-shortens-5mb",
        "confluxm-shortens-10mb-further",
        "conflux-shortens-10mb-after-first-byte",
    ):
        assert f"| {name} |" in text
    for design in ("as configured", "2x measured clients", "4x measured clients", "2x relays"):
        assert f"| {design} |" in text
    assert "wall h (16 cores)" in text
    # The pilot's manifests predate the record of runs at once: the plan says so.
    assert "A run costs " in text and "fitted on the pilot's 15 runs." in text
    assert "The pilot's manifests do not record how many runs were at once" in text
    assert "How far to trust the figure: the pilot's 15 runs came within " in text
    data = json.loads((experiment / "plan.json").read_text())
    assert data["seeds"] == [1, 2, 3, 4, 5]
    for part in data["spreads"].values():
        # two measured clients a seed: the clients' part is measured
        assert part["clients"] is not None and part["transfers"] is not None
        assert part["between"] >= 0 and part["total"] > 0
    assert data["cost"]["runs"] == 15 and data["cost"]["fixed_cpu_s"] > 0
    conditions = data["pilot_conditions"]
    assert conditions["runs"] == 15 and conditions["at_once"] == []
    assert 0 < conditions["farthest_off"] < 1
    configured, twice = data["designs"][0], data["designs"][1]
    # twice the clients cost more per run and load the network more
    assert twice["busiest"] > configured["busiest"]
    # every hypothesis together: the rule's chance, and how sure the seeds are
    assert configured["all_decided"] >= 0.8 and twice["all_decided"] >= 0.8
    low, high = configured["seeds_needed_interval"]
    assert low < high and configured["seeds_needed"] == max(configured["fixed_seeds"].values())
    assert twice["seeds_needed_interval"] is None  # the design as configured only
    correlation = data["correlation"]
    assert correlation["hypotheses"] == list(data["spreads"])
    assert len(correlation["matrix"]) == 4 and correlation["matrix"][0][0] == 1.0
    assert (experiment / "plan.md").read_text().strip() == text.strip()


def test_a_larger_design_is_planned_from_a_smaller_ones_pilot(tmp_path: Path) -> None:
    spec, experiment = _results(tmp_path)
    text = _plan(tmp_path, ROOT / "configs" / "conflux.yaml", "--pilot-from", str(spec))
    assert "Planned: conflux from conflux-small's pilot, scaled" in text
    assert "by 2x the measured clients, 3x the relays" in text
    scaled = json.loads((experiment / "plan-conflux.json").read_text())
    assert not (experiment / "plan.json").exists()  # the pilot's own plan is left alone
    # twice the measured clients' traffic, over each position's capacity
    from runner.experiments import load_spec
    from runner.planning.seed_plan import scaling

    factors = scaling(load_spec(spec), load_spec(ROOT / "configs" / "conflux.yaml"))
    by_position = scaled["busiest_by_position"]
    assert set(by_position) == {"exit", "guard", "middle"}
    configured = scaled["designs"][0]
    expected = max(value * 2 / factors.capacity_of(role) for role, value in by_position.items())
    assert configured["busiest"] == pytest.approx(expected)


def test_a_larger_designs_own_hypothesis_is_measured_on_the_pilots_runs(
    tmp_path: Path,
) -> None:
    # The larger design states a hypothesis the pilot's spec does not, on
    # variants the pilot ran: its spread comes from the pilot's runs.
    spec, experiment = _results(tmp_path)
    target = tmp_path / "conflux-larger.yaml"
    text = (PILOT / "spec.yaml").read_text()
    assert "name: conflux-shortens-10mb\n" in text
    target.write_text(
        text.replace("name: conflux-small", "name: conflux-larger", 1).replace(
            "name: conflux-shortens-10mb\n", "name: legs-shorten-10mb\n"
        )
    )
    _plan(tmp_path, target, "--pilot-from", str(spec))
    planned = json.loads((experiment / "plan-conflux-larger.json").read_text())
    assert "legs-shorten-10mb" in planned["spreads"]
    _plan(tmp_path, spec)
    own = json.loads((experiment / "plan.json").read_text())["spreads"]["conflux-shortens-10mb"]
    measured = planned["spreads"]["legs-shorten-10mb"]
    assert measured.pop("hypothesis") == "legs-shorten-10mb"
    assert own.pop("hypothesis") == "conflux-shortens-10mb"
    assert measured == own
