"""`runner check`: the programs it lists, the backends it says can run, its exit code."""

from __future__ import annotations

import argparse
import re

import pytest

from runner import cli
from runner.tools import prereqs
from runner.tools.prereqs import Found
from tests.conftest import ROOT


def _pretend(monkeypatch: pytest.MonkeyPatch, missing: set[str]) -> None:
    """Every program present but ``missing``."""

    def find(name: str) -> Found:
        if name in missing:
            return Found(name, None, None, f"not found on PATH; {prereqs.PROGRAMS[name].where}")
        return Found(name, f"/usr/bin/{name}", "1.0.0", None)

    monkeypatch.setattr(prereqs, "find", find)
    monkeypatch.setattr(
        prereqs,
        "find_tornettools",
        lambda: Found("tornettools", None, None, "not in the venv; run `make tools`"),
    )


def _check(shadow: bool = False) -> int:
    return cli.cmd_check(argparse.Namespace(shadow=shadow))


def test_everything_present_gives_both_backends(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend(monkeypatch, set())
    assert (_check(), _check(shadow=True)) == (0, 0)
    out = capsys.readouterr().out
    assert "backends: shadow (the default), local" in out
    assert re.search(r"^tornettools +optional +not in the venv", out, re.M)


def test_without_shadow_the_local_backend_still_passes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend(monkeypatch, {"shadow", "oniontrace"})
    assert _check() == 0
    out = capsys.readouterr().out
    assert "backends: local (Shadow: run `make tools`)" in out
    assert re.search(
        r"^shadow +MISSING .*run `make tools` \(builds the tested Shadow 3\.3\.0", out, re.M
    )
    assert _check(shadow=True) == 1
    assert "The Shadow backend cannot run here" in capsys.readouterr().out


def test_without_tor_no_backend_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend(monkeypatch, {"tor", "faketime"})
    assert _check() == 1
    out = capsys.readouterr().out
    assert (
        "backends: none (local and Shadow need tor, tor-gencert and faketime: run `make setup`)"
        in out
    )
    assert "No backend can run here" in out


def test_the_readme_sections_check_points_to_exist() -> None:
    headings = [
        line.lstrip("#").strip()
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("#")
    ]
    for section in re.findall(r"'([^']+)'", cli.README_SECTIONS):
        assert any(h.startswith(section) for h in headings), section
