"""An experiment's whole stopping rule, simulated across its hypotheses at
once.

`runner experiment` stops its rounds of seeds at the first look where every
hypothesis has a decisive verdict, or at ``max`` seeds
(runner/planning/seed_rounds.py); at each look the exploratory hypotheses
are read at alpha each and the confirmatory ones by Holm's step-down over
the family (runner/analyses/family.py: one test per claim, Holm's
step-down across claims). The rounds wait for the confirmatory family (for
every hypothesis where the spec tests no claim). So the chance that the
rounds decide them, and the seeds they run, belong to the hypotheses
together: four hypotheses each decided by some ``max`` with 80% probability
are all decided by it less often, and the rounds go on until the slowest is
decided. This module simulates that rule on seeds drawn for every
hypothesis at once.

Assumptions, stated where they are used:

- a seed's log ratios (variant over reference), one per hypothesis, are
  jointly normal: each hypothesis's true change and spread, and the
  correlations between hypotheses that ``correlation`` estimates from a
  pilot. The design's boundaries allow for skewed seeds
  (runner/analyses/sequential.py); the simulation draws no skew;
- every hypothesis is read at every look over all the seeds run so far.
  With ``later: hypotheses`` a decided hypothesis's variants stop running
  and its verdict stays; reading it again, as here, can only delay the
  stop, so the figures lean to the cautious side;
- beyond SIMULATED_UP_TO seeds the rule is not simulated (its boundaries
  take long to place): see ``approximate_rule``.

The generator's seed is fixed, so figures are reproducible, and every
design is simulated on the same draws, so a larger ``max`` is not judged
on luckier seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from runner.analyses.family import FamilyShape, run_family
from runner.analyses.power import MAX_SEEDS, MIN_SEEDS, PROBABILITY, Target, decisive
from runner.analyses.sequential import ALPHA, Reading, SequentialDesign, criticals
from runner.spec.model import DEFAULT_DECIDE_FROM

FIRST_ROUND = 5  # the rules planned: seeds {min: 5, step: 2}, deciding from DEFAULT_DECIDE_FROM
STEP = 2
SIMULATED_UP_TO = 81  # rules with more seeds than this are approximated, not simulated
# Beyond that, an O'Brien-Fleming rule with looks every 2 seeds needs about
# 10% more seeds at its last look than a fixed-size interval ((2.04 / 1.96)^2
# with many looks) and, with a true change, stops on average near the
# fixed size.
LAST_LOOK_INFLATION = 1.1
MIN_COMMON_SEEDS = 3  # fewer seeds in common tell nothing of a correlation
SHRINK = 0.5  # a pilot's correlations are taken halfway toward none
DEFAULT_READING = Reading()
REPS = 4000  # simulated experiments: a probability near 80% to about 0.6 points
_SEED = 43


@dataclass(frozen=True)
class Question:
    """One hypothesis as the simulation sees it: its true change (the mean
    log ratio), the spread of a seed's log ratio (sd), what it asks, and
    whether it is in the confirmatory family (answers.family)."""

    name: str
    effect: float
    sd: float
    target: Target
    confirmatory: bool
    claim: str | None = None  # its claim's id, in the family; a claim's are in committed order


@dataclass(frozen=True)
class JointOutcome:
    all_decided: float  # P(every hypothesis the rounds wait for decisive, by the last look)
    confirmatory_decided: float  # P(every confirmatory one decisive where the rounds stop)
    expected_seeds: float  # seeds run: the first look deciding them, else the last


@dataclass(frozen=True)
class JointRule:
    """The smallest ``max`` of seeds {min: FIRST_ROUND, step: STEP} whose
    rule decides every hypothesis with PROBABILITY, and its outcome;
    ``simulated``: False where ``approximate_rule`` gave it."""

    rule_max: int
    outcome: JointOutcome
    simulated: bool = True


# The (lower, upper) t values at a level, split toward a direction (or even: None).
Critical = Callable[[float, int | None], tuple[float, float]]


def family_shape(questions: Sequence[Question]) -> FamilyShape:
    """The family of ``questions`` as runner/analyses/family.py takes it."""
    chains: dict[str, list[int]] = {}
    exploratory = []
    for i, q in enumerate(questions):
        if q.confirmatory:
            chains.setdefault(q.claim or q.name, []).append(i)
        else:
            exploratory.append(i)
    return FamilyShape(tuple(tuple(c) for c in chains.values()), tuple(exploratory))


def waited_for(questions: Sequence[Question]) -> np.ndarray:
    """Which hypotheses the rounds wait for: the confirmatory ones, or all
    where none is."""
    confirmatory = np.array([q.confirmatory for q in questions], dtype=bool)
    return confirmatory if confirmatory.any() else np.ones(len(questions), dtype=bool)


def correlation(per_seed: Sequence[Mapping[int, float]]) -> np.ndarray:
    """The correlation between hypotheses' per-seed log ratios (``per_seed``:
    per hypothesis, seed -> its log ratio), for the simulation.

    Each pair is estimated on the seeds both have, and taken halfway toward
    no correlation (SHRINK): a handful of pilot seeds' correlation is noisy,
    and halving it keeps the matrix positive definite (a sample correlation
    on common seeds has no negative eigenvalue, so half of it plus half the
    identity has none under 0.5). A pair with fewer than MIN_COMMON_SEEDS
    seeds in common, or whose log ratios do not vary, is taken as
    uncorrelated. Pairs estimated on different seeds need not fit together;
    where the matrix is then not positive definite it is taken halfway
    toward the identity again until it is."""
    size = len(per_seed)
    found = np.eye(size)
    for i, j in combinations(range(size), 2):
        common = sorted(set(per_seed[i]) & set(per_seed[j]))
        if len(common) < MIN_COMMON_SEEDS:
            continue
        a = np.array([per_seed[i][s] for s in common])
        b = np.array([per_seed[j][s] for s in common])
        if np.std(a) > 0 and np.std(b) > 0:
            found[i, j] = found[j, i] = SHRINK * float(np.corrcoef(a, b)[0, 1])
    while size and np.linalg.eigvalsh(found)[0] <= 1e-9:
        found = SHRINK * found + (1 - SHRINK) * np.eye(size)
    return found


def family_decided(
    mean: np.ndarray,
    sd: np.ndarray,
    seeds: int,
    questions: Sequence[Question],
    critical: Critical,
    alpha: float = ALPHA,
) -> np.ndarray:
    """Which hypotheses (columns) of each simulated experiment (rows) are
    decisive at a look over ``seeds`` seeds whose log ratios have ``mean``
    and ``sd``: the exploratory ones at ``alpha``, the confirmatory ones by
    the family's rule (runner/analyses/family.py), their intervals split
    toward their claims' directions."""
    known: dict[tuple[float, int | None], tuple[float, float]] = {}

    def t_values(level: np.ndarray, direction: int | None) -> np.ndarray:
        """The (lower, upper) t values at each row's level (few distinct)."""
        distinct, index = np.unique(level, return_inverse=True)
        for a in distinct:
            if (float(a), direction) not in known:
                known[(float(a), direction)] = critical(float(a), direction)
        return np.asarray([known[(float(a), direction)] for a in distinct], dtype=float)[index]

    def decides(rows: np.ndarray, j: int, level: np.ndarray) -> np.ndarray:
        q = questions[j]
        t = t_values(level, q.target.direction if q.confirmatory else None)
        se = sd[rows, j] / math.sqrt(seeds)
        with np.errstate(over="ignore", invalid="ignore"):  # an early look can pass +inf
            low = np.expm1(mean[rows, j] - t[:, 0] * se)
            high = np.expm1(mean[rows, j] + t[:, 1] * se)
        return decisive(low, high, q.target)

    return run_family(family_shape(questions), decides, len(mean), alpha).decided


def _seed_draws(
    questions: Sequence[Question], corr: np.ndarray, seeds: int, reps: int
) -> np.ndarray:
    """Simulated seeds' log ratios, (reps, seeds, hypotheses), jointly normal."""
    rng = np.random.default_rng(_SEED)
    effect, sd = _moments(questions)
    return np.asarray(effect + sd * _correlated(rng, (reps, seeds), corr))


def _moments(questions: Sequence[Question]) -> tuple[np.ndarray, np.ndarray]:
    """Each hypothesis's change and spread, as arrays in ``questions``' order."""
    return np.array([q.effect for q in questions]), np.array([q.sd for q in questions])


def _correlated(rng: np.random.Generator, shape: tuple[int, ...], corr: np.ndarray) -> np.ndarray:
    """Standard normals of ``shape`` plus a last axis of hypotheses,
    correlated as ``corr``."""
    return rng.standard_normal((*shape, len(corr))) @ np.linalg.cholesky(corr).T


def simulate_rule(
    questions: Sequence[Question],
    corr: np.ndarray,
    design: SequentialDesign,
    alpha: float = ALPHA,
    reps: int = REPS,
) -> JointOutcome:
    """The rule of runner/planning/seed_rounds.py on simulated seeds: at each
    of ``design``'s looks every hypothesis's repeated confidence interval (the
    design's t values at its level, as ``family_decided``); stop at the first
    look where all the rounds wait for are decisive."""
    x = _seed_draws(questions, corr, design.looks[-1], reps)
    running = np.ones(reps, dtype=bool)
    seeds_run = np.full(reps, float(design.looks[-1]))
    confirmatory = np.array([q.confirmatory for q in questions], dtype=bool)
    waited = waited_for(questions)
    at_stop = np.zeros((reps, len(questions)), dtype=bool)
    for look, n in enumerate(design.looks):
        if not running.any():
            break
        seen = x[running, :n, :]
        decided = family_decided(
            seen.mean(axis=1),
            seen.std(axis=1, ddof=1),
            n,
            questions,
            _look_critical(design, look, n),
            alpha,
        )
        rows = np.flatnonzero(running)
        at_stop[rows] = decided
        done = decided[:, waited].all(axis=1)
        seeds_run[rows[done]] = n
        running[rows[done]] = False
    return JointOutcome(
        float((~running).mean()),
        _share_all(at_stop[:, confirmatory]),
        float(seeds_run.mean()),
    )


def _look_critical(design: SequentialDesign, look: int, seeds: int) -> Critical:
    """The t values of ``design``'s look over ``seeds`` seeds, at a level."""
    return lambda level, direction: criticals(design, look, seeds, level, direction)


def _share_all(decided: np.ndarray) -> float:
    """The share of rows with every column true; nan with no columns."""
    return float(decided.all(axis=1).mean()) if decided.shape[1] else math.nan


def fixed_size_outcome(
    questions: Sequence[Question],
    corr: np.ndarray,
    seeds: int,
    alpha: float = ALPHA,
    reps: int = REPS,
    reading: Reading = DEFAULT_READING,
) -> JointOutcome:
    """One look at ``seeds`` seeds (a fixed-size design, the rule's one-look
    t value at each hypothesis's level): the chance it decides every
    hypothesis. Drawn from the seeds' means (jointly normal) and their sample
    variances (chi-square), the latter independently of each other: a
    simplification beside exact draws of the seeds, small where this is
    used (many seeds: a sample variance is then near the true one)."""
    rng = np.random.default_rng(_SEED)
    k = len(questions)
    effect, sd = _moments(questions)
    z = _correlated(rng, (reps,), corr)
    mean = effect + sd / math.sqrt(seeds) * z
    spread = sd * np.sqrt(rng.chisquare(seeds - 1, (reps, k)) / (seeds - 1))
    design = reading.one_look(seeds)
    decided = family_decided(
        mean,
        spread,
        seeds,
        questions,
        lambda level, direction: criticals(design, 0, seeds, level, direction),
        alpha,
    )
    confirmatory = np.array([q.confirmatory for q in questions], dtype=bool)
    waited = waited_for(questions)
    return JointOutcome(
        _share_all(decided[:, waited]), _share_all(decided[:, confirmatory]), float(seeds)
    )


def _on_grid(seeds: int, first: int) -> int:
    """The smallest ``max`` of seeds {min: first, step: STEP} of at least ``seeds``."""
    return first + STEP * max(0, math.ceil((seeds - first) / STEP))


def smallest_rule(
    questions: Sequence[Question],
    corr: np.ndarray,
    start: int,
    first: int = FIRST_ROUND,
    alpha: float = ALPHA,
    reading: Reading = DEFAULT_READING,
    decide_from: int = DEFAULT_DECIDE_FROM,
) -> JointRule:
    """The smallest ``max`` of seeds {min: first, step: STEP} whose rule decides
    every hypothesis with PROBABILITY, and the seeds it is expected to run;
    (MAX_SEEDS + 1, nan) if none up to MAX_SEEDS does.

    ``start``: where to look first, the most seeds a hypothesis needs on its
    own (a fixed-size design of it, at Holm's first-step level). From there
    the search goes down while the rule still decides (Holm's later steps
    give a hypothesis a larger level), else up; the chance grows with
    ``max`` up to the simulation's noise. Beyond SIMULATED_UP_TO seeds it
    is ``approximate_rule``'s."""
    if start > MAX_SEEDS:
        return _undecidable()
    high = _on_grid(max(first, start), first)
    if high > SIMULATED_UP_TO:
        return approximate_rule(questions, corr, alpha, high, first, reading)

    def outcome(most: int) -> JointOutcome:
        design = reading.rounds(first, most, STEP, decide_from)
        return simulate_rule(questions, corr, design, alpha)

    found = outcome(high)
    if found.all_decided >= PROBABILITY:
        while high - STEP >= first:
            lower = outcome(high - STEP)
            if lower.all_decided < PROBABILITY:
                break
            high, found = high - STEP, lower
        return JointRule(high, found)
    while high + STEP <= SIMULATED_UP_TO:
        high += STEP
        found = outcome(high)
        if found.all_decided >= PROBABILITY:
            return JointRule(high, found)
    return approximate_rule(questions, corr, alpha, high + STEP, first, reading)


def approximate_rule(
    questions: Sequence[Question],
    corr: np.ndarray,
    alpha: float,
    at_least: int,
    first: int = FIRST_ROUND,
    reading: Reading = DEFAULT_READING,
) -> JointRule:
    """A rule beyond SIMULATED_UP_TO seeds, not simulated: the fewest seeds
    whose fixed-size design decides every hypothesis with PROBABILITY (by
    ``fixed_size_outcome``), times LAST_LOOK_INFLATION for its ``max`` (at
    least ``at_least``, on the grid of seeds {min: first, step: STEP}),
    expected to stop near that fixed size; the chances given are the
    fixed-size design's."""
    low, high = MIN_SEEDS, MAX_SEEDS + 1
    while low < high:
        mid = (low + high) // 2
        if fixed_size_outcome(questions, corr, mid, alpha, reading=reading).all_decided >= (
            PROBABILITY
        ):
            high = mid
        else:
            low = mid + 1
    most = _on_grid(max(at_least, math.ceil(low * LAST_LOOK_INFLATION)), first)
    if low > MAX_SEEDS or most > MAX_SEEDS:
        return _undecidable()
    found = fixed_size_outcome(questions, corr, low, alpha, reading=reading)
    return JointRule(most, found, simulated=False)


def _undecidable() -> JointRule:
    return JointRule(MAX_SEEDS + 1, JointOutcome(math.nan, math.nan, math.nan), simulated=False)
