"""The statistics the reports use, kept small and explicit."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class Estimate:
    """An estimate over independent samples (seeds) with a two-sided 95% interval.

    ``signed``: a change, printed with its sign; a level (a time, a rate, a
    count) is printed without one, and its interval never goes below zero."""

    mean: float
    low: float | None  # None when there is a single sample
    high: float | None
    n: int
    signed: bool = True

    def format(
        self, scale: float = 1.0, unit: str = "", digits: int = 1, signed: bool | None = None
    ) -> str:
        """``mean [low, high]``, with a sign if the estimate is a change."""
        if math.isnan(self.mean):
            return "n/a"
        show_sign = self.signed if signed is None else signed
        text = number(self.mean * scale, digits, show_sign) + unit
        if self.low is None or self.high is None:
            return f"{text} (n={self.n}, no CI)"
        low, high = (number(v * scale, digits, show_sign) for v in (self.low, self.high))
        return f"{text} [{low}, {high}]"


def number(value: float, digits: int = 1, signed: bool = False) -> str:
    """``value`` at ``digits`` decimals, as a reader takes it: no "-0.0" (a
    value that rounds to zero is 0), more decimals where rounding would
    reach a round bound it does not reach (-99.996% is not -100%), and no
    decimals from a thousand up, with separators."""
    sign = "+" if signed else ""
    if abs(value) >= 1000:
        return f"{value:{sign},.0f}"
    places = digits
    text = f"{value:{sign}.{places}f}"
    while places < 4 and abs(float(text)) == 100 and float(text) != value:
        places += 1  # a change of -99.996% is not -100%, nor a share of 99.996% all
        text = f"{value:{sign}.{places}f}"
    if float(text) == 0:
        return f"{0:.{digits}f}"
    return text


def mean_ci(samples: Sequence[float], level: float = 0.95) -> Estimate:
    values = np.asarray([s for s in samples if not math.isnan(s)], dtype=float)
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), None, None, 0)
    mean = float(values.mean())
    if n == 1:
        return Estimate(mean, None, None, 1)
    sem = float(values.std(ddof=1)) / math.sqrt(n)
    half = float(scipy_stats.t.ppf(0.5 + level / 2, n - 1)) * sem
    return Estimate(mean, mean - half, mean + half, n)


def ratio_change_ci(ratios: Sequence[float], level: float = 0.95) -> Estimate:
    """A relative change from per-seed ratios (variant / reference), as a fraction.

    The t interval is taken over the seeds' log ratios and transformed back,
    so neither the estimate (the geometric mean ratio, minus one) nor its
    bounds can pass -100%."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    on_log = mean_ci(logs, level)
    if on_log.n == 0:
        return Estimate(float("nan"), None, None, 0)
    if on_log.low is None or on_log.high is None:
        return Estimate(math.expm1(on_log.mean), None, None, on_log.n)
    return Estimate(
        math.expm1(on_log.mean), math.expm1(on_log.low), math.expm1(on_log.high), on_log.n
    )


def level_ci(samples: Sequence[float], level: float = 0.95, ceiling: float = math.inf) -> Estimate:
    """A level that cannot be negative (a time, a rate, a count, a share up
    to ``ceiling``) over seeds.

    The arithmetic mean with its t interval, cut to [0, ceiling]: the
    quantity cannot be outside, and cutting an interval to the values a
    quantity can take keeps its coverage."""
    est = mean_ci(samples, level)
    low = None if est.low is None else max(0.0, est.low)
    high = None if est.high is None else min(ceiling, est.high)
    return Estimate(est.mean, low, high, est.n, signed=False)


def bootstrap_change_ci(
    per_seed: Sequence[tuple[Sequence[float], Sequence[float]]],
    q: float,
    reps: int = 2000,
    level: float = 0.95,
    statistic: Callable[[Any], float] | None = None,
) -> Estimate:
    """The change of ``ratio_change_ci`` by a hierarchical bootstrap: resample
    seeds, then each seed's variant and reference values, take the q-quantile
    ratio per seed (or ``statistic``'s) and their geometric mean; percentile
    interval. A check on
    the t interval's assumptions; the generator's seed is fixed, so reports
    are reproducible."""
    stat = statistic or (lambda values: float(np.quantile(values, q)))
    rng = np.random.default_rng(0)
    pairs = [(np.asarray(v, float), np.asarray(r, float)) for v, r in per_seed if len(v) and len(r)]
    if len(pairs) < 2:
        return Estimate(float("nan"), None, None, len(pairs))
    draws = np.empty(reps)
    for i in range(reps):
        logs = []
        for k in rng.integers(0, len(pairs), len(pairs)):
            variant, reference = pairs[k]
            top = stat(rng.choice(variant, len(variant)))
            bottom = stat(rng.choice(reference, len(reference)))
            if top > 0 and bottom > 0:
                logs.append(math.log(top / bottom))
        draws[i] = np.mean(logs) if logs else np.nan
    draws = draws[~np.isnan(draws)]
    point = ratio_change_ci([stat(v) / stat(r) for v, r in pairs]).mean
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return Estimate(point, math.expm1(float(low)), math.expm1(float(high)), len(pairs))


BOOTSTRAP_SEEDS = 5  # fewer seeds give a bootstrap too few values to resample


@dataclass(frozen=True)
class PairedChange:
    estimate: Estimate  # ratio_change_ci of the per-seed ratios
    bootstrap: Estimate | None  # from BOOTSTRAP_SEEDS seeds on
    ratios: list[float]  # variant / reference, per seed


def paired_change(
    per_seed: Sequence[tuple[Sequence[float], Sequence[float]]],
    statistic: Callable[[Any], float],
) -> PairedChange:
    """The change of ``statistic`` from (variant values, reference values) per
    seed: seeds where either is empty or not positive are left out."""
    ratios, paired = [], []
    for values, reference in per_seed:
        if len(values) == 0 or len(reference) == 0:
            continue
        top, bottom = statistic(values), statistic(reference)
        if top > 0 and bottom > 0:
            ratios.append(top / bottom)
            paired.append((values, reference))
    boot = (
        bootstrap_change_ci(paired, 0.5, statistic=statistic)
        if len(paired) >= BOOTSTRAP_SEEDS
        else None
    )
    return PairedChange(ratio_change_ci(ratios), boot, ratios)


def quantile(values: Sequence[float], q: float) -> float:
    if len(values) == 0:
        return float("nan")
    return float(np.quantile(np.asarray(values, dtype=float), q))


def ecdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and their cumulative fractions."""
    xs = np.sort(np.asarray(values, dtype=float))
    ys = np.arange(1, len(xs) + 1) / len(xs) if len(xs) else np.array([])
    return xs, ys


def dkw_epsilon(n: int, level: float = 0.95) -> float:
    """Half-width of the Dvoretzky-Kiefer-Wolfowitz confidence band of an ECDF."""
    if n == 0:
        return float("nan")
    return math.sqrt(math.log(2 / (1 - level)) / (2 * n))
