"""The congestion experiment's result: downloads and rates per class and
variant, each variant's web / bulk rate ratio, and each patched
mechanism's counters per run with its on/off check (hop feedback, N23, hop
windows, PCTCP's connections per circuit), and where tors logged each
circuit's hop windows, web's and bulk's hop by hop; a mechanism no
variant switches on has no part."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.experiments.congestion.circuit_paths import circuit_path_failures
from runner.experiments.congestion.mechanisms import (
    ClassResult,
    ConnectionSharing,
    HopWindowRun,
    MechanismTotals,
    N23Run,
    RateRatio,
    class_results,
    connection_sharing,
    hop_window_failures,
    hop_window_of,
    hop_window_runs,
    is_congestion_experiment,
    is_n23,
    is_pctcp,
    mechanism_failures,
    mechanism_totals,
    n23_failures,
    n23_runs,
    pctcp_failures,
    rate_ratios,
)
from runner.experiments.congestion.tables import CIRCUIT_WINDOWS, HOP_FEEDBACK, HOP_WINDOW, N23
from runner.experiments.congestion.window_classes import PositionWindows, position_windows
from runner.experiments.mctor.tables import PLACEMENTS

T = TypeVar("T")


@dataclass(frozen=True)
class Part(Generic[T]):
    """One mechanism's counters (per run, or per variant) and its check."""

    rows: list[T]
    failures: list[Failure]


@dataclass(frozen=True)
class CongestionResult:
    asked: bool  # a variant sets cc_hop_feedback, n23 or hop_window
    classes: list[ClassResult] = field(default_factory=list)
    rate_ratios: list[RateRatio] = field(default_factory=list)
    complete_runs: int = 0
    hop_feedback: Part[MechanismTotals] | None = None
    n23: Part[N23Run] | None = None
    hop_window: Part[HopWindowRun] | None = None
    pctcp: Part[ConnectionSharing] | None = None
    # Web and bulk circuits' hop windows per position (hop_window_circuit_log).
    circuit_windows: list[PositionWindows] = field(default_factory=list)

    @property
    def failures(self) -> list[Failure]:
        parts = (self.hop_feedback, self.n23, self.hop_window, self.pctcp)
        return [f for part in parts if part is not None for f in part.failures]


def congestion_result(inp: Inputs) -> CongestionResult:
    spec, layout = inp.spec, inp.layout
    if not is_congestion_experiment(spec.variants):
        return CongestionResult(False)
    variants = spec.variants
    complete = set(inp.measured_clients)
    hop_feedback = n23 = hop_window = pctcp = None
    if any("cc_hop_feedback" in v.consensus for v in variants):
        rows = HOP_FEEDBACK.read_from(layout)
        hop_feedback = Part(
            mechanism_totals(rows, inp.variants), mechanism_failures(rows, variants, complete)
        )
    if any(is_n23(v) for v in variants):
        runs = n23_runs(N23.read_from(layout))
        n23 = Part(runs, n23_failures(runs, variants, complete))
    circuit_rows = []
    if any(hop_window_of(v) for v in variants):
        windows = hop_window_runs(HOP_WINDOW.read_from(layout))
        circuit_rows = CIRCUIT_WINDOWS.read_from(layout)
        hop_window = Part(
            windows,
            hop_window_failures(windows, variants, complete)
            + circuit_path_failures(circuit_rows, variants, complete),
        )
    if any(is_pctcp(v) for v in variants):
        sharing = connection_sharing(PLACEMENTS.read_from(layout))
        pctcp = Part(sharing, pctcp_failures(sharing, variants, complete))
    models = {g.name: spec.workloads[g.workload].model for g in spec.network.clients}
    circuit_windows = position_windows(circuit_rows, inp.variants, models)
    return CongestionResult(
        True,
        classes=class_results(inp.transfers, inp.variants, list(spec.seeds)),
        rate_ratios=rate_ratios(inp.transfers, inp.variants, list(spec.seeds), models),
        complete_runs=len(complete),
        hop_feedback=hop_feedback,
        n23=n23,
        hop_window=hop_window,
        pctcp=pctcp,
        circuit_windows=circuit_windows,
    )
