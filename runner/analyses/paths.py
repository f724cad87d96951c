"""The path check: does each variant's traffic run through the relay
positions its reference's does?

A comparison means "the same network, only the mechanism differs". A
variant whose circuits avoid a position (Conflux legs that never use a
middle relay because middles lack a flag, say) answers another question,
and no count of legs or sets shows it. Per run, two shares per position
(the relays' roles, client relays by the position they take):

- circuits: of the measured clients' circuits that carried a stream, the
  share with at least one hop through a relay of that position (from the
  circuits table's paths; unknown for tables older than the path column);
- bytes: of the bytes all relays read over the measured period, the share
  read by relays of that position (from the relay-load table).

A run fails when its variant's share of a position is under ``TOLERANCE``
of its reference's share on the same seed, where the reference's share is
at least ``MIN_REFERENCE_SHARE`` (a position the reference barely uses
says nothing), and when chance cannot explain it: a small network's
measured clients carry their streams on a handful of circuits, and a few
circuits can all miss a position by chance. So the circuits that went
through the position must be fewer than a variant using it half as often
as its reference would show once in 1 / ``EVIDENCE`` runs (binomial, over
the run's measured circuits); and the bytes, which follow those circuits,
count only where the run has enough circuits for that (even none through
the position would be such evidence) or its circuits have no paths.
Pairs are the spec's comparisons and its hypotheses'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from scipy.stats import binom

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.spec.model import LOAD_ROLES, Spec, client_relay_load_role
from runner.tables.schema import RELAY_LOAD, CircuitRow, RelayLoad

# A variant's share under a tenth of its reference's: the position is avoided.
TOLERANCE = 0.1
# A position that carries under 5% of the reference's circuits or bytes
# is too little used to tell avoiding it from chance.
MIN_REFERENCE_SHARE = 0.05
MEASURES = ("circuits", "bytes")
# How rarely a variant using a position half as often as its reference
# would show as few circuits through it: rarer than this fails the run.
EVIDENCE = 0.001


@dataclass(frozen=True)
class PositionShare:
    """One run's share of circuits or bytes through one relay position."""

    variant: str
    seed: int
    measure: str  # circuits or bytes
    position: str  # a relay role (runner.spec.model.LOAD_ROLES)
    share: float
    total: float  # circuits counted, or bytes per second read by every relay


@dataclass(frozen=True)
class PathFailure:
    variant: str
    reference: str
    seed: int
    measure: str
    position: str
    share: float
    reference_share: float

    def failure(self) -> Failure:
        return Failure(
            self.variant,
            self.seed,
            "paths",
            f"{self.share:.1%} of its {self.measure} through {self.position} relays, against "
            f"{self.reference_share:.1%} for {self.reference} on the same seed (under "
            f"{TOLERANCE:.0%} of it): its traffic avoids a position the reference uses",
        )


@dataclass(frozen=True)
class PathsResult:
    shares: list[PositionShare]
    pairs: list[tuple[str, str]]  # (variant, reference)
    failures: list[Failure]
    tolerance: float = TOLERANCE


def compared_pairs(spec: Spec) -> list[tuple[str, str]]:
    """(variant, reference) of every comparison and hypothesis, each once."""
    # A contrast reads one variant's runs (its reference is itself): no pair.
    pairs = list(spec.comparisons) + [
        (h.variant, h.reference) for h in spec.hypotheses if h.variant != h.reference
    ]
    return list(dict.fromkeys(pairs))


def byte_shares(loads: Iterable[RelayLoad]) -> list[PositionShare]:
    """Per run: the share of the relays' read bytes that each position read."""
    by_run: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for load in loads:
        by_run[(load.variant, load.seed)][load.role] += load.mean_read_bytes
    shares = []
    for (variant, seed), read in sorted(by_run.items()):
        total = sum(read.values())
        if total <= 0:
            continue
        shares += [
            PositionShare(variant, seed, "bytes", role, read[role] / total, total)
            for role in LOAD_ROLES
            if role in read
        ]
    return shares


def circuit_shares(
    circuits: Iterable[CircuitRow],
    measured: dict[tuple[str, int], list[tuple[str, str]]],
    positions: dict[tuple[str, int], dict[str, str]],
) -> list[PositionShare]:
    """Per run: the share of the measured clients' circuits that carried a
    stream with a hop through each position; ``positions``: (variant, seed)
    -> relay -> its position. Runs whose circuits have no paths are left out."""
    hosts = {run: {host for host, _ in clients} for run, clients in measured.items()}
    through: dict[tuple[str, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    counted: dict[tuple[str, int], int] = defaultdict(int)
    for c in circuits:
        run = (c.variant, c.seed)
        if not c.path or c.streams <= 0 or c.host not in hosts.get(run, ()):
            continue
        counted[run] += 1
        where = positions.get(run, {})
        for position in {where[hop] for hop in c.path if hop in where}:
            through[run][position] += 1
    shares = []
    for run, total in sorted(counted.items()):
        present = set(positions.get(run, {}).values())
        shares += [
            PositionShare(run[0], run[1], "circuits", role, through[run][role] / total, total)
            for role in LOAD_ROLES
            if role in present
        ]
    return shares


def _by_chance(through: float, circuits: float, reference_share: float) -> bool:
    """Whether ``through`` of ``circuits`` circuits through a position could
    come from a variant that uses it half as often as its reference."""
    return float(binom.cdf(round(through), round(circuits), reference_share / 2)) >= EVIDENCE


def in_positions(shares: Iterable[PositionShare]) -> dict[tuple[str, int, str, str], float]:
    """Each run's share per position, a position counting the client relays
    the consensus places there too (client relays as exits carry exit
    traffic: a variant that adds them does not avoid the exit position)."""
    found: dict[tuple[str, int, str, str], float] = defaultdict(float)
    prefix = client_relay_load_role("")
    for s in shares:
        found[(s.variant, s.seed, s.measure, s.position)] += s.share
        if s.position.startswith(prefix):
            found[(s.variant, s.seed, s.measure, s.position.removeprefix(prefix))] += s.share
    return {key: min(1.0, share) for key, share in found.items()}


def path_failures(
    shares: Iterable[PositionShare], pairs: Iterable[tuple[str, str]]
) -> list[PathFailure]:
    """Each (variant, seed, measure, position) whose share is under
    TOLERANCE of its reference's on the same seed, beyond chance."""
    shares = list(shares)
    found = in_positions(shares)
    totals = {(s.variant, s.seed, s.measure): s.total for s in shares}
    seeds = sorted({key[1] for key in found})

    def beyond_chance(variant: str, reference: str, seed: int, position: str) -> bool:
        """Whether the run's circuits can tell avoiding ``position`` from
        chance; True where its circuits have no paths (only bytes tell)."""
        circuits = totals.get((variant, seed, "circuits"))
        ref = found.get((reference, seed, "circuits", position))
        if circuits is None or ref is None:
            return True
        return not _by_chance(0, circuits, ref)

    failures = []
    for variant, reference in pairs:
        for seed in seeds:
            for measure in MEASURES:
                for position in LOAD_ROLES:
                    ref = found.get((reference, seed, measure, position))
                    mine = found.get((variant, seed, measure, position))
                    if ref is None or ref < MIN_REFERENCE_SHARE:
                        continue
                    if mine is None:
                        # Measured in the reference's run but not in this one's:
                        # only a missing table, not an avoided position.
                        if not any(k[:3] == (variant, seed, measure) for k in found):
                            continue
                        mine = 0.0
                    if mine >= TOLERANCE * ref:
                        continue
                    if measure == "circuits":
                        circuits = totals[(variant, seed, measure)]
                        if _by_chance(mine * circuits, circuits, ref):
                            continue
                    elif not beyond_chance(variant, reference, seed, position):
                        continue
                    failures.append(
                        PathFailure(variant, reference, seed, measure, position, mine, ref)
                    )
    return failures


def paths_result(inp: Inputs) -> PathsResult:
    loads = RELAY_LOAD.read_from(inp.layout)
    positions: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for load in loads:
        positions[(load.variant, load.seed)][load.relay] = load.role
    shares = byte_shares(loads) + circuit_shares(inp.circuits, inp.measured_clients, positions)
    pairs = compared_pairs(inp.spec)
    return PathsResult(shares, pairs, [f.failure() for f in path_failures(shares, pairs)])
