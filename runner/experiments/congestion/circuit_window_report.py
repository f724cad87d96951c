"""The report's section on web and bulk circuits' hop windows, hop by hop
(runner.experiments.congestion.window_classes)."""

from __future__ import annotations

from runner.experiments.congestion.mechanisms import mechanism_of
from runner.experiments.congestion.window_classes import PositionWindows
from runner.report.markdown import table
from runner.spec.model import Spec


def _relays(names: tuple[str, ...]) -> str:
    return ", ".join(names) if len(names) <= 2 else f"{len(names)} relays"


def circuit_window_section(rows: list[PositionWindows], spec: Spec) -> list[str]:
    """Per hop window variant and position, web's and bulk's download
    windows and cells in flight; nothing where no tor logged circuits."""
    if not rows:
        return []
    by_name = {v.name: v for v in spec.variants}
    order = [v.name for v in spec.variants]
    rows = sorted(rows, key=lambda r: (order.index(r.variant), r.position))
    lines = [
        "",
        "### Hop windows per circuit, web against bulk",
        "",
        "From each circuit's last `Hop window circuit` line at each tor "
        "(`hop_window_circuit_log`, tor-patches/0009), followed hop by hop from the client, "
        "so each line has its circuit's class and its place (*hop* 1: the first relay from "
        "the client). The circuits that carried the clients' streams (full length, with cells "
        "from the exit towards the client), in the download direction. *Window*: a circuit's "
        "window at its decisions, where the hop holds one (every hop under BackTap; under "
        "Marut only the exit, the sending end). *In flight*: the circuit's cells in flight "
        "from this hop to the next as each was sent: its share of the next hop's queue and "
        "link. Per seed and class, pooled over its circuits (each counts by its decisions "
        "and cells), then the mean over seeds with a 95% t interval; *web / bulk*: the "
        "geometric mean of the seeds' ratios. *Circuits*: over all seeds (web / bulk); "
        "*unlinked*: the "
        "variant's lines that no chain from a client reached (the relays' own circuits).",
        "",
    ]
    lines += table(
        [
            "variant",
            "mechanism",
            "hop",
            "relays",
            "circuits",
            "web window",
            "bulk window",
            "web / bulk window",
            "web in flight",
            "bulk in flight",
            "web / bulk in flight",
            "unlinked",
        ],
        [
            [
                r.variant,
                mechanism_of(by_name[r.variant]) if r.variant in by_name else "",
                str(r.position),
                _relays(r.relays),
                f"{r.web_circuits} / {r.bulk_circuits}",
                r.web_window.format(),
                r.bulk_window.format(),
                r.window_ratio.format(1, "", 2),
                r.web_inflight.format(),
                r.bulk_inflight.format(),
                r.inflight_ratio.format(1, "", 2),
                str(r.unlinked),
            ]
            for r in rows
        ],
    )
    return lines
