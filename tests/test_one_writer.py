"""Each artifact has one writer, and every message one way out: the
checks analyze found are written to checks.json alone (never copied into a
run's manifest.json), the runs table by one function, the decision which
runs are stale by analyze alone (the report and the console read it), and
messages to the user go through the Console, never print.

Read from the runner's source, so that a second writer added anywhere is
found here, naming its module."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

RUNNER = ROOT / "runner"


def sources() -> dict[str, ast.Module]:
    return {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text())
        for path in sorted(RUNNER.rglob("*.py"))
    }


def calls_to(name: str, trees: dict[str, ast.Module]) -> set[str]:
    """The modules that call ``name`` (a function, or ``obj.name``)."""
    found = set()
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    found.add(module)
    return found


def writes_of(artifact: str, trees: dict[str, ast.Module]) -> set[str]:
    """The modules that call write_json_atomic on ``layout.data_json(artifact)``."""
    found = set()
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "write_json_atomic":
                target = ast.unparse(node.args[0]) if node.args else ""
                if f"data_json({artifact!r})" in target:
                    found.add(module)
    return found


def strings(trees: dict[str, ast.Module], text: str) -> set[str]:
    """The modules holding the string constant ``text``."""
    return {
        module
        for module, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == text
    }


def test_checks_are_written_to_checks_json_alone() -> None:
    trees = sources()
    assert writes_of("checks", trees) == {"runner/analyses/analyze.py"}
    # No manifest holds them: no module names the key that once copied them there.
    assert strings(trees, "checks_failed") == set()


def test_the_runs_table_has_one_writer_called_with_the_tables_alone() -> None:
    trees = sources()
    # With the tables, as collect assembles them or the store adds to them.
    assert calls_to("write_runs", trees) == {"runner/tables/sources.py"}
    writers = {
        module
        for module, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "write"
        and ast.unparse(node.func.value) == "RUNS"
    }
    assert writers == {"runner/tables/sources.py"}


def test_which_runs_are_stale_is_decided_by_analyze_alone() -> None:
    trees = sources()
    assert writes_of("stale", trees) == {"runner/analyses/analyze.py"}
    assert calls_to("stale", trees) == {"runner/analyses/analyze.py"}
    # Beside the network (which defines a run's identity) and the tables
    # (which take a run from its directory or the store by it), only the
    # decision itself and the runner choosing what to run compare a run's
    # identity with the spec's: the report and the workflow read analyze's.
    comparing = calls_to("changed_from_spec", trees) | calls_to("changed_parts", trees)
    others = {m for m in comparing if not m.startswith(("runner/tables/", "runner/network/"))}
    assert others == {"runner/analyses/runs.py", "runner/execute/run_all.py"}


# Modules whose print is no message to the user: a child process's side of
# a protocol with its parent, or the log a child process writes.
NOT_MESSAGES = {
    "runner/console.py": "the Console itself",
    "runner/execute/local/driver.py": "the driver's log lines, written to its own log file",
    "runner/execute/local/eventlog.py": "tor's event log, written to its own log file",
    "runner/execute/local/netns.py": "the protocol a namespaced child speaks to its parent",
}


def test_messages_go_through_the_console() -> None:
    printing = calls_to("print", sources())
    assert printing == set(NOT_MESSAGES)


def test_the_checks_find_a_second_writer(tmp_path: Path) -> None:
    tree = {
        "runner/x.py": ast.parse(
            'write_json_atomic(layout.data_json("checks"), c)\nRUNS.write(d, rows)\nprint("hi")'
        )
    }
    assert writes_of("checks", tree) == {"runner/x.py"}
    assert calls_to("print", tree) == {"runner/x.py"}
    assert calls_to("write", tree) == {"runner/x.py"}
