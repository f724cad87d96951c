"""MCTor's gain against loss: for each variant of a matrix with a
``connections`` factor, the change of its rounds' completion time against
the one-connection variant of the same other levels (scenario, loss),
paired by seed, beside the loss rate of its network. The design's finding
is the shape of that curve: one connection per hop is held back by loss
on a long path (TCP's Mathis rate), N connections less so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.analyses.stats import Estimate, ratio_change_ci
from runner.analyses.workload_rounds import Round, seed_completions
from runner.spec.model import Spec, Variant

CONNECTIONS = "connections"  # the factor whose levels set N and the stream rule


@dataclass(frozen=True)
class LossGain:
    variant: str
    reference: str  # the one-connection variant of the same other levels
    phase: str
    others: str  # the other factors' levels but loss, e.g. "base"
    connections: str  # the level, e.g. "n5-uniform"
    loss: float  # the largest loss rate on a link of the variant's network
    change: Estimate  # of the mean round completion time; negative: faster


def loss_rate(spec: Spec, variant: Variant) -> float:
    """The largest packet loss on any link of the topology the variant runs on."""
    loss = (variant.topology or spec.network.topology).params.get("packet_loss", 0.0)
    if isinstance(loss, dict):
        return max((float(v) for v in loss.values()), default=0.0)
    return float(loss)


def _one_connection(variant: Variant) -> bool:
    return variant.expect.get("mctor_connections") == 1 and "mctor_circuits" not in variant.expect


def loss_gains(
    spec: Spec, all_rounds: Sequence[Round], loss_factor: str = "loss"
) -> list[LossGain]:
    """One per (variant with more than one connection, phase) that has a
    one-connection reference among the matrix's variants."""
    matrix = [v for v in spec.variants if CONNECTIONS in v.factors]
    references = {
        tuple(sorted((k, x) for k, x in v.factors.items() if k != CONNECTIONS)): v
        for v in matrix
        if _one_connection(v)
    }
    completions = seed_completions(all_rounds)
    phases = sorted({phase for _, phase in completions})
    gains = []
    for v in matrix:
        others = tuple(sorted((k, x) for k, x in v.factors.items() if k != CONNECTIONS))
        reference = references.get(others)
        if reference is None or reference is v:
            continue
        for phase in phases:
            mine = completions.get((v.name, phase), {})
            theirs = completions.get((reference.name, phase), {})
            ratios = [mine[s] / theirs[s] for s in sorted(mine) if s in theirs and theirs[s] > 0]
            if not ratios:
                continue
            gains.append(
                LossGain(
                    v.name,
                    reference.name,
                    phase,
                    " ".join(x for k, x in others if k != loss_factor) or "–",
                    v.factors[CONNECTIONS],
                    loss_rate(spec, v),
                    ratio_change_ci(ratios),
                )
            )
    return gains
