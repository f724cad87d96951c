"""The report's relay section: how the last consensus saw the relays."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.experiments.conflux.consensus import ConsensusResult
from runner.report.markdown import table


def relays_section(result: ConsensusResult, inp: Inputs, out: Path) -> Section:
    lines: list[str] = []
    section = Section()
    relay_table = [
        [
            r.variant,
            str(r.seed),
            str(r.listed),
            str(r.authorities),
            str(r.relays),
            str(r.client_relays),
            f"{r.exits_fast_stable}/{r.exits}",
            str(r.guards),
            f"{r.stable}/{r.not_authorities}",
            f"{r.measured}/{r.not_authorities}",
        ]
        for r in result.summaries
    ]
    if relay_table:
        named = f" ({', '.join(result.authority_names)})" if result.authority_names else ""
        lines += [
            "",
            "## Relays and authorities in the last consensus",
            "",
            "From the first authority's last consensus. It lists every tor that relays, so "
            "'in consensus' is the sum of three counts: the directory authorities"
            f"{named}, listed like any relay (the spec's network.authorities); the relays of "
            "the spec's network.relays ('relays': the spec's count when every one is listed); "
            "and the clients that also run a relay (a variant's client_relays). The columns "
            "after them count the relays and clients' relays, not the authorities. Conflux "
            "legs need Fast and Stable relays; weights are measured (from the bandwidth file) "
            "only when at least three authorities vote them, else they are the relays' own "
            "reports.",
            "",
        ]
        lines += table(
            [
                "variant",
                "seed",
                "in consensus",
                "authorities",
                "relays",
                "clients' relays",
                "exits Fast+Stable",
                "Guard",
                "Stable",
                "measured weights",
            ],
            relay_table,
        )
    if relay_table:
        section.checks.append(
            "Flags: in every run's last consensus each relay is Fast, Running, Stable and "
            "Valid, guards Guard and exits Exit: the positions a client draws its "
            "circuits from hold every relay its spec gives them."
        )
    section.lines = lines
    return section
