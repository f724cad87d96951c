"""Collection and the report know the analyses only through the registry:
a new analysis adds its table and its report section by registering."""

import json
from dataclasses import dataclass
from pathlib import Path

from runner.analyses.contract import Analysis, Section
from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.experiments import ANALYSES, tables_of
from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.report.compare import compare
from runner.tables import collect as collect_module
from runner.tables.definition import Table
from tests.specs import ci_small
from tests.test_log_damage import _damaged_run


@dataclass(frozen=True)
class HostsRow:
    variant: str
    seed: int
    hosts: int


def _hosts_rows(logs: RunLogs) -> list[HostsRow]:
    return [HostsRow(logs.run.variant, logs.run.seed, len(logs.run.hosts))]


@dataclass(frozen=True)
class HostsResult:
    runs: int
    failures: list[Failure]


def _hosts_result(inp: Inputs) -> HostsResult:
    return HostsResult(len(inp.measured_clients), [Failure("toy", None, "toy", "a failure")])


def _hosts_report(result: HostsResult, inp: Inputs, out: Path) -> Section:
    return Section(
        checks=["", f"Every run has hosts ({result.runs} runs)."],
        lines=["", "## Hosts per run", ""],
    )


TOY = Analysis(
    "hosts per run", (Table("hosts", HostsRow, _hosts_rows),), _hosts_result, _hosts_report
)


def test_a_registered_analysis_adds_its_table_and_section(tmp_path: Path) -> None:
    analyses = (*ANALYSES, TOY)
    spec = ci_small()
    layout = Layout(tmp_path / "results", spec.name)
    _damaged_run(layout.run_dir("conflux-on", 1))

    collected = collect_module.collect(spec, layout, tables_of(analyses))
    assert collected.rows["hosts"] == 1
    assert (layout.experiment_dir / "hosts.csv").read_text().splitlines() == [
        "variant,seed,hosts",
        "conflux-on,1,4",
    ]
    result = compare(spec, layout, analyses)
    report = result.path.read_text()
    assert "Every run has hosts (1 runs)." in report and "## Hosts per run" in report
    assert "toy: a failure" in map(str, result.failures) and not result.checks_passed
    # its section comes after every registered one, its check with the others
    assert report.index("## Hosts per run") > report.index("## Circuits")
    assert report.index("Every run has hosts") < report.index("**FAILED:**")
    assert json.loads((layout.experiment_dir / "analyses" / "hosts-per-run.json").read_text()) == {
        "runs": 1,
        "failures": [
            {"variant": "toy", "seed": None, "check": "toy", "message": "a failure", "where": None}
        ],
    }


def test_an_analysis_the_spec_does_not_ask_adds_no_section(tmp_path: Path) -> None:
    never = Analysis("never", (), _hosts_result, _hosts_report, applies=lambda spec: False)
    analyses = (*ANALYSES, never)
    spec = ci_small()
    layout = Layout(tmp_path / "results", spec.name)
    _damaged_run(layout.run_dir("conflux-on", 1))
    collect_module.collect(spec, layout, tables_of(analyses))
    result = compare(spec, layout, analyses)
    assert "## Hosts per run" not in result.path.read_text()
    assert "toy: a failure" not in map(str, result.failures)
