"""``compare``: analyze, then the report from what analyze wrote, in turn
(``runner compare``; ``runner analyze`` and ``runner report`` run one each)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runner.analyses.analyze import analyze
from runner.analyses.contract import Analysis
from runner.layout import Layout
from runner.report.assemble import ReportResult, write_report
from runner.spec.model import Spec


def compare(spec: Spec, layout: Layout, analyses: Sequence[Analysis[Any]]) -> ReportResult:
    """Analyze the collected tables, then write the report; the caller decides on exit codes."""
    analyze(spec, layout, analyses)
    return write_report(spec, layout, analyses)
