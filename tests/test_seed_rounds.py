"""Seeds until answered: rounds of seeds stop by interval width alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.answers import Answer, verdict
from runner.errors import SpecError
from runner.execute.seed_rounds import ROUNDS_FILE, run_in_rounds, seeds_in_use
from runner.layout import Layout
from runner.report.stats import Estimate
from runner.spec.model import SeedRounds, Spec, parse_spec
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
    for seeds, key, message in (
        ({"min": 1, "max": 9}, "seeds.min", "at least 2"),
        ({"min": 3, "max": 2}, "seeds.max", "at least 3"),
        ({"min": 3, "max": 9, "step": 0}, "seeds.step", "at least 1"),
        ({"min": 3}, "seeds.max", "required key is missing"),
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


def test_rounds_stop_once_every_interval_is_narrower_than_the_smallest_change(
    tmp_path: Path,
) -> None:
    # ci-small's hypothesis: smallest change 10%; the width falls as 0.65 / seeds.
    final, record, ran = _rounds(tmp_path, -0.3, lambda n: 0.65 / n, {"min": 3, "max": 9})
    assert ran == [(1, 2, 3), (1, 2, 3, 4), (1, 2, 3, 4, 5), (1, 2, 3, 4, 5, 6), tuple(range(1, 8))]
    assert final.seeds == tuple(range(1, 8))  # 0.65 / 7 < 0.1 <= 0.65 / 6
    assert record["rounds"][-1]["answered"] and "after 7 seeds" in record["stopped"]
    assert seeds_in_use(_spec({"min": 3, "max": 9}), Layout(tmp_path, "ci-small")).seeds == (
        final.seeds
    )


def test_the_rule_ignores_which_side_of_zero_the_interval_lies(tmp_path: Path) -> None:
    runs = [
        _rounds(tmp_path / str(centre), centre, lambda n: 0.65 / n, {"min": 3, "max": 9, "step": 2})
        for centre in (-0.3, 0.0, 0.3)
    ]
    assert len({final.seeds for final, _, _ in runs}) == 1
    assert runs[0][2] == [(1, 2, 3), (1, 2, 3, 4, 5), tuple(range(1, 8))]


def test_rounds_stop_at_max_and_say_what_is_still_too_wide(tmp_path: Path) -> None:
    final, record, ran = _rounds(tmp_path, 0.0, lambda n: 0.5, {"min": 3, "max": 6, "step": 2})
    assert [len(s) for s in ran] == [3, 5, 6]
    assert not record["rounds"][-1]["answered"]
    assert "reached the most seeds the spec allows (6)" in record["stopped"]
    assert "conflux-shortens-5mib (50% wide, needs < 10%)" in record["stopped"]
