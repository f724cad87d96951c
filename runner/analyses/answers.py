"""Answers to the hypotheses a spec states: an estimate of each change with
its 95% interval, the seeds behind it, and a verdict.

Verdicts, for a change expected in direction d with smallest change m:
supported (the whole interval is beyond m in direction d), no change that
matters (the whole interval inside +-m), contradicted (the whole interval on
the other side of zero, and not inside +-m), otherwise undetermined, with the seeds that
would likely make the interval narrower than m, from the spread between the
seeds seen so far.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from runner.analyses.client_bandwidth import ClientBandwidth
from runner.analyses.mctor import Round
from runner.analyses.transfers import METRICS
from runner.report.stats import Estimate, paired_change, quantile
from runner.spec.hypotheses import QUANTILE_METRICS, Hypothesis
from runner.tables.rows import TransferRow

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NO_CHANGE = "no change that matters"
UNDETERMINED = "undetermined"
MAX_SEEDS = 1000  # beyond this, "more than 1000" is the honest answer


@dataclass(frozen=True)
class Answer:
    hypothesis: Hypothesis
    estimate: Estimate  # relative change, a fraction
    verdict: str
    seeds_needed: int | None = None  # for an undetermined verdict, if the spread is known
    bootstrap: Estimate | None = None


def verdict(estimate: Estimate, h: Hypothesis) -> str:
    low, high = estimate.low, estimate.high
    if low is None or high is None:
        return UNDETERMINED
    m = h.smallest_change
    if (h.direction < 0 and high < -m) or (h.direction > 0 and low > m):
        return SUPPORTED
    # Inside +-m first: a change surely the wrong way but too small to matter
    # is no change that matters, as in an equivalence test.
    if -m < low and high < m:
        return NO_CHANGE
    if (h.direction < 0 and low > 0) or (h.direction > 0 and high < 0):
        return CONTRADICTED
    return UNDETERMINED


def interval_width(log_ratios: Sequence[float], n: int) -> float:
    """The width, as a change, of the 95% interval that ``n`` seeds with the
    spread of ``log_ratios`` would give, centred where these are."""
    sd = float(np.std(log_ratios, ddof=1))
    half = float(scipy_stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    centre = float(np.mean(log_ratios))
    return math.exp(centre + half) - math.exp(centre - half)


def seeds_needed(log_ratios: Sequence[float], smallest_change: float) -> int | None:
    """The fewest seeds whose interval would be narrower than the smallest
    change that matters (the stopping rule's target), if the seeds so far
    tell the spread; None if they cannot (fewer than two)."""
    if len(log_ratios) < 2:
        return None
    for n in range(2, MAX_SEEDS + 1):
        if interval_width(log_ratios, n) < smallest_change:
            return n
    return MAX_SEEDS + 1


def _per_seed_samples(
    h: Hypothesis,
    transfers: Iterable[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round],
) -> tuple[dict[tuple[str, int], list[float]], Callable[[Sequence[float]], float]]:
    """(variant, seed) -> the values the hypothesis's statistic is taken over,
    and that statistic."""
    samples: dict[tuple[str, int], list[float]] = defaultdict(list)
    if h.metric == "round_completion":
        for r in rounds:
            if r.completion is not None and (h.phase is None or r.phase == h.phase):
                samples[(r.variant, r.seed)].append(r.completion)
        return samples, lambda values: float(np.mean(values))
    if h.metric == "downloads_completed":
        for row in transfers:
            if row.measured and row.success and (h.cls is None or row.cls == h.cls):
                samples[(row.variant, row.seed)].append(1.0)
        return samples, lambda values: float(len(values))
    if h.metric == "client_bandwidth":
        for b in bandwidths:
            if h.cls is None or b.group == h.cls:
                samples[(b.variant, b.seed)].append(b.kib_per_s)
        return samples, lambda values: float(np.mean(values))
    value_of = METRICS[h.metric]
    for row in transfers:
        if not row.measured or not row.success:
            continue
        if (h.cls is not None and row.cls != h.cls) or (h.size is not None and row.size != h.size):
            continue
        value = value_of(row)
        if value is not None:
            samples[(row.variant, row.seed)].append(value)
    q = h.quantile if h.metric in QUANTILE_METRICS else 0.5
    return samples, lambda values: quantile(values, q)


def answer(
    h: Hypothesis,
    transfers: Iterable[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
) -> Answer:
    samples, statistic = _per_seed_samples(h, transfers, bandwidths, rounds)
    seeds = [
        (values, samples.get((h.reference, seed), []))
        for (variant, seed), values in sorted(samples.items())
        if variant == h.variant
    ]
    change = paired_change(seeds, statistic)
    estimate, boot = change.estimate, change.bootstrap
    found = verdict(estimate, h)
    needed = (
        seeds_needed([math.log(r) for r in change.ratios], h.smallest_change)
        if found == UNDETERMINED
        else None
    )
    return Answer(h, estimate, found, needed, boot)
