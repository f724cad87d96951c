"""The group-sequential stopping rule keeps its error rate, on normal seeds
and on seeds whose log ratios are skewed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from runner.analyses.power import Target, simulate_rounds
from runner.analyses.sequential import (
    ALPHA,
    MIN_CROSSINGS,
    TOWARD,
    SequentialDesign,
    allowance,
    criticals,
    obrien_fleming_spent,
    one_look_critical,
    seed_draws,
    side_tails,
    t_boundaries,
)

SKEW = 2.0

PILOT = (5, 7, 9, 11)  # conflux-small's seeds {min: 5, max: 11, step: 2}


def _error_rate(
    looks: tuple[int, ...], bounds: tuple[float, ...], skew: float = 0.0, reps: int = 100_000
) -> float:
    """The chance that some look's interval excludes zero, on seeds with no
    true change (log ratios as sequential.seed_draws, mean 0; another
    generator than the one the boundaries come from)."""
    rng = np.random.default_rng(7)
    x = seed_draws(rng, skew, (reps, looks[-1]))
    wrong = np.zeros(reps, dtype=bool)
    for bound, n in zip(bounds, looks, strict=True):
        mean, sd = x[:, :n].mean(axis=1), x[:, :n].std(axis=1, ddof=1)
        wrong |= np.abs(mean) > bound * sd / math.sqrt(n)
    return float(wrong.mean())


def test_looking_after_every_round_keeps_the_error_rate_at_five_percent() -> None:
    for looks in ((5, 7, 9), (3, 5, 7, 9), (5,), PILOT):
        assert 0.045 <= _error_rate(looks, t_boundaries(looks)) <= 0.05, looks
        assert _error_rate(looks, SequentialDesign(looks).boundaries()) <= 0.05, looks


def test_plain_95_percent_intervals_at_every_round_would_not() -> None:
    # What the rule guards against: stopping at the first look whose
    # ordinary interval excludes zero errs about twice as often.
    looks = (5, 7, 9)
    fixed = tuple(float(scipy_stats.t.ppf(0.975, n - 1)) for n in looks)
    assert _error_rate(looks, fixed) > 0.08


def test_the_first_look_is_the_exact_t_quantile() -> None:
    # It spends alpha(t1) alone: no simulation. conflux-small's first look
    # (5 of 11 seeds) is t = 6.10, where 400,000 simulated rounds gave 6.07.
    first = t_boundaries(PILOT)[0]
    assert first == scipy_stats.t.isf(obrien_fleming_spent(5 / 11) / 2, 4)
    assert round(first, 2) == 6.10
    # With max: 36 the first looks spend too little to simulate: they are
    # the t quantiles of their shares, finite, not infinite or a handful of
    # simulated crossings.
    long = (*range(5, 36, 2), 36)
    bounds = t_boundaries(long)
    assert all(math.isfinite(b) for b in bounds) and bounds[0] > bounds[1] > bounds[2] > 5
    share = obrien_fleming_spent(7 / 36) - obrien_fleming_spent(5 / 36)
    assert share * 400_000 < MIN_CROSSINGS
    assert bounds[1] == scipy_stats.t.isf(share / 2, 6)


def test_small_alphas_keep_their_rate_too() -> None:
    # Holm's first step over 15 hypotheses: 5% / 15 for the whole design.
    alpha = ALPHA / 15
    assert _error_rate(PILOT, t_boundaries(PILOT, alpha), reps=200_000) <= alpha * 1.15


def _side_error(
    looks: tuple[int, ...],
    lower: tuple[float, ...],
    upper: tuple[float, ...],
    skew: float,
    sign: float,
    reps: int = 100_000,
) -> float:
    """The chance that some look's interval (``lower`` and ``upper`` sides'
    t values) misses a true change of zero, on seeds skewed ``sign``-wards
    (another generator than the boundaries')."""
    rng = np.random.default_rng(11)
    x = sign * seed_draws(rng, skew, (reps, looks[-1]))
    wrong = np.zeros(reps, dtype=bool)
    for low, high, n in zip(lower, upper, looks, strict=True):
        mean, se = x[:, :n].mean(axis=1), x[:, :n].std(axis=1, ddof=1) / math.sqrt(n)
        wrong |= (mean - low * se > 0) | (mean + high * se < 0)
    return float(wrong.mean())


def test_skewed_seeds_break_normal_boundaries_and_the_allowance_keeps_the_rate() -> None:
    # Log ratios from a shifted lognormal of skewness 2, centred at mean 0
    # (the change the interval estimates is the mean log ratio): normal
    # theory's boundaries err about twice as often as they promise, the
    # first look most; the allowance keeps the rate, whichever way the
    # seeds are skewed, for an interval split 80/20 as for an even one.
    normal = t_boundaries(PILOT)
    assert _error_rate(PILOT, normal, skew=2.0) > 0.09
    assert _error_rate(PILOT[:1], normal[:1], skew=2.0) > 3 * obrien_fleming_spent(5 / 11)
    for level, direction in ((ALPHA, None), (ALPHA, -1), (ALPHA / 3, -1)):
        tails = side_tails(level, direction)
        for skew in (1.0, SKEW):
            design = SequentialDesign(PILOT, skew=skew, tails=tails)
            assert design.ratio < 1
            lower, upper = (design.side_boundaries(t) for t in tails)
            assert all(u > b for u, b in zip(upper, t_boundaries(PILOT, 2 * tails[1]), strict=True))
            for sign in (1.0, -1.0):
                found = _side_error(PILOT, lower, upper, skew, sign)
                assert found <= level * 1.08, (level, direction, skew, sign, found)


def test_the_allowance_is_found_once_and_larger_levels_err_less() -> None:
    # Found at the family's smallest level (5% / 3, split 80/20), the same
    # ratio read at 5% keeps that level with room to spare: a larger level
    # needs a larger ratio.
    small = side_tails(ALPHA / 3, -1)
    ratio = allowance(PILOT, small, 1.0)
    assert ratio < allowance(PILOT, side_tails(ALPHA, -1), 1.0)
    design = SequentialDesign(PILOT, skew=1.0, tails=small)
    tails = side_tails(ALPHA, -1)
    lower, upper = (design.side_boundaries(t) for t in tails)
    for sign in (1.0, -1.0):
        assert _side_error(PILOT, lower, upper, 1.0, sign) <= ALPHA
    # Normal seeds need none.
    assert allowance(PILOT, small, 0.0) == 1.0


def test_a_claims_interval_puts_most_of_its_level_toward_the_claim() -> None:
    assert side_tails(0.05, -1) == pytest.approx((0.05 * (1 - TOWARD), 0.05 * TOWARD))
    assert side_tails(0.05, 1) == pytest.approx((0.05 * TOWARD, 0.05 * (1 - TOWARD)))
    assert side_tails(0.05, None) == (0.025, 0.025)
    design = SequentialDesign((7, 9, 11))
    low, high = criticals(design, 2, 11, 0.05, -1)
    assert high < low  # a decrease is supported by the upper side: the narrower one


def test_the_whole_rule_on_skewed_seeds_errs_at_most_six_percent() -> None:
    # The whole rule: rounds stop at the first decisive look; a wrong
    # verdict is one whose interval misses the true change (none). The
    # smallest change that matters is tiny against the spread, so every
    # miss is a wrong verdict, the worst case.
    target = Target(-1, 0.001)
    for looks in (PILOT, (5,), (3, 5, 7, 9)):
        design = SequentialDesign(looks, skew=SKEW)
        found = simulate_rounds(0.0, 1.0, design, [target], skew=SKEW, reps=40_000)
        assert found.false_verdict <= 0.06, looks


def test_early_looks_are_wider_and_a_single_look_is_a_fixed_interval() -> None:
    design = SequentialDesign.from_rounds(5, 9, 2)
    assert design.looks == (5, 7, 9)
    ts = [design.t_critical(k, n, ALPHA / 2) for k, n in enumerate(design.looks)]
    fixed = [scipy_stats.t.ppf(0.975, n - 1) for n in design.looks]
    assert all(t > f for t, f in zip(ts, fixed, strict=True))
    assert ts[0] > ts[1] > ts[2]
    # One look: the t quantile at the allowed level, wider than 95%'s.
    single = SequentialDesign((5,))
    level = ALPHA * single.ratio
    assert single.t_critical(0, 5, ALPHA / 2) == pytest.approx(scipy_stats.t.isf(level / 2, 4))
    assert one_look_critical(5) == pytest.approx(single.t_critical(0, 5, ALPHA / 2))
    assert single.t_critical(0, 5, ALPHA / 2) > scipy_stats.t.ppf(0.975, 4)
    # Beyond the seeds calibrated, the allowance found there: safe.
    assert one_look_critical(40) > scipy_stats.t.ppf(0.975, 39)
    assert SequentialDesign.from_rounds(5, 10, 2).looks == (5, 7, 9, 10)


def test_looks_before_decide_from_are_left_out() -> None:
    design = SequentialDesign.from_rounds(3, 15, 2, decide_from=7)
    assert design.looks == (7, 9, 11, 13, 15)
    assert design.look_of(5) is None and design.look_of(8) == 0 and design.look_of(15) == 4
    # A design whose max is under decide_from looks once, at its max.
    assert SequentialDesign.from_rounds(3, 5, 2, decide_from=7).looks == (5,)


def test_the_whole_rule_on_simulated_experiments() -> None:
    design = SequentialDesign.from_rounds(5, 9, 2)
    target = Target(-1, 0.10)
    none = simulate_rounds(0.0, 0.2, design, [target])
    assert none.false_verdict <= 0.05
    big = simulate_rounds(math.log(0.5), 0.2, design, [target])
    assert big.decisive > 0.8 and big.expected_seeds < 9
