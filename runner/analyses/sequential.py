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
9 seeds and alpha 5%, normal theory's boundaries are t = 4.82, 3.12 and
2.53, where fixed-size 95% intervals of those seeds would use 2.78, 2.45
and 2.31; the rule's intervals are wider still, by the skew allowance below.

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
boundaries more often than normal theory says, on one side most (the first
looks most). The rule therefore uses the normal-theory boundaries at a
lower level: each one-sided tail share q is read at ratio * q, the ratio
found once per family (``allowance``) by simulation so that on seeds whose
log ratios are as skewed as the design's ``skew`` (a shifted lognormal;
mean 0: no change) the heavier side of the smallest share the family uses
errs at that share. Larger shares then err less than theirs: the ratio a
share needs grows with the share. Widening by the seeds' own skewness
instead does not keep the rate: a handful of seeds rarely show the skew
that misleads them. ``tests/test_sequential.py`` and ``tests/test_family.py``
check the error rate of the whole rule on simulated seeds, normal, lognormal
and exponential-shaped.

A hypothesis that names the direction of its claim reads its interval with
TOWARD of its level on the side that would support the claim and the rest
on the other: the verdict the claim asks about is decided sooner, and the
family's error rate is the same.
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
TOWARD = 0.8  # a directional claim's share of its level on the side that supports it
CALIBRATED_SKEW = 1.0  # the skew a design allows for where it states none

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


SHAPES = ("lognormal", "gamma")  # the skewed shapes the allowance holds for


def seed_draws(
    rng: np.random.Generator,
    skew: float,
    size: int | tuple[int, ...],
    shape: str = "lognormal",
) -> np.ndarray:
    """Seeds' log ratios with no change, standardised (mean 0, sd 1): normal
    for ``skew`` 0, otherwise a long right tail (a few networks move the
    change far more than the rest) of skewness ``skew``: a shifted
    lognormal, or with ``shape`` "gamma" a shifted gamma (at skewness 2 an
    exponential), whose tail is heavier near its mean; "exponential" is
    the gamma of skewness 2 whatever ``skew`` says."""
    if shape == "exponential":
        return rng.standard_exponential(size) - 1.0
    if skew == 0:
        return rng.standard_normal(size)
    if shape == "gamma":
        k = 4 / (skew * skew)
        return (rng.standard_gamma(k, size) - k) / math.sqrt(k)
    sigma = lognormal_sigma(skew)
    w = math.exp(sigma * sigma)
    x = rng.lognormal(0.0, sigma, size)
    return (x - math.sqrt(w)) / math.sqrt((w - 1) * w)


def skewed_from_normal(z: np.ndarray, skew: float, shape: str = "lognormal") -> np.ndarray:
    """``seed_draws``' shapes from standard normals ``z`` (which may be
    correlated): each transformed alone, so draws keep their shape and
    nearly their correlation."""
    if shape == "exponential":
        shape, skew = "gamma", 2.0
    if skew == 0:
        return z
    if shape == "gamma":
        k = 4 / (skew * skew)
        x = scipy_stats.gamma.isf(scipy_stats.norm.sf(z), k)
        return np.asarray((x - k) / math.sqrt(k))
    sigma = lognormal_sigma(skew)
    w = math.exp(sigma * sigma)
    return np.asarray((np.exp(sigma * z) - math.sqrt(w)) / math.sqrt((w - 1) * w))


class _Rounds:
    """Simulated rounds of seeds with no change (seeds drawn as
    ``seed_draws``, ``_PATHS`` rounds from a fixed generator), and the signed
    t of their mean at the seed counts asked for. Every design's looks read
    the same rounds, grown seed by seed as a design needs more; the t at a
    count already passed but not kept are found by drawing them again."""

    def __init__(self, skew: float, shape: str = "lognormal") -> None:
        self.skew = skew
        self.shape = shape
        self.columns: dict[int, np.ndarray] = {}
        self._restart()

    def _restart(self) -> None:
        self.rng = np.random.default_rng(_PATH_SEED if self.skew == 0 else _SKEW_SEED)
        self.seeds = 0
        self.total = np.zeros(_PATHS)
        self.squares = np.zeros(_PATHS)

    def t(self, looks: tuple[int, ...]) -> list[np.ndarray]:
        """t at each of ``looks`` seeds, a column per look."""
        wanted = set(looks) - set(self.columns)
        if any(n <= self.seeds for n in wanted):
            wanted |= set(self.columns)
            self._restart()
        while wanted and self.seeds < max(wanted):
            self._add_seed(wanted)
        return [self.columns[n] for n in looks]

    def _add_seed(self, keep: set[int]) -> None:
        x = seed_draws(self.rng, self.skew, _PATHS, self.shape)
        self.total += x
        self.squares += x * x
        self.seeds = n = self.seeds + 1
        if n in keep:
            mean = self.total / n
            sd = np.sqrt(np.maximum(self.squares - n * mean * mean, 0.0) / (n - 1))
            self.columns[n] = (mean / (sd / math.sqrt(n))).astype(np.float32)


@cache
def _rounds(skew: float, shape: str) -> _Rounds:
    return _Rounds(skew, shape)


def look_statistics(
    looks: tuple[int, ...], skew: float, shape: str = "lognormal"
) -> list[np.ndarray]:
    """t of the seeds' mean at each look (a column per look) over the
    simulated rounds with no change, seeds of skewness ``skew`` and ``shape``."""
    return _rounds(skew, "lognormal" if skew == 0 else shape).t(looks)


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
    too few would cross to place it. One side of a boundary at ``alpha``
    is a one-sided boundary at alpha / 2."""
    paths = [np.abs(t) for t in look_statistics(looks, 0.0)] if len(looks) > 1 else []
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


def crossing_error(
    looks: tuple[int, ...], lower: tuple[float, ...], upper: tuple[float, ...], skew: float
) -> float:
    """The share of simulated rounds with no change (seeds of skewness
    ``skew``) whose t crosses some look's ``upper`` boundary or falls past
    some look's ``lower`` one (both positive), in the shape (SHAPES) and
    with the skewed tail on the side (seeds' skew can run either way) that
    errs most."""
    totals = []
    for shape in SHAPES:
        statistics = look_statistics(looks, skew, shape)
        for sign in (1.0, -1.0):
            crossed = np.zeros(_PATHS, dtype=bool)
            for t, low, high in zip(statistics, lower, upper, strict=True):
                crossed |= (sign * t > high) | (sign * t < -low)
            totals.append(float(crossed.mean()))
    return max(totals)


def error_rate(looks: tuple[int, ...], bounds: tuple[float, ...], skew: float) -> float:
    """The share of simulated rounds with no change (seeds of skewness
    ``skew``) that cross some look's boundary on either side."""
    crossed = np.zeros(_PATHS, dtype=bool)
    for t, bound in zip(look_statistics(looks, skew), bounds, strict=True):
        crossed |= np.abs(t) > bound
    return float(crossed.mean())


@cache
def allowance(looks: tuple[int, ...], tails: tuple[float, float], skew: float) -> float:
    """The skew allowance: the ratio (at most 1) by which every one-sided
    share of a family is read, so that an interval whose sides have the
    one-sided shares ``tails`` (lower, upper), each read at ratio * share,
    errs at most at their sum for seeds of skewness ``skew``, lognormal or
    gamma (exponential at skewness 2), skewed either way. Found once per
    family, at its smallest level (the claims' first step), and applied to
    all its levels: a larger level needs a larger ratio, so it then errs
    less than its level."""
    total = sum(tails)

    def errs(ratio: float) -> float:
        lower, upper = (t_boundaries(looks, 2 * ratio * tail) for tail in tails)
        return crossing_error(looks, lower, upper, skew)

    if skew == 0 or errs(1.0) <= total:
        return 1.0
    low, high = 1e-3, 1.0
    for _ in range(_SEARCH_STEPS):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if errs(mid) <= total else (low, mid)
    return low


def side_tails(weight: float, direction: int | None) -> tuple[float, float]:
    """(lower, upper) one-sided tail shares of an interval at level
    ``weight``: TOWARD of it on the side that supports a claim of
    ``direction`` (-1: the upper bound decides a decrease; +1: the lower an
    increase), the rest on the other; half each without a direction
    (None, or 0: an equivalence, whose band has two edges alike)."""
    if not direction:
        return weight / 2, weight / 2
    toward, away = TOWARD * weight, (1 - TOWARD) * weight
    return (away, toward) if direction < 0 else (toward, away)


@dataclass(frozen=True)
class SequentialDesign:
    """The planned looks (seeds at each round) of ``seeds: {min, max, step}``
    and the skew allowance at ``skew`` for its family's smallest level,
    whose interval's sides have the one-sided shares ``tails``."""

    looks: tuple[int, ...]
    alpha: float = ALPHA
    skew: float = CALIBRATED_SKEW
    tails: tuple[float, float] = (ALPHA / 2, ALPHA / 2)

    @classmethod
    def from_rounds(
        cls,
        low: int,
        high: int,
        step: int,
        decide_from: int = 0,
        skew: float = CALIBRATED_SKEW,
        tails: tuple[float, float] = (ALPHA / 2, ALPHA / 2),
    ) -> SequentialDesign:
        """Looks at ``low``, then every ``step`` seeds, and at ``high``;
        those under ``decide_from`` seeds estimate the spread and decide
        nothing (``high`` is always a look)."""
        looks = list(range(low, high + 1, step))
        if looks[-1] != high:
            looks.append(high)
        deciding = [n for n in looks if n >= decide_from] or [high]
        return cls(tuple(deciding), skew=skew, tails=tails)

    @classmethod
    def one_look(
        cls,
        seeds: int,
        skew: float = CALIBRATED_SKEW,
        tails: tuple[float, float] = (ALPHA / 2, ALPHA / 2),
    ) -> SequentialDesign:
        """A fixed-size design: one look at ``seeds`` seeds."""
        return cls((seeds,), skew=skew, tails=tails)

    def look_of(self, seeds: int) -> int | None:
        """The index of the look a round with ``seeds`` seeds is: the last
        planned look it has reached; None before the first."""
        reached = [i for i, n in enumerate(self.looks) if n <= seeds]
        return reached[-1] if reached else None

    @classmethod
    def of(
        cls, spec: Spec, tails: tuple[float, float] = (ALPHA / 2, ALPHA / 2)
    ) -> SequentialDesign | None:
        """The design of a spec that runs seeds in rounds; None otherwise.
        ``tails``: the sides of its family's smallest level."""
        r = spec.seed_rounds
        if r is None:
            return None
        return cls.from_rounds(r.min, r.max, r.step, r.decide_from, r.skew, tails)

    @property
    def ratio(self) -> float:
        """The skew allowance of this design's family (``allowance``); one
        look over more than _CALIBRATED_SEEDS seeds takes that many's, which
        errs on the safe side (skew misleads less with more seeds)."""
        looks = self.looks
        if len(looks) == 1:
            looks = (min(looks[0], _CALIBRATED_SEEDS),)
        return allowance(looks, self.tails, self.skew)

    def boundaries(self, alpha: float | None = None) -> tuple[float, ...]:
        """The rule's two-sided boundaries at ``alpha`` (the design's unless
        given), half of it on each side."""
        level = self.alpha if alpha is None else alpha
        return self.side_boundaries(level / 2)

    def side_boundaries(self, tail: float) -> tuple[float, ...]:
        """The rule's one-sided boundaries for a tail share ``tail``."""
        return t_boundaries(self.looks, 2 * tail * self.ratio)

    def t_critical(self, look: int, seeds: int, tail: float) -> float:
        """The t value of one side of a look's repeated confidence interval
        over ``seeds`` seeds, for a one-sided share ``tail``. A look with
        fewer seeds than planned (runs failed) keeps the look's tail
        probability at its own degrees of freedom."""
        planned = self.looks[look]
        bound = self.side_boundaries(tail)[look]
        if seeds == planned or not math.isfinite(bound):
            return bound
        sf = float(scipy_stats.t.sf(bound, planned - 1))
        return float(scipy_stats.t.isf(sf, max(seeds - 1, 1)))

    def level(self, look: int, alpha: float | None = None) -> float:
        """The coverage of a symmetric look's interval on its own."""
        bound = self.boundaries(alpha)[look]
        return float(1 - 2 * scipy_stats.t.sf(bound, self.looks[look] - 1))


def one_look_critical(seeds: int, alpha: float = ALPHA, skew: float = CALIBRATED_SKEW) -> float:
    """The rule's t value for one symmetric look at ``seeds`` seeds at level
    ``alpha`` (a fixed design), its allowance found at that level."""
    design = SequentialDesign.one_look(seeds, skew, (alpha / 2, alpha / 2))
    return design.t_critical(0, seeds, alpha / 2)


def warm_one_look(alpha: float = ALPHA, skew: float = CALIBRATED_SKEW) -> None:
    """Calibrate one look at every seed count up to _CALIBRATED_SEEDS, in
    increasing order, as a search over seed counts is about to ask for
    them: the simulated rounds then grow once, where asking for a count
    after a larger one draws them all again (seconds, for a search that
    jumps between counts). The levels found are the same either way."""
    for seeds in range(2, _CALIBRATED_SEEDS + 1):
        allowance((seeds,), (alpha / 2, alpha / 2), skew)


@dataclass(frozen=True)
class Reading:
    """How a family reads its intervals: the skew its allowance is for, and
    the one-sided shares (lower, upper) of its smallest level, where the
    allowance is found (``allowance``)."""

    skew: float = CALIBRATED_SKEW
    tails: tuple[float, float] = (ALPHA / 2, ALPHA / 2)

    def one_look(self, seeds: int) -> SequentialDesign:
        return SequentialDesign.one_look(seeds, self.skew, self.tails)

    def rounds(self, low: int, high: int, step: int, decide_from: int = 0) -> SequentialDesign:
        return SequentialDesign.from_rounds(low, high, step, decide_from, self.skew, self.tails)


def family_reading(first_level: float, directional: bool, skew: float = CALIBRATED_SKEW) -> Reading:
    """The reading of a family whose smallest level is ``first_level``
    (alpha over its claims), its intervals split toward their claims'
    directions where ``directional``."""
    return Reading(skew, side_tails(first_level, -1 if directional else None))


def criticals(
    design: SequentialDesign, look: int, seeds: int, level: float, direction: int | None
) -> tuple[float, float]:
    """The t values of an interval's lower and upper sides at ``level``
    (split toward ``direction``, or even without one), at a look of
    ``design`` over ``seeds`` seeds."""
    lower, upper = side_tails(level, direction)
    return design.t_critical(look, seeds, lower), design.t_critical(look, seeds, upper)
