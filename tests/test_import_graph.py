"""The runner's layers only look down: a module imports modules of its own
stage or of the stages before it, never of a later one, and no modules
import each other in a circle. Every module belongs to a stage, so a new
package has to be placed here before it can be imported anywhere.

Imports inside functions count too: a late import is still a dependency.

And the report's renderers import nothing that computes (see NOT_RENDERERS).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("runner", "workloads", "topologies")
# Lowest first. A module's stage is the one whose prefix matches it longest.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ground: errors, failed checks, where files live, units, parameters, manifests, data "
        "sets, the console",
        (
            "runner.errors",
            "runner.console",
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
    # seed plans, joint plans and seed rounds, from the analyses' answers
    ("planning", ("runner.planning",)),
    ("report", ("runner.report",)),
    ("experiments and their registry", ("runner.experiments",)),
    # one experiment's pipeline as an object, and the configs taken together
    ("workflow", ("runner.workflow", "runner.configs")),
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


# The report renders what analyze wrote; it computes nothing. So no
# renderer module (every module of runner.report but the two below, and
# the module of each registered analysis's render function) imports what
# computes: a registered analysis's compute function, the answers to the
# hypotheses (runner.analyses.answers.answers) or analyze itself, whether
# by name (``from m import f``) or through its module (``import m`` or
# ``from p import m``, then ``m.f``). Types and helpers from the same
# modules are free to import.
NOT_RENDERERS = {
    "runner.report.compare": "runs analyze, then the report",
    "runner.report.sections": "registers the analyses every experiment has, each compute "
    "function with its render function (as each experiment's __init__ does)",
}


def renderer_modules() -> set[str]:
    from runner.experiments import ANALYSES

    report = {m for m in modules() if m == "runner.report" or m.startswith("runner.report.")}
    return (report - set(NOT_RENDERERS)) | {a.render.__module__ for a in ANALYSES}


def computing_functions() -> set[tuple[str, str]]:
    """(module, name) of every function whose call computes."""
    from runner.experiments import ANALYSES

    found = {(a.compute.__module__, a.compute.__name__) for a in ANALYSES}
    return found | {("runner.analyses.answers", "answers"), ("runner.analyses.analyze", "analyze")}


def computing_imports(source: str, known: set[str], forbidden: set[tuple[str, str]]) -> list[str]:
    """What ``source`` imports of ``forbidden`` (``known``: the project's modules)."""
    tree = ast.parse(source)
    found: list[str] = []
    held: dict[str, str] = {}  # a local name -> the module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if (node.module, alias.name) in forbidden:
                    found.append(full)
                elif full in known:
                    held[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            # ``import a.b`` binds ``a``, whose dotted uses are read whole below.
            held.update({alias.asname: alias.name for alias in node.names if alias.asname})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node.value)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            module = ".".join(p for p in (held.get(head, head), rest) if p)
            if (module, node.attr) in forbidden:
                found.append(f"{module}.{node.attr}")
    return sorted(set(found))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` as a string, for a chain of names; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def test_no_renderer_imports_a_compute_function_the_answers_or_analyze() -> None:
    known = modules()
    forbidden = computing_functions()
    found = {
        module: computing_imports(known[module].read_text(), set(known), forbidden)
        for module in sorted(renderer_modules())
    }
    assert {module: names for module, names in found.items() if names} == {}
    # The rule covers the report's modules and each analysis's renderer.
    assert {"runner.report.assemble", "runner.experiments.mctor.report"} <= renderer_modules()


def test_the_renderer_check_finds_each_way_to_import_a_compute_function() -> None:
    known = {"runner.analyses.answers", "runner.analyses.transfers", "runner.analyses"}
    forbidden = {("runner.analyses.answers", "answers"), ("runner.analyses.transfers", "result")}
    sources = [
        "from runner.analyses.answers import answers",
        "from runner.analyses.answers import answers as found",
        "import runner.analyses.answers\nrunner.analyses.answers.answers()",
        "import runner.analyses.answers as a\na.answers()",
        "from runner.analyses import transfers\ntransfers.result()",
        "def f():\n    from runner.analyses.transfers import result",
    ]
    for source in sources:
        assert computing_imports(source, known, forbidden) != [], source
    allowed = "from runner.analyses.answers import Answer, change_key\nimport runner.analyses"
    assert computing_imports(allowed, known, forbidden) == []
