"""`tor: staged`: the patched series + tor-patches/staged/series, a build of
its own. A consensus value only a staged patch reads is refused on another
build; a staged variant's runs get the staged tor and its key as an
identity part of their own, and no other run's identity moves."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from runner import cli
from runner.errors import RunError, SpecError
from runner.execute import run_all as run
from runner.layout import Layout
from runner.network.backends import SHADOW
from runner.network.generate import Tools
from runner.network.identity import STAGED_PART, TOOLS_PART, digest, run_identity
from runner.network.tor_builds import PATCHED_TOR, STAGED_TOR
from runner.spec.model import Spec
from runner.tools import prereqs
from runner.tools.prereqs import Found
from runner.tools.torbuild import build_dir, load_source
from tests.conftest import FIXTURE_VERSIONS
from tests.specs import ci_small, ci_small_data, write_spec

MARUT_AUTHORS = {"cc_alg": 0, "hop_window": 1, "hop_window_marut": 3}


def _three_builds(data: dict[str, Any]) -> None:
    """ci-small with conflux-off on stock tor, conflux-on patched, and a
    staged copy of it running the authors' Marut."""
    variants = data["variants"]
    variants["conflux-on"]["tor"] = "patched"
    variants["authors"] = {
        **variants["conflux-on"],
        "tor": "staged",
        "consensus": dict(MARUT_AUTHORS),
    }


def _with_tor(tor: str, consensus: dict[str, int]) -> Spec:
    def edit(data: dict[str, Any]) -> None:
        data["variants"]["conflux-on"] |= {"tor": tor, "consensus": consensus}

    return ci_small(edit, path="specs/mine.yaml")


@pytest.mark.parametrize("tor", ["patched", "stock"])
def test_hop_window_marut_3_without_the_staged_build_is_refused(tor: str) -> None:
    with pytest.raises(SpecError) as refused:
        _with_tor(tor, MARUT_AUTHORS)
    assert refused.value.path == "specs/mine.yaml"
    assert refused.value.key == "variants.conflux-on.consensus.hop_window_marut"
    expected = refused.value.expected
    assert "expected `tor: staged`" in expected and f"the variant has `tor: {tor}`" in expected
    assert "0010-hop-window-marut-authors.patch" in expected and "clamps 3 to 2" in expected


def test_hop_window_marut_3_runs_on_the_staged_build_and_1_anywhere() -> None:
    assert _with_tor("staged", MARUT_AUTHORS).variant("conflux-on").tor == "staged"
    level_1 = MARUT_AUTHORS | {"hop_window_marut": 1}
    assert _with_tor("patched", level_1).variant("conflux-on").consensus == level_1


def test_an_unknown_build_names_the_three() -> None:
    with pytest.raises(SpecError, match="expected one of stock, patched, staged, got 'other'"):
        _with_tor("other", {})


def _versions(staged_key: str) -> dict[str, str | None]:
    return FIXTURE_VERSIONS | {
        PATCHED_TOR: "0.4.9.11-0+deb12u1 + series 1ac982761e87",
        STAGED_TOR: f"0.4.9.11-0+deb12u1 + series 1ac982761e87 + staged, key {staged_key}",
        f"openssl ({STAGED_TOR})": "3.0.13",
    }


def test_the_staged_tor_moves_only_the_staged_runs_identity() -> None:
    spec = ci_small(_three_builds)
    without = FIXTURE_VERSIONS | {PATCHED_TOR: "0.4.9.11-0+deb12u1 + series 1ac982761e87"}
    for name in ("conflux-off", "conflux-on"):  # as before the staged build existed
        variant = spec.variant(name)
        before = run_identity(spec, variant, 1, SHADOW, without)
        assert run_identity(spec, variant, 1, SHADOW, _versions("aaa")) == before
        assert STAGED_PART not in before["parts"]
    staged = spec.variant("authors")
    first = run_identity(spec, staged, 1, SHADOW, _versions("aaa"))
    second = run_identity(spec, staged, 1, SHADOW, _versions("bbb"))
    assert first["parts"][TOOLS_PART] == second["parts"][TOOLS_PART] == digest(without)
    assert first["parts"][STAGED_PART] != second["parts"][STAGED_PART]
    assert first["fingerprint"] != second["fingerprint"]


def _stand_in_build(root: Path, staged: bool) -> Path:
    """A complete build of the patched (or staged) tor under ``root``: a
    tor that says nothing."""
    where = build_dir(load_source(staged=staged))
    tor = where / "build" / "src" / "app" / "tor"
    tor.parent.mkdir(parents=True)
    tor.write_text("#!/bin/sh\n")
    tor.chmod(0o755)
    (where / ".complete").write_text("")
    assert where.parent == root
    return tor


def test_each_variant_runs_its_own_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(tmp_path))
    patched, staged = _stand_in_build(tmp_path, False), _stand_in_build(tmp_path, True)

    def require(names: tuple[str, ...]) -> dict[str, Found]:
        return {n: Found(n, f"/usr/bin/{n}", "1.0.0", None) for n in names}

    monkeypatch.setattr(run, "require", require)
    monkeypatch.setattr(run, "tor_libraries", lambda tor: {})
    spec = ci_small(_three_builds)
    tools = run.resolve_tools(spec, SHADOW)
    ran = {v.name: tools.for_variant(v)["tor"] for v in spec.variants}
    assert ran == {
        "conflux-off": "/usr/bin/tor",
        "conflux-on": str(patched),
        "authors": str(staged),
    }
    source = load_source()
    assert tools.versions[PATCHED_TOR] == f"{source.debian_version} + series {source.key}"
    assert tools.versions[STAGED_TOR] == (
        f"{source.debian_version} + series {source.key} + staged, key "
        f"{load_source(staged=True).key}"
    )
    # A spec without staged variants asks for no staged build.
    plain = run.resolve_tools(ci_small(lambda d: d["variants"]["conflux-on"].update(tor="patched")))
    assert STAGED_TOR not in plain.paths and PATCHED_TOR in plain.paths


def test_a_staged_variant_without_its_build_says_how_to_build_it() -> None:
    spec = ci_small(_three_builds)
    tools = Tools({"tor": "/usr/bin/tor", PATCHED_TOR: "/p/tor"}, {})
    with pytest.raises(RunError, match="variant authors needs the staged tor: run `make tor-s"):
        tools.for_variant(spec.variant("authors"))


def _staged_lines(out: str) -> list[str]:
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("tor-staged "))
    return lines[first : first + 2]


def test_check_gives_the_staged_build_and_the_configs_that_need_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(prereqs, "find", lambda n: Found(n, f"/usr/bin/{n}", "1.0.0", None))
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(tmp_path / "cache"))
    configs = tmp_path / "configs"
    configs.mkdir()
    data = ci_small_data()
    data["name"] = "ci-staged"
    _three_builds(data)
    write_spec(data, configs, "ci-staged.yaml")
    assert cli.cmd_check(argparse.Namespace(shadow=False, configs=str(configs))) == 0
    status, needed = _staged_lines(capsys.readouterr().out)
    assert re.match(r"tor-staged +not built +not at .*; run `make tor-staged` \(builds ", status)
    staged = load_source(staged=True).staged
    assert staged is not None and f"and the {len(staged)} of tor-patches/staged" in status
    assert needed.strip() == "needed by the configs with `tor: staged` variants: ci-staged"
    tor = _stand_in_build(tmp_path / "cache", staged=True)
    assert cli.cmd_check(argparse.Namespace(shadow=False, configs=str(configs))) == 0
    status, _ = _staged_lines(capsys.readouterr().out)
    assert re.match(rf"tor-staged +ok +{re.escape(str(tor))} \(tor 0\.4\.9\.11", status)


def test_a_changed_staged_tor_makes_only_the_staged_runs_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ci_small(_three_builds)
    layout = Layout(tmp_path, spec.name)
    by_dir = {
        layout.run_dir(v.name, seed): SimpleNamespace(
            complete=True,
            backend=SHADOW.name,
            identity=run_identity(spec, v, seed, SHADOW, _versions("aaa")),
        )
        for v, seed in spec.runs()
    }
    monkeypatch.setattr(run, "read_run_if_any", by_dir.get)
    same = run.choose_runs(spec, layout, SHADOW, _versions("aaa"))
    assert all(c.current for c in same)
    changed = {c.variant: c.changed for c in run.choose_runs(spec, layout, SHADOW, _versions("b"))}
    assert changed == {"conflux-off": (), "conflux-on": (), "authors": (STAGED_PART,)}
