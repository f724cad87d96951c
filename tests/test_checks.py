"""A failed check is a record (runner.checks.Failure): the report writes
its text, checks.json its fields, and --retry-failed finds its run by
(variant, seed), however it is worded."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from runner.analyses.analyze import checks_record
from runner.checks import Failure, runs_with_failures
from runner.errors import NotAnalyzedError
from runner.manifest import write_json_atomic
from tests.conftest import ROOT, fixture_report


def test_a_failure_reads_as_the_report_has_always_written_it() -> None:
    assert str(Failure("v", 1, "load", "idle")) == "v/seed-1: idle"
    assert str(Failure("v", 1, "conflux-legs", "no set", "client1")) == "v/seed-1 client1: no set"
    assert str(Failure("v", None, "keep-up", "slow over 5 seeds")) == "v: slow over 5 seeds"
    assert str(Failure(None, None, "experiment", "too few runs")) == "too few runs"


def test_only_a_failure_of_one_run_has_a_run() -> None:
    assert Failure("v", 2, "paths", "m").run == ("v", 2)
    assert Failure("v", None, "keep-up", "m").run is None
    assert Failure(None, None, "experiment", "m").run is None


def _write_checks(path: Path, failures: list[Failure]) -> Path:
    """checks.json as analyze writes it, each failure as one analysis's."""
    write_json_atomic(path, checks_record([("an analysis", failures)], [], []))
    return path


def test_runs_are_found_by_their_key_and_never_by_the_text(tmp_path: Path) -> None:
    mine = Failure("a", 1, "load", "idle", "relay1")
    failures = [
        mine,
        # Reads like a run's failure, but is the variant's and the experiment's.
        Failure("a", None, "keep-up", "a/seed-10: slow"),
        Failure(None, None, "experiment", "b/seed-1: not a run's"),
    ]
    checks = _write_checks(tmp_path / "checks.json", failures)
    assert runs_with_failures(checks) == {("a", 1)}
    # Passing again clears them; no checks.json: none failed.
    assert runs_with_failures(_write_checks(checks, [])) == set()
    assert runs_with_failures(tmp_path / "absent.json") == set()


def test_a_checks_json_that_is_not_analyzes_is_refused_by_its_name(tmp_path: Path) -> None:
    checks = tmp_path / "checks.json"
    checks.write_text('{"passed": true}')
    with pytest.raises(NotAnalyzedError, match=r"checks\.json: not checks as analyze"):
        runs_with_failures(checks)


def test_checks_json_records_each_failure_as_the_report_lists_it(tmp_path: Path) -> None:
    """conflux-small-pilot fails its legs and path checks: each failure in
    checks.json carries its run and check, and its text is the report's."""
    report = fixture_report("conflux-small-pilot", tmp_path)
    checks = json.loads((report.parent.parent / "checks.json").read_text())
    assert checks["passed"] is False
    by_analysis = {a["analysis"]: a["failures"] for a in checks["analyses"]}
    assert by_analysis["conflux legs"][0] == {
        "variant": "conflux",
        "seed": 1,
        "check": "conflux-legs",
        "message": "conflux sets by legs {}, expected only 2-leg sets",
        "where": "perfclient1exit",
    }
    recorded = [f for found in by_analysis.values() for f in found]
    recorded += checks["runs"] + checks["log_damage"]
    assert {f["check"] for f in recorded} == {"conflux-legs", "paths"}
    texts = [str(Failure(**f)) for f in recorded]
    listed = report.read_text().split("**FAILED:**\n\n")[1].split("\n\n")[0].splitlines()
    assert [f"- {t}" for t in texts] == listed


# f-strings that write "<variant>/seed-<k>...: " and are not a check's
# failure: a run's error, progress lines.
NOT_FAILURES = {
    ("runner/workflow/pipeline.py", "FAILED {}/seed-{}: {}"),
    ("runner/execute/run_all.py", "{}/seed-{}: its checks failed; running it again"),
    ("runner/execute/run_all.py", "  {}/seed-{}: {} changed"),
    ("runner/analyses/measured_params.py", "{}/seed-{}: no {} client completed a transfer"),
    # The run store's refusals: what cannot be stored or imported, not checks.
    ("runner/tables/store.py", "{}/seed-{}: no identity recorded: cannot store"),
    (
        "runner/tables/store_import.py",
        "{}: {}/seed-{}: its tables differ from those of the same identity in {}",
    ),
}
# How failures were written before they were records.
AS_TEXT = re.compile(r"/seed-\{\}.*: ")


def f_strings(source: str) -> list[str]:
    """Each f-string of ``source``, its values written ``{}``."""
    return [
        "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.JoinedStr)
    ]


def failures_as_text(root: Path) -> set[tuple[str, str]]:
    """(module, f-string) of each f-string under ``root/runner`` written as a
    failure's text; Failure.__str__ (runner/checks.py) alone may."""
    found = set()
    for path in sorted((root / "runner").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name != "runner/checks.py":
            found |= {(name, s) for s in f_strings(path.read_text()) if AS_TEXT.search(s)}
    return found


def test_no_module_writes_a_failure_as_text() -> None:
    # Exactly the known ones: an entry no longer found is dropped from the list.
    assert failures_as_text(ROOT) == NOT_FAILURES


def test_the_source_walk_finds_a_failure_written_as_text(tmp_path: Path) -> None:
    module = tmp_path / "runner" / "analyses" / "toy.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "def late(variant, seed, host):\n"
        '    return f"{variant}/seed-{seed} {host}: bootstrapped late"\n'
        "def fine(variant, seed):\n"
        '    return f"{variant}/seed-{seed}"\n'
    )
    assert failures_as_text(tmp_path) == {
        ("runner/analyses/toy.py", "{}/seed-{} {}: bootstrapped late")
    }
