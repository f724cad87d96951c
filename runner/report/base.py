"""What an analysis declares: the tables it adds from each run's logs, how
it computes its result from the collected tables (as data), and how the
report renders that result (checks, sections, plots)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.spec.model import Spec
from runner.tables.table import Table

R = TypeVar("R")


@dataclass
class Section:
    """An analysis's part of the report: paragraphs for the Checks section,
    failed checks, its own sections, and its plots."""

    checks: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


def always(spec: Spec) -> bool:
    return True


@dataclass(frozen=True)
class Analysis(Generic[R]):
    """One question an experiment asks: the tables it adds from every run's
    logs (collected for every experiment), and, where ``applies`` says the
    spec asks it, its result (``compute``: plain data, a dataclass, written
    beside the tables as JSON) and its part of the report (``render``: from
    that result alone, with plots into the folder it is given)."""

    name: str
    tables: tuple[Table[Any], ...]
    compute: Callable[[Inputs], R]
    render: Callable[[R, Inputs, Path], Section]
    applies: Callable[[Spec], bool] = always
