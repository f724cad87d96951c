"""The campaign's choice and its budget (runner/experiment/campaign.py),
with a fake executor whose runs report a CPU cost: no simulation."""

from __future__ import annotations

import pytest

from runner.experiment.campaign import (
    OpenClaim,
    Step,
    choose_steps,
    cpu_per_variant,
    run_steps,
    step_spec,
)
from runner.experiment.console import Console
from runner.tables.runs import RunRow
from tests.conftest import fixture_spec

HOUR = 3600.0


def claim(exp: str, name: str, have: int, need: int, *variants: str) -> OpenClaim:
    return OpenClaim(exp, name, have, need, variants)


def test_the_choice_favours_claims_near_a_verdict_per_cpu_hour() -> None:
    claims = {
        # one seed short, cheap: first
        "a": [claim("a", "A1", 4, 5, "new", "old")],
        # many seeds short and dearer
        "b": [claim("b", "B1", 2, 30, "x", "y")],
    }
    cpu = {"a": {"": 600.0, "new": 600.0, "old": 600.0}, "b": {"": 900.0}}
    steps = choose_steps(claims, cpu, {"a": 6, "b": 3}, budget_s=HOUR)
    assert [s.experiment for s in steps][:1] == ["a"]
    assert steps[0].seed == 6 and steps[0].variants == ("new", "old")
    assert steps[0].cpu_s == 1200.0 and steps[0].claims == ("A1",)
    # A1 then needs no more seeds: the rest goes to b, a seed at a time.
    assert [s.seed for s in steps if s.experiment == "b"] == [3]
    assert sum(s.cpu_s for s in steps) <= HOUR


def test_an_experiment_with_no_recorded_cpu_is_left_out() -> None:
    steps = choose_steps({"a": [claim("a", "A1", 2, 9, "n", "o")]}, {"a": {}}, {"a": 3}, HOUR)
    assert steps == []


def test_the_campaign_stops_before_the_budget_and_says_so() -> None:
    lines: list[str] = []
    console = Console(lines.append, lines.append)
    steps = [Step("a", s, ("n", "o"), 0.1 * HOUR, ("A1",)) for s in range(1, 11)]
    ran: list[int] = []

    def fake_run(step: Step) -> float:  # each run costs 10% more than predicted
        ran.append(step.seed)
        return step.cpu_s * 1.1

    result = run_steps(steps, fake_run, budget_s=0.5 * HOUR, console=console)
    assert ran == [1, 2, 3, 4]  # a fifth would reach 0.54 CPU-h
    assert result.spent_s <= 0.5 * HOUR
    assert result.spent_s >= 0.5 * HOUR * 0.85
    assert [s.seed for s in result.left_out] == list(range(5, 11))
    assert any(line.startswith("stop:") for line in lines)
    assert any("of 0.50 CPU-h spent" in line for line in lines)


def test_predicted_cpu_is_each_variants_mean_of_the_runs_that_recorded_it() -> None:
    runs = [
        RunRow("n", 1, "complete", cpu_s=100.0),
        RunRow("n", 2, "complete", cpu_s=300.0),
        RunRow("o", 1, "complete", cpu_s=50.0),
        RunRow("o", 2, "failed", cpu_s=999.0),
        RunRow("o", 3, "complete"),
    ]
    assert cpu_per_variant(runs) == pytest.approx({"n": 200.0, "o": 50.0, "": 150.0})


def test_a_step_runs_its_variants_at_its_seed_alone() -> None:
    spec = fixture_spec("conflux-small-pilot")
    step = Step(spec.name, 40, ("conflux", "plain"), 1.0, ("C1",))
    runs = [(v.name, s) for v, s in step_spec(spec, step).runs()]
    assert runs == [("plain", 40), ("conflux", 40)] or sorted(runs) == [
        ("conflux", 40),
        ("plain", 40),
    ]
