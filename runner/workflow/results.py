"""What each of an experiment's steps returns: its exit status (0 when it
did what was asked) and what it found, as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.analyses.analyze import Analyzed
    from runner.analyses.regress import Verdict
    from runner.execute.run_all import RunOutcome
    from runner.planning.seed_plan import Plan
    from runner.report.assemble import ReportResult
    from runner.spec.model import Spec
    from runner.tables.collect import Collected


@dataclass(frozen=True)
class ValidateResult:
    code: int
    runs: int  # the runs the spec asks (its first round's, with seed rounds)
    warnings: list[str]


@dataclass(frozen=True)
class GenerateResult:
    code: int
    written: list[Path]  # the run directories written
    kept: int  # complete runs of the same identity left as they were


@dataclass(frozen=True)
class RunResult:
    code: int
    outcomes: list[RunOutcome]
    elapsed_s: float

    @property
    def failed(self) -> list[RunOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


@dataclass(frozen=True)
class CollectResult:
    code: int
    collected: Collected


@dataclass(frozen=True)
class CompareResult:
    code: int
    report: ReportResult | None  # None: there were no tables to report from


@dataclass(frozen=True)
class AnalyzeResult:
    code: int
    analyzed: Analyzed | None  # None: there were no tables to analyze


@dataclass(frozen=True)
class ExperimentResult:
    code: int
    spec: Spec  # with every seed that ran (seed rounds add seeds)
    run_code: int  # the worst of the runs' exit statuses
    compared: CompareResult | None  # None: collect found no complete runs


@dataclass(frozen=True)
class PlanResult:
    code: int
    plan: Plan | None = None
    text: str = ""  # the plan as the console and plan.md give it
    written: tuple[Path, ...] = field(default=())  # plan.md and plan.json


@dataclass(frozen=True)
class RegressResult:
    code: int
    baseline: Path
    verdicts: list[Verdict] = field(default_factory=list)
    wrote: bool = False  # the baseline was written, not checked against
