"""How many seeds a hypothesis needs: the chance that an interval over n
seeds gives a decisive verdict (supported, no change that matters, or
contradicted), for a true change and a spread between seeds, by simulation.

Seeds are the unit: a seed's log ratio (variant over reference) is the true
log change plus a normal deviation of standard deviation ``sd``; an
interval over n seeds is the t interval on the log scale, at the rule's t
value for one look at the hypothesis's level or at a sequential design's
boundaries (runner/analyses/sequential.py; both allow for skewed seeds). A
verdict needs at least MIN_SEEDS seeds, so no prediction is fewer. The
generator's seed is fixed, so predictions are reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from runner.analyses.sequential import (
    ALPHA,
    SequentialDesign,
    one_look_critical,
    seed_draws,
    warm_one_look,
)

PROBABILITY = 0.8  # the chance of a decisive verdict a prediction aims for
MAX_SEEDS = 1000  # beyond this, "more than 1000" is the honest answer
MIN_SEEDS = 3  # fewer give no interval to read a verdict from
_REPS = 4000


@dataclass(frozen=True)
class Target:
    """What a hypothesis asks: the expected direction (-1 or +1) and the
    smallest change that matters (a fraction)."""

    direction: int
    smallest_change: float

    @property
    def band(self) -> tuple[float, float]:
        """The changes too small to matter, as (low, high) fractions: the
        smallest change on the expected side and its mirror on the log
        scale (a 10% decrease: -10% to +11.1%; a 10% increase: -9.1% to
        +10%), so that a ratio and its inverse are alike."""
        m = self.smallest_change
        edge = abs(math.log1p(-m) if self.direction < 0 else math.log1p(m))
        return math.expm1(-edge), math.expm1(edge)


def decisive(low: np.ndarray, high: np.ndarray, target: Target) -> np.ndarray:
    """Which intervals (as changes) give a verdict other than undetermined:
    the rule of runner/analyses/answers.verdict, on arrays."""
    below, above = target.band
    beyond = high < below if target.direction < 0 else low > above
    inside = (low > below) & (high < above)
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


def decisive_probability(
    effect: float, sd: float, n: int, target: Target, alpha: float = ALPHA
) -> float:
    """The chance that the rule's interval for one look over n seeds, at
    level ``alpha``, is decisive, when the true log change is ``effect``
    and seeds spread by ``sd``."""
    if n < MIN_SEEDS:
        return 0.0
    rng = np.random.default_rng(n)
    low, high = _intervals(rng, effect, sd, n, one_look_critical(n, alpha))
    return float(decisive(low, high, target).mean())


def seeds_to_decisive(
    effect: float,
    sd: float,
    target: Target,
    probability: float = PROBABILITY,
    alpha: float = ALPHA,
) -> int:
    """The fewest seeds (at least MIN_SEEDS) whose one-look interval at
    ``alpha`` is decisive with ``probability``; MAX_SEEDS + 1 if none up to
    MAX_SEEDS is."""
    if sd <= 0:
        return MIN_SEEDS
    warm_one_look(alpha)
    low, high = MIN_SEEDS, 4
    while decisive_probability(effect, sd, high, target, alpha) < probability:
        low, high = high, high * 2
        if low > MAX_SEEDS:
            return MAX_SEEDS + 1
    while low < high:  # the chance grows with n, up to simulation noise
        mid = (low + high) // 2
        if decisive_probability(effect, sd, mid, target, alpha) >= probability:
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
    effect: float,
    sd: float,
    design: SequentialDesign,
    targets: list[Target],
    alpha: float | None = None,
    skew: float = 0.0,
    reps: int = _REPS,
) -> SequentialOutcome:
    """Run the stopping rule at level ``alpha`` (the design's unless given)
    on simulated seeds (log ratios of skewness ``skew``, as
    sequential.seed_draws): stop at the first look where every target's
    interval is decisive (all targets share the seeds, as the hypotheses of
    one experiment do: each with its own effect is approximated by the one
    given)."""
    rng = np.random.default_rng(len(design.looks) * 1000 + design.looks[-1])
    x = effect + sd * seed_draws(rng, skew, (reps, design.looks[-1]))
    stopped = np.zeros(reps, dtype=bool)
    seeds_used = np.full(reps, float(design.looks[-1]))
    missed = np.zeros(reps, dtype=bool)
    for k, n in enumerate(design.looks):
        mean = x[:, :n].mean(axis=1)
        spread = x[:, :n].std(axis=1, ddof=1)
        half = design.t_critical(k, n, alpha) * spread / math.sqrt(n)
        with np.errstate(over="ignore"):  # an early look's interval can pass +inf: no matter
            low, high = np.expm1(mean - half), np.expm1(mean + half)
        done = np.ones(reps, dtype=bool)
        for target in targets:
            done &= decisive(low, high, target)
        newly = done & ~stopped
        seeds_used[newly] = n
        missed[newly] = (mean - half > effect)[newly] | (mean + half < effect)[newly]
        stopped |= done
    return SequentialOutcome(float(stopped.mean()), float(seeds_used.mean()), float(missed.mean()))
