"""Each committed results fixture's report.md is exactly the one committed
beside it (``tests/fixtures/<name>/report.md``): a change to how the
runner computes or writes a report shows up here, line by line.

The report is rendered as ``runner report`` renders it after ``runner
analyze``: analyze runs as it is, then every registered analysis's compute
function, the answers to the hypotheses and analyze itself are made to
raise, so the report shows only what it read back from analyze's JSON.

When a change to a report is meant, write the new ones with
``python -m tests.test_report_golden`` and commit them with the change.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import pytest

import runner.analyses.analyze
import runner.analyses.answers
import runner.experiments
from runner.analyses.analyze import analyze
from runner.report.assemble import write_report
from tests.conftest import FIXTURES, fixture_report, fixture_results

NAMES = ("conflux-small-pilot", "congestion-small", "mctor-small", "tortoise-small")
# The spec's absolute path differs per checkout.
PLACEHOLDER = "<fixtures>"


def _refuse(what: str) -> Callable[..., NoReturn]:
    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(f"the report computed {what}")

    return refused


def forbid_computing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every registered analysis's compute function, the answers to the
    hypotheses (``answers`` and the steps it takes) and ``analyze`` raise,
    wherever a module of the runner holds them; the registry's analyses
    are copies whose compute raises."""
    registered = runner.experiments.ANALYSES
    forbidden: dict[int, str] = {id(a.compute): f"analysis {a.name!r}" for a in registered}
    for name in ("answers", "holm", "observe", "answer", "answer_at"):
        forbidden[id(getattr(runner.analyses.answers, name))] = f"the answers ({name})"
    forbidden[id(runner.analyses.analyze.analyze)] = "analyze"
    for module in [m for name, m in sys.modules.items() if name.startswith("runner")]:
        for attribute, value in list(vars(module).items()):
            if id(value) in forbidden:
                monkeypatch.setattr(module, attribute, _refuse(forbidden[id(value)]))
    raising = tuple(replace(a, compute=_refuse(f"analysis {a.name!r}")) for a in registered)
    monkeypatch.setattr(runner.experiments, "ANALYSES", raising)


def test_forbidding_makes_every_compute_function_and_the_answers_raise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    computes = [a.compute for a in runner.experiments.ANALYSES]
    forbid_computing(monkeypatch)
    for analysis in runner.experiments.ANALYSES:
        with pytest.raises(AssertionError, match="the report computed analysis"):
            analysis.compute(None)  # type: ignore[arg-type]
    for compute in computes:
        module = sys.modules[compute.__module__]
        with pytest.raises(AssertionError, match="the report computed"):
            getattr(module, compute.__name__)(None)
    with pytest.raises(AssertionError, match="the answers"):
        runner.analyses.analyze.answers(None, None, [])  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="analyze"):
        runner.analyses.analyze.analyze(None, None, ())  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NAMES)
def test_a_fixture_report_rendered_from_analyze_json_alone_is_the_committed_one(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, layout = fixture_results(name, tmp_path)
    analyze(spec, layout, runner.experiments.ANALYSES)
    forbid_computing(monkeypatch)
    report = write_report(spec, layout, runner.experiments.ANALYSES).path
    got = report.read_text().replace(str(FIXTURES), PLACEHOLDER)
    expected = (FIXTURES / name / "report.md").read_text()
    assert got.splitlines() == expected.splitlines()
    assert got == expected


def _report(name: str, root: Path) -> str:
    """As ``runner compare`` writes it."""
    return fixture_report(name, root).read_text().replace(str(FIXTURES), PLACEHOLDER)


def main() -> None:
    for name in sys.argv[1:] or NAMES:
        with tempfile.TemporaryDirectory() as tmp:
            (FIXTURES / name / "report.md").write_text(_report(name, Path(tmp)))
        print(f"wrote {FIXTURES / name / 'report.md'}")


if __name__ == "__main__":
    main()
