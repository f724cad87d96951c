"""The registry's analyses: the ones every experiment has and each
experiment's own (``<experiment>/analyses.py``), in the order the report
shows them, and the tables they add. Importing this imports every
analysis (numpy, scipy, matplotlib): runner.experiments hands these out
only when a step asks for them, so that validating a spec does not."""

from __future__ import annotations

from typing import Any

from runner.analyses.contract import Analysis
from runner.experiments.conflux import analyses as conflux
from runner.experiments.congestion import analyses as congestion
from runner.experiments.mctor import analyses as mctor
from runner.experiments.tortoise import analyses as tortoise
from runner.report import sections
from runner.tables.definition import Table

ANALYSES: tuple[Analysis[Any], ...] = (
    sections.TRANSFERS,
    *conflux.CIRCUIT_ANALYSES,
    *tortoise.ANALYSES,
    *mctor.ANALYSES,
    *congestion.ANALYSES,
    conflux.CONSENSUS,
    sections.LOAD,
    sections.PATHS,
    sections.PINNED,
    sections.KEEP_UP,
    sections.CPU,
)


def tables_of(analyses: tuple[Analysis[Any], ...]) -> tuple[Table[Any], ...]:
    """The tables the analyses add, each once, in their order."""
    seen: dict[str, Table[Any]] = {}
    for analysis in analyses:
        for table in analysis.tables:
            seen.setdefault(table.name, table)
    return tuple(seen.values())


TABLES = tables_of(ANALYSES)
