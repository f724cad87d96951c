"""Whether each hop window ran where its design puts it, on the circuits
that carried the clients' streams (tor-patches/0009's lines): under
BackTap every relay of the circuit holds a window for the download
direction and decides it; under Marut only the exit (the sending end)
holds one and decides it (at every level of hop_window_marut, the
authors' included), and every relay before it hears from its next
hop (RTT samples), since that feedback carries c_diff and the consumed
count upstream. A hop that held no window, or held one and never decided,
on a circuit the measured downloads crossed means the mechanism ran off
its path, whatever the totals say."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from runner.checks import Failure
from runner.experiments.congestion.circuit_windows import CircuitWindowRow
from runner.experiments.congestion.mechanisms import HOP_WINDOW, hop_window_of
from runner.experiments.congestion.window_classes import DOWNLOADS, carried_downloads
from runner.spec.model import Variant

CHECK = "hop-window-path"


def _off_path(row: CircuitWindowRow, exit_position: int, marut: bool) -> str | None:
    """What is wrong with one relay hop of a carried circuit, or None."""
    sending_end = row.position == exit_position
    if marut and not sending_end:
        # A closed circuit's last line is written after tor has dropped its
        # next hop, and 0009 works `holds` out from that hop at the time of
        # the line (no next hop: the edge, which holds), so every relay of
        # a circuit closed before the run ended logs 1: only open circuits
        # say whether a relay before the exit held a window.
        if row.holds and not row.closed:
            return "held a window before the exit"
        if not row.samples:
            return "heard nothing from its next hop"
        return None
    if not row.holds:
        return "held no window"
    if not row.decisions:
        return "never decided its window"
    return None


def circuit_path_failures(
    rows: Sequence[CircuitWindowRow],
    variants: Sequence[Variant],
    complete_runs: set[tuple[str, int]],
) -> list[Failure]:
    """One failure per complete run of a hop window variant whose tors
    logged their circuits (a run without such lines is not judged here;
    the totals' check covers it) where no circuit that carried streams
    was followed from its client, or a relay hop of one ran off the
    design's path (the first few hops named)."""
    by_run: dict[tuple[str, int], list[CircuitWindowRow]] = defaultdict(list)
    for r in rows:
        by_run[(r.variant, r.seed)].append(r)
    kinds = {v.name: hop_window_of(v) for v in variants}
    failures = []
    for (variant, seed), mine in sorted(by_run.items()):
        kind = kinds.get(variant)
        if kind is None or (variant, seed) not in complete_runs:
            continue
        used = carried_downloads(mine)
        if not used:
            failures.append(
                Failure(variant, seed, CHECK, "no circuit that carried streams was followed")
            )
            continue
        hops = [
            r
            for r in mine
            if (r.variant, r.seed, r.circuit_name) in used
            and r.direction == DOWNLOADS
            and r.position > 0
        ]
        exit_position = max(r.position for r in hops)
        wrong = [
            f"{r.circuit_name} hop {r.position} ({r.host}) {why}"
            for r in sorted(hops, key=lambda r: (r.circuit_name, r.position))
            if (why := _off_path(r, exit_position, kind != HOP_WINDOW)) is not None
        ]
        if wrong:
            shown = "; ".join(wrong[:3]) + ("; ..." if len(wrong) > 3 else "")
            failures.append(
                Failure(
                    variant,
                    seed,
                    CHECK,
                    f"{len(wrong)} of {len(hops)} hops of {len(used)} circuits that carried "
                    f"streams ran off the {kind} path: {shown}",
                )
            )
    return failures
