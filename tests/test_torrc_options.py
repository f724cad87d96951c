"""A misspelled torrc option is refused at validate (runner.spec.torrc_options):
checked against the tor on PATH's options and the patches' own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import load_spec
from runner.spec import torrc_options
from runner.spec.torrc_options import patched_options, tor_options, unknown_option
from tests.conftest import CI_SMALL

TOR = shutil.which("tor")
KNOWN = frozenset({"ConfluxEnabled", "NumEntryGuards", "UseBridges"})


def test_an_unknown_option_is_named_with_the_closest_known_one() -> None:
    message = unknown_option("ConfluxEnabeld", KNOWN)
    assert message is not None
    assert "'ConfluxEnabeld'" in message and "did you mean ConfluxEnabled?" in message
    assert unknown_option("numentryguards", KNOWN) is None  # tor reads options in any case
    assert unknown_option("Nothing", None) is None  # no tor on PATH: nothing to check


def test_the_patches_options_are_known() -> None:
    assert {"ConfluxNumLegs", "MCTorConnections", "MCTorStreamRule"} <= patched_options()
    assert "TestingCircuitMuxRoundRobin" in patched_options()  # V_IMMUTABLE(...)


def test_a_staged_patchs_options_are_known(tmp_path: Path) -> None:
    (tmp_path / "staged").mkdir()
    (tmp_path / "0001-a.patch").write_text('+  V(SeriesOption, BOOL, "0"),\n')
    (tmp_path / "staged" / "0002-b.patch").write_text('+  V(StagedOption, BOOL, "0"),\n')
    assert patched_options(tmp_path) == {"SeriesOption", "StagedOption"}


def _fake_tor(tmp_path: Path, options: str) -> Path:
    tor = tmp_path / "tor"
    log = tmp_path / "calls"
    tor.write_text(
        "#!/bin/sh\n"
        f'echo "$1" >> {log}\n'
        'if [ "$1" = --version ]; then echo "Tor version 0.4.9.99."; exit 0; fi\n'
        f"printf '{options}'\n"
    )
    tor.chmod(0o755)
    return tor


def test_the_list_is_kept_per_tor_version(tmp_path: Path) -> None:
    tor = _fake_tor(tmp_path, "ConfluxEnabled\\nUseBridges\\n")
    cache = tmp_path / "cache"
    assert tor_options(str(tor), cache) == {"ConfluxEnabled", "UseBridges"}
    assert (cache / "torrc-options-0.4.9.99.txt").read_text() == "ConfluxEnabled\nUseBridges\n"
    assert tor_options(str(tor), cache) == {"ConfluxEnabled", "UseBridges"}
    calls = (tmp_path / "calls").read_text().split()
    assert calls == ["--version", "--list-torrc-options", "--version"]  # listed once


def test_without_a_tor_nothing_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torrc_options.shutil, "which", lambda name: None)
    torrc_options.known_torrc_options.cache_clear()
    try:
        assert torrc_options.known_torrc_options() is None
    finally:
        torrc_options.known_torrc_options.cache_clear()


@pytest.mark.skipif(TOR is None, reason="no tor on PATH: apt-get install tor")
def test_a_misspelled_option_is_refused_at_validate(tmp_path: Path) -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["variants"]["conflux-on"]["torrc"]["client"] = ["ConfluxNumLegs 2", "ConfluxEnabeld 1"]
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError) as refused:
        load_spec(path)
    text = str(refused.value)
    assert str(path) in text and "variants.conflux-on.torrc.client[1]" in text
    assert "did you mean ConfluxEnabled?" in text
    # The patches' option (line 0) passed; every committed config loads.
    for config in sorted(CI_SMALL.parent.glob("*.yaml")):
        load_spec(config)
