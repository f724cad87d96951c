"""The congestion experiment's tables: ``hop_feedback``, ``n23`` and
``hop_window``, the totals each tor logged last of hop feedback
(tor-patches/0005), N23 credit (0006) and hop windows (0007); none where
the mechanism was off. Per-position counts are lists. And
``hop_window_circuits``: each circuit's hop window at each hop, with the
client it serves (0009; none unless hop_window_circuit_log is on)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from runner.experiments.congestion import circuit_window_log as parse_circuit_window
from runner.experiments.congestion import hop_feedback_log as parse_hop_feedback
from runner.experiments.congestion import hop_window_log as parse_hop_window
from runner.experiments.congestion import n23_log as parse_n23
from runner.experiments.congestion.circuit_windows import CircuitWindowRow, circuit_window_rows
from runner.experiments.congestion.hop_feedback_log import HopFeedbackTotals
from runner.experiments.congestion.hop_window_log import HopWindowTotals
from runner.experiments.congestion.n23_log import N23Totals
from runner.logs.run_logs import RunLogs
from runner.tables.definition import Table
from runner.tables.schema import tor_logs

R = TypeVar("R")


@dataclass(frozen=True)
class _TorOfRun:
    """The columns that name a tor: its run, host and role (they come first:
    a base class's fields precede the others)."""

    variant: str
    seed: int
    host: str
    role: str


@dataclass(frozen=True)
class HopFeedbackRow(HopFeedbackTotals, _TorOfRun):
    """One tor's hop feedback totals at the end of a run (tor-patches/0005);
    per-position counts run from the end that originates the feedback."""


@dataclass(frozen=True)
class N23Row(N23Totals, _TorOfRun):
    """One tor's N23 totals at the end of a run (tor-patches/0006)."""


@dataclass(frozen=True)
class HopWindowRow(HopWindowTotals, _TorOfRun):
    """One tor's hop window totals at the end of a run (tor-patches/0007)."""


def _totals_rows(
    logs: RunLogs, last: Callable[[Iterator[str]], Any], row: Callable[..., R]
) -> Iterator[R]:
    """The last totals each tor host logged, as ``last`` reads them (none
    where the mechanism was off)."""
    for host, role, lines in tor_logs(logs):
        totals = last(lines)
        if totals is not None:
            yield row(
                **asdict(totals),
                variant=logs.run.variant,
                seed=logs.run.seed,
                host=host,
                role=role,
            )


HOP_FEEDBACK = Table(
    "hop_feedback",
    HopFeedbackRow,
    lambda logs: _totals_rows(logs, parse_hop_feedback.last_totals, HopFeedbackRow),
    (parse_hop_feedback.MARKER,),
)
N23 = Table(
    "n23",
    N23Row,
    lambda logs: _totals_rows(logs, parse_n23.last_totals, N23Row),
    (parse_n23.MARKER,),
)
HOP_WINDOW = Table(
    "hop_window",
    HopWindowRow,
    lambda logs: _totals_rows(logs, parse_hop_window.last_totals, HopWindowRow),
    (parse_hop_window.MARKER,),
)
CIRCUIT_WINDOWS = Table(
    "hop_window_circuits",
    CircuitWindowRow,
    circuit_window_rows,
    (parse_circuit_window.MARKER,),
)
