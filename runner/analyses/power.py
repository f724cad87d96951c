"""How many seeds a hypothesis needs: the chance that an interval over n
seeds gives a decisive verdict (supported, no change that matters, or
contradicted; for an equivalence, ``expect: same``, inside the band or
wholly outside it), for a true change and a spread between seeds, by simulation.

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
from scipy import stats as scipy_stats

from runner.analyses.sequential import (
    ALPHA,
    Reading,
    SequentialDesign,
    criticals,
    seed_draws,
    warm_one_look,
)

PROBABILITY = 0.8  # the chance of a decisive verdict a prediction aims for
MAX_SEEDS = 1000  # beyond this, "more than 1000" is the honest answer
MIN_SEEDS = 3  # fewer give no interval to read a verdict from
_REPS = 4000


@dataclass(frozen=True)
class Target:
    """What a hypothesis asks: the expected direction (-1 or +1; 0 for an
    equivalence, ``expect: same``) and the smallest change that matters (a
    fraction; an equivalence's margin)."""

    direction: int
    smallest_change: float

    @property
    def band(self) -> tuple[float, float]:
        """The changes too small to matter, as (low, high) fractions: the
        smallest change on the expected side and its mirror on the log
        scale (a 10% decrease: -10% to +11.1%; a 10% increase: -9.1% to
        +10%), so that a ratio and its inverse are alike. An equivalence's
        is an increase's (within 15%: -13.0% to +15%): within a factor of
        1 + m either way."""
        m = self.smallest_change
        edge = abs(math.log1p(-m) if self.direction < 0 else math.log1p(m))
        return math.expm1(-edge), math.expm1(edge)


def decisive(low: np.ndarray, high: np.ndarray, target: Target) -> np.ndarray:
    """Which intervals (as changes) give a verdict other than undetermined:
    the rule of runner/analyses/answers.verdict, on arrays."""
    below, above = target.band
    if target.direction == 0:  # inside the band, or wholly outside it
        return ((low > below) & (high < above)) | (low > above) | (high < below)
    beyond = high < below if target.direction < 0 else low > above
    inside = (low > below) & (high < above)
    other_side = low > 0 if target.direction < 0 else high < 0
    return beyond | inside | other_side


def _intervals(
    rng: np.random.Generator, effect: float, sd: float, n: int, critical: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated intervals (as changes) over n seeds, ``critical`` the
    lower and upper sides' t values."""
    mean = effect + sd / math.sqrt(n) * rng.standard_normal(_REPS)
    spread = sd * np.sqrt(rng.chisquare(n - 1, _REPS) / (n - 1))
    se = spread / math.sqrt(n)
    return np.expm1(mean - critical[0] * se), np.expm1(mean + critical[1] * se)


def one_look_criticals(
    n: int, alpha: float, target: Target, reading: Reading | None, split: bool
) -> tuple[float, float]:
    """The lower and upper t values of one look over n seeds at ``alpha``,
    read as ``reading`` says (the default reading unless given), split
    toward the target's direction where ``split``."""
    design = (reading or Reading()).one_look(n)
    return criticals(design, 0, n, alpha, target.direction if split else None)


def decisive_probability(
    effect: float,
    sd: float,
    n: int,
    target: Target,
    alpha: float = ALPHA,
    reading: Reading | None = None,
    split: bool = False,
) -> float:
    """The chance that the rule's interval for one look over n seeds, at
    level ``alpha``, is decisive, when the true log change is ``effect``
    and seeds spread by ``sd``."""
    if n < MIN_SEEDS:
        return 0.0
    rng = np.random.default_rng(n)
    low, high = _intervals(rng, effect, sd, n, one_look_criticals(n, alpha, target, reading, split))
    return float(decisive(low, high, target).mean())


def seeds_to_decisive(
    effect: float,
    sd: float,
    target: Target,
    probability: float = PROBABILITY,
    alpha: float = ALPHA,
    reading: Reading | None = None,
    split: bool = False,
) -> int:
    """The fewest seeds (at least MIN_SEEDS) whose one-look interval at
    ``alpha`` is decisive with ``probability``; MAX_SEEDS + 1 if none up to
    MAX_SEEDS is."""
    if sd <= 0:
        return MIN_SEEDS
    warm_one_look(alpha, (reading or Reading()).skew)

    def enough(n: int) -> bool:
        found = decisive_probability(effect, sd, n, target, alpha, reading, split)
        return found >= probability

    low, high = MIN_SEEDS, 4
    while not enough(high):
        low, high = high, high * 2
        if low > MAX_SEEDS:
            return MAX_SEEDS + 1
    while low < high:  # the chance grows with n, up to simulation noise
        mid = (low + high) // 2
        if enough(mid):
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
        level = design.alpha if alpha is None else alpha
        below, above = criticals(design, k, n, level, None)
        se = spread / math.sqrt(n)
        with np.errstate(over="ignore"):  # an early look's interval can pass +inf: no matter
            low, high = np.expm1(mean - below * se), np.expm1(mean + above * se)
        done = np.ones(reps, dtype=bool)
        for target in targets:
            done &= decisive(low, high, target)
        newly = done & ~stopped
        seeds_used[newly] = n
        missed[newly] = (mean - below * se > effect)[newly] | (mean + above * se < effect)[newly]
        stopped |= done
    return SequentialOutcome(float(stopped.mean()), float(seeds_used.mean()), float(missed.mean()))


_SPREAD_NODES = 16  # quantiles of a sample sd's distribution that decisive_chance averages over


def decisive_chance(
    effect: np.ndarray,
    sd: np.ndarray,
    n: np.ndarray,
    target: Target,
    alpha: float = ALPHA,
    reading: Reading | None = None,
    split: bool = False,
) -> np.ndarray:
    """``decisive_probability`` without simulation, for many (effect, sd, n)
    at once: the chance over the seeds' mean in closed form (normal seeds),
    averaged over the seeds' sample sd at _SPREAD_NODES equally likely
    quantiles of its chi-square distribution. It agrees with the
    simulation to within the latter's noise (tests/test_joint_plan.py)."""
    effect, sd, n = (
        np.ravel(a)
        for a in np.broadcast_arrays(
            np.asarray(effect, float), np.asarray(sd, float), np.asarray(n)
        )
    )
    distinct, index = np.unique(n, return_inverse=True)
    # Seen as a decrease (an increase from the other side): the upper side
    # is the one toward the claim, the lower the one away from it.
    sides = np.array(
        [
            _toward_away(one_look_criticals(int(k), alpha, target, reading, split), target)
            for k in distinct
        ]
    ).reshape(-1, 2)[index]
    levels = (np.arange(_SPREAD_NODES) + 0.5) / _SPREAD_NODES
    spread = np.sqrt(scipy_stats.chi2.ppf(levels, distinct[:, None] - 1) / (distinct[:, None] - 1))[
        index
    ]
    root_n = np.sqrt(n)[:, None]
    toward = (sides[:, 0] * sd)[:, None] * spread / root_n
    away = (sides[:, 1] * sd)[:, None] * spread / root_n
    se = np.maximum(sd, 1e-300)[:, None] / root_n
    if target.direction == 0:
        return _equivalence_chance(effect, se, toward, away, target)
    # An increase is a decrease seen from the other side.
    sign = -1.0 if target.direction > 0 else 1.0
    below, above = (math.log1p(edge) for edge in target.band)
    low, high = (below, above) if sign > 0 else (-above, -below)
    mean = (sign * effect)[:, None]

    def under(x: np.ndarray) -> np.ndarray:
        return np.asarray(scipy_stats.norm.cdf((x - mean) / se))

    beyond = under(low - toward)  # the whole interval past the smallest change
    other_side = 1 - under(away)  # the whole interval on the other side of zero
    inside = np.clip(under(high - toward) - under(low + away), 0, None)  # within the band
    # Inside the band and the other side overlap where the band reaches past the half width.
    overlap = np.clip(under(high - toward) - under(np.maximum(low + away, away)), 0, None)
    return np.asarray((beyond + other_side + inside - overlap).mean(axis=-1))


def _equivalence_chance(
    effect: np.ndarray, se: np.ndarray, lower: np.ndarray, upper: np.ndarray, target: Target
) -> np.ndarray:
    """``decisive_chance`` of an equivalence: the seeds' mean (normal, sd
    ``se``) falls where the interval (``lower`` below it, ``upper`` above,
    per spread node) lies inside the band, or wholly beyond either edge."""
    below, above = (math.log1p(edge) for edge in target.band)
    mean = effect[:, None]

    def under(x: np.ndarray) -> np.ndarray:
        return np.asarray(scipy_stats.norm.cdf((x - mean) / se))

    inside = np.clip(under(above - upper) - under(below + lower), 0, None)
    outside = (1 - under(above + lower)) + under(below - upper)
    return np.asarray((inside + outside).mean(axis=-1))


def _toward_away(found: tuple[float, float], target: Target) -> tuple[float, float]:
    """(lower, upper) t values as (toward the claim, away from it)."""
    lower, upper = found
    return (upper, lower) if target.direction < 0 else (lower, upper)


def seeds_to_decisive_many(
    effect: np.ndarray,
    sd: np.ndarray,
    target: Target,
    probability: float = PROBABILITY,
    alpha: float = ALPHA,
    reading: Reading | None = None,
    split: bool = False,
) -> np.ndarray:
    """``seeds_to_decisive`` for many (effect, sd) at once, by
    ``decisive_chance``: the same search (doubling, then halving), each
    pair its own."""
    effect, sd = (
        np.ravel(a) for a in np.broadcast_arrays(np.asarray(effect, float), np.asarray(sd, float))
    )
    low = np.full(effect.shape, MIN_SEEDS)
    high = np.full(effect.shape, 4)

    def chance(e: np.ndarray, s: np.ndarray, k: np.ndarray) -> np.ndarray:
        return decisive_chance(e, s, k, target, alpha, reading, split)

    short = (sd > 0) & (chance(effect, sd, high) < probability)
    while short.any():
        low, high = np.where(short, high, low), np.where(short, high * 2, high)
        short &= low <= MAX_SEEDS
        short[short] = chance(effect[short], sd[short], high[short]) < probability
    beyond = low > MAX_SEEDS
    open_ = (low < high) & ~beyond & (sd > 0)
    while open_.any():
        mid = (low + high) // 2
        ok = np.zeros(effect.shape, dtype=bool)
        ok[open_] = chance(effect[open_], sd[open_], mid[open_]) >= probability
        high = np.where(open_ & ok, mid, high)
        low = np.where(open_ & ~ok, mid + 1, low)
        open_ &= low < high
    return np.where(beyond, MAX_SEEDS + 1, np.where(sd > 0, low, MIN_SEEDS))
