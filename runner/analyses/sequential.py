"""A group-sequential stopping rule for seeds run in rounds.

Looking at the interval after every round and stopping once it gives a
verdict would, with 95% intervals, err more often than 5%: each look is
another chance for chance to look like a change. The rule here keeps the
error rate by widening the early looks' intervals: repeated confidence
intervals (Jennison and Turnbull, "Group Sequential Methods", 2000, ch. 9)
at boundaries from the Lan-DeMets alpha-spending function of O'Brien-Fleming
type, alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)), where t is the share of
the planned seeds (``max``) a look has. Every planned look's interval holds
the true change at once with probability 95%, so a verdict read from the
interval at whichever look the rounds stop is as safe as one fixed-size 95%
interval. Early looks spend little: with looks at 5, 7 and 9 seeds the
intervals use t = 4.80, 3.12 and 2.53, where fixed-size 95% intervals of
those seeds would use 2.78, 2.45 and 2.31.

Seeds are the unit and their spread is estimated from a handful of them, so
the boundaries are found for t statistics by simulation (a fixed generator,
so they are the same on every machine); ``tests/test_sequential.py`` checks
the error rate of the whole rule on other simulated seeds with no change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats as scipy_stats

from runner.spec.model import Spec

ALPHA = 0.05


def obrien_fleming_spent(fraction: float, alpha: float = ALPHA) -> float:
    """The error rate spent by information fraction ``fraction`` (0..1]."""
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    return float(2 - 2 * scipy_stats.norm.cdf(z / math.sqrt(fraction)))


_PATHS = 400_000  # simulated rounds of seeds per design: boundaries to about 0.03 points
_PATH_SEED = 29  # fixed, so that a design's boundaries (and reports) are reproducible


@cache
def t_boundaries(looks: tuple[int, ...], alpha: float = ALPHA) -> tuple[float, ...]:
    """Two-sided boundaries for the t statistic of the seeds' mean at looks
    with ``looks`` seeds each (increasing), spending alpha by the
    O'Brien-Fleming-type function. Found by simulating seeds with no change
    (standard normal log ratios): at each look, the boundary that the rounds
    not yet stopped cross with the probability that look may spend. The
    spread is estimated at every look, so the boundaries are for t
    statistics, not z ones."""
    rng = np.random.default_rng(_PATH_SEED)
    total = np.zeros(_PATHS)
    squares = np.zeros(_PATHS)
    alive = np.ones(_PATHS, dtype=bool)
    spent_before = 0.0
    bounds = []
    for n in range(1, looks[-1] + 1):
        x = rng.standard_normal(_PATHS)
        total += x
        squares += x * x
        if n not in looks:
            continue
        mean = total / n
        sd = np.sqrt(np.maximum(squares - n * mean * mean, 0.0) / (n - 1))
        t = np.abs(mean) / (sd / math.sqrt(n))
        spent = obrien_fleming_spent(n / looks[-1], alpha)
        crossings = int(round((spent - spent_before) * _PATHS))
        candidates = np.sort(t[alive])[::-1]
        if crossings <= 0:
            bound = math.inf
        else:
            bound = float(candidates[min(crossings, len(candidates) - 1)])
        bounds.append(bound)
        alive &= t <= bound
        spent_before = spent
    return tuple(bounds)


@dataclass(frozen=True)
class SequentialDesign:
    """The planned looks (seeds at each round) of ``seeds: {min, max, step}``."""

    looks: tuple[int, ...]
    alpha: float = ALPHA

    @classmethod
    def from_rounds(cls, low: int, high: int, step: int) -> SequentialDesign:
        looks = list(range(low, high + 1, step))
        if looks[-1] != high:
            looks.append(high)
        return cls(tuple(looks))

    def look_of(self, seeds: int) -> int:
        """The index of the look a round with ``seeds`` seeds is: the last
        planned look it has reached (the first if it has reached none)."""
        reached = [i for i, n in enumerate(self.looks) if n <= seeds]
        return reached[-1] if reached else 0

    @classmethod
    def of(cls, spec: Spec) -> SequentialDesign | None:
        """The design of a spec that runs seeds in rounds; None otherwise."""
        r = spec.seed_rounds
        return None if r is None else cls.from_rounds(r.min, r.max, r.step)

    def t_critical(self, look: int, seeds: int) -> float:
        """The t value of a look's repeated confidence interval over
        ``seeds`` seeds. A look with fewer seeds than planned (runs failed)
        keeps the look's tail probability at its own degrees of freedom."""
        planned = self.looks[look]
        bound = t_boundaries(self.looks, self.alpha)[look]
        if seeds == planned or not math.isfinite(bound):
            return bound
        tail = float(scipy_stats.t.sf(bound, planned - 1))
        return float(scipy_stats.t.isf(tail, max(seeds - 1, 1)))

    def level(self, look: int) -> float:
        """The coverage of a look's interval on its own."""
        bound = t_boundaries(self.looks, self.alpha)[look]
        return float(1 - 2 * scipy_stats.t.sf(bound, self.looks[look] - 1))
