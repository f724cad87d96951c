"""The registry: every analysis the runner knows, the ones every experiment
has and each experiment's own (one folder each), in the order the report
shows them. It sits above the stages: the command line hands it to
collection (``runner.tables.collect``), to analyze
(``runner.analyses.analyze``) and to the report
(``runner.report.assemble``), which know no experiment by name.

A new experiment is a folder here and one entry below (docs/extending.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.experiments import conflux, congestion, mctor, tortoise
from runner.report import sections
from runner.report.base import Analysis
from runner.spec import model, parse
from runner.spec.expect import ExpectKey
from runner.tables.table import Table

ANALYSES: tuple[Analysis[Any], ...] = (
    sections.TRANSFERS,
    *conflux.CIRCUIT_ANALYSES,
    *tortoise.ANALYSES,
    *mctor.ANALYSES,
    *congestion.ANALYSES,
    conflux.CONSENSUS,
    sections.LOAD,
    sections.PATHS,
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


# The keys a variant's ``expect:`` may give: each experiment's own.
EXPECT_KEYS: tuple[ExpectKey, ...] = (*conflux.EXPECT_KEYS, *mctor.EXPECT_KEYS)


def load_spec(path: Path) -> model.Spec:
    """A spec, validated with what the registered experiments know."""
    return parse.load_spec_file(path, EXPECT_KEYS)


def parse_spec(data: Any, path: str, sha256: str = "") -> model.Spec:
    """Already-loaded YAML, validated with what the registered experiments know."""
    return parse.parse_spec(data, path, sha256, EXPECT_KEYS)
