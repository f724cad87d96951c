"""What ``analyze`` wrote (runner.analyses.analyze), read back for the
report: each asked analysis's result as its type, the answers to the
spec's hypotheses, the failed checks and the stale runs read. A file that is missing, or was
written for other hypotheses or analyses than the spec now asks, stops the
report with NotAnalyzedError, naming the file: run ``analyze`` again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.analyses.answers import Answer, answer_from_record, hypothesis_fields
from runner.analyses.contract import Analysis
from runner.analyses.from_data import from_data
from runner.analyses.runs import StaleRun
from runner.checks import Failure
from runner.errors import NotAnalyzedError
from runner.layout import Layout
from runner.spec.model import Spec


@dataclass(frozen=True)
class AnalyzedFiles:
    """Each analysis the spec asks with its result; answers.json's records,
    the answers they record and the CPU-hours behind each; checks.json's
    failures (the analyses', the runs', the damaged logs'); and stale.json's
    runs, as analyze decided them."""

    results: list[tuple[Analysis[Any], Any]]
    records: list[dict[str, Any]]
    answers: list[Answer]
    cpu_hours: list[float | None]
    failures: list[Failure]
    stale: list[StaleRun]


def read_analyzed(spec: Spec, layout: Layout, analyses: Sequence[Analysis[Any]]) -> AnalyzedFiles:
    """What analyze wrote for ``spec``, of those of ``analyses`` it asks."""
    asked = [a for a in analyses if a.applies(spec)]
    checks_path = layout.data_json("checks")
    checks = _json(spec, checks_path)
    failures = _failures(spec, checks_path, checks, [a.name for a in asked])
    results = [(a, _result(spec, layout.analysis_json(a.name), a)) for a in asked]
    answers_path = layout.data_json("answers")
    records = _json(spec, answers_path)
    found = _answers(spec, answers_path, records)  # checks the records first
    cpu = [record["cpu_hours"] for record in records]
    return AnalyzedFiles(results, records, found, cpu, failures, read_stale(spec, layout))


def read_stale(spec: Spec, layout: Layout) -> list[StaleRun]:
    """The stale runs analyze found (stale.json)."""
    path = layout.data_json("stale")
    try:
        found: list[StaleRun] = from_data(list[StaleRun], _json(spec, path))
    except TypeError as exc:
        raise _again(spec, path, f"does not read as stale runs ({exc})") from exc
    return found


def _again(spec: Spec, path: Path, problem: str) -> NotAnalyzedError:
    return NotAnalyzedError(
        f"the report renders what `analyze` writes, and {path} {problem}: run "
        f"`python -m runner analyze {spec.path}` first"
    )


def _json(spec: Spec, path: Path) -> Any:
    if not path.is_file():
        raise _again(spec, path, "does not exist")
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise _again(spec, path, f"does not read as JSON ({exc})") from exc


def _result(spec: Spec, path: Path, analysis: Analysis[Any]) -> Any:
    """An analysis's result, as the type its compute function returns."""
    try:
        return from_data(analysis.result_type, _json(spec, path))
    except TypeError as exc:
        problem = f"does not read as analysis {analysis.name!r}'s result ({exc})"
        raise _again(spec, path, problem) from exc


def _failures(spec: Spec, path: Path, checks: Any, asked: list[str]) -> list[Failure]:
    """checks.json's failures, in its order, if it checked the analyses asked."""
    try:
        checked = [entry["analysis"] for entry in checks["analyses"]]
        if checked != asked:
            raise _again(spec, path, f"checked other analyses ({checked}) than the spec asks")
        lists = [entry["failures"] for entry in checks["analyses"]]
        lists += [checks["runs"], checks["log_damage"]]
        return [f for found in lists for f in from_data(list[Failure], found)]
    except (KeyError, TypeError) as exc:
        raise _again(spec, path, f"does not read as checks ({exc!r})") from exc


def _answers(spec: Spec, path: Path, records: Any) -> list[Answer]:
    """The answers the records record, if they answer the spec's hypotheses
    as it states them now (hypotheses are not part of a run's identity, so
    they can change after analyze)."""
    stated = [hypothesis_fields(h) for h in spec.hypotheses]
    recorded = None
    if isinstance(records, list) and len(records) == len(stated):
        recorded = [
            {key: r.get(key) for key in fields} if isinstance(r, dict) else None
            for r, fields in zip(records, stated, strict=True)
        ]
    if recorded != stated:
        raise _again(spec, path, "answers other hypotheses than the spec states")
    try:
        return [answer_from_record(r, h) for r, h in zip(records, spec.hypotheses, strict=True)]
    except KeyError as exc:
        raise _again(spec, path, f"lacks the field {exc}, which an older runner left out") from exc
    except (TypeError, ValueError) as exc:
        raise _again(spec, path, f"does not read as answers ({exc})") from exc
