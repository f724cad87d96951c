"""Where each measured limit sat and what it did: the multiple of the
reference's class bandwidth a variant's limit was set to, the limit's
value on each seed, and the bulk and web clients' bandwidth against the
variant it was measured from. What the limit does to each class is what
the hypotheses ask (claims T1 and T2), so nothing here judges it; the
checks that the limit ran are runner.experiments.tortoise.limits'."""

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


def limit_settings(
    spec: Spec, relays: Iterable[RelayRow], bandwidths: list[ClientBandwidth]
) -> list[LimitSetting]:
    """One per variant whose rate limit is measured (``consensus_from``)."""
    rates: dict[tuple[str, int], int] = {}
    for r in relays:
        if r.client_limit_rate:
            key = (r.variant, r.seed)
            rates[key] = min(rates.get(key, r.client_limit_rate), r.client_limit_rate)
    means = _class_means(bandwidths)
    seeds = sorted({b.seed for b in bandwidths})
    settings = []
    for v in spec.variants:
        measured = v.consensus_from.get(RATE)
        if measured is None:
            continue
        only_limit = _only_the_limit(v, spec.variant(measured.variant))
        per_seed = [
            SeedLimit(
                seed,
                rates.get((v.name, seed)),
                _ratio(means, v.name, measured.variant, seed, "bulk"),
                _ratio(means, v.name, measured.variant, seed, "web"),
            )
            for seed in seeds
            if (v.name, seed, "bulk") in means or (v.name, seed, "web") in means
        ]
        settings.append(
            LimitSetting(
                v.name,
                measured.describe(),
                measured.variant,
                only_limit,
                per_seed,
                _mean([s.bulk for s in per_seed]),
                _mean([s.web for s in per_seed]),
            )
        )
    return settings
