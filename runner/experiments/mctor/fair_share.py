"""Claim M8's model beside the measurement: m TCP connections among k flows
sharing a link get m / (1 + (m - 1) / k) of one flow's share (one path
connection among k - 1 others gets 1 / k of the link; with m connections
its share is m / (k - 1 + m)). The measured figure is the throughput of a
round over N connections against one connection's in the same scenario
and loss, paired by seed (runner.experiments.mctor.loss_gain)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.analyses.stats import Estimate
from runner.experiments.mctor.loss_gain import LossGain
from runner.spec.model import Spec, Variant


def fair_share(m: int, k: int) -> float:
    """The shares of a link that ``m`` connections get among ``k`` flows
    (the path's one connection counted in ``k``), in units of one share."""
    if m < 1 or k < 1:
        raise ValueError(f"expected m >= 1 and k >= 1, got m={m}, k={k}")
    return m / (1 + (m - 1) / k)


@dataclass(frozen=True)
class ShareCheck:
    variant: str
    reference: str
    phase: str
    connections: int  # m
    flows: int  # k: the greedy competing flows at the middle, plus the path's connection
    predicted: float  # M8's shares
    measured: Estimate  # the round's throughput over the reference's, paired by seed


def competing_flows(spec: Spec, variant: Variant) -> int:
    """Greedy TCP flows sharing the middle's link with the path in
    ``variant``: paced flows take their rate, not a share, and count none."""
    traffic = spec.network.cross_traffic
    if traffic is None or variant.cross_rate is not None or "middle" not in traffic.roles:
        return 0
    return traffic.flows if variant.cross_flows is None else variant.cross_flows


def share_checks(spec: Spec, gains: Sequence[LossGain]) -> list[ShareCheck]:
    """One per gain of N connections over one whose N is known."""
    by_name = {v.name: v for v in spec.variants}
    checks = []
    for g in gains:
        variant = by_name[g.variant]
        m = variant.expect.get("mctor_connections")
        if not m or m < 2:
            continue
        k = competing_flows(spec, variant) + 1
        checks.append(
            ShareCheck(g.variant, g.reference, g.phase, m, k, fair_share(m, k), _throughput(g))
        )
    return checks


def _throughput(gain: LossGain) -> Estimate:
    """The throughput ratio from the change of completion time: 1 / (1 + change)."""
    c = gain.change

    def inverse(value: float | None) -> float | None:
        return None if value is None or value <= -1 else 1 / (1 + value)

    return Estimate(1 / (1 + c.mean), inverse(c.high), inverse(c.low), c.n, signed=False)
