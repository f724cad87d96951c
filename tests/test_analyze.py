"""analyze writes every file whole or none, and replaces the analyses'
folder as one; the report refuses what analyze wrote for other hypotheses
or analyses than the spec now asks, or an answers.json an older runner
wrote, naming the file."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from runner.analyses.analyze import analyze
from runner.analyses.contract import Analysis, Section
from runner.analyses.inputs import Inputs
from runner.errors import NotAnalyzedError
from runner.experiments import ANALYSES
from runner.layout import Layout
from runner.report.assemble import write_report
from runner.spec.model import Spec
from tests.conftest import fixture_results

NAME = "conflux-small-pilot"


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Spec, Path]:
    """The fixture's results, analyzed once; each test copies them."""
    root = tmp_path_factory.mktemp("analyzed")
    spec, layout = fixture_results(NAME, root)
    analyze(spec, layout, ANALYSES)
    return spec, root


def _copy(analyzed: tuple[Spec, Path], tmp_path: Path) -> tuple[Spec, Layout]:
    spec, root = analyzed
    shutil.copytree(root, tmp_path / "results")
    return spec, Layout(tmp_path / "results", spec.name)


def _files(layout: Layout) -> dict[str, str]:
    folder = layout.experiment_dir
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*.json"))
        if "seed-" not in str(p)
    }


def _fails(inp: Inputs) -> list[int]:
    raise RuntimeError("an analysis that fails")


def _nothing(result: list[int], inp: Inputs, out: Path) -> Section:
    return Section()


def test_a_failing_analysis_leaves_the_last_analyze_files_as_they_were(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    before = _files(layout)
    assert {"answers.json", "checks.json", "analyses/transfers.json"} <= set(before)
    failing = Analysis("fails", (), _fails, _nothing)
    with pytest.raises(RuntimeError, match="an analysis that fails"):
        analyze(spec, layout, (*ANALYSES, failing))
    assert _files(layout) == before
    assert not list(layout.experiment_dir.glob("*.partial"))


def test_analyze_replaces_the_analyses_folder_whole(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    left = layout.analysis_json("an analysis no longer asked")
    left.write_text("{}")
    analyze(spec, layout, ANALYSES)
    assert not left.exists() and layout.analysis_json("transfers").is_file()
    assert not (layout.experiment_dir / "analyses.partial").exists()


def test_the_report_refuses_answers_to_other_hypotheses(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    fewer = replace(spec, hypotheses=spec.hypotheses[1:])
    with pytest.raises(NotAnalyzedError) as error:
        write_report(fewer, layout, ANALYSES)
    answers = layout.data_json("answers")
    assert str(error.value) == (
        f"the report renders what `analyze` writes, and {answers} answers other hypotheses "
        f"than the spec states: run `python -m runner analyze {spec.path}` first"
    )
    assert not layout.report_dir.exists()


def test_the_report_refuses_checks_of_other_analyses(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    with pytest.raises(NotAnalyzedError, match=r"checks\.json checked other analyses"):
        write_report(spec, layout, (*ANALYSES, Analysis("more", (), _fails, _nothing)))


def test_the_report_refuses_answers_an_older_runner_wrote(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    path = layout.data_json("answers")
    records = json.loads(path.read_text())
    path.write_text(json.dumps([{k: v for k, v in r.items() if k != "bootstrap"} for r in records]))
    with pytest.raises(NotAnalyzedError, match="lacks the field 'bootstrap'"):
        write_report(spec, layout, ANALYSES)


def test_the_report_names_a_result_that_does_not_read_as_its_type(
    analyzed: tuple[Spec, Path], tmp_path: Path
) -> None:
    spec, layout = _copy(analyzed, tmp_path)
    layout.analysis_json("transfers").write_text('{"min_completion": "high"}')
    with pytest.raises(NotAnalyzedError) as error:
        write_report(spec, layout, ANALYSES)
    assert f"{layout.analysis_json('transfers')} does not read as analysis 'transfers'" in str(
        error.value
    )
    assert "result.min_completion: expected float, got str 'high'" in str(error.value)
