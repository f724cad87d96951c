"""Scheduling: a failed run is reported, the others go on, re-runs skip what is done.

Uses real tor for generation and a stand-in for Shadow, so it runs wherever
tor is installed; the real simulations are in test_shadow.py.
"""

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from runner.execute.manifest import read_manifest
from runner.execute.run import run_experiment
from runner.layout import Layout
from runner.network.backends import SHADOW
from runner.network.generate import Tools
from runner.spec.model import parse_spec
from runner.tools.prereqs import find
from tests.conftest import needs_tor

FAKE_SHADOW = """#!/bin/sh
# Stands in for Shadow: fails in the conflux-on runs, succeeds elsewhere.
case "$PWD" in
  *conflux-on*) echo "tor exited with code 1" >&2; exit 1 ;;
esac
echo "Progress: 100% — simulated: 00:15:00.000/00:15:00" >&2
mkdir -p shadow.data/hosts
"""


@needs_tor
def test_failed_runs_are_reported_and_retried(
    ci_small_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(FAKE_SHADOW)
    shadow.chmod(shadow.stat().st_mode | stat.S_IEXEC)
    paths = {n: str(find(n).path) for n in ("tor", "tor-gencert", "faketime")}
    paths.update(shadow=str(shadow), tgen="/usr/bin/true", oniontrace="/usr/bin/true")
    tools = Tools(paths, {})
    spec = parse_spec(yaml.safe_load(ci_small_text), "ci-small.yaml")
    layout = Layout(tmp_path / "results", spec.name)

    # The stand-in is Shadow whatever is installed here: name the backend.
    outcomes = {(o.variant, o.seed): o for o in run_experiment(spec, layout, [], 2, tools, SHADOW)}
    assert {k: o.status for k, o in outcomes.items()} == {
        ("conflux-off", 1): "complete",
        ("conflux-off", 2): "complete",
        ("conflux-on", 1): "failed",
        ("conflux-on", 2): "failed",
    }
    failed = read_manifest(layout.run_dir("conflux-on", 1))
    assert failed["status"] == "failed"
    assert "shadow exited with status 1" in failed["error"]
    done = read_manifest(layout.run_dir("conflux-off", 2))
    assert done["status"] == "complete" and done["phases"]["simulate_s"] >= 0

    mtime = os.stat(layout.run_dir("conflux-off", 1) / "manifest.json").st_mtime_ns
    rerun = run_experiment(spec, layout, [], 2, tools, SHADOW)
    again = {(o.variant, o.seed): o.status for o in rerun}
    assert again[("conflux-off", 1)] == "skipped"
    assert again[("conflux-on", 1)] == "failed"  # retried, and fails again
    assert os.stat(layout.run_dir("conflux-off", 1) / "manifest.json").st_mtime_ns == mtime
    assert "made from another version" not in capsys.readouterr().out

    # Complete runs made from another version of the spec are kept, and said.
    changed = replace(spec, sha256="another")
    run_experiment(changed, layout, [], 2, tools, SHADOW)
    assert "note: 2 of them were made from another version of the spec" in capsys.readouterr().out
