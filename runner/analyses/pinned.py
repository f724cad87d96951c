"""The pinned-path check: does each measured client of a variant with
``pinned_path`` run on the relays it was held to, and do its multipath
legs each take their own guard and middle?

A pin that tor ignored (a misspelt fingerprint, a relay without the flag
its position needs) leaves tor drawing paths of its own, and the variance
it was meant to remove back in the comparison; a set whose legs share a
guard or middle is not the design's multipath. Per run of a pinned
variant and measured client: its three-hop circuits that carried a stream
or joined a multipath set (onion-service circuits are tor's own), how many
ran off its relays, and its sets with a leg on the first guard and middle
of the draw (plain Tor's path, where plain pins one leg).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.errors import DataMissingError
from runner.network.mixing import variant_plan
from runner.network.pinned_paths import PinnedPath, drawn_paths, pinned_paths
from runner.tables.schema import CircuitRow


@dataclass(frozen=True)
class PinnedRun:
    """One measured client's circuits in one run of a pinned variant."""

    variant: str
    seed: int
    host: str
    circuits: int  # three-hop circuits that carried a stream or joined a set
    off_path: int  # of those, circuits on a relay the client was not held to
    sets: int  # multipath sets it linked
    shared_relay_sets: int  # sets two of whose legs share a guard or middle
    first_path_sets: int  # sets with a leg on the draw's first guard and middle

    def failure(self) -> Failure | None:
        where = self.host
        check = "pinned-path"
        if self.circuits == 0:
            return Failure(
                self.variant,
                self.seed,
                check,
                "no circuit carried a stream: the pin is untested",
                where,
            )
        if self.off_path:
            return Failure(
                self.variant,
                self.seed,
                check,
                f"{self.off_path} of {self.circuits} circuits ran on relays the client was not "
                "held to: tor drew paths of its own",
                where,
            )
        if self.shared_relay_sets:
            return Failure(
                self.variant,
                self.seed,
                check,
                f"{self.shared_relay_sets} of {self.sets} multipath sets have legs sharing a "
                "guard or middle",
                where,
            )
        return None


@dataclass(frozen=True)
class PinnedResult:
    runs: list[PinnedRun]
    failures: list[Failure]
    # Why no run was checked, where the pins cannot be drawn again here
    # (a data file the draw reads is not on this machine).
    unchecked: str = ""


def _counted(c: CircuitRow) -> bool:
    return (
        c.status == "BUILT"
        and len(c.path) == 3
        and not c.purpose.startswith("HS_")
        and (c.streams > 0 or bool(c.conflux_id))
    )


def pinned_run(
    variant: str,
    seed: int,
    host: str,
    pin: PinnedPath,
    full: PinnedPath,
    circuits: list[CircuitRow],
) -> PinnedRun:
    """``host``'s check in one run: ``pin`` the relays it was held to,
    ``full`` its whole draw (whose first guard and middle are plain's)."""
    mine = [c for c in circuits if _counted(c)]
    sets: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for c in mine:
        if c.conflux_id:
            sets[c.conflux_id].append(c.path)
    shared = sum(
        len({p[0] for p in legs}) < len(legs) or len({p[1] for p in legs}) < len(legs)
        for legs in sets.values()
    )
    first = (full.guards[0], full.middles[0])
    return PinnedRun(
        variant,
        seed,
        host,
        len(mine),
        sum(not pin.allows(c.path) for c in mine),
        len(sets),
        shared,
        sum(any(p[:2] == first for p in legs) for legs in sets.values()),
    )


def pinned_result(inp: Inputs) -> PinnedResult:
    spec = inp.spec
    pinned = {v.name: v for v in spec.variants if v.pinned_path > 0}
    by_client: dict[tuple[str, int, str], list[CircuitRow]] = defaultdict(list)
    for c in inp.circuits:
        if c.variant in pinned:
            by_client[(c.variant, c.seed, c.host)].append(c)
    runs = []
    for (variant, seed), clients in sorted(inp.measured_clients.items()):
        if variant not in pinned:
            continue
        try:
            plan = variant_plan(spec, pinned[variant], seed)
        except DataMissingError as missing:
            return PinnedResult([], [], unchecked=str(missing))
        pins = pinned_paths(spec, pinned[variant], plan)
        full = drawn_paths(spec, plan)
        for host, _ in clients:
            if host in pins:
                circuits = by_client[(variant, seed, host)]
                runs.append(pinned_run(variant, seed, host, pins[host], full[host], circuits))
    failures = [f for r in runs if (f := r.failure()) is not None]
    return PinnedResult(runs, failures)
