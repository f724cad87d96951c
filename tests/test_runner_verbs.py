"""Every user-facing verb is under the one ``runner`` command: the tools'
builds (``runner tools``, ``runner tor``) and the benchmarks (``runner
bench``) parse with their modules' own options and reach their modules;
the Makefile calls those verbs, never a module path."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from runner.bench import profile, report, scaling, shadow_options, speed
from runner.cli import build_parser, main
from runner.tools import toolbuild, torbuild
from runner.tools.upstream import BUILDS
from tests.conftest import FIXTURES, ROOT


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([*argv, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("verb", "listed"),
    [
        ("tools", ["build", "python", "path"]),
        ("tor", ["build", "test", "path"]),
        ("bench", ["speed", "report", "shadow-options", "scaling", "profile", "runs"]),
    ],
)
def test_help_lists_the_verbs(
    capsys: pytest.CaptureFixture[str], verb: str, listed: list[str]
) -> None:
    assert re.search(rf"^    {verb} +\S", _help(capsys), re.M)  # runner --help lists it
    text = _help(capsys, verb)
    assert f"usage: runner {verb} [-h] {{{','.join(listed)}}}" in " ".join(text.split())
    for name in listed:
        assert re.search(rf"^    {re.escape(name)} +\S", text, re.M), (name, text)


def test_a_benchmarks_options_are_its_modules(capsys: pytest.CaptureFixture[str]) -> None:
    for name, module in (
        ("speed", speed),
        ("report", report),
        ("shadow-options", shadow_options),
        ("scaling", scaling),
    ):
        own = argparse.ArgumentParser()
        module.add_arguments(own)
        options = {o for a in own._actions for o in a.option_strings}
        text = _help(capsys, "bench", name)
        assert text.startswith(f"usage: runner bench {name} ")
        assert all(o in text for o in options), (name, options)
    # Each module's own command line still works.
    with pytest.raises(SystemExit):
        speed.main(["--help"])
    assert "usage: runner.bench.speed" in capsys.readouterr().out


def _calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple[object, ...]]:
    """``module.name`` stood in for by a recorder of its arguments."""
    calls: list[tuple[object, ...]] = []

    def record(*args: object) -> int:
        calls.append(args)
        return 0

    monkeypatch.setattr(module, name, record)
    return calls


def test_runner_tools_and_tor_reach_the_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _calls(monkeypatch, toolbuild, "build_one")
    installed = _calls(monkeypatch, toolbuild, "install_python_tools")
    assert main(["tools", "build", "tgen", "--jobs", "3"]) == 0
    assert built == [(BUILDS["tgen"], 3)]
    assert main(["tools", "python"]) == 0 and installed == [()]
    tor_built = _calls(monkeypatch, torbuild, "build")
    tested = _calls(monkeypatch, torbuild, "run_tests")
    assert main(["tor", "build", "--jobs", "2"]) == 0 and tor_built == [(2, False)]
    assert main(["tor", "test", "relay/.."]) == 0 and tested == [(["relay/.."], False)]
    assert main(["tor", "build", "--staged", "--jobs", "1"]) == 0 and tor_built[1] == (1, True)
    assert main(["tor", "test", "--staged", "relay/x"]) == 0 and tested[1] == (["relay/x"], True)


def test_an_unknown_tool_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built = _calls(monkeypatch, toolbuild, "build_one")
    with pytest.raises(SystemExit) as stopped:
        main(["tools", "build", "tgen", "nope"])
    assert stopped.value.code == 2 and built == []
    assert "unknown tool nope; known: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "module", "parsed"),
    [
        (["speed", "configs/ci-small.yaml", "--backend", "local"], speed, {"backend": "local"}),
        (["report", "configs/ci-small.yaml", "--results", "r"], report, {"results": "r"}),
        (
            ["shadow-options", "configs/ci-small.yaml", "--at-once", "2"],
            shadow_options,
            {"at_once": 2},
        ),
        (["scaling", "configs/ci-small.yaml", "--jobs", "1,2"], scaling, {"jobs": "1,2"}),
        (["profile", "configs/ci-small.yaml", "--label", "x"], profile, {"label": "x"}),
    ],
)
def test_runner_bench_reaches_the_benchmark(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], module: object, parsed: dict[str, object]
) -> None:
    ran = _calls(monkeypatch, module, "run")
    assert main(["bench", *argv]) == 0
    [(args,)] = ran
    assert isinstance(args, argparse.Namespace) and args.spec == "configs/ci-small.yaml"
    assert {k: getattr(args, k) for k in parsed} == parsed
    assert args.out == "bench/results.md"


def _without_make_functions(line: str) -> str:
    """``line`` with each ``$(if ...)`` / ``$(filter ...)`` taken out (what
    they add is optional) and each variable given a plain value."""
    while (start := line.find("$(if ")) >= 0 or (start := line.find("$(filter ")) >= 0:
        depth, end = 0, start
        for end in range(start + 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            if depth == 0:
                break
        line = line[:start] + line[end + 1 :]
    values = {
        "EXP": "ci-small",
        "RESULTS": "results",
        "BASELINE": "b.json",
        "JOBS_ARG": "",
        "BUDGET": "0.5",
        "SPECS": "",
    }
    return re.sub(r"\$\((\w+)\)", lambda m: values.get(m.group(1), m.group(1)), line)


def test_the_makefile_calls_runner_verbs_that_parse() -> None:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    assert not re.search(r"-m runner\.", text), "a module path where a runner verb belongs"
    calls = [line for line in text.splitlines() if "$(PY) -m runner " in line]
    verbs = set()
    for line in calls:
        argv = shlex.split(_without_make_functions(line.split("$(PY) -m runner ", 1)[1]))
        args = build_parser().parse_args(argv)
        verbs.add(" ".join(argv[:2]) if args.command in ("tools", "tor", "bench") else argv[0])
    assert {
        "tools build",
        "tools python",
        "tor build",
        "tor test",
        "bench speed",
        "bench report",
        "bench shadow-options",
        "bench scaling",
        "bench profile",
        "experiment",
        "regress",
        "campaign",
    } <= verbs


def test_a_campaign_for_a_claim_no_spec_tests_is_refused_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = str(FIXTURES / "conflux-small-pilot" / "spec.yaml")
    assert main(["campaign", "--budget", "1", "--claims", "C1,T9", spec]) == 2
    err = capsys.readouterr().err
    assert "--claims C1,T9: T9 is no hypothesis of these specs" in err
