"""Scheduling: a failed run is reported, the others go on, re-runs skip what is done.

Uses real tor for generation and a stand-in for Shadow, so it runs wherever
tor is installed; the real simulations are in test_shadow.py.
"""

import os
import stat
from pathlib import Path

import pytest

from runner.analyses.analyze import checks_record
from runner.analyses.runs import stale
from runner.checks import Failure
from runner.cli import main
from runner.execute.run_all import run_experiment
from runner.experiments import parse_spec
from runner.layout import Layout, stale_path
from runner.manifest import read_run, write_json_atomic
from runner.network.backends import SHADOW
from runner.network.generate import Tools
from runner.report.what_ran import stale_runs
from runner.spec.model import Spec
from runner.tables.runs import run_row, run_rows
from runner.tools.prereqs import find
from runner.workflow.backend_choice import backend_name
from tests.conftest import needs_tor, read_manifest, write_manifest
from tests.specs import ci_small_data, spec_of

FAKE_SHADOW = """#!/bin/sh
# Stands in for Shadow: fails in the conflux-on runs, succeeds elsewhere.
case "$PWD" in
  *conflux-on*) echo "tor exited with code 1" >&2; exit 1 ;;
esac
echo "Progress: 100% — simulated: 00:15:00.000/00:15:00" >&2
mkdir -p shadow.data/hosts
"""


def _stand_in_paths(tmp_path: Path, failing: str | None = "conflux-on") -> dict[str, str]:
    """Real tor for generation, a stand-in for Shadow that fails in the
    runs of ``failing`` (none: every run succeeds)."""
    shadow = tmp_path / "shadow"
    shadow.write_text(FAKE_SHADOW.replace("*conflux-on*)", f"*{failing or 'no-such-variant'}*)"))
    shadow.chmod(shadow.stat().st_mode | stat.S_IEXEC)
    paths = {n: str(find(n).path) for n in ("tor", "tor-gencert", "faketime")}
    paths.update(shadow=str(shadow), tgen="/usr/bin/true", oniontrace="/usr/bin/true")
    return paths


@needs_tor
def test_failed_runs_are_reported_and_retried(
    ci_small_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _stand_in_paths(tmp_path)
    tools = Tools(paths, {})
    spec = spec_of(ci_small_data(ci_small_text))
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
    assert "differ from what the spec now gives" not in capsys.readouterr().out


def _all_complete(spec: Spec, layout: Layout, tools: Tools) -> None:
    """Every run of ``spec`` generated and marked complete, as if it had run."""
    run_experiment(spec, layout, [], 2, tools, SHADOW)
    for variant in spec.variants:
        for seed in spec.seeds:
            manifest = read_manifest(layout.run_dir(variant.name, seed))
            manifest["status"] = "complete"
            write_manifest(layout.run_dir(variant.name, seed), manifest)


@needs_tor
def test_a_changed_spec_re_runs_exactly_the_runs_it_changes(
    ci_small_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _stand_in_paths(tmp_path, failing=None)
    tools = Tools(paths, {"shadow": "3.3.0"})
    spec = spec_of(ci_small_data(ci_small_text))
    layout = Layout(tmp_path / "results", spec.name)
    _all_complete(spec, layout, tools)
    capsys.readouterr()

    # A comment, a description and the local backend's duration change no Shadow run.
    edited = ci_small_text.replace("seeds: [1, 2]", "# a comment\nseeds: [1, 2]")
    edited = edited.replace("Conflux on, two legs", "Conflux on with two legs")
    edited = edited.replace("local_measure: 2 min", "local_measure: 1 min")
    assert edited.count("# a comment") == 1
    same = spec_of(ci_small_data(edited))
    statuses = {
        (o.variant, o.seed): o.status for o in run_experiment(same, layout, [], 2, tools, SHADOW)
    }
    assert set(statuses.values()) == {"skipped"}

    # A changed variant re-runs that variant's runs, and only those.
    changed = spec_of(
        ci_small_data(
            ci_small_text.replace("[ConfluxEnabled 1]", "[ConfluxEnabled 1, SafeLogging 0]")
        )
    )
    kept = run_experiment(changed, layout, [], 2, tools, SHADOW, keep_stale=True)
    assert {o.status for o in kept} == {"skipped"}
    out = capsys.readouterr().out
    assert "2 complete runs differ from what the spec now gives; kept" in out
    assert "conflux-on/seed-1: variant changed" in out
    rows = run_rows(changed, layout)
    listed = "\n".join(stale_runs(stale(changed, rows), rows))
    assert "**Stale runs:** 2 complete runs" in listed
    assert "| conflux-on/seed-2 | variant |" in listed and "conflux-off" not in listed

    old = read_manifest(layout.run_dir("conflux-on", 1))["identity"]["fingerprint"]
    outcomes = run_experiment(changed, layout, [], 2, tools, SHADOW)
    statuses = {(o.variant, o.seed): o.status for o in outcomes}
    assert statuses == {
        ("conflux-off", 1): "skipped",
        ("conflux-off", 2): "skipped",
        ("conflux-on", 1): "complete",
        ("conflux-on", 2): "complete",
    }
    new = read_manifest(layout.run_dir("conflux-on", 1))["identity"]["fingerprint"]
    assert new != old
    assert not stale_path(layout.run_dir("conflux-on", 1)).exists()  # removed once replaced
    again = [run_row(read_run(layout.run_dir("conflux-on", 1)))]
    assert stale(changed, again) == [] and stale_runs([], again) == []

    # Other tool versions re-run everything.
    newer = Tools(paths, {"shadow": "3.4.0"})
    assert {o.status for o in run_experiment(changed, layout, [], 2, newer, SHADOW)} == {"complete"}


@needs_tor
def test_results_are_found_by_their_manifests_not_by_what_is_installed(
    ci_small_text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    paths = _stand_in_paths(tmp_path, failing=None)
    spec_path = tmp_path / "ci-small.yaml"
    spec_path.write_text(ci_small_text)
    spec = spec_of(ci_small_data(ci_small_text), spec_path)
    results = tmp_path / "results"
    _all_complete(spec, Layout(results, spec.name), Tools(paths, {}))
    capsys.readouterr()

    # A machine without Shadow: nothing on PATH, no setting, an empty tools cache.
    for name in [k for k in os.environ if k.startswith("TORNET_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    monkeypatch.setenv("TORNET_TOOLS_ROOT", str(tmp_path / "no-tools"))
    assert not find("shadow").ok
    assert main(["collect", str(spec_path), "--results", str(results)]) == 0
    assert "collected 4 runs: " in capsys.readouterr().out
    assert (results / "ci-small" / "transfers.csv").is_file()
    assert not (results / "ci-small-local").exists()

    # Runs of both backends: the one `make experiment` would run here (local,
    # Shadow being out of sight), said; --backend reads the other.
    local_run = results / "ci-small-local" / "conflux-on" / "seed-1"
    local_run.mkdir(parents=True)
    write_manifest(local_run, {"backend": "local", "status": "complete"})
    said: list[str] = []
    assert backend_name("ci-small", results, None, True, said.append) == "local"
    assert said[0].startswith("runs of ci-small exist for both backends (local, shadow)")
    capsys.readouterr()
    assert main(["collect", str(spec_path), "--results", str(results), "--backend", "shadow"]) == 0
    assert "collected 4 runs: " in capsys.readouterr().out


@needs_tor
def test_runs_whose_checks_failed_are_kept_and_retried_when_asked(
    ci_small_text: str, tmp_path: Path
) -> None:
    paths = _stand_in_paths(tmp_path, failing=None)
    tools = Tools(paths, {})
    spec = spec_of(ci_small_data(ci_small_text))
    layout = Layout(tmp_path / "results", spec.name)
    _all_complete(spec, layout, tools)
    runs = {(v.name, s): layout.run_dir(v.name, s) for v in spec.variants for s in spec.seeds}
    # Found in checks.json by its run, not its text: the message names no run at all.
    failure = Failure("conflux-on", 1, "conflux-legs", "conflux sets by legs {1: 4}")
    others = [
        Failure("conflux-on", 10, "paths", "not this run"),
        # Worded as if it were conflux-off's first run, but the experiment's.
        Failure(None, None, "experiment", "conflux-off/seed-1: not a run's failure"),
    ]
    checks = checks_record([("an analysis", [failure, *others])], [], [])
    write_json_atomic(layout.data_json("checks"), checks)
    before = read_manifest(runs[("conflux-on", 1)])["identity"]

    kept = run_experiment(spec, layout, [], 2, tools, SHADOW)
    assert {o.status for o in kept} == {"skipped"}
    retried = run_experiment(spec, layout, [], 2, tools, SHADOW, retry_failed=True)
    statuses = {(o.variant, o.seed): o.status for o in retried}
    assert statuses.pop(("conflux-on", 1)) == "complete"
    assert set(statuses.values()) == {"skipped"}
    # A new run, made as the last was: the same identity, a new record.
    assert read_manifest(runs[("conflux-on", 1)])["identity"] == before


def test_every_configs_runs_have_an_identity() -> None:
    from runner.experiments import load_spec
    from runner.network.identity import run_identity
    from tests.conftest import ROOT

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        spec = load_spec(path)
        fingerprints = {
            run_identity(spec, v, spec.seeds[0], SHADOW, {})["fingerprint"] for v in spec.variants
        }
        assert len(fingerprints) == len(spec.variants), path.name  # every variant its own


def test_a_relay_groups_bandwidth_of_changes_the_identity_only_where_given() -> None:
    """``bandwidth_of`` came after runs were made: a network that does not
    give it keeps the fingerprint it had before the key existed."""
    import dataclasses

    from runner.experiments import load_spec
    from runner.network.identity import digest, spec_parts
    from tests.conftest import CI_SMALL

    spec = load_spec(CI_SMALL)
    before = dataclasses.asdict(spec.network)
    assert before.pop("circuits") is None  # added later too, left out while empty
    for group in before["relays"]:
        assert group.pop("bandwidth_of") == {}
    assert digest(spec.network) == digest(before)
    data = ci_small_data()
    data["network"]["relays"]["middle"]["bandwidth_of"] = {"relay5middle": "30 Mbit"}
    fixed = parse_spec(data, "fixed.yaml")
    ours, theirs = (spec_parts(s, s.variants[0], 1, SHADOW) for s in (spec, fixed))
    assert [k for k in ours if ours[k] != theirs[k]] == ["network"]


def test_a_runs_identity_names_its_backend_and_the_traffic_it_measures() -> None:
    from runner.experiments import load_spec
    from runner.network.backends import BACKENDS
    from runner.network.identity import digest, spec_parts
    from tests.conftest import CI_SMALL

    spec = load_spec(CI_SMALL)
    measured = {"shadow": spec.duration.measure, "local": spec.duration.local_measure}
    assert measured["shadow"] != measured["local"]
    for name, backend in BACKENDS.items():
        parts = spec_parts(spec, spec.variants[0], 1, backend)
        assert parts["backend"] == name
        duration = {"bootstrap": spec.duration.bootstrap, "measure": measured[name]}
        assert parts["duration"] == digest(duration)


def test_every_backend_has_an_execution() -> None:
    from runner.execute.by_backend import EXECUTIONS, execution
    from runner.network.backends import BACKENDS

    assert sorted(EXECUTIONS) == sorted(BACKENDS)
    for backend in BACKENDS.values():
        assert execution(backend) is EXECUTIONS[backend.name]


def test_a_backend_without_an_execution_fails_loudly() -> None:
    from runner.execute.by_backend import NoExecution
    from runner.execute.run_all import plan_placement
    from runner.experiments import load_spec
    from runner.network.backends import LocalBackend
    from tests.conftest import CI_SMALL

    class Elsewhere(LocalBackend):
        name = "elsewhere"

    with pytest.raises(NoExecution, match="'elsewhere' has no execution.*EXECUTIONS"):
        plan_placement(load_spec(CI_SMALL), Elsewhere(), 1)
