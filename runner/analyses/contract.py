"""The analysis contract, beside the analyses that implement it (each
experiment's, registered by runner.experiments): the tables an analysis
adds from each run's logs, how it computes its result from the collected
tables (``analyze`` writes it as JSON), the type of that result (to read
the JSON back), and how the report renders it (checks, sections, plots)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, get_type_hints

from runner.analyses.inputs import Inputs
from runner.spec.model import Spec
from runner.tables.definition import Table

R = TypeVar("R")


@dataclass
class Section:
    """An analysis's part of the report: paragraphs for the Checks section,
    its own sections, and its plots. The checks that failed are the
    result's (its ``failures`` field): ``analyze`` records them in
    checks.json, whence the report lists them."""

    checks: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


def always(spec: Spec) -> bool:
    return True


@dataclass(frozen=True)
class Analysis(Generic[R]):
    """One question an experiment asks: the tables it adds from every run's
    logs (collected for every experiment), and, where ``applies`` says the
    spec asks it, its result (``compute``: plain data, a dataclass, that
    ``analyze`` writes beside the tables as JSON) and its part of the report
    (``render``: from that result alone, read back from the JSON, with
    plots into the folder it is given).

    ``result_type``: the type ``compute`` returns, which the report reads
    the JSON back as (runner.analyses.from_data); by default its return
    annotation."""

    name: str
    tables: tuple[Table[Any], ...]
    compute: Callable[[Inputs], R]
    render: Callable[[R, Inputs, Path], Section]
    applies: Callable[[Spec], bool] = always
    # A type form (a class, or list[...] and the like): Any to the type checker.
    result_type: Any = None

    def __post_init__(self) -> None:
        # Taken once, here: a compute function replaced later (a test's
        # stand-in) leaves the type the report reads as it was.
        if self.result_type is None:
            object.__setattr__(self, "result_type", returned_type(self.name, self.compute))


def returned_type(name: str, compute: Callable[..., Any]) -> Any:
    """The return annotation of analysis ``name``'s compute function."""
    returned = get_type_hints(compute).get("return")
    if returned is None:
        raise TypeError(
            f"analysis {name!r}: {getattr(compute, '__name__', compute)} has no return "
            "annotation; annotate it, or give the Analysis its result_type"
        )
    return returned
