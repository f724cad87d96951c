"""A run's manifest is read and written in runner/manifest.py only, and the
analyses and the report read the runs from the runs table, never from a run
directory: checked on the source, so that a new reader cannot slip in.

Outside runner/manifest.py no module names a manifest (an identifier
``manifest``, the file name, the record's raw document) or looks up one of
the keys only a manifest has. Under runner/analyses/ and runner/report/ no
module reaches a run directory (``run_dir``), a run's logs or its record;
collection (runner/tables/) and the stages before it may.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from runner.analyses.runs import cpu_hours, failed, missing, spec_runs, stale
from runner.checks import Failure
from runner.execute.local import execution
from runner.execute.local.processes import PROCESSES_CPU, LocalRan
from runner.manifest import (
    RunRecord,
    read_run,
    record_collected,
    write_run,
)
from runner.network.backends import NAMESPACE
from runner.tables.runs import RUNS, run_rows
from tests.conftest import FIXTURES, ROOT, fixture_results, fixture_spec

RUNNER = ROOT / "runner"
MANIFEST_MODULE = RUNNER / "manifest.py"
# Keys that only a manifest has (the spec's own keys, such as phases or
# duration, are left out: a spec's body uses them too).
MANIFEST_KEYS = {
    "clock_epoch",
    "cpu_phases_s",
    "hosts",
    "identity",
    "local_network",
    "placement",
    "status",
    "variant_settings",
    "versions",
}
NAMES = {"manifest", "read_manifest", "write_manifest", "MANIFEST", "CPU_PHASES"}
# What the analyses and the report may take from runner.manifest: writing
# their own JSON, and the words for a run's status.
ALLOWED_FROM_MANIFEST = {"write_json_atomic", "STATUS_COMPLETE", "STATUS_FAILED", "STATUS_MISSING"}


def _sources(folder: Path) -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(folder.rglob("*.py")):
        yield path, ast.parse(path.read_text())


def _key(node: ast.AST) -> str | None:
    """The string a subscript or a ``.get``/``.pop``/``.setdefault`` looks up."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key = node.slice.value
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop", "setdefault")
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        key = node.args[0].value
    else:
        return None
    return key if isinstance(key, str) else None


def _manifest_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in NAMES:
            yield line, node.id
        elif isinstance(node, ast.arg) and node.arg in NAMES:
            yield line, node.arg
        elif isinstance(node, ast.Attribute) and node.attr in NAMES | {"document"}:
            yield line, f".{node.attr}"
        elif isinstance(node, ast.alias) and node.name in NAMES:
            yield line, f"import {node.name}"
        elif isinstance(node, ast.Constant) and node.value == "manifest.json":
            yield line, "'manifest.json'"
        elif (key := _key(node)) in MANIFEST_KEYS:
            yield line, f"the manifest's key {key!r}"


def _run_directory_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "run_dir":
            yield line, ".run_dir"
        elif isinstance(node, ast.ImportFrom) and node.module == "runner.manifest":
            for alias in node.names:
                if alias.name not in ALLOWED_FROM_MANIFEST:
                    yield line, f"runner.manifest.{alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module in (
            "runner.logs.run_logs",
            "runner.tables.collect",
        ):
            yield line, node.module
        elif isinstance(node, ast.Constant) and "seed-*" in str(node.value):
            yield line, f"the run directories' pattern {node.value!r}"


def test_only_runner_manifest_reads_or_writes_a_manifests_keys() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path, tree in _sources(RUNNER)
        if path != MANIFEST_MODULE
        for line, what in _manifest_uses(tree)
    ]
    assert found == []


def test_no_analysis_or_report_opens_a_run_directory() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for folder in ("analyses", "report")
        for path, tree in _sources(RUNNER / folder)
        for line, what in _run_directory_uses(tree)
    ]
    assert found == []


def test_the_checks_see_a_key_lookup_and_a_run_directory() -> None:
    """The two checks above find what they look for."""
    tree = ast.parse(
        "m = read_manifest(d)\nrun.get('clock_epoch')\nlayout.run_dir('a', 1)\n"
        "from runner.manifest import read_run\n"
    )
    assert sorted(what for _, what in _manifest_uses(tree)) == [
        "read_manifest",
        "the manifest's key 'clock_epoch'",
    ]
    assert sorted(what for _, what in _run_directory_uses(tree)) == [
        ".run_dir",
        "runner.manifest.read_run",
    ]


def test_an_older_manifest_loads_and_keeps_its_bytes(tmp_path: Path) -> None:
    """A manifest as a run of the pilot wrote it loads, and a stage that
    adds its part leaves the rest as it was, in its order."""
    recorded = json.loads((FIXTURES / "conflux-small-pilot" / "runs.json").read_text())[0]
    (tmp_path / "manifest.json").write_text(json.dumps(recorded, indent=2) + "\n")
    before = (tmp_path / "manifest.json").read_text()
    run = read_run(tmp_path)
    assert (run.variant, run.seed, run.complete, run.backend) == ("conflux", 1, True, "shadow")
    assert run.phase_s("simulate") == 287.051 and run.phase_s("bootstrap") is None
    assert run.cpu_seconds == 0.032 + 270.764 + 0.36
    write_run(tmp_path, run)
    assert (tmp_path / "manifest.json").read_text() == before
    record_collected(tmp_path, run, collect_s=0.5, collect_cpu_s=0.25)
    after = json.loads((tmp_path / "manifest.json").read_text())
    assert list(after) == list(recorded)
    assert after["phases"]["collect_s"] == 0.5 and after["cpu_phases_s"]["collect"] == 0.25


def test_the_runs_table_says_what_the_records_say(tmp_path: Path) -> None:
    spec, layout = fixture_results("conflux-small-pilot", tmp_path)
    rows = RUNS.read_from(layout)
    assert rows == run_rows(spec, layout)
    assert len(rows) == len(list(spec.runs())) and all(r.complete for r in rows)
    first = rows[0]
    record = read_run(layout.run_dir(first.variant, first.seed))
    assert first.measured() == record.measured_clients() != []
    assert first.cpu_s == record.cpu_seconds is not None
    assert first.identity_record() == record.identity
    assert first.tool_versions() == record.versions
    assert first.phase_s("simulate") == record.phase_s("simulate")
    assert stale(spec, rows) == [] and failed(rows) == []
    hours = cpu_hours(spec, rows, [first.variant])
    assert hours == sum(r.cpu_s or 0 for r in rows if r.variant == first.variant) / 3600


def test_a_run_the_table_lacks_is_missing_and_fails() -> None:
    spec = fixture_spec("conflux-small-pilot")
    (variant, seed), *_ = [(v.name, s) for v, s in spec.runs()]
    runs = spec_runs(spec, [])
    assert len(missing(runs)) == len(runs)
    assert failed(runs)[0] == Failure(variant, seed, "run", "run missing")
    assert cpu_hours(spec, runs, [variant]) == 0.0


def test_a_local_run_records_its_clock_cpu_and_phases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a local run gives back lands in its record, and crosses from a
    network namespace's child as JSON unchanged."""
    generated = {
        "variant": "a",
        "seed": 1,
        "local_network": NAMESPACE,
        "clock_epoch": 0,
        "status": "generated",
        "duration": {"bootstrap_s": 300.0, "measure_s": 60.0},
        "hosts": {},
        "phases": {"generate_s": 1.0},
    }
    write_run(tmp_path, RunRecord(generated))
    ran = LocalRan(
        {"bootstrap_s": 20.0, "traffic_s": 60.0, PROCESSES_CPU: 12.5},
        1000.0,
        {"relay1": {"tor": 2.0}},
        25.0,
        60.0,
    )
    assert LocalRan(**json.loads(json.dumps(asdict(ran)))) == ran
    monkeypatch.setattr(execution, "run_in_namespace", lambda *args: ran)
    result = execution.LocalExecution().run(
        tmp_path, {}, 60.0, 1, lambda phase: None, lambda pct: None, None, False
    )
    record = result.record
    assert result.cpu_s == 12.5
    assert (record.clock_epoch, record.bootstrap_s, record.measure_s) == (1000.0, 25.0, 60.0)
    assert record.process_cpu_s == {"relay1": {"tor": 2.0}}
    assert [record.phase_s(p) for p in ("generate", "bootstrap", "traffic")] == [1.0, 20.0, 60.0]
    assert list(record.document) == [*generated, "cpu_s"]
