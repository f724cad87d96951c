"""How many seeds a hypothesis needs: the chance that an interval over n
seeds gives a decisive verdict (supported, no change that matters, or
contradicted), for a true change and a spread between seeds, by simulation.

Seeds are the unit: a seed's log ratio (variant over reference) is the true
log change plus a normal deviation of standard deviation ``sd``; an
interval over n seeds is the t interval on the log scale, at the 95% t
value or a sequential design's boundaries (runner/analyses/sequential.py).
The generator's seed is fixed, so predictions are reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from runner.analyses.sequential import SequentialDesign

PROBABILITY = 0.8  # the chance of a decisive verdict a prediction aims for
MAX_SEEDS = 1000  # beyond this, "more than 1000" is the honest answer
_REPS = 4000


@dataclass(frozen=True)
class Target:
    """What a hypothesis asks: the expected direction (-1 or +1) and the
    smallest change that matters (a fraction)."""

    direction: int
    smallest_change: float


def decisive(low: np.ndarray, high: np.ndarray, target: Target) -> np.ndarray:
    """Which intervals (as changes) give a verdict other than undetermined:
    the rule of runner/analyses/answers.verdict, on arrays."""
    m = target.smallest_change
    beyond = high < -m if target.direction < 0 else low > m
    inside = (low > -m) & (high < m)
    other_side = low > 0 if target.direction < 0 else high < 0
    return beyond | inside | other_side


def _intervals(
    rng: np.random.Generator, effect: float, sd: float, n: int, critical: float
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated intervals (as changes) over n seeds."""
    mean = effect + sd / math.sqrt(n) * rng.standard_normal(_REPS)
    spread = sd * np.sqrt(rng.chisquare(n - 1, _REPS) / (n - 1))
    half = critical * spread / math.sqrt(n)
    return np.expm1(mean - half), np.expm1(mean + half)


def decisive_probability(effect: float, sd: float, n: int, target: Target) -> float:
    """The chance that a fixed-size 95% interval over n seeds is decisive,
    when the true log change is ``effect`` and seeds spread by ``sd``."""
    if n < 2:
        return 0.0
    rng = np.random.default_rng(n)
    critical = float(scipy_stats.t.ppf(0.975, n - 1))
    low, high = _intervals(rng, effect, sd, n, critical)
    return float(decisive(low, high, target).mean())


def seeds_to_decisive(
    effect: float, sd: float, target: Target, probability: float = PROBABILITY
) -> int:
    """The fewest seeds whose fixed-size interval is decisive with
    ``probability``; MAX_SEEDS + 1 if none up to MAX_SEEDS is."""
    if sd <= 0:
        return 2
    low, high = 2, 4
    while decisive_probability(effect, sd, high, target) < probability:
        low, high = high, high * 2
        if low > MAX_SEEDS:
            return MAX_SEEDS + 1
    while low < high:  # the chance grows with n, up to simulation noise
        mid = (low + high) // 2
        if decisive_probability(effect, sd, mid, target) >= probability:
            high = mid
        else:
            low = mid + 1
    return low


@dataclass(frozen=True)
class SequentialOutcome:
    decisive: float  # the chance of a decisive verdict by the last look
    expected_seeds: float  # the mean seeds run before stopping
    false_verdict: float  # the chance the last interval misses the true change


def simulate_rounds(
    effect: float, sd: float, design: SequentialDesign, targets: list[Target]
) -> SequentialOutcome:
    """Run the stopping rule on simulated seeds: stop at the first look where
    every target's interval is decisive (all targets share the seeds, as the
    hypotheses of one experiment do: each with its own effect is
    approximated by the one given)."""
    rng = np.random.default_rng(len(design.looks) * 1000 + design.looks[-1])
    x = effect + sd * rng.standard_normal((_REPS, design.looks[-1]))
    stopped = np.zeros(_REPS, dtype=bool)
    seeds_used = np.full(_REPS, float(design.looks[-1]))
    missed = np.zeros(_REPS, dtype=bool)
    for k, n in enumerate(design.looks):
        mean = x[:, :n].mean(axis=1)
        spread = x[:, :n].std(axis=1, ddof=1)
        half = design.t_critical(k, n) * spread / math.sqrt(n)
        low, high = np.expm1(mean - half), np.expm1(mean + half)
        done = np.ones(_REPS, dtype=bool)
        for target in targets:
            done &= decisive(low, high, target)
        newly = done & ~stopped
        seeds_used[newly] = n
        missed[newly] = (mean - half > effect)[newly] | (mean + half < effect)[newly]
        stopped |= done
    return SequentialOutcome(float(stopped.mean()), float(seeds_used.mean()), float(missed.mean()))
