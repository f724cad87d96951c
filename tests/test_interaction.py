"""Interactions: a hypothesis whose change is one ratio against another on
the same seeds (Conflux's C5: a third leg adds less than the second)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from runner.analyses.answers import SUPPORTED, answer, shared_seeds
from runner.analyses.stats import interaction_change
from runner.errors import SpecError
from runner.params import Where
from runner.planning.seed_plan import spread
from runner.planning.seed_rounds import variants_compared
from runner.spec.hypotheses import Hypothesis, parse_hypotheses
from runner.tables.schema import TransferRow

C5 = Hypothesis(
    name="third-leg-adds-less",
    variant="confluxm",
    reference="conflux",
    metric="ttlb",
    expect="increase",
    smallest_change=0.05,
    cls="perf",
    interaction=("conflux", "plain"),
)
VARIANTS = ["plain", "conflux", "confluxm"]


def _rows(variant: str, seed: int, ttlb: float, n: int = 20) -> list[TransferRow]:
    rng = np.random.default_rng(seed * 31 + len(variant))
    return [
        TransferRow(variant, seed, f"c{i}", "perf", True, 10**7, 0.0, 0.5, t, True, "")
        for i, t in enumerate(ttlb * rng.lognormal(0, 0.03, n))
    ]


def test_an_interaction_is_the_ratio_of_two_ratios_seed_by_seed() -> None:
    # Per seed: confluxm/conflux = 0.9, conflux/plain = 0.6 -> 1.5.
    rows = []
    for seed in range(1, 6):
        level = 10.0 * (1 + seed / 10)  # seeds differ; the ratios do not
        rows += _rows("plain", seed, level)
        rows += _rows("conflux", seed, 0.6 * level)
        rows += _rows("confluxm", seed, 0.54 * level)
    found = answer(C5, rows, [])
    assert found.estimate.n == 5
    assert found.estimate.mean == pytest.approx(0.5, abs=0.05)
    assert found.verdict == SUPPORTED
    assert found.bootstrap is None  # no bootstrap for an interaction
    # The plan reads the same seeds' log ratios.
    parts = spread(C5, rows, [])
    assert parts is not None and parts.seeds == 5
    assert parts.effect == pytest.approx(math.log(1.5), abs=0.05)
    assert parts.clients is None and parts.transfers is None


def test_a_seed_missing_any_of_the_four_is_left_out() -> None:
    one = [[1.0], [2.0], [1.0], [4.0]]  # (1/2) / (1/4) = 2
    missing = [[1.0], [2.0], [], [4.0]]
    change = interaction_change([tuple(one), tuple(missing)], lambda v: float(np.mean(v)))
    assert change.ratios == [2.0]


def test_its_variants_count_for_seeds_rounds_and_cost() -> None:
    assert C5.variants == ("confluxm", "conflux", "plain")
    plain = replace(C5, interaction=None)
    assert plain.variants == ("confluxm", "conflux")
    assert "(confluxm vs conflux) / (conflux vs plain)" in C5.describe()


def test_a_spec_states_an_interaction_and_bad_ones_are_refused() -> None:
    where = Where("x.yaml", "hypotheses")
    base = {
        "name": "h",
        "variant": "confluxm",
        "reference": "conflux",
        "metric": "ttlb",
        "expect": "increase",
        "smallest_change": "5%",
        "extension": "a test",
    }
    (h,) = parse_hypotheses(
        [base | {"interaction": {"variant": "conflux", "reference": "plain"}}],
        where,
        VARIANTS,
        ["perf"],
    )
    assert h.interaction == ("conflux", "plain")
    for bad, key in (
        ({"variant": "nope", "reference": "plain"}, "interaction.variant"),
        ({"variant": "confluxm", "reference": "conflux"}, "interaction"),
        ({"variant": "plain"}, "interaction.reference"),
    ):
        with pytest.raises(SpecError, match=key.replace(".", r"\.")):
            parse_hypotheses([base | {"interaction": bad}], where, VARIANTS, ["perf"])


def test_variants_compared_include_the_interactions_pair() -> None:
    from runner.spec.model import Spec

    class _Spec:
        def variant(self, name: str) -> object:
            return type("V", (), {"consensus_from": {}})()

        def seeds_of(self, name: str) -> tuple[int, ...]:
            return {"plain": (1, 2, 3), "conflux": (1, 2), "confluxm": (1, 2, 3)}[name]

    fake: Spec = _Spec()  # type: ignore[assignment]
    assert variants_compared(fake, [C5]) == {"plain", "conflux", "confluxm"}
    assert shared_seeds(fake, C5) == {1, 2}
