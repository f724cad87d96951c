"""Each variant's simulated time, from its own expected cycle time.

Where every measured client of a variant runs the rounds workload with
``cycles`` (it ends after that many turns of every phase), the variant
measures ``slack`` times what its cycles are expected to take: the rounds
workload's ``cycle_seconds`` at the variant's ``pace`` (a matrix
multiplies its levels' paces: a lossy path, a second user, fewer
connections each run rounds slower). A fast variant then stops soon after
its clients have ended instead of idling for the slowest variant's time.
"""

from __future__ import annotations

import math

from runner.params import Where
from runner.spec.model import Network, Variant, Workload
from workloads.models import Rounds


def variant_measures(
    variants: tuple[Variant, ...],
    network: Network,
    workloads: dict[str, Workload],
    longest: float,
    where: Where,
) -> dict[str, float]:
    """Seconds of traffic per variant whose measured clients all end after
    their cycles; at most ``longest`` (duration.measure), else an error."""
    found: dict[str, float] = {}
    for variant in variants:
        seconds = _expected(variant, network, workloads, where)
        if seconds is not None:
            found[variant.name] = float(math.ceil(seconds))
    slowest = max(found, key=found.__getitem__, default=None)
    if slowest is not None and found[slowest] > longest:
        raise where.child("duration.measure").error(
            f"at least {found[slowest]:.0f} s: variant {slowest}'s clients are expected to "
            f"take {found[slowest]:.0f} s (slack included) for their cycles, more than the "
            f"{longest:.0f} s measured at most"
        )
    return found


def _expected(
    variant: Variant, network: Network, workloads: dict[str, Workload], where: Where
) -> float | None:
    """``variant``'s seconds of traffic, slack included; None unless each of
    its measured clients ends after its cycles."""
    groups = [
        g
        for g in network.clients
        if g.measured
        and variant.clients.get(g.name, g.count) + variant.add_clients.get(g.name, 0) > 0
    ]
    times = []
    for group in groups:
        workload = workloads[group.workload]
        params = workload.params
        if workload.model != "rounds" or not params["cycles"]:
            return None
        if params["rate"] is None:
            raise where.child(f"workloads.{workload.name}.params.rate").error(
                "expected a round's expected throughput (such as 20 Mbit): with cycles it "
                "sizes each variant's simulated time"
            )
        cycle = Rounds.cycle_seconds(params, variant.pace or 1.0)
        times.append(params["slack"] * params["cycles"] * cycle)
    return max(times) if times else None
