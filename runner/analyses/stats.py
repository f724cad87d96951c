"""The statistics the reports use, kept small and explicit."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
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


# A t value for both sides of an interval, or (lower side's, upper side's).
Critical = float | tuple[float, float]


def mean_ci(
    samples: Sequence[float], level: float = 0.95, critical: Critical | None = None
) -> Estimate:
    """The mean with its t interval; ``critical`` replaces the t quantile of
    ``level`` (a group-sequential boundary, see runner/analyses/sequential.py),
    one for both sides or (lower, upper) for an interval split unevenly."""
    values = np.asarray([s for s in samples if not math.isnan(s)], dtype=float)
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), None, None, 0)
    mean = float(values.mean())
    if n == 1:
        return Estimate(mean, None, None, 1)
    sem = float(values.std(ddof=1)) / math.sqrt(n)
    if critical is None:
        critical = float(scipy_stats.t.ppf(0.5 + level / 2, n - 1))
    below, above = critical if isinstance(critical, tuple) else (critical, critical)
    return Estimate(mean, mean - below * sem, mean + above * sem, n)


def ratio_change_ci(
    ratios: Sequence[float], level: float = 0.95, critical: Critical | None = None
) -> Estimate:
    """A relative change from per-seed ratios (variant / reference), as a fraction.

    The t interval is taken over the seeds' log ratios and transformed back,
    so neither the estimate (the geometric mean ratio, minus one) nor its
    bounds can pass -100%."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    on_log = mean_ci(logs, level, critical)
    if on_log.n == 0:
        return Estimate(float("nan"), None, None, 0)
    if on_log.low is None or on_log.high is None:
        return Estimate(math.expm1(on_log.mean), None, None, on_log.n)
    return Estimate(
        math.expm1(on_log.mean), math.expm1(on_log.low), math.expm1(on_log.high), on_log.n
    )


def ratio_ci(ratios: Sequence[float], level: float = 0.95) -> Estimate:
    """A ratio over seeds from per-seed ratios: their geometric mean with the
    t interval of ``ratio_change_ci`` (over the log ratios, transformed
    back), as a level, printed without a sign."""
    change = ratio_change_ci(ratios, level)
    low = None if change.low is None else change.low + 1.0
    high = None if change.high is None else change.high + 1.0
    return Estimate(change.mean + 1.0, low, high, change.n, signed=False)


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


def resample_clients(by_client: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A bootstrap draw of a seed's measured clients, each with its values."""
    names = list(by_client)
    picks = rng.integers(0, len(names), len(names))
    return {f"{names[k]}/{i}": by_client[names[k]] for i, k in enumerate(picks)}


def resample_within(by_client: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A bootstrap draw of each client's values, the clients kept."""
    return {c: rng.choice(np.asarray(v, float), len(v)) for c, v in by_client.items()}


def resample_values(values: Any, rng: np.random.Generator) -> Any:
    """A bootstrap draw of a seed's values: a list of numbers, or one list
    per measured client (clients drawn first, then each one's values)."""
    if isinstance(values, Mapping):
        return resample_within(resample_clients(values, rng), rng)
    array = np.asarray(values, float)
    return rng.choice(array, len(array))


def bootstrap_change_ci(
    per_seed: Sequence[tuple[Any, Any]],
    q: float,
    reps: int = 2000,
    level: float = 0.95,
    statistic: Callable[[Any], float] | None = None,
) -> Estimate:
    """The change of ``ratio_change_ci`` by a hierarchical bootstrap: resample
    seeds, then each seed's variant and reference values (clients, then each
    client's values, where they are kept per client), take the q-quantile
    ratio per seed (or ``statistic``'s) and their geometric mean; percentile
    interval. A check on the t interval's assumptions; the generator's seed
    is fixed, so reports are reproducible."""
    stat: Callable[[Any], float] = statistic or ClientQuantile(q)
    rng = np.random.default_rng(0)
    pairs = [(v, r) for v, r in per_seed if len(v) and len(r)]
    if statistic is None:  # plain values: the q-quantile is one client's
        pairs = [(_as_clients(v), _as_clients(r)) for v, r in pairs]
    if len(pairs) < 2:
        return Estimate(float("nan"), None, None, len(pairs))
    picks = rng.integers(0, len(pairs), (reps, len(pairs)))
    tops, bottoms = np.empty(picks.shape), np.empty(picks.shape)
    for k, (variant, reference) in enumerate(pairs):
        drawn = picks == k  # a seed drawn twice gets two independent resamples
        count = int(drawn.sum())
        tops[drawn] = statistic_draws(stat, variant, rng, count)
        bottoms[drawn] = statistic_draws(stat, reference, rng, count)
    usable = (tops > 0) & (bottoms > 0)
    logs = np.log(np.divide(tops, bottoms, out=np.ones_like(tops), where=usable))
    counts = usable.sum(axis=1)
    kept = counts > 0
    draws = np.where(usable, logs, 0.0).sum(axis=1)[kept] / counts[kept]
    point = ratio_change_ci([stat(v) / stat(r) for v, r in pairs]).mean
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return Estimate(point, math.expm1(float(low)), math.expm1(float(high)), len(pairs))


def statistic_draws(
    stat: Callable[[Any], float], values: Any, rng: np.random.Generator, count: int
) -> np.ndarray:
    """``count`` bootstrap draws of ``stat`` over ``values`` (see
    ``resample_values``); a ``ClientQuantile`` draws them all at once."""
    if isinstance(stat, ClientQuantile) and isinstance(values, Mapping):
        return stat.draws(values, rng, count)
    return np.array([stat(resample_values(values, rng)) for _ in range(count)], dtype=float)


def _as_clients(values: Any) -> Any:
    return values if isinstance(values, Mapping) else {"": values}


BOOTSTRAP_SEEDS = 5  # fewer seeds give a bootstrap too few values to resample


@dataclass(frozen=True)
class PairedChange:
    estimate: Estimate  # ratio_change_ci of the per-seed ratios
    bootstrap: Estimate | None  # from BOOTSTRAP_SEEDS seeds on
    ratios: list[float]  # variant / reference, per seed


def paired_change(
    per_seed: Sequence[tuple[Any, Any]],
    statistic: Callable[[Any], float],
    critical: float | None = None,
) -> PairedChange:
    """The change of ``statistic`` from (variant values, reference values) per
    seed: seeds where either is empty or not positive are left out.
    ``critical``: the t value the interval uses instead of the 95% one."""
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
    return PairedChange(ratio_change_ci(ratios, critical=critical), boot, ratios)


def interaction_change(
    per_seed: Sequence[tuple[Any, Any, Any, Any]],
    statistic: Callable[[Any], float],
    critical: float | None = None,
) -> PairedChange:
    """The change of one ratio against another on the same seeds: from
    (variant, reference, other variant, other reference) values per seed,
    (variant / reference) / (other variant / other reference). Seeds where
    any is empty or not positive are left out; the interval is taken over
    the seeds' log ratios as for a plain change (no bootstrap)."""
    ratios = []
    for quad in per_seed:
        if any(len(values) == 0 for values in quad):
            continue
        a, b, c, d = (statistic(values) for values in quad)
        if min(a, b, c, d) > 0:
            ratios.append((a / b) / (c / d))
    return PairedChange(ratio_change_ci(ratios, critical=critical), None, ratios)


def quantile(values: Sequence[float], q: float) -> float:
    if len(values) == 0:
        return float("nan")
    return float(np.quantile(np.asarray(values, dtype=float), q))


# Measured client -> its values (numbers, or (size, seconds) pairs), in one seed.
ClientValues = Mapping[str, Sequence[Any]]


def client_quantile(by_client: ClientValues, q: float) -> float:
    """Every measured client counted once: the median, over clients, of each
    client's q-quantile. A client that finished five times as many transfers
    as another weighs the same."""
    per_client = [quantile(values, q) for values in by_client.values() if len(values)]
    return quantile(per_client, 0.5)


@dataclass(frozen=True)
class ClientQuantile:
    """``client_quantile`` at ``q``, as a statistic whose bootstrap draws are
    taken together: a report's intervals draw it hundreds of thousands of
    times, too many for one numpy call per client per draw."""

    q: float

    def __call__(self, by_client: ClientValues) -> float:
        return client_quantile(by_client, self.q)

    def draws(self, by_client: ClientValues, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` draws of the statistic over ``resample_values``'s
        resamples: clients drawn with replacement, then each drawn client's
        values, afresh each time it is drawn."""
        clients = [np.sort(np.asarray(v, float)) for v in by_client.values() if len(v)]
        if not clients:
            return np.full(count, np.nan)
        values_per_draw = sum(len(c) for c in clients)
        step = max(1, _DRAW_BATCH_VALUES // values_per_draw)  # bounds the memory of a batch
        return np.concatenate(
            [self._batch(clients, rng, min(step, count - done)) for done in range(0, count, step)]
            or [np.empty(0)]
        )

    def _batch(self, clients: list[np.ndarray], rng: np.random.Generator, count: int) -> np.ndarray:
        sizes = np.array([len(c) for c in clients])
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        flat = np.concatenate(clients)
        picked = rng.integers(0, len(clients), count * len(clients))
        lengths = sizes[picked]
        segment = np.repeat(np.arange(len(picked)), lengths)
        within = rng.integers(0, lengths[segment])
        # Each client's values are sorted, so sorting the drawn positions
        # (segment by segment) sorts each resample.
        within = np.sort(segment * int(sizes.max()) + within) % int(sizes.max())
        sample = flat[starts[picked][segment] + within]
        first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        position = self.q * (lengths - 1)  # numpy's default (linear) quantile
        low = np.floor(position).astype(np.int64)
        high = np.minimum(low + 1, lengths - 1)
        below, above = sample[first + low], sample[first + high]
        per_client = below + (position - low) * (above - below)
        medians = np.quantile(per_client.reshape(count, len(clients)), 0.5, axis=1)
        return np.asarray(medians, dtype=float)


_DRAW_BATCH_VALUES = 4_000_000

KIB = 1024


@dataclass(frozen=True)
class ClientRate:
    """A seed's mean client bandwidth (KiB/s): over measured clients, each
    one's payload over its transfers' time, from (size, seconds) per
    transfer. Every client counts once."""

    def __call__(self, by_client: ClientValues) -> float:
        rates = []
        for values in by_client.values():
            pairs = np.asarray(values, float).reshape(-1, 2)
            if len(pairs) and pairs[:, 1].sum() > 0:
                rates.append(pairs[:, 0].sum() / pairs[:, 1].sum() / KIB)
        return float(np.mean(rates)) if rates else float("nan")


@dataclass(frozen=True)
class ClientCount:
    """How many values the measured clients have in all (transfers completed)."""

    def __call__(self, by_client: ClientValues) -> float:
        return float(sum(len(v) for v in by_client.values()))


def client_ecdf(by_client: ClientValues) -> tuple[np.ndarray, np.ndarray]:
    """The ECDF with every client weighing the same (each of its values
    1 / its count): sorted values and their cumulative fractions."""
    values: list[float] = []
    weights: list[float] = []
    for client_values in by_client.values():
        if len(client_values):
            values += list(client_values)
            weights += [1 / len(client_values)] * len(client_values)
    if not values:
        return np.array([]), np.array([])
    order = np.argsort(values, kind="stable")
    xs = np.asarray(values, float)[order]
    ys = np.cumsum(np.asarray(weights)[order]) / sum(weights)
    return xs, ys


def ecdf_quantiles(xs: np.ndarray, ys: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The inverse of an ECDF (``xs``, ``ys``) at ``levels``: the smallest
    value whose cumulative fraction reaches each level."""
    index = np.searchsorted(ys, levels - 1e-12, side="left")
    return xs[np.minimum(index, len(xs) - 1)]
