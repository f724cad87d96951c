"""The Experiment object: a command loads its spec once, and each step
returns its exit status and what it found, with no command line involved."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import runner.experiments
import runner.tools.prereqs
from runner.execute import run_all as execute_run
from runner.execute.run_all import RunOutcome
from runner.layout import Layout
from runner.network.backends import LOCAL, SHADOW
from runner.network.generate import Tools
from runner.report.assemble import ReportResult
from runner.spec.model import Spec
from runner.tables.collect import Collected
from runner.workflow import Console, Experiment, RunOptions
from runner.workflow.regress import tolerance
from runner.workflow.results import PlanResult
from tests.conftest import CI_SMALL, FIXTURES, ROOT, fixture_results

TORTOISE = FIXTURES / "tortoise-small" / "spec.yaml"
PILOT = FIXTURES / "conflux-small-pilot" / "spec.yaml"


def _lines() -> tuple[Console, list[str], list[str]]:
    """A console that keeps what it is told: (console, out lines, err lines)."""
    out: list[str] = []
    err: list[str] = []
    return Console(out.append, err.append), out, err


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The spec files loaded from here on, in order."""
    loaded: list[Path] = []
    real = runner.experiments.load_spec

    def counted(path: Path) -> Spec:
        loaded.append(Path(path))
        return real(path)

    monkeypatch.setattr(runner.experiments, "load_spec", counted)
    return loaded


def _no_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """compare (analyze, then the report) stood in for: it says which
    experiment it reported, and the stale runs as analyze decides them."""
    import runner.report.compare
    from runner.analyses.runs import read_spec_runs, stale

    reported: list[str] = []

    def compare(spec: Spec, layout: Layout, analyses: object) -> ReportResult:
        reported.append(spec.name)
        found = stale(spec, read_spec_runs(spec, layout))
        return ReportResult(tmp_path / "report.md", True, [], ([], []), found)

    monkeypatch.setattr(runner.report.compare, "compare", compare)
    return reported


def _baseline(spec: Spec, layout: Layout, path: Path, scale: float = 1.0) -> None:
    """A baseline of the experiment's transfers as they are, its values times ``scale``."""
    from runner.analyses.regress import make_baseline
    from runner.tables.schema import TRANSFERS

    rows = TRANSFERS.read(layout.transfers_csv)
    data = make_baseline(rows, [v.name for v in spec.variants], spec.name, {})
    for entry in data["metrics"].values():
        entry.update(value=entry["value"] * scale, low=entry["low"] * scale)
        if entry["high"] is not None:
            entry["high"] *= scale
    path.write_text(json.dumps(data))


def test_compare_and_regress_load_the_spec_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: list[Path]
) -> None:
    from runner.cli import main

    spec, layout = fixture_results("tortoise-small", tmp_path)
    reported = _no_report(monkeypatch, tmp_path)
    baseline = tmp_path / "baseline.json"
    _baseline(spec, layout, baseline)
    common = ["--results", str(tmp_path), "--backend", "shadow"]
    loads.clear()
    assert main(["compare", str(TORTOISE), *common]) == 0
    assert loads == [TORTOISE] and reported == ["tortoise-small"]
    loads.clear()
    command = ["regress", str(TORTOISE), *common, "--skip-run", "--baseline", str(baseline)]
    assert main(command) == 0
    assert loads == [TORTOISE]


def test_the_steps_of_one_experiment_share_one_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: list[Path]
) -> None:
    fixture_results("tortoise-small", tmp_path)
    _no_report(monkeypatch, tmp_path)
    loads.clear()
    console, out, _ = _lines()
    exp = Experiment.load(TORTOISE, tmp_path, "shadow", console=console)
    assert exp.spec is exp.spec and exp.layout == Layout(tmp_path.resolve(), "tortoise-small")
    assert exp.compare().code == 0
    # Analyze and the report, for real: the fixture's checks fail some runs.
    analyzed = exp.analyze()
    assert analyzed.analyzed is not None
    assert analyzed.code == (0 if analyzed.analyzed.checks_passed else 1)
    assert exp.report().code == 0
    assert loads == [TORTOISE]
    assert out[0] == f"report: {tmp_path / 'report.md'}"


def test_a_stage_reading_stale_runs_says_how_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, layout = fixture_results("tortoise-small", tmp_path)
    _no_report(monkeypatch, tmp_path)
    console, _, err = _lines()
    assert Experiment.load(TORTOISE, tmp_path, "shadow", console=console).compare().code == 0
    assert not [line for line in err if "stale" in line]  # runs as the spec gives them
    edited = tmp_path / "spec" / "tortoise-small.yaml"
    edited.parent.mkdir()
    text = TORTOISE.read_text()
    edited.write_text(
        text.replace(
            "torrc: &clients {client: [ConfluxEnabled 0]}",
            ("torrc: &clients {client: [ConfluxEnabled 0, SafeLogging 0]}"),
            1,
        )
    )
    exp = Experiment.load(edited, tmp_path, "shadow", console=console)
    assert exp.compare().code == 0
    complete = len(exp.spec.variants) * len(exp.spec.seeds)
    changed = [v for v in exp.spec.variants if v.torrc != spec.variant(v.name).torrc]
    assert 0 < len(changed) < len(exp.spec.variants)
    stale = len(changed) * len(exp.spec.seeds)
    assert err[-1].startswith(f"warning: {stale} of the {complete} complete runs read are stale")
    assert f"made when {edited} gave another variant" in err[-1]


def test_a_reader_works_on_the_backend_its_runs_were_made_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, layout = fixture_results("tortoise-small", tmp_path)
    assert Experiment.load(TORTOISE, tmp_path, reading=True).backend is SHADOW
    # Runs of the other backend beside them: the one `make experiment` would
    # run here is read (Shadow where installed, else local), and said.
    run_dir = layout.run_dir(spec.variants[0].name, spec.seeds[0])
    local = tmp_path / LOCAL.experiment_name(spec.name) / run_dir.relative_to(layout.experiment_dir)
    local.mkdir(parents=True)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (local / "manifest.json").write_text(json.dumps(manifest | {"backend": "local"}))
    for installed, other in ((SHADOW, LOCAL), (LOCAL, SHADOW)):
        monkeypatch.setattr(runner.tools.prereqs, "default_backend", lambda b=installed: b)
        console, out, _ = _lines()
        exp = Experiment.load(TORTOISE, tmp_path, reading=True, console=console)
        assert exp.backend is installed
        assert out == [
            "runs of tortoise-small exist for both backends (local, shadow): reading the "
            f"{installed.name} runs in {exp.layout.experiment_dir}, the backend `make "
            f"experiment` runs here (--backend {other.name} reads the others)"
        ]
    assert Experiment.load(TORTOISE, tmp_path, "local", reading=True).backend is LOCAL


def test_experiment_runs_collects_and_compares_and_says_so_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.tables.collect

    console, out, err = _lines()
    exp = Experiment.load(CI_SMALL, tmp_path, "shadow", console=console)
    runs = exp.spec.runs()
    outcomes = [
        RunOutcome(v.name, s, "failed" if s == 2 else "complete", exp.layout.run_dir(v.name, s))
        for v, s in runs
    ]
    monkeypatch.setattr(execute_run, "run_experiment", lambda *args, **kwargs: outcomes)

    def collect(spec: Spec, layout: Layout, tables: object, console: object) -> Collected:
        layout.transfers_csv.parent.mkdir(parents=True, exist_ok=True)
        layout.transfers_csv.write_text("")
        return Collected(2, {"transfers": 10})

    monkeypatch.setattr(runner.tables.collect, "collect", collect)
    reported = _no_report(monkeypatch, tmp_path)
    done = exp.experiment(RunOptions(executor="local"))
    assert (done.code, done.run_code, reported) == (1, 1, ["ci-small"])
    assert done.compared is not None and done.compared.code == 0
    assert out[0].startswith(f"{len(runs) // 2}/{len(runs)} runs complete")
    assert out[1].startswith("collected 2 runs: 10 transfers -> ")
    assert out[2].startswith("report: ")
    assert err == [f"FAILED {v.name}/seed-2: None" for v, s in runs if s == 2]


def test_plan_from_another_specs_pilot_without_a_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: list[Path]
) -> None:
    import runner.workflow.plan

    fixture_results("conflux-small-pilot", tmp_path)
    asked: list[tuple[str, Path, str | None, int]] = []

    def write_plan(spec: Spec, layout: Layout, target: Spec | None, cores: int) -> PlanResult:
        asked.append((spec.name, layout.experiment_dir, target and target.name, cores))
        return PlanResult(0, None, "the plan")

    monkeypatch.setattr(runner.workflow.plan, "write_plan", write_plan)
    loads.clear()
    console, out, _ = _lines()
    target = ROOT / "configs" / "conflux.yaml"
    exp = Experiment.load(target, tmp_path, "shadow", console=console)
    planned = exp.plan(pilot_from=PILOT, cores=8)
    assert (planned.code, planned.text, out) == (0, "the plan", ["the plan"])
    # The pilot's runs are read where the pilot's spec puts them.
    assert asked == [("conflux-small", tmp_path.resolve() / "conflux-small", "conflux", 8)]
    assert loads == [target, PILOT]


def test_plan_says_what_to_run_first(tmp_path: Path) -> None:
    console, _, err = _lines()
    planned = Experiment.load(CI_SMALL, tmp_path, "shadow", console=console).plan()
    assert (planned.code, planned.plan) == (1, None)
    assert err == [
        f"error: plan reads the tables `collect` writes, and {tmp_path}/ci-small/transfers.csv "
        f"does not exist: run `python -m runner collect {CI_SMALL}` first"
    ]


def test_regress_returns_its_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, layout = fixture_results("tortoise-small", tmp_path)
    console, out, _ = _lines()
    exp = Experiment.load(TORTOISE, tmp_path, "shadow", console=console)
    same, slower = tmp_path / "same.json", tmp_path / "slower.json"
    _baseline(spec, layout, same)
    _baseline(spec, layout, slower, scale=0.25)
    passed = exp.regress(same, skip_run=True)
    assert passed.code == 0 and passed.verdicts and all(v.ok for v in passed.verdicts)
    assert (
        out[-1]
        == f"regression: {len(passed.verdicts)}/{len(passed.verdicts)} metrics within tolerance"
    )
    failed = exp.regress(slower, skip_run=True)
    assert failed.code == 1 and not all(v.ok for v in failed.verdicts)
    absent = exp.regress(tmp_path / "absent.json", skip_run=True)
    assert (absent.code, absent.verdicts) == (1, [])


def test_a_baseline_is_banded_by_its_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.analyses.regress import LOCAL_ABSOLUTE_SLACK_S, LOCAL_FACTOR_BAND

    assert tolerance(SHADOW) == (None, 0.0)
    assert tolerance(LOCAL) == (LOCAL_FACTOR_BAND, LOCAL_ABSOLUTE_SLACK_S)
    fixture_results("tortoise-small", tmp_path)
    monkeypatch.setattr(execute_run, "resolve_tools", lambda *a: Tools({}, {"tor": "0.4.9"}))
    written: dict[str, Any] = {}
    for backend in ("shadow", "local"):
        exp = Experiment.load(TORTOISE, tmp_path, backend, console=Console.quiet())
        # The local backend's results live apart: give it the same tables.
        if backend == "local":
            exp.layout.experiment_dir.mkdir()
            (exp.layout.transfers_csv).write_bytes(
                (tmp_path / "tortoise-small" / "transfers.csv").read_bytes()
            )
        path = tmp_path / f"{backend}.json"
        assert exp.regress(path, write=True, skip_run=True).wrote
        written[backend] = json.loads(path.read_text())
    assert written["local"]["provenance"]["backend"] == "local"
    assert written["shadow"]["provenance"]["versions"] == {"tor": "0.4.9"}
    key = next(k for k in written["shadow"]["metrics"] if k.endswith("ttlb_median"))
    shadow, local = written["shadow"]["metrics"][key], written["local"]["metrics"][key]
    assert local["high"] > shadow["high"]  # only gross changes count in real time


def test_the_docs_call_methods_the_experiment_has() -> None:
    page = (ROOT / "docs" / "running.md").read_text()
    section = page.split("## From Python", 1)[1].split("\n## ", 1)[0]
    called = set(re.findall(r"\bexp\.(\w+)\(", section))
    assert {"run", "collect", "compare", "experiment", "plan", "regress"} <= called
    assert called <= {name for name in dir(Experiment) if not name.startswith("_")}
    assert "Experiment.load(" in section and "Console.quiet()" in section
