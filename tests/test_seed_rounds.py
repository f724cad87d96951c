"""Seeds until answered: rounds of seeds stop once every verdict is decisive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.answers import Answer, verdict
from runner.analyses.seed_rounds import ROUNDS_FILE, run_in_rounds, seeds_in_use
from runner.analyses.stats import Estimate
from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.layout import Layout
from runner.spec.model import SeedRounds, Spec
from tests.conftest import CI_SMALL


def _spec(seeds: Any, hypotheses: bool = True) -> Spec:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["seeds"] = seeds
    if not hypotheses:
        del data["hypotheses"]
    return parse_spec(data, "x.yaml")


def test_a_range_of_seeds_starts_with_min_and_needs_a_hypothesis() -> None:
    spec = _spec({"min": 3, "max": 9, "step": 2})
    assert spec.seeds == (1, 2, 3) and spec.seed_rounds == SeedRounds(3, 9, 2)
    assert _spec([4, 5]).seed_rounds is None
    # five seeds first and two more a round unless the spec says otherwise
    assert _spec({"max": 9}).seed_rounds == SeedRounds(5, 9, 2)
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
    tmp_path: Path, centre: float, width_of: Any, seeds: Any
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

    final, code = run_in_rounds(spec, layout, run_round, answer_round)
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
