"""Congestion: hop-by-hop feedback and windows (BackTap, Marut), N23 and
PCTCP against tor's fixed window and Vegas (tor-patches/0003-0007). Its
analysis gives each mechanism's counters and the rates per class."""

from __future__ import annotations

from runner.experiments.congestion.mechanisms import is_congestion_experiment
from runner.experiments.congestion.report import congestion_sections
from runner.experiments.congestion.tables import HOP_FEEDBACK, HOP_WINDOW, N23
from runner.report.base import Analysis, ReportInput, Section


def _congestion(inp: ReportInput) -> Section:
    lines, failures, plots = congestion_sections(
        inp.spec, inp.layout, inp.transfers, set(inp.measured_clients), inp.out
    )
    return Section(failures=failures, lines=lines, plots=plots)


ANALYSES = (
    Analysis(
        "congestion windows, hop feedback, N23 and hop windows",
        (HOP_FEEDBACK, N23, HOP_WINDOW),
        _congestion,
        lambda spec: is_congestion_experiment(spec.variants),
    ),
)
