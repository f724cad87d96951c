"""What the runner prints while and after runs run: a status line when
something changed, one last line for every run, nothing about placement
when nothing runs, and collect's line naming the tables with rows. Fed
made-up states: no network, no process."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import yaml

from runner.execute import run_all as run
from runner.execute.progress import Progress, outcome_line, state_of, status_line
from runner.execute.run_all import RunChoice, RunOutcome, run_experiment
from runner.experiments import parse_spec
from runner.layout import Layout
from runner.network.backends import SHADOW
from runner.network.generate import Tools
from runner.spec.model import Spec
from runner.tables.collect import Collected
from tests.conftest import CI_SMALL, ROOT


def test_the_status_line_names_each_running_run_and_its_percentage() -> None:
    phases = {"b/seed-1": ("simulate", 40.0, 45), "a/seed-1": ("generate", 55.0, None)}
    line = status_line(65.0, 1, 4, 1, phases, now=100.0)
    assert line == (
        "[1m05s] 1/4 runs finished, 1 failed; running: a/seed-1 generate (0m45s), "
        "b/seed-1 simulate 45% (1m00s)"
    )
    # Two lines of one state differ only in their clocks.
    later = {"b/seed-1": ("simulate", 40.0, 45), "a/seed-1": ("generate", 55.0, None)}
    assert state_of(1, 1, phases) == state_of(1, 1, later)
    assert state_of(1, 1, phases) != state_of(1, 1, {**later, "b/seed-1": ("simulate", 40.0, 46)})


def _progress(total: int, interval: float) -> tuple[Progress, io.StringIO]:
    """A display on a stream that is not a terminal (lines, not a status
    redrawn), without its clock's thread: only the calls below print."""
    stream = io.StringIO()
    return Progress(total, stream=stream, interval=interval), stream


def test_a_percentage_is_printed_only_when_it_changed() -> None:
    progress, stream = _progress(2, interval=0.0)  # every call is due: only a change prints
    progress.phase("a/seed-1", "simulate")
    progress.percent("a/seed-1", 45)
    progress.percent("a/seed-1", 45)
    progress._print(due=True)  # what the clock's tick does
    progress.percent("a/seed-1", 46)
    lines = stream.getvalue().splitlines()
    assert [re.sub(r"^\[\S+\] ", "", line) for line in lines] == [
        "0/2 runs finished; running: a/seed-1 simulate (0m00s)",
        "0/2 runs finished; running: a/seed-1 simulate 45% (0m00s)",
        "0/2 runs finished; running: a/seed-1 simulate 46% (0m00s)",
    ]


def test_the_last_run_ends_without_a_status_line() -> None:
    progress, stream = _progress(2, interval=30.0)
    progress.phase("a/seed-1", "simulate")
    progress.phase("b/seed-1", "simulate")
    progress.finish("a/seed-1", ok=True)
    progress.finish("b/seed-1", ok=False, message="tor exited")
    progress.phase("b/seed-1", "collect")  # a late event changes nothing
    progress._print(due=True)  # nor does the clock's tick
    text = stream.getvalue()
    assert "1/2 runs finished" in text
    assert "2/2 runs finished" not in text
    assert text.splitlines()[-1] == "b/seed-1: FAILED: tor exited"


@pytest.mark.parametrize(
    ("statuses", "line"),
    [
        (["complete"] * 4, "4/4 runs complete: 4 ran in 8m50s"),
        (
            ["complete", "complete", "skipped", "skipped"],
            "4/4 runs complete: 2 ran in 8m50s, 2 were already complete",
        ),
        (
            ["complete", "failed", "complete", "complete"],
            "3/4 runs complete, 1 failed: 4 ran in 8m50s",
        ),
        (["skipped"] * 4, "4 of 4 runs already complete: nothing to run"),
    ],
)
def test_one_line_ends_the_runs(statuses: list[str], line: str) -> None:
    assert outcome_line(statuses, 530.0) == line


def _spec_and_layout(tmp_path: Path) -> tuple[Spec, Layout]:
    spec = parse_spec(yaml.safe_load(CI_SMALL.read_text()), str(CI_SMALL))
    return spec, Layout(tmp_path, spec.name)


def test_nothing_about_placement_when_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, layout = _spec_and_layout(tmp_path)
    choices = [RunChoice(v.name, s, layout.run_dir(v.name, s), True, ()) for v, s in spec.runs()]
    monkeypatch.setattr(run, "choose_runs", lambda *args: choices)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing to run, yet it was placed or run")

    monkeypatch.setattr(run, "plan_placement", refuse)
    monkeypatch.setattr(run, "_run_here", refuse)
    outcomes = run_experiment(spec, layout, [], tools=Tools({}, {}), backend=SHADOW)
    assert {o.status for o in outcomes} == {"skipped"} and len(outcomes) == 4
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_the_run_stage_ends_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.workflow import Experiment, RunOptions

    spec, layout = _spec_and_layout(tmp_path)
    done = [RunOutcome(v.name, s, "complete", layout.run_dir(v.name, s)) for v, s in spec.runs()]
    monkeypatch.setattr(run, "run_experiment", lambda *args, **kwargs: done)
    assert Experiment(spec, SHADOW, layout).run(RunOptions(executor="local")).code == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and re.fullmatch(r"4/4 runs complete: 4 ran in 0m0\ds", out[0])


def test_collect_names_only_the_tables_with_rows() -> None:
    found = Collected(4, {"transfers": 120, "placements": 0, "hop_feedback": 0, "log_damage": 0})
    assert found.line("results/ci-small/<table>.csv") == (
        "collected 4 runs: 120 transfers -> results/ci-small/<table>.csv"
    )
    empty = Collected(1, {"transfers": 0, "log_damage": 0})
    assert empty.line("x") == "collected 1 run: no rows -> x"


def test_make_regress_says_it_reuses_complete_runs() -> None:
    help_lines = [line for line in (ROOT / "Makefile").read_text().splitlines() if "@echo" in line]
    first = next(i for i, line in enumerate(help_lines) if '"make regress ' in line)
    text = " ".join(line.split('"')[1].strip() for line in help_lines[first : first + 2])
    assert "reuses its complete runs" in text and "re-runs only missing or stale ones" in text
    assert "then checks the baseline" in text
