"""Per-client average bandwidth.

A client's average bandwidth is the payload of its completed transfers over
the time they took (the sum of their times to last byte), as the design of
per-client rate limits reports it. Clients are grouped by class, and
clients that also run a relay form a group of their own (``client-relay``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from runner.analyses.stats import KIB, Estimate, level_ci
from runner.tables.schema import ClientRow, TransferRow


@dataclass(frozen=True)
class ClientBandwidth:
    variant: str
    seed: int
    host: str
    group: str
    bytes: int
    seconds: float
    transfers: int

    @property
    def kib_per_s(self) -> float:
        return self.bytes / self.seconds / KIB if self.seconds > 0 else float("nan")


def per_client(transfers: Iterable[TransferRow], clients: list[ClientRow]) -> list[ClientBandwidth]:
    """Each measured client's totals over its completed transfers (clients
    with none are left out: they have no average; background clients'
    Markov streams have no set size)."""
    totals: dict[tuple[str, int, str], list[float]] = defaultdict(lambda: [0, 0.0, 0])
    for t in transfers:
        if t.success and t.ttlb and t.measured:
            entry = totals[(t.variant, t.seed, t.host)]
            entry[0] += t.size
            entry[1] += t.ttlb
            entry[2] += 1
    result = []
    for c in clients:
        done = totals.get((c.variant, c.seed, c.host))
        if done:
            result.append(
                ClientBandwidth(
                    c.variant, c.seed, c.host, c.group, int(done[0]), done[1], int(done[2])
                )
            )
    return result


def group_means(
    bandwidths: list[ClientBandwidth], variants: list[str]
) -> dict[tuple[str, str], Estimate]:
    """(variant, group) -> the mean over seeds of the seed's mean client
    bandwidth (KiB/s), with a 95% t interval across seeds."""
    per_seed: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for b in bandwidths:
        per_seed[(b.variant, b.group)][b.seed].append(b.kib_per_s)
        per_seed[(b.variant, "all")][b.seed].append(b.kib_per_s)
    return {
        key: level_ci([sum(v) / len(v) for v in seeds.values()])
        for key, seeds in sorted(
            per_seed.items(), key=lambda kv: (variants.index(kv[0][0]), kv[0][1])
        )
        if key[0] in variants
    }
