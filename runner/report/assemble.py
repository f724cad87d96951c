"""Write ``report/report.md`` and ``report.html`` (with their plots) from
what ``analyze`` wrote (runner.analyses.analyze): each analysis's result
read back from ``analyses/<name>.json``, the answers from answers.json and
the failed checks from checks.json; with the spec, and the collected
tables for the plots and the runs. It computes no analysis: what ran, then
the answers and claims, then each analysis's checks, sections and plots,
in the order of the analyses handed in (runner.experiments.ANALYSES)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.analyses.answers import Answer, changes_key
from runner.analyses.contract import Analysis, Section
from runner.analyses.inputs import ChangeKey, collected_inputs
from runner.analyses.runs import StaleRun, read_spec_runs
from runner.checks import Failure
from runner.layout import Layout, partial_path
from runner.report.analyzed_files import AnalyzedFiles, read_analyzed
from runner.report.answers import answer_rows, answers_section, change_text
from runner.report.claims import claims_section
from runner.report.forest import forest_svg
from runner.report.forest_rows import record_rows
from runner.report.html import write_html
from runner.report.what_ran import versions_line, what_ran
from runner.spec.conditions import conditions_line
from runner.spec.model import Spec
from runner.tables.runs import RunRow
from runner.tables.schema import LogDamageRow, TransferRow, read_log_damage

CLAIMS_PLOT = "claims.svg"


@dataclass(frozen=True)
class ReportResult:
    path: Path
    checks_passed: bool
    failures: list[Failure]
    # The Answers table's header and rows, as the report gives them, for the console.
    answers: tuple[list[str], list[list[str]]]
    stale: list[StaleRun]  # as analyze decided them


def write_report(spec: Spec, layout: Layout, analyses: Sequence[Analysis[Any]]) -> ReportResult:
    """The report of what analyze wrote for each of ``analyses`` (the
    registry, runner.experiments) that the spec asks; NotAnalyzedError,
    naming the file, if analyze has not run. The caller decides on exit
    codes."""
    found = read_analyzed(spec, layout, analyses)
    runs = read_spec_runs(spec, layout)
    collected = collected_inputs(spec, layout, runs)
    inputs = replace(collected, answered=answered_changes(found.answers, collected.transfers))
    out = layout.report_dir
    work = partial_path(out)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    sections = [analysis.render(result, inputs, work) for analysis, result in found.results]
    plot = _claims_plot(spec, found, work)
    text = _report_text(spec, layout, found, sections, runs, plot)
    (work / "report.md").write_text(text)
    write_html(text, spec, versions_line(runs), work)
    if out.exists():
        shutil.rmtree(out)
    work.rename(out)
    rows = answer_rows(found.answers, found.cpu_hours)
    return ReportResult(out / "report.md", not found.failures, found.failures, rows, found.stale)


def _report_text(
    spec: Spec,
    layout: Layout,
    found: AnalyzedFiles,
    sections: list[Section],
    runs: list[RunRow],
    plot: str | None,
) -> str:
    """What ran; the claims (with their plot, ``plot``) and the answers;
    the checks; each analysis's sections; the plots."""
    damage = read_log_damage(layout.log_damage_csv)
    head, ran = what_ran(spec, layout, runs, damage, found.stale)
    answered = answers_section(found.answers, found.cpu_hours, spec.seed_rounds is not None)
    # The published claims and the answers open the report, right after its
    # title and description.
    claimed = claims_section(found.records, spec.claims, plot, conditions_line(spec))
    lines = [*head, *claimed, *([""] if claimed else []), *answered[1:], "", *ran]
    lines += _checks_lines(sections, damage, found.failures)
    for section in sections:
        lines += section.lines
    plots = [p for s in sections for p in s.plots]
    lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines) + "\n"


def _claims_plot(spec: Spec, found: AnalyzedFiles, work: Path) -> str | None:
    """Write the forest plot of the spec's claim hypotheses into ``work``
    (claims.svg) from their answers.json records; its name, or None where
    no hypothesis tests a claim."""
    svg = forest_svg([(spec.name, record_rows(found.records))])
    if not svg:
        return None
    (work / CLAIMS_PLOT).write_text(svg)
    return CLAIMS_PLOT


def _checks_lines(
    sections: list[Section], damage: list[LogDamageRow] | None, failures: list[Failure]
) -> list[str]:
    """The Checks section: each analysis's paragraphs, the damaged logs',
    and the checks that failed."""
    lines = ["", "## Checks"]
    for section in sections:
        lines += section.checks
    if damage is not None:
        lines += [
            "",
            "Every log a run's tables come from must be present and not empty, and no "
            "damaged line that was skipped may have held a record (a transfer's result, a "
            f"circuit event): {sum(d.matters for d in damage)} logs fail this.",
        ]
    if failures:
        lines += ["", "**FAILED:**", ""] + [f"- {f}" for f in failures]
    return lines


def answered_changes(
    found: Sequence[Answer], transfers: Sequence[TransferRow]
) -> dict[ChangeKey, tuple[str, str]]:
    """The Changes table's comparisons that hypotheses answer, each with
    the hypothesis and its change as the Answers section gives it."""
    answered = {}
    for a in found:
        key = changes_key(a.hypothesis, transfers)
        if key is not None:
            answered[key] = (
                a.hypothesis.name,
                change_text(a.estimate, a.look, a.critical, a.alpha),
            )
    return answered
