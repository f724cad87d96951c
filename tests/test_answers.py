"""Hypotheses in the spec, and the verdicts the report gives them."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from runner.analyses.answers import (
    CONTRADICTED,
    NO_CHANGE,
    SUPPORTED,
    UNDETERMINED,
    answer,
    answer_record,
    pooled_ratios,
    seeds_needed,
    verdict,
)
from runner.analyses.power import Target, decisive_probability, seeds_to_decisive
from runner.analyses.stats import Estimate
from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.report.answers import answers_section
from runner.spec.hypotheses import Hypothesis
from runner.tables.schema import TransferRow
from tests.specs import ci_small, ci_small_data

FASTER = Hypothesis(
    name="h",
    variant="conflux-on",
    reference="conflux-off",
    metric="ttlb",
    expect="decrease",
    smallest_change=0.10,
    cls="perf",
)


def _spec(hypotheses: Any) -> dict[str, Any]:
    data = ci_small_data()
    data["hypotheses"] = hypotheses
    data.pop("claims")  # the claims ci-small's own hypothesis tests
    return data


def _one(**changes: Any) -> list[dict[str, Any]]:
    base = {
        "name": "h",
        "variant": "conflux-on",
        "reference": "conflux-off",
        "metric": "ttlb",
        "class": "perf",
        "size": "5 MiB",
        "expect": "decrease",
        "smallest_change": "10%",
        "extension": "a test's own question",
    }
    base.update(changes)
    return [{k: v for k, v in base.items() if v is not None}]


def test_ci_small_states_a_hypothesis() -> None:
    spec = ci_small()
    (h,) = spec.hypotheses
    assert (h.metric, h.cls, h.size, h.expect, h.smallest_change) == (
        "ttlb",
        "perf",
        5 * 2**20,
        "decrease",
        0.10,
    )
    assert "should decrease by at least 10%" in h.describe() and "5 MiB" in h.describe()


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"variant": "conflux-2"}, "hypotheses[0].variant", "unknown variant 'conflux-2'"),
        ({"reference": "conflux-on"}, "hypotheses[0].reference", "other than `variant`"),
        ({"metric": "speed"}, "hypotheses[0].metric", "expected one of ttfb, ttlb"),
        ({"class": "bulk"}, "hypotheses[0].class", "unknown client class 'bulk'"),
        ({"expect": "faster"}, "hypotheses[0].expect", "expected one of decrease, increase"),
        ({"smallest_change": "ten"}, "hypotheses[0].smallest_change", "a share such as '10%'"),
        ({"smallest_change": "0%"}, "hypotheses[0].smallest_change", "at least 0.001"),
        (
            {"metric": "client_bandwidth"},
            "hypotheses[0].size",
            "applies to ttfb, ttlb, after_first_byte, goodput",
        ),
        ({"expect": None}, "hypotheses[0].expect", "required key is missing"),
        ({"colour": "red"}, "hypotheses[0].colour", "unknown key"),
    ],
)
def test_the_validator_names_the_key_and_what_was_expected(
    changes: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(_spec(_one(**changes)), "x.yaml")
    assert caught.value.key == key and message in str(caught.value)


def test_two_hypotheses_may_not_share_a_name() -> None:
    with pytest.raises(SpecError, match="another hypothesis is called 'h'"):
        parse_spec(_spec(_one() + _one()), "x.yaml")


def _estimate(low: float, high: float) -> Estimate:
    return Estimate((low + high) / 2, low, high, 5)


def test_the_four_verdicts() -> None:
    assert verdict(_estimate(-0.40, -0.15), FASTER) == SUPPORTED
    assert verdict(_estimate(0.02, 0.30), FASTER) == CONTRADICTED
    assert verdict(_estimate(-0.05, 0.08), FASTER) == NO_CHANGE
    assert verdict(_estimate(-0.30, 0.05), FASTER) == UNDETERMINED
    assert verdict(_estimate(-0.12, -0.05), FASTER) == UNDETERMINED  # may or may not matter
    assert verdict(_estimate(0.01, 0.02), FASTER) == NO_CHANGE  # the wrong way, too small
    assert verdict(Estimate(-0.3, None, None, 1), FASTER) == UNDETERMINED
    slower = Hypothesis(
        name="s", variant="a", reference="b", metric="ttlb", expect="increase", smallest_change=0.10
    )
    assert verdict(_estimate(0.15, 0.40), slower) == SUPPORTED
    assert verdict(_estimate(-0.30, -0.02), slower) == CONTRADICTED


def test_seeds_needed_grow_with_the_spread_between_seeds() -> None:
    assert seeds_needed([0.1], FASTER) is None
    calm = seeds_needed([-0.30, -0.34, -0.26], FASTER)
    wild = seeds_needed([-0.60, 0.05, -0.35], FASTER)
    assert calm is not None and wild is not None and calm < wild
    # the prediction's target: at that many seeds a decisive verdict is likely (80%)
    logs = [-0.60, 0.05, -0.35]
    effect, sd = float(np.mean(logs)), float(np.std(logs, ddof=1))
    target = Target(-1, 0.10)
    assert decisive_probability(effect, sd, wild, target) >= 0.8
    assert decisive_probability(effect, sd, wild - 1, target) < 0.8


def _rows(variant: str, seed: int, ttlb: float, n: int = 20) -> list[TransferRow]:
    rng = np.random.default_rng(seed)
    return [
        TransferRow(variant, seed, f"c{i}", "perf", True, 5 * 2**20, 0.0, 0.5, t, True, "")
        for i, t in enumerate(ttlb * rng.lognormal(0, 0.05, n))
    ]


def test_a_clear_speed_up_is_supported_and_a_tiny_one_is_no_change() -> None:
    rows = []
    for seed in range(1, 6):
        rows += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 7.0)
    found = answer(FASTER, rows, [])
    assert found.verdict == SUPPORTED and found.estimate.n == 5
    assert found.estimate.mean == pytest.approx(-0.3, abs=0.03)
    assert found.bootstrap is not None and found.bootstrap.high is not None
    assert found.bootstrap.high < -0.1  # five seeds: the bootstrap check stands beside it
    same = []
    for seed in range(1, 6):
        same += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 10.1)
    assert answer(FASTER, same, []).verdict == NO_CHANGE


def test_an_undetermined_answer_says_how_many_seeds_would_settle_it() -> None:
    rows = []
    for seed, factor in ((1, 0.6), (2, 1.1), (3, 0.8)):
        rows += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 10.0 * factor)
    found = answer(FASTER, rows, [])
    assert found.verdict == UNDETERMINED and found.seeds_needed and found.seeds_needed > 3
    text = "\n".join(answers_section([found]))
    assert f"about {found.seeds_needed} seeds would decide it alone with 80% probability" in text
    assert "| h |" in text and "| 3 |" in text
    assert math.isfinite(found.estimate.mean)


def test_without_hypotheses_the_report_says_everything_is_exploratory() -> None:
    assert "every comparison in the report is exploratory" in "\n".join(answers_section([]))


def _client(variant: str, seed: int, host: str, times: list[float]) -> list[TransferRow]:
    return [
        TransferRow(variant, seed, host, "perf", True, 5 * 2**20, 0.0, 0.5, t, True, "")
        for t in times
    ]


def test_every_client_counts_once_however_many_transfers_it_finished() -> None:
    # Under the reference, a fast client finishes five times as many
    # transfers (2 s each) as a slow one (20 s each); under the variant both
    # take 5 s. Pooling transfers, the fast client outvotes the slow one and
    # the variant looks 150% slower; with each client counted once (the
    # median of the two clients' medians, 11 s) it is 55% faster.
    rows = []
    for seed in range(1, 6):
        jitter = 1 + seed / 100
        rows += _client("conflux-off", seed, "fast", [2.0 * jitter] * 10)
        rows += _client("conflux-off", seed, "slow", [20.0 * jitter] * 2)
        rows += _client("conflux-on", seed, "fast", [5.0] * 10)
        rows += _client("conflux-on", seed, "slow", [5.0] * 10)
    found = answer(FASTER, rows, [])
    assert found.estimate.mean == pytest.approx(5 / 11 - 1, abs=0.02)
    assert found.verdict == SUPPORTED


def test_two_seeds_give_no_interval_to_read_as_an_answer() -> None:
    rows = []
    for seed in (1, 2):
        rows += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 5.0)
    found = answer(FASTER, rows, [])
    assert found.too_few and found.verdict == UNDETERMINED
    text = "\n".join(answers_section([found]))
    assert "too few seeds (2) for an interval" in text and "(no interval)" in text
    assert "[" not in text.split("| h |")[1].split("|")[2]  # the change column has no bounds
    four = []
    for seed in range(1, 5):
        four += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 5.0)
    found = answer(FASTER, four, [])
    assert found.verdict == SUPPORTED and found.few
    assert "rests on a normal spread between only 4 seeds" in "\n".join(answers_section([found]))


def test_the_no_change_band_is_symmetric_on_the_log_scale() -> None:
    # A 10% decrease: the band runs from -10% to its mirror, 1 / 0.9 - 1.
    assert Target(-1, 0.10).band == pytest.approx((-0.10, 1 / 0.9 - 1))
    assert verdict(_estimate(-0.05, 0.105), FASTER) == NO_CHANGE
    assert verdict(_estimate(-0.05, 0.112), FASTER) == UNDETERMINED
    # A 10% increase: from 1 / 1.1 - 1 (-9.1%) to +10%.
    slower = Hypothesis(
        name="s", variant="a", reference="b", metric="ttlb", expect="increase", smallest_change=0.10
    )
    assert Target(1, 0.10).band == pytest.approx((1 / 1.1 - 1, 0.10))
    assert verdict(_estimate(-0.095, 0.05), slower) == UNDETERMINED
    assert verdict(_estimate(-0.09, 0.05), slower) == NO_CHANGE


def test_no_prediction_is_fewer_seeds_than_a_verdict_needs() -> None:
    # two seeds tell a spread, and would decide it, but a verdict needs three
    assert seeds_needed([-0.50, -0.51], FASTER) == 3
    assert seeds_needed([-0.50, -0.51, -0.49], FASTER) == 3
    assert seeds_to_decisive(-0.5, 0.0, Target(-1, 0.1)) == 3


def test_skewed_seeds_are_marked() -> None:
    rows = []
    for seed, factor in enumerate((0.70, 0.71, 0.69, 0.70, 0.72, 0.30), start=1):
        rows += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 10.0 * factor)
    found = answer(FASTER, rows, [])
    assert found.skewness is not None and found.skewness < -2 and found.skewed
    record = answer_record(found, None)
    assert record["skewed"] is True and record["skewness"] == found.skewness
    assert "skewed seeds (skewness -2.4" in "\n".join(answers_section([found]))
    even = []
    for seed, factor in enumerate((0.68, 0.70, 0.72, 0.69, 0.71), start=1):
        even += _rows("conflux-off", seed, 10.0) + _rows("conflux-on", seed, 10.0 * factor)
    assert not answer(FASTER, even, []).skewed
    assert "skewed seeds" not in "\n".join(answers_section([answer(FASTER, even, [])]))


def _sized(variant: str, seed: int, size: int, time: float) -> list[TransferRow]:
    return [
        TransferRow(variant, seed, "c1", "perf", True, size, 0.0, 0.5, time, True, ""),
        TransferRow(variant, seed, "c2", "perf", True, size, 0.0, 0.5, time, True, ""),
    ]


def test_a_pooled_hypothesis_takes_the_mean_of_its_sizes_log_ratios_per_seed() -> None:
    # Per seed, the small size is 20% faster and the large one 50% faster:
    # pooled, the geometric mean of 0.8 and 0.5 (0.632), each size once,
    # however many transfers each has.
    small, large = 400_000, 10_000_000
    rows = []
    for seed in range(1, 8):
        for variant, (t_small, t_large) in (
            ("conflux-off", (1.0, 10.0)),
            ("conflux-on", (0.8, 5.0)),
        ):
            rows += _sized(variant, seed, small, t_small * (1 + seed / 50)) * 5
            rows += _sized(variant, seed, large, t_large * (1 + seed / 50))
    pooled = replace(FASTER, sizes=(small, large))
    ratios = [r for _, r in pooled_ratios(pooled, rows, [])]
    assert ratios == pytest.approx([math.sqrt(0.8 * 0.5)] * 7, rel=0.03)
    found = answer(pooled, rows, [])
    assert found.estimate.mean == pytest.approx(math.sqrt(0.4) - 1, abs=0.02)
    # A seed missing one size is left out, not pooled over the other alone.
    partial = [r for r in rows if not (r.seed == 7 and r.size == large)]
    assert [s for s, _ in pooled_ratios(pooled, partial, [])] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"sizes": ["5 MiB", "1 MiB"]}, "hypotheses[0].sizes", "got both"),
        ({"size": None, "sizes": ["5 MiB"]}, "hypotheses[0].sizes", "at least two distinct"),
        ({"exploratory": "why"}, "hypotheses[0].exploratory", "only a hypothesis with a `claim:`"),
    ],
)
def test_pooled_sizes_and_exploratory_claims_are_checked(
    changes: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(_spec(_one(**changes)), "x.yaml")
    assert caught.value.key == key and message in str(caught.value)
