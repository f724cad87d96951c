"""Seeds until answered: rounds of seeds stop once every verdict is decisive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.answers import UNDETERMINED, Answer, verdict
from runner.analyses.stats import Estimate
from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.layout import Layout
from runner.planning.seed_rounds import (
    ROUNDS_FILE,
    check_design,
    design_change_lines,
    run_in_rounds,
    seeds_in_use,
)
from runner.spec.model import SeedRounds, Spec
from tests.conftest import CI_SMALL


def _spec(seeds: Any, hypotheses: bool = True) -> Spec:
    """ci-small with ``seeds``; rounds decide from their first look unless
    ``seeds`` says otherwise (the rounds' mechanics, not the default's)."""
    data = yaml.safe_load(CI_SMALL.read_text())
    if isinstance(seeds, dict) and "min" in seeds and "decide_from" not in seeds:
        seeds = seeds | {"decide_from": max(3, seeds["min"])}
    data["seeds"] = seeds
    if not hypotheses:
        del data["hypotheses"]
        del data["claims"]  # the claims they tested
    return parse_spec(data, "x.yaml")


def test_a_range_of_seeds_starts_with_min_and_needs_a_hypothesis() -> None:
    spec = _spec({"min": 3, "max": 9, "step": 2})
    assert spec.seeds == (1, 2, 3)
    assert spec.seed_rounds == SeedRounds(min=3, max=9, step=2, decide_from=3)
    assert _spec([4, 5]).seed_rounds is None
    # five seeds first and two more a round, deciding from 7 seeds, the
    # skew allowance at skewness 1 and the seeds from 1, unless the spec
    # says otherwise
    assert _spec({"max": 9}).seed_rounds == SeedRounds(min=5, max=9, step=2)
    assert _spec({"max": 9}).seed_rounds == SeedRounds(
        min=5, max=9, step=2, decide_from=7, skew=1.0, first=1
    )
    fresh = _spec({"min": 7, "max": 15, "first": 101, "skew": 2})
    assert fresh.seeds == tuple(range(101, 108)) and fresh.seed_rounds is not None
    assert fresh.seed_rounds.skew == 2.0
    for seeds, key, message in (
        ({"min": 1, "max": 9}, "seeds.min", "at least 2"),
        ({"min": 3, "max": 2}, "seeds.max", "at least 3"),
        ({"min": 3, "max": 9, "step": 0}, "seeds.step", "at least 1"),
        ({"min": 3}, "seeds.max", "required key is missing"),
        ({"max": 4}, "seeds.max", "at least 5"),
    ):
        with pytest.raises(SpecError) as caught:
            _spec(seeds)
        assert caught.value.key == key and message in str(caught.value)
    with pytest.raises(SpecError, match="state at least one under `hypotheses`"):
        _spec({"min": 3, "max": 9}, hypotheses=False)


def _rounds(
    tmp_path: Path, centre: float, width_of: Any, seeds: Any, changes: Any = ()
) -> tuple[Spec, dict[str, Any], list[tuple[int, ...]]]:
    spec = _spec(seeds)
    layout = Layout(tmp_path, spec.name)
    (h,) = spec.hypotheses
    ran: list[tuple[int, ...]] = []

    def run_round(current: Spec) -> int:
        ran.append(current.seeds)
        return 0

    def answer_round(current: Spec) -> list[Answer]:
        w = width_of(len(current.seeds))
        est = Estimate(centre, centre - w / 2, centre + w / 2, len(current.seeds))
        return [Answer(h, est, verdict(est, h))]

    final, code = run_in_rounds(spec, layout, run_round, answer_round, changes)
    assert code == 0
    return final, json.loads((layout.experiment_dir / ROUNDS_FILE).read_text()), ran


def test_rounds_stop_once_every_verdict_is_decisive(tmp_path: Path) -> None:
    # ci-small's hypothesis: a decrease of at least 10%; centred at -30%, the
    # interval is beyond -10% once it is narrower than 0.4 (here: from 7 seeds).
    final, record, ran = _rounds(tmp_path, -0.3, lambda n: 2.7 / n, {"min": 3, "max": 11})
    assert ran == [(1, 2, 3), (1, 2, 3, 4, 5), tuple(range(1, 8))]
    assert final.seeds == tuple(range(1, 8))
    assert record["rounds"][-1]["answered"] and "after 7 seeds" in record["stopped"]
    assert record["rounds"][0]["verdicts"] == {"conflux-shortens-5mib": "undetermined"}
    assert record["rule"]["looks"] == [3, 5, 7, 9, 11]
    assert len(record["rule"]["t_boundaries"]) == 5
    # ci-small's one hypothesis tests a claim: a family of one, at 5%
    assert record["rule"]["confirmatory"] == 1 and record["rule"]["skew"] == 1.0
    # One claim: its interval at 5%, 80% of it toward the claim.
    sides = record["rule"]["family_t_boundaries"]
    assert sides["toward"][-1] < record["rule"]["t_boundaries"][-1] < sides["away"][-1]
    assert record["rounds"][0]["alphas"] == {"conflux-shortens-5mib": 0.05}
    assert seeds_in_use(_spec({"min": 3, "max": 11}), Layout(tmp_path, "ci-small")).seeds == (
        final.seeds
    )


def test_no_change_that_matters_is_decisive_too(tmp_path: Path) -> None:
    final, record, _ = _rounds(tmp_path, 0.0, lambda n: 1.6 / n, {"max": 13})
    assert len(final.seeds) == 9  # +-0.089 < 10% at 9 seeds; +-0.114 at 7
    assert record["rounds"][-1]["verdicts"] == {"conflux-shortens-5mib": "no change that matters"}


def test_rounds_stop_at_max_and_say_what_is_still_undetermined(tmp_path: Path) -> None:
    final, record, ran = _rounds(tmp_path, 0.0, lambda n: 0.5, {"min": 5, "max": 8, "step": 2})
    assert [len(s) for s in ran] == [5, 7, 8]
    assert not record["rounds"][-1]["answered"]
    assert "reached the most seeds the spec allows (8)" in record["stopped"]
    assert "still undetermined: conflux-shortens-5mib" in record["stopped"]


def test_later_rounds_are_all_variants_or_what_the_hypotheses_need() -> None:
    assert _spec({"min": 3, "max": 9}).seed_rounds == SeedRounds(
        min=3, max=9, step=2, later="all", decide_from=3
    )
    spec = _spec({"min": 3, "max": 9, "later": "hypotheses"})
    assert spec.seed_rounds == SeedRounds(min=3, max=9, step=2, later="hypotheses", decide_from=3)
    with pytest.raises(SpecError) as caught:
        _spec({"min": 3, "max": 9, "later": "some"})
    assert caught.value.key == "seeds.later" and "expected one of all, hypotheses" in str(
        caught.value
    )


def _two_hypotheses(seeds: Any) -> Spec:
    """ci-small with a third variant and a second hypothesis on it (the
    same claim's); rounds decide from their first look."""
    data = yaml.safe_load(CI_SMALL.read_text())
    data["seeds"] = seeds | {"decide_from": seeds["min"]}
    data["variants"]["conflux-three"] = {
        "description": "Conflux on, three legs",
        "torrc": {"client": ["ConfluxEnabled 1"]},
        "consensus": {"cfx_num_legs_set": 3},
    }
    data["hypotheses"].append(
        {**data["hypotheses"][0], "name": "three-legs-shorten-5mib", "variant": "conflux-three"}
    )
    return parse_spec(data, "x.yaml")


def test_later_rounds_run_only_the_variants_of_undetermined_hypotheses(tmp_path: Path) -> None:
    spec = _two_hypotheses({"min": 3, "max": 9, "later": "hypotheses"})
    layout = Layout(tmp_path, spec.name)
    decided, still_open = spec.hypotheses
    ran: list[list[tuple[str, int]]] = []
    looks: dict[str, list[int]] = {decided.name: [], still_open.name: []}

    def run_round(current: Spec) -> int:
        ran.append([(v.name, s) for v, s in current.runs()])
        return 0

    def answer_round(current: Spec) -> list[Answer]:
        found = []
        for h in current.hypotheses:
            n = len(set(current.seeds_of(h.variant)) & set(current.seeds_of(h.reference)))
            looks[h.name].append(n)
            # the first is decisive from 5 seeds on (-30% +- 0.15 there); the second never
            w = 1.5 / n if h is decided else 1.0
            est = Estimate(-0.3 if h is decided else 0.0, -0.3 - w / 2, -0.3 + w / 2, n)
            found.append(Answer(h, est, verdict(est, h)))
        return found

    final, code = run_in_rounds(spec, layout, run_round, answer_round)
    assert code == 0
    # Every variant at the first look and at the look that decided the first
    # hypothesis; after it, only the variants the open one compares.
    assert [len(r) for r in ran] == [9, 15, 5 + 7 + 7, 5 + 9 + 9]
    assert ("conflux-on", 6) not in ran[2] and ("conflux-three", 6) in ran[2]
    assert looks[decided.name] == [3, 5, 5, 5]  # its seeds stop with it
    assert looks[still_open.name] == [3, 5, 7, 9]
    assert final.seeds == tuple(range(1, 10))
    assert final.variant_seeds == {"conflux-on": (1, 2, 3, 4, 5)}
    assert len(final.runs()) == 5 + 9 + 9
    record = json.loads((layout.experiment_dir / ROUNDS_FILE).read_text())
    assert record["variant_seeds"] == {"conflux-on": [1, 2, 3, 4, 5]}
    assert [r["runs"] for r in record["rounds"]] == [9, 15, 19, 23]
    # collect, compare and run read the same runs back
    again = seeds_in_use(_two_hypotheses({"min": 3, "max": 9, "later": "hypotheses"}), layout)
    assert again.runs() == final.runs()


def test_an_experiment_stopped_in_a_round_leaves_the_rounds_it_finished(tmp_path: Path) -> None:
    from runner.analyses.answers import shared_seeds
    from runner.analyses.sequential import SequentialDesign

    spec = _two_hypotheses({"min": 3, "max": 9, "later": "hypotheses"})
    layout = Layout(tmp_path, spec.name)
    decided, still_open = spec.hypotheses
    ran: list[tuple[int, ...]] = []

    def run_round(current: Spec) -> int:
        if len(ran) == 3:
            raise KeyboardInterrupt  # stopped during the fourth round
        ran.append(current.seeds)
        return 0

    def answer_round(current: Spec) -> list[Answer]:
        found = []
        for h in current.hypotheses:
            n = len(shared_seeds(current, h))
            w = 1.5 / n if h is decided else 1.0
            est = Estimate(-0.3 if h is decided else 0.0, -0.3 - w / 2, -0.3 + w / 2, n)
            found.append(Answer(h, est, verdict(est, h)))
        return found

    with pytest.raises(KeyboardInterrupt):
        run_in_rounds(spec, layout, run_round, answer_round)
    record = json.loads((layout.experiment_dir / ROUNDS_FILE).read_text())
    assert [len(r["seeds"]) for r in record["rounds"]] == [3, 5, 7]
    assert record["variant_seeds"] == {"conflux-on": [1, 2, 3, 4, 5]}
    assert "not finished: round 4 (seeds 8-9)" in record["stopped"]
    # compare answers from the third look (7 seeds), not the spec's first (3)
    again = seeds_in_use(_two_hypotheses({"min": 3, "max": 9, "later": "hypotheses"}), layout)
    assert again.seeds == tuple(range(1, 8)) and len(again.runs()) == 19
    look = SequentialDesign.of(again)
    assert look is not None and look.look_of(len(shared_seeds(again, still_open))) == 2


def test_a_needed_variant_brings_the_variant_its_limit_is_measured_from() -> None:
    from runner.experiments import load_spec
    from runner.planning.seed_rounds import needed_variants
    from tests.conftest import ROOT

    spec = load_spec(ROOT / "configs" / "tortoise-small.yaml")
    by_name = {h.name: h for h in spec.hypotheses}
    open_one = by_name["low-limit-slows-bulk"]  # limit-low vs unlimited, confirmatory
    est = Estimate(0.0, -0.5, 0.5, 3)
    decided = Estimate(-0.5, -0.6, -0.4, 3)
    found = [
        Answer(h, est if h is open_one else decided, verdict(est if h is open_one else decided, h))
        for h in spec.hypotheses
    ]
    # the limited variant takes its limit from the unlimited run of the seed
    assert needed_variants(spec, found) == {"limit-low", "unlimited"}


def test_the_design_is_locked_once_rounds_have_run(tmp_path: Path) -> None:
    _rounds(tmp_path, -0.3, lambda n: 2.7 / n, {"min": 3, "max": 11})
    layout = Layout(tmp_path, "ci-small")
    assert check_design(_spec({"min": 3, "max": 11}), layout, new_design=False) == []
    raised = _spec({"min": 3, "max": 15})
    with pytest.raises(SpecError) as caught:
        check_design(raised, layout, new_design=False)
    assert caught.value.key == "seeds"
    assert (
        "{min: 3, max: 11, step: 2} is the design 3 rounds (7 seeds) already ran under, and "
        "the spec now says {min: 3, max: 15, step: 2}" in str(caught.value)
    )
    assert "--new-design" in str(caught.value)
    changes = check_design(raised, layout, new_design=True)
    ran, now = {"min": 3, "max": 11, "step": 2}, {"min": 3, "max": 15, "step": 2}
    assert changes == [{"from": ran, "to": now, "after_seeds": 7}]
    # The rounds under the new design keep the change; the report says so.
    _, record, _ = _rounds(tmp_path, -0.3, lambda n: 2.7 / n, {"min": 3, "max": 15}, changes)
    assert record["design_changes"] == changes
    assert check_design(raised, layout, new_design=False) == changes
    (line,) = design_change_lines(raised, record)
    assert line.startswith("- design changed after rounds had run (`--new-design`)")
    assert "do not hold" in line
    # A spec edited after its rounds ran, not yet run again: the report
    # gives the design they ran under, and says the spec's differs.
    edited = design_change_lines(_spec({"min": 3, "max": 13}), record)
    assert "differ from the design the recorded rounds ran under" in edited[-1]
    from runner.report.what_ran import rounds_line

    lines = rounds_line(_spec({"min": 3, "max": 13}), layout)
    assert "rule: 3 to 15 seeds" in lines[0] and lines[1:] == [line, edited[-1]]


def test_experiment_takes_new_design() -> None:
    from runner.cli import build_parser

    args = build_parser().parse_args(["experiment", "x.yaml", "--new-design"])
    assert args.new_design
    assert not build_parser().parse_args(["experiment", "x.yaml"]).new_design


def test_rounds_of_the_family_run_only_its_variants(tmp_path: Path) -> None:
    # later: family: the first round too runs only the variants the
    # confirmatory hypotheses compare; a claim set outside the family adds none.
    data = yaml.safe_load(CI_SMALL.read_text())
    data["seeds"] = {"min": 3, "max": 5, "later": "family", "decide_from": 3}
    data["variants"]["conflux-three"] = {
        "description": "Conflux on, three legs",
        "torrc": {"client": ["ConfluxEnabled 1"]},
        "consensus": {"cfx_num_legs_set": 3},
    }
    data["hypotheses"].append(
        {
            **data["hypotheses"][0],
            "name": "three-legs-shorten-5mib",
            "variant": "conflux-three",
            "exploratory": "not this design's question",
        }
    )
    spec = parse_spec(data, "x.yaml")
    ran: list[list[tuple[str, int]]] = []

    def run_round(current: Spec) -> int:
        ran.append([(v.name, s) for v, s in current.runs()])
        return 0

    def answer_round(current: Spec) -> list[Answer]:
        return [
            Answer(h, Estimate(0.0, -0.5, 0.5, len(current.seeds)), UNDETERMINED)
            for h in current.hypotheses
        ]

    run_in_rounds(spec, Layout(tmp_path, spec.name), run_round, answer_round)
    variants = {v for round_ in ran for v, _ in round_}
    assert variants == {"conflux-on", "conflux-off"}
    assert [len(r) for r in ran] == [6, 10]
