"""How the last consensus of each run saw the relays, and the check that
every relay had the flags its role needs.

Clients build measured circuits from the consensus: a relay without Fast
and Stable (and Guard, Exit where its role is one) is left out of the
positions that need them (a Conflux leg, for one, needs Stable relays),
so a run whose relays lack them measures another network than the one
its spec draws. The check reads the last consensus the first authority
made, the only one a run keeps; the authorities vote Stable from the
first vote (runner.network.torrc) and Guard and Exit by role
(TestingDirAuthVoteGuard/Exit), so no flag is earned later in a run.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.tables.schema import RELAYS, RelayRow

# Every relay's, then each role's own.
RELAY_FLAGS = frozenset({"Fast", "Running", "Stable", "Valid"})
ROLE_FLAGS = {
    "exitguard": frozenset({"Exit", "Guard"}),
    "exit": frozenset({"Exit"}),
    "guard": frozenset({"Guard"}),
}


@dataclass(frozen=True)
class ConsensusSummary:
    """One run's consensus. It lists every tor that relays: the directory
    authorities (which relay too), the spec's relays and the clients that
    also run a relay (``client_relays``); the counts after ``client_relays``
    are of the last two, not of the authorities."""

    variant: str
    seed: int
    authorities: int
    relays: int  # the spec's relays (network.relays)
    client_relays: int  # clients that also run a relay
    exits: int
    exits_fast_stable: int
    guards: int
    stable: int
    measured: int  # relays whose weight came from the bandwidth file

    @property
    def listed(self) -> int:
        """Every router in the consensus, the authorities included."""
        return self.authorities + self.relays + self.client_relays

    @property
    def not_authorities(self) -> int:
        """The relays and clients' relays: what the flag counts are of."""
        return self.relays + self.client_relays


@dataclass(frozen=True)
class ConsensusResult:
    summaries: list[ConsensusSummary]
    failures: list[Failure]  # relays without a flag their role needs
    authority_names: tuple[str, ...] = ()  # the authorities' nicknames, as listed


def needed_flags(role: str) -> frozenset[str]:
    """The flags a relay of ``role`` needs (authorities none)."""
    if role == "authority":
        return frozenset()
    return RELAY_FLAGS | ROLE_FLAGS.get(role, frozenset())


def flag_failures(rows: list[RelayRow]) -> list[Failure]:
    """A failure per run listing its relays that lack a flag their role needs."""
    missing: dict[tuple[str, int], list[str]] = {}
    for r in sorted(rows, key=lambda r: (r.variant, r.seed, r.relay)):
        lacks = sorted(needed_flags(r.role) - set(r.flags))
        if lacks:
            missing.setdefault((r.variant, r.seed), []).append(
                f"{r.relay} ({r.role or 'unknown role'}) lacks {'+'.join(lacks)}"
            )
    return [
        Failure(
            variant,
            seed,
            "consensus-flags",
            f"relays without the flags their role needs in the last consensus: {'; '.join(relays)}",
        )
        for (variant, seed), relays in missing.items()
    ]


def consensus_summaries(inp: Inputs) -> ConsensusResult:
    """Per variant and seed, from relays.csv (none where it is missing)."""
    rows = RELAYS.read_from(inp.layout)
    found = []
    for variant in inp.variants:
        for seed in sorted({r.seed for r in rows}):
            mine = [r for r in rows if r.variant == variant and r.seed == seed]
            if not mine:
                continue
            relaying = [r for r in mine if r.role != "authority"]
            flags = [set(r.flags) for r in relaying]
            exits = [f for f in flags if "Exit" in f]
            found.append(
                ConsensusSummary(
                    variant,
                    seed,
                    authorities=len(mine) - len(relaying),
                    relays=sum(r.role != "client" for r in relaying),
                    client_relays=sum(r.role == "client" for r in relaying),
                    exits=len(exits),
                    exits_fast_stable=sum({"Fast", "Stable"} <= f for f in exits),
                    guards=sum("Guard" in f for f in flags),
                    stable=sum("Stable" in f for f in flags),
                    measured=sum(r.measured for r in relaying),
                )
            )
    names = tuple(sorted({r.relay for r in rows if r.role == "authority"}))
    return ConsensusResult(found, flag_failures(rows), names)
