"""Where each limit sat and what it did: how a variant's limit was set (a
multiple of the reference's class bandwidth, measured per seed, or a rate
given in the consensus, against the baseline), the limit's value on each
seed and its multiple of the reference's bulk and web clients' mean there,
and the bulk and web clients' bandwidth against the reference. What the
limit does to each class is what the hypotheses ask (claims T1 and T2), so
nothing here judges it; the checks that the limit ran are
runner.experiments.tortoise.limits'."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from runner.analyses.client_bandwidth import ClientBandwidth
from runner.spec.model import Spec, Variant
from runner.tables.schema import RelayRow

RATE = "perconnbwrate"


@dataclass(frozen=True)
class SeedLimit:
    seed: int
    rate: int | None  # bytes/s the relays were given; None: no run
    bulk: float | None  # the seed's mean bulk client bandwidth over the reference's
    web: float | None
    # The rate over the reference's mean bulk (web) client bandwidth on the
    # seed: where the limit sat against what each class got without it.
    rate_over_bulk: float | None = None
    rate_over_web: float | None = None


@dataclass(frozen=True)
class LimitSetting:
    variant: str
    rule: str  # how the limit was set
    reference: str  # the variant it was measured from
    # Whether the variant differs from its reference by the limit alone, so
    # that its bulk and web ratios are the limit's doing.
    only_the_limit: bool
    seeds: list[SeedLimit]
    bulk: float | None  # mean over seeds of the ratio
    web: float | None
    rate_over_bulk: float | None = None  # mean over seeds
    rate_over_web: float | None = None


def _only_the_limit(variant: Variant, reference: Variant) -> bool:
    """Whether ``variant`` runs ``reference``'s network and torrc, so
    that it differs by its consensus (the limit) alone."""
    same = ("torrc", "fractions", "client_relays", "client_relay_role", "extra_clients")
    more = ("clients", "cross_flows", "topology", "tor")
    return all(getattr(variant, f) == getattr(reference, f) for f in (*same, *more))


def _class_means(bandwidths: Iterable[ClientBandwidth]) -> dict[tuple[str, int, str], float]:
    per: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for b in bandwidths:
        per[(b.variant, b.seed, b.group)].append(b.kib_per_s)
    return {key: statistics.fmean(v) for key, v in per.items()}


def _ratio(
    means: dict[tuple[str, int, str], float], a: str, b: str, seed: int, cls: str
) -> float | None:
    top, bottom = means.get((a, seed, cls)), means.get((b, seed, cls))
    return top / bottom if top is not None and bottom else None


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def _rule(spec: Spec, v: Variant) -> tuple[str, str] | None:
    """How ``v``'s limit was set and the variant it is read against: the
    one it was measured from, or the baseline for a rate given in the
    consensus; None for a variant without a limit of its own."""
    measured = v.consensus_from.get(RATE)
    if measured is not None:
        return measured.describe(), measured.variant
    rate = v.consensus.get(RATE)
    if rate and spec.baseline and spec.baseline != v.name:
        return f"{rate / 1024:g} KiB/s in the consensus, every seed", spec.baseline
    return None


def _seed_limit(
    v: str, reference: str, seed: int, rate: int | None, means: dict[tuple[str, int, str], float]
) -> SeedLimit:
    def over(cls: str) -> float | None:
        mean = means.get((reference, seed, cls))
        return rate / 1024 / mean if rate and mean else None

    return SeedLimit(
        seed,
        rate,
        _ratio(means, v, reference, seed, "bulk"),
        _ratio(means, v, reference, seed, "web"),
        over("bulk"),
        over("web"),
    )


def limit_settings(
    spec: Spec, relays: Iterable[RelayRow], bandwidths: list[ClientBandwidth]
) -> list[LimitSetting]:
    """One per variant with a rate limit of its own, measured
    (``consensus_from``) or given in the consensus."""
    rates: dict[tuple[str, int], int] = {}
    for r in relays:
        if r.client_limit_rate:
            key = (r.variant, r.seed)
            rates[key] = min(rates.get(key, r.client_limit_rate), r.client_limit_rate)
    means = _class_means(bandwidths)
    seeds = sorted({b.seed for b in bandwidths})
    settings = []
    for v in spec.variants:
        found = _rule(spec, v)
        if found is None:
            continue
        rule, reference = found
        per_seed = [
            _seed_limit(v.name, reference, seed, rates.get((v.name, seed)), means)
            for seed in seeds
            if (v.name, seed, "bulk") in means or (v.name, seed, "web") in means
        ]
        settings.append(
            LimitSetting(
                v.name,
                rule,
                reference,
                _only_the_limit(v, spec.variant(reference)),
                per_seed,
                _mean([s.bulk for s in per_seed]),
                _mean([s.web for s in per_seed]),
                _mean([s.rate_over_bulk for s in per_seed]),
                _mean([s.rate_over_web for s in per_seed]),
            )
        )
    return settings
