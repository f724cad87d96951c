"""What an analysis declares: the tables it adds from each run's logs, and
the checks, report sections and plots it derives from the collected tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.layout import Layout
from runner.spec.model import Spec
from runner.tables.schema import CircuitRow, TransferRow
from runner.tables.table import Table


@dataclass(frozen=True)
class ReportInput:
    """What every analysis's report sections start from."""

    spec: Spec
    layout: Layout
    transfers: list[TransferRow]
    circuits: list[CircuitRow]
    # (variant, seed) of each complete run -> its measured (host, class) pairs
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]]
    out: Path  # where plots go

    @property
    def variants(self) -> list[str]:
        return [v.name for v in self.spec.variants]


@dataclass
class Section:
    """An analysis's part of the report: paragraphs for the Checks section,
    failed checks, its own sections, and its plots."""

    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


def always(spec: Spec) -> bool:
    return True


@dataclass(frozen=True)
class Analysis:
    """One question an experiment asks: the tables it adds from every run's
    logs (collected for every experiment), and, where ``applies`` says the
    spec asks it, its part of the report."""

    name: str
    tables: tuple[Table[Any], ...]
    report: Callable[[ReportInput], Section]
    applies: Callable[[Spec], bool] = always
