"""The test targets: make test keeps to the fast tests and one Shadow smoke
test, make test-sim runs the simulations; a simulation says what it starts."""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
from collections.abc import Iterator
from types import CodeType, ModuleType
from typing import Any

import pytest

from tests import conftest
from tests.conftest import ROOT

pytest_plugins = ["pytester"]


def _recipes(makefile: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each rule of ``makefile``: its prerequisites and recipe lines."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] | None = None
    lines = makefile.replace("\\\n", " ").splitlines()
    for line in lines:
        if line.startswith("\t") and current is not None:
            current.append(line.strip())
            continue
        match = re.match(r"^([A-Za-z0-9_.-]+):(?!=)(.*)$", line)
        if match and not match.group(1).startswith("."):
            current = []
            rules[match.group(1)] = (match.group(2).split(), current)
        elif line.strip() and not line.startswith("#"):
            current = None
    return rules


def _pytest_runs(target: str, rules: dict[str, tuple[list[str], list[str]]]) -> Iterator[str]:
    """The pytest command lines ``make target`` runs, through its prerequisites."""
    prerequisites, recipe = rules[target]
    for name in prerequisites:
        yield from _pytest_runs(name, rules)
    for line in recipe:
        if "-m pytest" in line:
            yield line


def _marker_expression(command: str) -> str:
    """The ``-m`` expression of a pytest command line ("": none)."""
    words = shlex.split(command)
    options = words[words.index("pytest") + 1 :]
    return options[options.index("-m") + 1] if "-m" in options else ""


def _selects(expression: str, markers: set[str]) -> bool:
    """Whether pytest's ``-m expression`` selects a test with ``markers``
    (the expressions use names, and, or, not and parentheses)."""
    if not expression:
        return True
    assert re.fullmatch(r"[\w\s()]+", expression), expression
    names = set(re.findall(r"[A-Za-z_]\w*", expression)) - {"and", "or", "not"}
    return bool(eval(expression, {"__builtins__": {}}, {n: n in markers for n in names}))


@pytest.fixture(scope="module")
def rules() -> dict[str, tuple[list[str], list[str]]]:
    return _recipes((ROOT / "Makefile").read_text())


def test_make_test_runs_no_simulation_but_the_smoke_test_and_test_sim_runs_them(
    rules: dict[str, tuple[list[str], list[str]]],
) -> None:
    fast = list(_pytest_runs("test", rules))
    sim = list(_pytest_runs("test-sim", rules))
    assert len(fast) == 1 and len(sim) == 1, (fast, sim)
    fast_m, sim_m = _marker_expression(fast[0]), _marker_expression(sim[0])
    cases = {
        frozenset(): (True, False),
        frozenset({"slow"}): (True, False),
        frozenset({"simulation", "slow"}): (False, True),
        frozenset({"simulation", "shadow", "slow"}): (False, True),
        frozenset({"simulation", "shadow", "slow", "smoke"}): (True, True),
    }
    for markers, (in_test, in_sim) in cases.items():
        assert _selects(fast_m, set(markers)) == in_test, (fast_m, markers)
        assert _selects(sim_m, set(markers)) == in_sim, (sim_m, markers)
    # Both say what took the time.
    for command in fast + sim:
        assert "--durations=15" in shlex.split(command), command
    # make help lists the target, and CI's run with the tools runs it.
    assert "make test-sim" in "\n".join(rules["help"][1])
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test-sim\b", ci, re.M) and not re.search(r"^\s*make unit\b", ci, re.M)


def test_the_marker_expressions_read_as_pytest_reads_them() -> None:
    assert _selects("not simulation or smoke", {"simulation", "smoke"})
    assert not _selects("not simulation or smoke", {"simulation"})
    assert not _selects("simulation and not smoke", {"simulation", "smoke"})
    assert _selects("", {"simulation"})
    command = '$(PY) -m pytest -ra --durations=15 -m "not simulation or smoke"'
    assert _marker_expression(command) == "not simulation or smoke"


def _test_modules() -> Iterator[ModuleType]:
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        try:
            yield importlib.import_module(f"tests.{path.stem}")
        except pytest.skip.Exception:
            continue  # its imports are missing here (e.g. dask for the cluster tests)


def _marks(module: ModuleType, function: Any) -> list[pytest.Mark]:
    own = getattr(module, "pytestmark", [])
    own = own if isinstance(own, list) else [own]
    module_marks = [m.mark if isinstance(m, pytest.MarkDecorator) else m for m in own]
    return [*getattr(function, "pytestmark", []), *module_marks]


def _names(code: CodeType) -> set[str]:
    """The global names ``code`` refers to, in nested code too."""
    nested = (c for c in code.co_consts if isinstance(c, CodeType))
    return set(code.co_names).union(*(_names(c) for c in nested))


def test_every_simulation_is_marked_and_says_what_it_starts() -> None:
    """Tests that run Shadow, an experiment through the runner, or a
    cluster carry ``simulation`` with what they start; one of them, a
    Shadow test, is the smoke test."""
    smoke = []
    simulations = 0
    for module in _test_modules():
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("test_") or function.__module__ != module.__name__:
                continue
            marks = _marks(module, function)
            names = {m.name for m in marks}
            runs_shadow = "shadow" in names or any(m is conftest.needs_shadow.mark for m in marks)
            experiment = getattr(
                module, "run_experiment", None
            ) is conftest.run_experiment and "run_experiment" in _names(function.__code__)
            parameters = set(inspect.signature(function).parameters)
            cluster = bool(
                parameters & {"dask_cluster", "slurm"}
                or _names(function.__code__) & {"start_dask", "start_slurm"}
            )
            where = f"{module.__name__}.{name}"
            if runs_shadow or experiment or cluster:
                assert "simulation" in names, f"{where} runs a simulation: mark it"
            for mark in marks:
                if mark.name == "simulation":
                    simulations += 1
                    assert mark.args and isinstance(mark.args[0], str) and mark.args[0], where
            if "smoke" in names:
                smoke.append(where)
                assert {"simulation", "shadow"} <= names, where
    assert len(smoke) == 1, smoke
    assert simulations > 10


def test_a_simulation_says_what_it_starts_on_a_line_of_its_own(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        "[pytest]\nmarkers =\n    simulation(what): starts a simulation\n"
        "    smoke: the smoke test\n"
    )
    pytester.makeconftest("from tests.conftest import pytest_runtest_protocol  # noqa: F401\n")
    pytester.makepyfile(
        test_some="""
        import pytest

        def test_first():
            pass

        @pytest.mark.simulation("2 Shadow runs of ci-small at once")
        def test_simulated():
            print("captured, not shown")

        @pytest.mark.simulation("a run that cannot start here")
        @pytest.mark.skipif(True, reason="no Shadow")
        def test_skipped():
            pass

        def test_last():
            pass
        """
    )
    for flags in ([], ["-q"], ["-v"]):
        result = pytester.runpytest("-p", "no:cacheprovider", *flags)
        result.assert_outcomes(passed=3, skipped=1)
        lines = result.outlines
        said = "test_some.py::test_simulated starts 2 Shadow runs of ci-small at once"
        assert said in lines, (flags, lines)
        assert not any("test_skipped starts" in line for line in lines), lines
        assert "captured, not shown" not in result.stdout.str()


def test_the_readme_gives_each_targets_time_as_measured_with_its_date() -> None:
    readme = (ROOT / "README.md").read_text()
    [paragraph] = [p for p in readme.split("\n\n") if "15 slowest tests" in p]
    text = " ".join(paragraph.split())
    makefile = (ROOT / "Makefile").read_text()
    assert not re.search(r"estimate|to be measured", text + makefile, re.I)
    assert re.search(r"Measured on \d+ cores on \d{4}-\d{2}-\d{2}\b", text), text
    time = r"\d+ min \d+ s"
    for run in ("`make test` without Shadow", "`make test` with Shadow", "`make test-sim` with"):
        assert re.search(re.escape(run) + r"[^;]*? " + time, text), run
    # Test counts change with every commit: the README leaves them to pytest.
    assert not re.search(r"\d+ passed", text) and "pytest prints today's counts" in text
    assert "MAKE_TEST_WITH_SHADOW" not in text
