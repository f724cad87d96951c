"""docs/extending.md adds a toy experiment in one folder plus one config;
this test does exactly that: it writes every code block of the page that
starts with a ``# path`` line, registers the experiment beside the others
(from here: it is not shipped), and runs collection and the report on a
run whose tors bootstrapped in time, all but one."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import runner.experiments
from runner.errors import SpecError
from runner.experiments import ANALYSES, EXPECT_KEYS, tables_of
from runner.layout import SHADOW_DATA, Layout
from runner.report.compare import compare
from runner.spec.parse import load_spec_file as load_spec
from runner.tables.collect import collect
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "extending.md"
LINK = {"bandwidth_down_bits": 10**8, "bandwidth_up_bits": 10**8}
BLOCK = re.compile(r"```(?:python|yaml)\n# (\S+)\n(.*?)```", re.S)


def files_of_the_page() -> dict[str, str]:
    """path -> text of every block that starts with a ``# path`` line."""
    return {path: text for path, text in BLOCK.findall(PAGE.read_text())}


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[tuple[ModuleType, Path]]:
    """The page's files written under ``tmp_path``; its experiment imported
    as runner.experiments.bootstrap; the path of its config."""
    files = files_of_the_page()
    assert sorted(files) == [
        "configs/bootstrap.yaml",
        "runner/experiments/bootstrap/__init__.py",
        "runner/experiments/bootstrap/analysis.py",
        "runner/experiments/bootstrap/report.py",
        "runner/experiments/bootstrap/tables.py",
    ]
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    folder = str(tmp_path / "runner" / "experiments")
    runner.experiments.__path__.append(folder)
    try:
        import runner.experiments.bootstrap as bootstrap

        yield bootstrap, tmp_path / "configs" / "bootstrap.yaml"
    finally:
        runner.experiments.__path__.remove(folder)
        for name in [m for m in sys.modules if m.startswith("runner.experiments.bootstrap")]:
            del sys.modules[name]


def _run(run_dir: Path, bootstrapped: dict[str, tuple[str, str]]) -> None:
    """A complete run whose tors logged ``Bootstrapped 100%`` at the given times."""
    hosts = {}
    for host, (role, at) in bootstrapped.items():
        home = run_dir / SHADOW_DATA / "hosts" / host
        home.mkdir(parents=True)
        (home / "tor.1000.stdout").write_text(
            "Jan 01 00:00:03.000 [notice] Bootstrapped 0% (starting): Starting\n"
            f"Jan 01 {at} [notice] Bootstrapped 100% (done): Done\n"
        )
        hosts[host] = {"role": role, "measured": False, "class": "perf"} | LINK
    manifest = {
        "variant": "stock",
        "seed": 1,
        "status": "complete",
        "backend": "shadow",
        "phases": {},
        "hosts": hosts,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_the_toy_experiment_adds_its_table_section_and_check(
    toy: tuple[ModuleType, Path], tmp_path: Path
) -> None:
    bootstrap, config = toy
    # Registered beside the others, as the page's last step says.
    analyses = (*ANALYSES, *bootstrap.ANALYSES)
    spec = load_spec(config, (*EXPECT_KEYS, *bootstrap.EXPECT_KEYS))
    assert spec.variant("stock").expect == {"bootstrap_s": 60}
    layout = Layout(tmp_path / "results", spec.name)
    _run(
        layout.run_dir("stock", 1),
        {
            "relay1exit": ("exit", "00:00:24.420"),
            "relay2guard": ("guard", "00:01:15.000"),
            "perfclient1exit": ("client", "00:00:41.500"),
        },
    )
    collected = collect(spec, layout, tables_of(analyses))
    assert collected.rows["bootstrap"] == 3
    rows = bootstrap.BOOTSTRAP.read_from(layout)
    assert {(r.host, r.role, r.done) for r in rows} == {
        ("relay1exit", "exit", 24.42),
        ("relay2guard", "guard", 75.0),
        ("perfclient1exit", "client", 41.5),
    }
    result = compare(spec, layout, analyses)
    report = result.path.read_text()
    assert "## Bootstrap" in report
    assert "| stock | 1 | relay2guard | guard | 75.0 |" in report
    assert "Every tor bootstraps within the seconds its variant expects: 1 do not." in report
    assert "stock/seed-1 relay2guard: bootstrapped after 75 s, expected within 60 s" in map(
        str, result.failures
    )
    checks = json.loads(layout.data_json("checks").read_text())
    (mine,) = [a for a in checks["analyses"] if a["analysis"] == "bootstrap"]
    assert mine["failures"] == [
        {
            "variant": "stock",
            "seed": 1,
            "check": "bootstrap",
            "message": "bootstrapped after 75 s, expected within 60 s",
            "where": "relay2guard",
        }
    ]
    assert (layout.experiment_dir / "bootstrap.parquet").is_file()
    # The analysis's result as data, beside the tables.
    result_data = json.loads((layout.experiment_dir / "analyses" / "bootstrap.json").read_text())
    assert [r["host"] for r in result_data["late"]] == ["relay2guard"]


def test_without_registration_its_key_is_unknown(toy: tuple[ModuleType, Path]) -> None:
    _, config = toy
    with pytest.raises(SpecError, match=r"variants\.stock\.expect\.bootstrap_s: unknown key"):
        load_spec(config, EXPECT_KEYS)


def test_an_experiment_that_is_not_asked_adds_no_section(
    toy: tuple[ModuleType, Path], tmp_path: Path
) -> None:
    bootstrap, _ = toy
    spec = load_spec(ROOT / "configs" / "ci-small.yaml", (*EXPECT_KEYS, *bootstrap.EXPECT_KEYS))
    assert not any(a.applies(spec) for a in bootstrap.ANALYSES)
