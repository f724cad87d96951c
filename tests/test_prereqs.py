"""`runner check`: the programs it lists, the backends it says can run, its exit code."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from runner import cli
from runner.execute import run_all as run
from runner.network.backends import SHADOW
from runner.network.tor_builds import PATCHED_TOR
from runner.tools import prereqs
from runner.tools.prereqs import Found
from tests.conftest import ROOT
from tests.specs import ci_small_data, write_spec


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


# tor 0.4.9's --library-versions, columns padded as it pads them.
LIBRARY_TABLE = (
    "Tor version 0.4.9.11. \n"
    "Library versions\tCompiled\t\tRuntime\n"
    "Libevent\t\t2.1.12-stable  \t\t2.1.12-stable\n"
    "OpenSSL \t\t3.0.20         \t\t{openssl}\n"
    "Zlib    \t\t1.2.13         \t\t1.2.13\n"
    "Glibc   \t\t2.36           \t\t2.36\n"
)


def _stand_in_tor(tmp_path: Path, name: str, output: str) -> str:
    tor = tmp_path / name
    tor.write_text(f"#!/bin/sh\nprintf '%s' '{output}'\n")
    tor.chmod(0o755)
    return str(tor)


def test_a_tors_libraries_are_those_it_runs_with(tmp_path: Path) -> None:
    tor = _stand_in_tor(tmp_path, "tor", LIBRARY_TABLE.format(openssl="3.0.22"))
    assert prereqs.tor_libraries(tor) == {
        "libevent": "2.1.12-stable",
        "openssl": "3.0.22",  # the runtime column, not the one it was compiled with
        "zlib": "1.2.13",
        "glibc": "2.36",
    }
    silent = _stand_in_tor(tmp_path, "old-tor", "Tor version 0.4.9.11.\n")
    assert prereqs.tor_libraries(silent) == {}
    assert prereqs.tor_libraries(str(tmp_path / "no-such-tor")) == {}


def test_the_tools_of_a_run_name_the_libraries_its_tors_run_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stock = _stand_in_tor(tmp_path, "tor", LIBRARY_TABLE.format(openssl="3.0.22"))
    patched = _stand_in_tor(tmp_path, "tor-patched", LIBRARY_TABLE.format(openssl="3.0.13"))

    def require(names: tuple[str, ...]) -> dict[str, Found]:
        paths = {"tor": stock}
        return {n: Found(n, paths.get(n, "/usr/bin/true"), "1.0.0", None) for n in names}

    monkeypatch.setattr(run, "require", require)
    tools = run.resolve_tools(None, SHADOW)
    assert tools.versions["openssl"] == "3.0.22" and tools.versions["glibc"] == "2.36"
    # A patched tor linked otherwise is named apart; what it shares is not repeated.
    both = run._tor_libraries({"tor": stock, PATCHED_TOR: patched})
    assert both["openssl (tor-patched)"] == "3.0.13" and "glibc (tor-patched)" not in both


# The patched tor: built or not, the command that builds it, the configs that need it.

PATCHED_CONFIGS = [
    "conflux-small",
    "conflux",
    "congestion-scaled",
    "congestion-small",
    "congestion",
    "mctor-fair-small",
    "mctor-small",
    "mctor",
    "tortoise-cpu-local",
    "tortoise-paper-calibration",
    "tortoise-paper",
    "tortoise-small",
    "tortoise",
]


def _patched_lines(out: str) -> list[str]:
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("tor-patched "))
    return lines[first : first + 2]


def test_check_says_the_patched_tor_is_not_built_and_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend(monkeypatch, set())
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(tmp_path))
    assert _check() == 0  # the backends do not need it
    status, needed = _patched_lines(capsys.readouterr().out)
    assert re.match(r"tor-patched +not built +not at " + re.escape(str(tmp_path)), status)
    assert "run `make tor` (builds tor 0.4.9.11-0+deb12u1 + the " in status
    assert needed.strip() == (
        "needed by the configs with `tor: patched` variants: " + ", ".join(PATCHED_CONFIGS)
    )


def test_check_gives_a_complete_patched_build_and_the_configs_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.tools.torbuild import build_dir, load_source

    _pretend(monkeypatch, set())
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(tmp_path))
    build = build_dir(load_source())
    tor = build / "build" / "src" / "app" / "tor"
    tor.parent.mkdir(parents=True)
    tor.write_text("#!/bin/sh\n")
    tor.chmod(0o755)
    (build / ".complete").write_text("")
    # Two configs of one's own: one with a patched variant, one without.
    configs = tmp_path / "configs"
    configs.mkdir()
    text = (ROOT / "configs" / "ci-small.yaml").read_text()
    (configs / "ci-small.yaml").write_text(text)
    data = ci_small_data(text)
    data["name"] = "ci-patched"
    data["variants"]["conflux-on"]["tor"] = "patched"
    write_spec(data, configs, "ci-patched.yaml")
    assert cli.main(["check", "--configs", str(configs)]) == 0
    status, needed = _patched_lines(capsys.readouterr().out)
    assert re.match(rf"tor-patched +ok +{re.escape(str(tor))} \(tor 0\.4\.9\.11", status)
    assert needed.strip() == "needed by the configs with `tor: patched` variants: ci-patched"
