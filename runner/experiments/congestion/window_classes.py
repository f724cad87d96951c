"""Web and bulk circuits' hop windows, hop by hop (tor-patches/0009): at
each position from the client, how large a window a download's cells got
and how many of them were in flight to the next hop, per class, and web's
over bulk's. This is what the per-tor totals cannot show: whether, at the
congested middle, hop windows leave a web page's circuit a smaller share
than a bulk download's."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from runner.analyses.stats import Estimate, level_ci, ratio_ci
from runner.experiments.congestion.circuit_windows import UNLINKED, CircuitWindowRow
from runner.experiments.congestion.mechanisms import web_and_bulk

DOWNLOADS = "in"  # the direction a download's cells travel: towards the client


@dataclass(frozen=True)
class PositionWindows:
    """Under one variant, at one position from the client (1: the first
    hop), the download direction's hop windows of the web and the bulk
    circuits that carried the clients' streams (carried_downloads). Per
    seed and class, pooled over its circuits: the window at the
    decisions, and the cells in flight to the next hop as each cell was
    sent (so a circuit counts by what it carried); then over the seeds, a
    level with a 95% t interval, and web's over bulk's as the geometric
    mean of the seeds' ratios."""

    variant: str
    position: int
    relays: tuple[str, ...]  # the hosts that logged at that position
    web: str | None  # the variant's one web class
    bulk: str | None
    web_circuits: int  # circuits over all seeds
    bulk_circuits: int
    web_window: Estimate
    bulk_window: Estimate
    window_ratio: Estimate  # web's mean window over bulk's
    web_inflight: Estimate
    bulk_inflight: Estimate
    inflight_ratio: Estimate
    unlinked: int  # lines at any position that no chain from a client reached


def _pooled(rows: Sequence[CircuitWindowRow], top: str, bottom: str) -> float:
    """sum(top) / sum(bottom) over ``rows``; NaN where the bottom is 0."""
    below = sum(getattr(r, bottom) for r in rows)
    return sum(getattr(r, top) for r in rows) / below if below else math.nan


def _per_seed(
    here: Sequence[CircuitWindowRow], cls: str | None, seeds: list[int], top: str, bottom: str
) -> list[float]:
    """Per seed, class ``cls``'s pooled ``top`` over ``bottom`` (NaN where
    it has none)."""
    if cls is None:
        return []
    by_seed: dict[int, list[CircuitWindowRow]] = defaultdict(list)
    for r in here:
        if r.cls == cls:
            by_seed[r.seed].append(r)
    return [_pooled(by_seed[s], top, bottom) for s in seeds]


def _ratio(top: list[float], bottom: list[float]) -> Estimate:
    """Web's over bulk's over the seeds where both have a value."""
    return ratio_ci([a / b for a, b in zip(top, bottom, strict=True) if a > 0 and b > 0])


def carried_downloads(rows: Sequence[CircuitWindowRow]) -> set[tuple[str, int, str]]:
    """(variant, seed, circuit) of the circuits that carried the clients'
    streams: full length (their exit as far from the client as any exit
    of the run) and with cells from the exit towards the client. Left out:
    the circuits tor built ahead and never used (no cells at the exit),
    and short ones that fetched directory documents or were cut while
    being built (an exit as their second hop)."""
    exits = [
        r
        for r in rows
        if r.role == "exit" and r.direction == DOWNLOADS and r.cells_sent and r.position > 0
    ]
    longest: dict[tuple[str, int], int] = {}
    for r in exits:
        longest[(r.variant, r.seed)] = max(longest.get((r.variant, r.seed), 0), r.position)
    return {
        (r.variant, r.seed, r.circuit_name)
        for r in exits
        if r.position == longest[(r.variant, r.seed)]
    }


def position_windows(
    rows: list[CircuitWindowRow], variants: list[str], models: dict[str, str]
) -> list[PositionWindows]:
    """Per variant and relay position, the web and bulk circuits' download
    windows (``models``: each client class's workload model). The client's
    own window (position 0) is left out: it holds the upload direction."""
    results = []
    for variant in variants:
        mine = [r for r in rows if r.variant == variant]
        unlinked = sum(1 for r in mine if r.position == UNLINKED)
        used = carried_downloads(mine)
        downloads = [
            r
            for r in mine
            if r.direction == DOWNLOADS
            and r.position > 0
            and (r.variant, r.seed, r.circuit_name) in used
        ]
        web, bulk = web_and_bulk({r.cls for r in downloads}, models)
        for position in sorted({r.position for r in downloads}):
            here = [r for r in downloads if r.position == position]
            seeds = sorted({r.seed for r in here})
            web_w, bulk_w = (
                _per_seed(here, c, seeds, "window_sum", "decisions") for c in (web, bulk)
            )
            web_f, bulk_f = (
                _per_seed(here, c, seeds, "inflight_sum", "cells_sent") for c in (web, bulk)
            )
            results.append(
                PositionWindows(
                    variant=variant,
                    position=position,
                    relays=tuple(sorted({r.host for r in here})),
                    web=web,
                    bulk=bulk,
                    web_circuits=len({(r.seed, r.circuit_name) for r in here if r.cls == web}),
                    bulk_circuits=len({(r.seed, r.circuit_name) for r in here if r.cls == bulk}),
                    web_window=level_ci(web_w),
                    bulk_window=level_ci(bulk_w),
                    window_ratio=_ratio(web_w, bulk_w),
                    web_inflight=level_ci(web_f),
                    bulk_inflight=level_ci(bulk_f),
                    inflight_ratio=_ratio(web_f, bulk_f),
                    unlinked=unlinked,
                )
            )
    return results
