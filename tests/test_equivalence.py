"""``expect: same``: a hypothesis that the change stays within a margin (an
equivalence), as MCTor's M7 states that two users on one path fare alike.
Supported where the whole interval lies inside the band, contradicted
where it lies wholly outside it, undetermined otherwise."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from runner.analyses.answers import (
    CONFIRMATORY,
    CONTRADICTED,
    SUPPORTED,
    UNDETERMINED,
    Observed,
    answer,
    answer_record,
    decide_family,
    seeds_needed,
    split_direction,
    verdict,
)
from runner.analyses.power import (
    MAX_SEEDS,
    Target,
    decisive,
    decisive_chance,
    decisive_probability,
)
from runner.analyses.sequential import ALPHA, side_tails
from runner.analyses.stats import Estimate, PairedChange, ratio_change_ci
from runner.analyses.workload_rounds import Round
from runner.errors import SpecError
from runner.params import Where
from runner.report.claims import reading_text
from runner.spec.claims import Claim
from runner.spec.hypotheses import Hypothesis, parse_hypotheses
from runner.tables.schema import TransferRow

ALIKE = Hypothesis(
    name="users-alike",
    variant="fair",
    reference="fair",
    metric="round_completion",
    expect="same",
    smallest_change=0.15,
    cls="peer",
    contrast="user",
    phase="download",
)
VARIANTS = ["base", "fair"]
CLASSES = ["user", "peer"]
EDGE = math.log(1.15)


def _estimate(low: float, high: float) -> Estimate:
    return Estimate((low + high) / 2, low, high, 5)


def test_the_band_is_a_factor_of_one_plus_the_margin_either_way() -> None:
    below, above = Target(0, 0.15).band
    assert above == pytest.approx(0.15)
    assert below == pytest.approx(1 / 1.15 - 1)  # -13.0%
    assert ALIKE.direction == 0 and ALIKE.equivalence


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (-0.05, 0.08, SUPPORTED),  # inside
        (-0.12, 0.14, SUPPORTED),  # inside, near both edges
        (-0.05, 0.20, UNDETERMINED),  # straddles +15%
        (-0.20, 0.05, UNDETERMINED),  # straddles -13.0%
        (-0.20, 0.20, UNDETERMINED),  # straddles both
        (0.16, 0.40, CONTRADICTED),  # wholly beyond +15%
        (-0.40, -0.14, CONTRADICTED),  # wholly below -13.0%
        (-0.14, -0.12, UNDETERMINED),  # -14% is outside, -12% inside
    ],
)
def test_its_verdicts(low: float, high: float, expected: str) -> None:
    assert verdict(_estimate(low, high), ALIKE) == expected
    # The arrays' rule (the plan's) agrees on what is decisive.
    found = decisive(np.array([low]), np.array([high]), Target(0, 0.15))
    assert bool(found[0]) == (expected != UNDETERMINED)


def test_no_interval_no_verdict() -> None:
    assert verdict(Estimate(0.0, None, None, 2), ALIKE) == UNDETERMINED


def test_its_interval_is_split_evenly() -> None:
    confirmatory = Hypothesis(
        **{**_fields(ALIKE), "claim": Claim(id="M7", figure="fairness, two users")}
    )
    assert split_direction(confirmatory) is None
    assert side_tails(0.01, 0) == side_tails(0.01, None) == (0.005, 0.005)


def _fields(h: Hypothesis) -> dict[str, Any]:
    return {f: getattr(h, f) for f in h.__dataclass_fields__}


def test_seeds_needed_from_the_mean_and_spread() -> None:
    assert seeds_needed([0.01], ALIKE) is None
    calm = seeds_needed([0.01, -0.02, 0.015, -0.005], ALIKE)
    wide = seeds_needed([0.08, -0.09, 0.1, -0.07], ALIKE)
    assert calm is not None and wide is not None and calm < wide
    # At the prediction a decisive verdict is likely (80%), one seed less not.
    logs = [0.08, -0.09, 0.1, -0.07]
    effect, sd = float(np.mean(logs)), float(np.std(logs, ddof=1))
    target = Target(0, 0.15)
    assert decisive_probability(effect, sd, wide, target) >= 0.8
    assert decisive_probability(effect, sd, wide - 1, target) < 0.8
    # A mean at the band's edge: no number of seeds decides it.
    at_edge = [EDGE + d for d in (0.05, -0.05, 0.04, -0.04)]
    assert seeds_needed(at_edge, ALIKE) == MAX_SEEDS + 1
    # A mean well outside: the seeds that show it outside (contradicted).
    outside = seeds_needed([0.5, 0.45, 0.55, 0.5], ALIKE)
    assert outside is not None and outside <= 5


def test_the_closed_form_chance_agrees_with_the_simulation() -> None:
    target = Target(0, 0.15)
    for effect, sd, n in ((0.0, 0.1, 6), (0.1, 0.1, 10), (0.3, 0.2, 5), (-0.12, 0.05, 8)):
        simulated = decisive_probability(effect, sd, n, target)
        closed = decisive_chance(np.array([effect]), np.array([sd]), np.array([n]), target)[0]
        assert closed == pytest.approx(simulated, abs=0.03)


def test_a_spec_states_one_and_it_says_so_in_words() -> None:
    where = Where("x.yaml", "hypotheses")
    base = {
        "name": "users-alike",
        "variant": "fair",
        "metric": "round_completion",
        "phase": "download",
        "class": "peer",
        "contrast": "user",
        "expect": "same",
        "smallest_change": "15%",
        "claim": {"id": "M7", "figure": "largest gap 11.68%"},
    }
    (h,) = parse_hypotheses([base], where, VARIANTS, CLASSES)
    assert (h.expect, h.smallest_change, h.contrast, h.reference) == (
        "same",
        0.15,
        "user",
        "fair",
    )
    assert "should stay within ±15%" in h.describe()
    record = {"metric": "round_completion", "class": "peer", "contrast": "user"}
    record |= {"reference": "fair", "variant": "fair", "expect": "same", "smallest_change": 0.15}
    assert reading_text(record) == "round_completion, peer over user: stays within ±15%"
    # An interaction reads "the two changes are alike within the margin": allowed.
    plain = {k: v for k, v in base.items() if k not in ("class", "contrast")}
    interaction = {"variant": "fair2", "reference": "base"}
    (both,) = parse_hypotheses(
        [plain | {"reference": "base", "interaction": interaction}],
        where,
        [*VARIANTS, "fair2"],
        CLASSES,
    )
    assert both.equivalence and both.ratio_of_ratios
    assert "should stay within ±15%" in both.describe()
    for bad, key, message in (
        (base | {"expect": "alike"}, "expect", "expected one of decrease, increase, same"),
        (base | {"smallest_change": "0%"}, "smallest_change", "at least 0.001"),
    ):
        with pytest.raises(SpecError, match=message) as caught:
            parse_hypotheses([bad], where, VARIANTS, CLASSES)
        assert caught.value.key == f"hypotheses[0].{key}"


def _two_users(seeds: int, peer_over_user: list[float]) -> tuple[list[TransferRow], list[Round]]:
    """A fair variant's runs: two users, one of each class, 6 download rounds
    each, the peer's rounds ``peer_over_user[seed - 1]`` times the user's."""
    transfers: list[TransferRow] = []
    rounds: list[Round] = []
    rng = np.random.default_rng(3)
    for seed in range(1, seeds + 1):
        level = 10.0 * (1 + seed / 5)  # networks differ; the users' ratio barely
        for host, cls, factor in (
            ("perfclient1exit", "user", 1.0),
            ("perfclient2exit", "peer", peer_over_user[seed - 1]),
        ):
            transfers.append(
                TransferRow("fair", seed, host, cls, True, 8 << 20, 0.0, 0.1, 1.0, True, "")
            )
            for i, noise in enumerate(rng.lognormal(0, 0.02, 6)):
                completion = level * factor * float(noise)
                rounds.append(
                    Round("fair", seed, host, "download", 30.0 * i, 5, 5, 0, completion, 40 << 20)
                )
    return transfers, rounds


def test_a_contrast_of_two_users_is_answered_from_their_rounds() -> None:
    transfers, rounds = _two_users(6, [1.02, 0.97, 1.01, 0.99, 1.03, 0.98])
    found = answer(ALIKE, transfers, [], rounds)
    assert found.estimate.n == 6
    assert found.estimate.mean == pytest.approx(0.0, abs=0.02)
    assert found.verdict == SUPPORTED
    record = answer_record(found, None)
    assert record["expect"] == "same" and record["verdict"] == SUPPORTED
    # One user's rounds a third longer on every seed: wholly outside.
    slower, slow_rounds = _two_users(6, [1.33, 1.35, 1.31, 1.34, 1.32, 1.36])
    assert answer(ALIKE, slower, [], slow_rounds).verdict == CONTRADICTED
    # Near the edge with spread: undetermined, with the seeds that would decide it.
    edge, edge_rounds = _two_users(4, [1.05, 1.25, 1.1, 1.2])
    unsure = answer(ALIKE, edge, [], edge_rounds)
    assert unsure.verdict == UNDETERMINED and unsure.seeds_needed is not None


# Eight seeds' deviations, mean 0 and standard deviation 1.
PATTERN = np.array([-1.5, -1.0, -0.5, -0.2, 0.2, 0.5, 1.0, 1.5])
PATTERN = (PATTERN - PATTERN.mean()) / PATTERN.std(ddof=1)


def _observed(h: Hypothesis, mean: float, sd: float) -> Observed:
    ratios = [math.exp(mean + sd * z) for z in PATTERN]
    return Observed(h, PairedChange(ratio_change_ci(ratios), None, ratios))


def _claimed(h: Hypothesis, name: str, claim: str) -> Hypothesis:
    return Hypothesis(**{**_fields(h), "name": name, "claim": Claim(id=claim, figure="f")})


def test_one_same_among_directional_claims_in_the_family() -> None:
    faster = Hypothesis(
        name="faster",
        variant="new",
        reference="old",
        metric="ttlb",
        expect="decrease",
        smallest_change=0.10,
    )
    clear = _observed(_claimed(faster, "clear", "C1"), math.log(0.5), 0.05)
    alike = _observed(_claimed(ALIKE, "alike", "M7"), 0.0, 0.03)
    noise = _observed(_claimed(faster, "noise", "C3"), 0.0, 1.0)
    found = decide_family([clear, alike, noise])
    assert [a.family for a in found] == [CONFIRMATORY] * 3
    # Step 1 at 5% / 3 decides the clear decrease and the equivalence (its
    # interval, split evenly, inside +-15%); the noise is read at 5%.
    assert [a.verdict for a in found] == [SUPPORTED, SUPPORTED, UNDETERMINED]
    assert [a.alpha for a in found] == pytest.approx([ALPHA / 3, ALPHA / 3, ALPHA])
    assert found[1].critical == pytest.approx(found[1].critical_low)  # even
    assert found[0].critical != pytest.approx(found[0].critical_low)  # leans to its claim
    # An equivalence whose seeds straddle the edge holds its level, as any
    # undecided claim: the others step down past it, not to 5% / 2 for it.
    straddle = _observed(_claimed(ALIKE, "straddle", "M7"), EDGE, 0.05)
    held = decide_family([clear, straddle])
    assert held[1].verdict == UNDETERMINED and held[1].alpha == pytest.approx(ALPHA)
