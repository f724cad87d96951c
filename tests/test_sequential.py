"""The group-sequential stopping rule keeps its error rate."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as scipy_stats

from runner.analyses.power import Target, simulate_rounds
from runner.analyses.sequential import SequentialDesign


def _error_rate(looks: tuple[int, ...], sequential: bool, reps: int = 100_000) -> float:
    """The chance that some look's interval excludes zero, on seeds with no
    true change (standard normal log ratios; another generator than the one
    the boundaries come from)."""
    design = SequentialDesign(looks)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((reps, looks[-1]))
    wrong = np.zeros(reps, dtype=bool)
    for k, n in enumerate(looks):
        mean, sd = x[:, :n].mean(axis=1), x[:, :n].std(axis=1, ddof=1)
        t = design.t_critical(k, n) if sequential else scipy_stats.t.ppf(0.975, n - 1)
        wrong |= np.abs(mean) > t * sd / math.sqrt(n)
    return float(wrong.mean())


def test_looking_after_every_round_keeps_the_error_rate_at_five_percent() -> None:
    for looks in ((5, 7, 9), (3, 5, 7, 9), (5,)):
        assert _error_rate(looks, sequential=True) <= 0.05, looks


def test_plain_95_percent_intervals_at_every_round_would_not() -> None:
    # What the rule guards against: stopping at the first look whose
    # ordinary interval excludes zero errs about twice as often.
    assert _error_rate((5, 7, 9), sequential=False) > 0.08


def test_early_looks_are_wider_and_a_single_look_is_the_fixed_interval() -> None:
    design = SequentialDesign.from_rounds(5, 9, 2)
    assert design.looks == (5, 7, 9)
    ts = [design.t_critical(k, n) for k, n in enumerate(design.looks)]
    fixed = [scipy_stats.t.ppf(0.975, n - 1) for n in design.looks]
    assert all(t > f for t, f in zip(ts, fixed, strict=True))
    assert ts[0] > ts[1] > ts[2]
    single = SequentialDesign((5,))
    assert abs(single.t_critical(0, 5) - scipy_stats.t.ppf(0.975, 4)) < 0.02
    assert SequentialDesign.from_rounds(5, 10, 2).looks == (5, 7, 9, 10)


def test_the_whole_rule_on_simulated_experiments() -> None:
    design = SequentialDesign.from_rounds(5, 9, 2)
    target = Target(-1, 0.10)
    none = simulate_rounds(0.0, 0.2, design, [target])
    assert none.false_verdict <= 0.05
    big = simulate_rounds(math.log(0.5), 0.3, design, [target])
    assert big.decisive > 0.8 and big.expected_seeds < 9
