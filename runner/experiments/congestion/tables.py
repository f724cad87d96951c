"""The congestion experiment's tables: ``hop_feedback.csv``, ``n23.csv`` and
``hop_window.csv``, the totals each tor logged last of hop feedback
(tor-patches/0005), N23 credit (0006) and hop windows (0007); none where
the mechanism was off. Per-position counts are ";"-separated."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from runner.experiments.congestion import hop_feedback_log as parse_hop_feedback
from runner.experiments.congestion import hop_window_log as parse_hop_window
from runner.experiments.congestion import n23_log as parse_n23
from runner.experiments.congestion.hop_feedback_log import (
    PER_POSITION,
    HopFeedbackTotals,
    last_totals,
)
from runner.experiments.congestion.hop_window_log import HopWindowTotals
from runner.experiments.congestion.n23_log import N23Totals
from runner.logs.run_logs import RunLogs
from runner.tables.schema import Table, tor_logs

T = TypeVar("T")


# Per-position counts are ";"-separated.
HOP_FEEDBACK_COLUMNS = ["variant", "seed", "host", "role"] + [
    f.name for f in fields(HopFeedbackTotals)
]


N23_COLUMNS = ["variant", "seed", "host", "role"] + [f.name for f in fields(parse_n23.N23Totals)]


HOP_WINDOW_COLUMNS = ["variant", "seed", "host", "role"] + [
    f.name for f in fields(parse_hop_window.HopWindowTotals)
]


def _totals_rows(logs: RunLogs, last: Callable[[Iterator[str]], Any]) -> Iterator[dict[str, Any]]:
    """The last totals each tor host logged, as ``last`` reads them (none
    where the mechanism was off); per-position counts are ";"-joined."""
    manifest = logs.manifest
    for host, role, lines in tor_logs(logs):
        totals = last(lines)
        if totals is None:
            continue
        row: dict[str, Any] = {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "host": host,
            "role": role,
        }
        for name, value in asdict(totals).items():
            row[name] = ";".join(map(str, value)) if name in PER_POSITION else value
        yield row


def hop_feedback_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    return _totals_rows(logs, last_totals)


def n23_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    return _totals_rows(logs, parse_n23.last_totals)


def hop_window_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    return _totals_rows(logs, parse_hop_window.last_totals)


HOP_FEEDBACK = Table(
    "hop_feedback", HOP_FEEDBACK_COLUMNS, hop_feedback_rows, (parse_hop_feedback.MARKER,)
)


N23 = Table("n23", N23_COLUMNS, n23_rows, (parse_n23.MARKER,))


HOP_WINDOW = Table("hop_window", HOP_WINDOW_COLUMNS, hop_window_rows, (parse_hop_window.MARKER,))


@dataclass(frozen=True)
class HopFeedbackRow(HopFeedbackTotals):
    """One tor's hop feedback totals at the end of a run (tor-patches/0005);
    per-position counts run from the end that originates the feedback."""

    variant: str
    seed: int
    host: str
    role: str


def _counts(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in filter(None, text.split(";")))


def read_hop_feedback(path: Path) -> list[HopFeedbackRow]:
    """The collected hop feedback totals; none if the table is missing."""
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            HopFeedbackRow(
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                role=r["role"],
                originated=int(r["originated"]),
                delivered=int(r["delivered"]),
                dropped=int(r["dropped"]),
                decisions=int(r["decisions"]),
                with_feedback=int(r["with_feedback"]),
                feedback_larger=int(r["feedback_larger"]),
                received=_counts(r["received"]),
                forwarded=_counts(r["forwarded"]),
                larger_at=_counts(r["larger_at"]),
            )
            for r in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class N23Row(N23Totals):
    """One tor's N23 totals at the end of a run (tor-patches/0006)."""

    variant: str
    seed: int
    host: str
    role: str


def read_n23(path: Path) -> list[N23Row]:
    """The collected N23 totals; none if the table is missing."""
    return _read_totals(path, N23Totals, N23Row)


@dataclass(frozen=True)
class HopWindowRow(HopWindowTotals):
    """One tor's hop window totals at the end of a run (tor-patches/0007)."""

    variant: str
    seed: int
    host: str
    role: str


def read_hop_window(path: Path) -> list[HopWindowRow]:
    """The collected hop window totals; none if the table is missing."""
    return _read_totals(path, HopWindowTotals, HopWindowRow)


def _read_totals(path: Path, totals: type, row: Callable[..., T]) -> list[T]:
    """Rows of one tor's totals each: ``totals``' counts, then the run and
    host they belong to; none if the table is missing."""
    if not path.is_file():
        return []
    counts = [f.name for f in fields(totals)]
    with path.open(newline="") as handle:
        return [
            row(
                **{name: int(r[name]) for name in counts},
                variant=r["variant"],
                seed=int(r["seed"]),
                host=r["host"],
                role=r["role"],
            )
            for r in csv.DictReader(handle)
        ]
