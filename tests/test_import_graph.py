"""The runner's layers only look down: a module imports modules of its own
stage or of the stages before it, never of a later one, and no modules
import each other in a circle. Every module belongs to a stage, so a new
package has to be placed here before it can be imported anywhere.

Imports inside functions count too: a late import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("runner", "workloads", "topologies")
# Lowest first. A module's stage is the one whose prefix matches it longest.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ground: errors, failed checks, where files live, units, parameters, manifests, data sets",
        (
            "runner.errors",
            "runner.checks",
            "runner.layout",
            "runner.units",
            "runner.params",
            "runner.phases",
            "runner.manifest",
            "runner.datasets",
        ),
    ),
    ("what networks and traffic are built from", ("workloads", "topologies")),
    ("spec", ("runner.spec",)),
    ("network generation", ("runner.network",)),
    ("tools: finding and building tor, Shadow and the rest", ("runner.tools",)),
    ("execution", ("runner.execute",)),
    ("log parsing", ("runner.logs",)),
    ("tables", ("runner.tables",)),
    ("analyses", ("runner.analyses",)),
    ("report", ("runner.report",)),
    ("experiments and their registry", ("runner.experiments",)),
    # one experiment's pipeline as an object, and the configs taken together
    ("workflow", ("runner.experiment", "runner.configs")),
    # the package's face (runner.load) and what users call
    ("commands", ("runner", "runner.results", "runner.cli", "runner.__main__", "runner.bench")),
)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports, anywhere in the file."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known}


def stage_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, stage)
    for index, (_, prefixes) in enumerate(STAGES):
        for prefix in prefixes:
            # "runner" is the package's own __init__, not all of it
            matches = module == prefix or (prefix != "runner" and module.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, known) - {name} for name, path in known.items()}


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            low, high = stage_of(module), stage_of(target)
            if low is not None and high is not None and high > low:
                found.append(f"{module} ({STAGES[low][0]}) imports {target} ({STAGES[high][0]})")
    return found


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_stage() -> None:
    assert [m for m in modules() if stage_of(m) is None] == []


def test_no_module_imports_a_later_stage() -> None:
    assert upward_imports(graph()) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(graph()) == []


def test_the_checks_find_an_upward_import_and_a_circle() -> None:
    edges = {
        "runner.tables.collect": {"runner.experiments"},
        "runner.spec.model": {"runner.spec.matrix"},
        "runner.spec.matrix": {"runner.spec.model"},
    }
    assert upward_imports(edges) == [
        "runner.tables.collect (tables) imports runner.experiments (experiments and their registry)"
    ]
    assert circles(edges) == [["runner.spec.matrix", "runner.spec.model"]]
