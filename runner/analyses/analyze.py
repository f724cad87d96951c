"""``analyze``: an experiment's collected tables turned into the JSON files
the report renders from, beside the tables: each analysis's result
(``analyses/<name>.json``), the answers to the spec's hypotheses
(``answers.json``), every check's failures (``checks.json``) and the runs
read that are stale (``stale.json``: their identity differs from what the
spec now gives), each decided here alone.

Everything is computed before anything is written; each file is written
whole and renamed into place, and the analyses' folder is replaced as one
(no result of an analysis the spec no longer asks stays in it). An
analysis that raises leaves the last analyze's files as they were.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.analyses.answers import Answer, answer_record, answers
from runner.analyses.as_data import as_data
from runner.analyses.contract import Analysis
from runner.analyses.inputs import collected_inputs
from runner.analyses.runs import StaleRun, cpu_hours, failed, read_spec_runs, stale
from runner.checks import Failure
from runner.layout import Layout, partial_path
from runner.manifest import write_json_atomic
from runner.spec.model import Spec
from runner.tables.schema import read_log_damage


@dataclass(frozen=True)
class Analyzed:
    """What analyze found: every check's failures, in checks.json's order
    (the analyses', the runs', the damaged logs'), and the answers with the
    CPU-hours behind each, and the stale runs read."""

    failures: list[Failure]
    answers: list[Answer]
    cpu_hours: list[float | None]
    stale: list[StaleRun]

    @property
    def checks_passed(self) -> bool:
        return not self.failures


def analyze(spec: Spec, layout: Layout, analyses: Sequence[Analysis[Any]]) -> Analyzed:
    """Compute each of ``analyses`` (the registry, runner.experiments) that
    the spec asks and the answers, and write them with the checks; the
    caller decides on exit codes."""
    runs = read_spec_runs(spec, layout)
    inputs = collected_inputs(spec, layout, runs)
    found = answers(spec, layout, inputs.transfers)
    results = [(a.name, a.compute(inputs)) for a in analyses if a.applies(spec)]
    cpu = [cpu_hours(spec, runs, a.hypothesis.variants) for a in found]
    records = [answer_record(a, c, spec.claims) for a, c in zip(found, cpu, strict=True)]
    by_analysis = [(name, result_failures(name, result)) for name, result in results]
    run_failures = failed(runs)
    damage = read_log_damage(layout.log_damage_csv) or []
    damage_failures = [d.failure() for d in damage if d.matters]
    checks = checks_record(by_analysis, run_failures, damage_failures)
    stale_runs = stale(spec, runs)
    write_analyses(layout, results)
    write_json_atomic(layout.data_json("answers"), records)
    write_json_atomic(layout.data_json("checks"), checks)
    write_json_atomic(layout.data_json("stale"), as_data(stale_runs))
    failures = [f for _, own in by_analysis for f in own] + run_failures + damage_failures
    return Analyzed(failures, found, cpu, stale_runs)


def result_failures(name: str, result: object) -> list[Failure]:
    """The failed checks an analysis's result holds: its ``failures``
    field, where it has one (none otherwise)."""
    found = getattr(result, "failures", [])
    if not isinstance(found, list) or not all(isinstance(f, Failure) for f in found):
        raise TypeError(f"analysis {name!r}: its result's failures are not a list of Failure")
    return list(found)


def checks_record(
    analyses: list[tuple[str, list[Failure]]], runs: list[Failure], damage: list[Failure]
) -> dict[str, Any]:
    """``checks.json``: whether every check passed, and each failure as a
    record (variant, seed, check, message, where) of the analysis that
    found it, of the runs or of damaged logs."""
    every = [f for _, found in analyses for f in found] + runs + damage
    return {
        "passed": not every,
        "analyses": [{"analysis": name, "failures": as_data(found)} for name, found in analyses],
        "runs": as_data(runs),
        "log_damage": as_data(damage),
    }


def write_analyses(layout: Layout, results: list[tuple[str, Any]]) -> None:
    """Each result as JSON in a new ``analyses/`` folder, which replaces the
    last one whole."""
    folder = layout.analyses_dir
    work = partial_path(folder)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name, result in results:
        write_json_atomic(work / layout.analysis_json(name).name, as_data(result))
    if folder.exists():
        shutil.rmtree(folder)
    work.rename(folder)
