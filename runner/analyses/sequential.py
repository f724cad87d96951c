"""A group-sequential stopping rule for seeds run in rounds.

Looking at the interval after every round and stopping once it gives a
verdict would, with 95% intervals, err more often than 5%: each look is
another chance for chance to look like a change. The rule here keeps the
error rate by widening the early looks' intervals: repeated confidence
intervals (Jennison and Turnbull, "Group Sequential Methods", 2000, ch. 9)
at boundaries from the Lan-DeMets alpha-spending function of O'Brien-Fleming
type, alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)), where t is the share of
the planned seeds (``max``) a look has. Every planned look's interval holds
the true change at once with probability 1 - alpha, so a verdict read from
the interval at whichever look the rounds stop is as safe as one fixed-size
interval. Early looks spend little: for normal seeds, with looks at 5, 7 and
9 seeds and alpha 5%, the intervals use t = 4.82, 3.12 and 2.53, where
fixed-size 95% intervals of those seeds would use 2.78, 2.45 and 2.31.

Seeds are the unit and their spread is estimated from a handful of them, so
the boundaries are for t statistics. The first look spends alpha(t1) alone:
its boundary is the t quantile 1 - alpha(t1) / 2 with n1 - 1 degrees of
freedom. Later looks' boundaries are found by simulation (a fixed generator,
so they are the same on every machine), and where a look's share of alpha
is too small for the simulation to place (fewer than MIN_CROSSINGS of the
simulated rounds would cross it), by the t quantile of that share alone,
which errs on the safe side (it ignores that rounds crossing there may have
crossed before).

Those boundaries assume the seeds' log ratios are normal. They are not
always: a few networks can move a change far more than the rest, and with
log ratios skewed like that t statistics from a handful of seeds cross far
boundaries more often than normal theory says (the first looks most). The
rule therefore uses the normal-theory boundaries at a lower level alpha*,
chosen by simulation so that on seeds whose log ratios are as skewed as a
shifted lognormal of skewness SKEW (mean 0: no change) the whole rule
errs at alpha; on normal seeds it errs less. Widening by the seeds' own
skewness instead does not keep the rate: a handful of seeds rarely show
the skew that misleads them. ``tests/test_sequential.py`` checks the error
rate of the whole rule on other simulated seeds, normal and skewed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

from runner.spec.model import Spec

ALPHA = 0.05
SKEW = 2.0  # the skewness of seeds' log ratios the rule keeps its error rate for

_PATHS = 400_000  # simulated rounds of seeds per design: boundaries to about 0.03 points
_PATH_SEED = 29  # fixed, so that a design's boundaries (and reports) are reproducible
_SKEW_SEED = 31  # the skewed rounds' generator
MIN_CROSSINGS = 400  # a look whose share of alpha fewer simulated rounds cross is not simulated
_CALIBRATED_SEEDS = 30  # one look over more seeds takes the level calibrated at this many
_SEARCH_STEPS = 12  # halvings of log(alpha / alpha*) when calibrating: to about 0.2%


def obrien_fleming_spent(fraction: float, alpha: float = ALPHA) -> float:
    """The error rate spent by information fraction ``fraction`` (0..1]."""
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    return float(2 - 2 * scipy_stats.norm.cdf(z / math.sqrt(fraction)))


@cache
def lognormal_sigma(skew: float) -> float:
    """The sigma of the lognormal whose skewness is ``skew`` (> 0)."""

    def excess(sigma: float) -> float:
        w = math.exp(sigma * sigma)
        return (w + 2) * math.sqrt(w - 1) - skew

    return float(optimize.brentq(excess, 1e-6, 5.0))


def seed_draws(rng: np.random.Generator, skew: float, size: int | tuple[int, ...]) -> np.ndarray:
    """Seeds' log ratios with no change, standardised (mean 0, sd 1): normal
    for ``skew`` 0, otherwise a shifted lognormal of that skewness (a long
    right tail: a few networks move the change far more than the rest)."""
    if skew == 0:
        return rng.standard_normal(size)
    sigma = lognormal_sigma(skew)
    w = math.exp(sigma * sigma)
    x = rng.lognormal(0.0, sigma, size)
    return (x - math.sqrt(w)) / math.sqrt((w - 1) * w)


class _Rounds:
    """Simulated rounds of seeds with no change (seeds drawn as
    ``seed_draws``, ``_PATHS`` rounds from a fixed generator), and the |t|
    of their mean at the seed counts asked for. Every design's looks read
    the same rounds, grown seed by seed as a design needs more; the |t| at
    a count already passed but not kept are found by drawing them again."""

    def __init__(self, skew: float) -> None:
        self.skew = skew
        self.columns: dict[int, np.ndarray] = {}
        self._restart()

    def _restart(self) -> None:
        self.rng = np.random.default_rng(_PATH_SEED if self.skew == 0 else _SKEW_SEED)
        self.seeds = 0
        self.total = np.zeros(_PATHS)
        self.squares = np.zeros(_PATHS)

    def t(self, looks: tuple[int, ...]) -> list[np.ndarray]:
        """|t| at each of ``looks`` seeds, a column per look."""
        wanted = set(looks) - set(self.columns)
        if any(n <= self.seeds for n in wanted):
            wanted |= set(self.columns)
            self._restart()
        while wanted and self.seeds < max(wanted):
            self._add_seed(wanted)
        return [self.columns[n] for n in looks]

    def _add_seed(self, keep: set[int]) -> None:
        x = seed_draws(self.rng, self.skew, _PATHS)
        self.total += x
        self.squares += x * x
        self.seeds = n = self.seeds + 1
        if n in keep:
            mean = self.total / n
            sd = np.sqrt(np.maximum(self.squares - n * mean * mean, 0.0) / (n - 1))
            self.columns[n] = (np.abs(mean) / (sd / math.sqrt(n))).astype(np.float32)


@cache
def _rounds(skew: float) -> _Rounds:
    return _Rounds(skew)


def look_statistics(looks: tuple[int, ...], skew: float) -> list[np.ndarray]:
    """|t| of the seeds' mean at each look (a column per look) over the
    simulated rounds with no change, seeds of skewness ``skew``."""
    return _rounds(skew).t(looks)


def _quantile_bound(n: int, share: float) -> float:
    """The t value that |t| over n seeds passes with probability ``share``."""
    return math.inf if share <= 0 else float(scipy_stats.t.isf(share / 2, n - 1))


def _simulated_bound(t: np.ndarray, crossings: int) -> float:
    """The value exactly ``crossings`` of ``t`` exceed."""
    if crossings >= len(t):
        return 0.0
    k = len(t) - 1 - crossings
    return float(np.partition(t, k)[k])


@cache
def t_boundaries(looks: tuple[int, ...], alpha: float = ALPHA) -> tuple[float, ...]:
    """Two-sided boundaries for the t statistic of normal seeds' mean at
    looks with ``looks`` seeds each (increasing), spending alpha by the
    O'Brien-Fleming-type function: the first look's is exact; a later look's
    is the one the simulated rounds not yet stopped cross with the
    probability that look may spend, or the t quantile of that share where
    too few would cross to place it."""
    paths = look_statistics(looks, 0.0) if len(looks) > 1 else []
    alive = np.ones(_PATHS, dtype=bool)
    spent_before = 0.0
    bounds = []
    for k, n in enumerate(looks):
        spent = obrien_fleming_spent(n / looks[-1], alpha)
        share = spent - spent_before
        if k == 0 or share * _PATHS < MIN_CROSSINGS:
            bound = _quantile_bound(n, share)
        else:
            bound = _simulated_bound(paths[k][alive], int(round(share * _PATHS)))
        bounds.append(bound)
        if paths:
            alive &= paths[k] <= bound
        spent_before = spent
    return tuple(bounds)


def error_rate(looks: tuple[int, ...], bounds: tuple[float, ...], skew: float) -> float:
    """The share of simulated rounds with no change (seeds of skewness
    ``skew``) that cross some look's boundary."""
    crossed = np.zeros(_PATHS, dtype=bool)
    for t, bound in zip(look_statistics(looks, skew), bounds, strict=True):
        crossed |= t > bound
    return float(crossed.mean())


@cache
def calibrated_alpha(looks: tuple[int, ...], alpha: float = ALPHA, skew: float = SKEW) -> float:
    """alpha*: the level whose normal-theory boundaries err at ``alpha`` on
    seeds of skewness ``skew`` (``alpha`` itself where they err no more)."""

    def errs(level: float) -> float:
        return error_rate(looks, t_boundaries(looks, level), skew)

    if skew == 0 or errs(alpha) <= alpha:
        return alpha
    low, high = alpha / 1000, alpha
    for _ in range(_SEARCH_STEPS):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if errs(mid) <= alpha else (low, mid)
    return low


def rule_boundaries(looks: tuple[int, ...], alpha: float = ALPHA) -> tuple[float, ...]:
    """The boundaries the rule uses at level ``alpha``: normal theory at
    alpha*, so that seeds as skewed as SKEW err at ``alpha``."""
    return t_boundaries(looks, calibrated_alpha(looks, alpha))


def one_look_critical(seeds: int, alpha: float = ALPHA) -> float:
    """The rule's t value for one look at ``seeds`` seeds (a fixed design).
    Over more than _CALIBRATED_SEEDS seeds, the t quantile at the level
    calibrated for that many: skew misleads less with more seeds, so this
    errs on the safe side."""
    level = calibrated_alpha((min(seeds, _CALIBRATED_SEEDS),), alpha)
    return _quantile_bound(seeds, level)


def warm_one_look(alpha: float = ALPHA) -> None:
    """Calibrate one look at every seed count up to _CALIBRATED_SEEDS, in
    increasing order, as a search over seed counts is about to ask for
    them: the simulated rounds then grow once, where asking for a count
    after a larger one draws them all again (seconds, for a search that
    jumps between counts). The levels found are the same either way."""
    for seeds in range(2, _CALIBRATED_SEEDS + 1):
        calibrated_alpha((seeds,), alpha)


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

    def boundaries(self, alpha: float | None = None) -> tuple[float, ...]:
        """The rule's boundaries at ``alpha`` (the design's unless given)."""
        return rule_boundaries(self.looks, self.alpha if alpha is None else alpha)

    def t_critical(self, look: int, seeds: int, alpha: float | None = None) -> float:
        """The t value of a look's repeated confidence interval over
        ``seeds`` seeds, at level ``alpha`` (the design's unless given). A
        look with fewer seeds than planned (runs failed) keeps the look's
        tail probability at its own degrees of freedom."""
        planned = self.looks[look]
        bound = self.boundaries(alpha)[look]
        if seeds == planned or not math.isfinite(bound):
            return bound
        tail = float(scipy_stats.t.sf(bound, planned - 1))
        return float(scipy_stats.t.isf(tail, max(seeds - 1, 1)))

    def level(self, look: int, alpha: float | None = None) -> float:
        """The coverage of a look's interval on its own."""
        bound = self.boundaries(alpha)[look]
        return float(1 - 2 * scipy_stats.t.sf(bound, self.looks[look] - 1))
