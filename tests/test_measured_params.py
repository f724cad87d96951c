"""Consensus parameters measured from another variant's run of the same
seed (``consensus_from``): how a spec gives them, the order runs go in, the
identity of a measured run, the value read from a run's real tgen logs."""

import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from runner.analyses.client_bandwidth import per_client
from runner.analyses.measured_params import class_bandwidth, measured_params
from runner.errors import RunError, SpecError
from runner.execute.run_all import run_experiment, with_measured
from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.manifest import read_run, run_status
from runner.network.backends import SHADOW
from runner.network.generate import Tools
from runner.network.identity import spec_parts
from runner.spec.model import Spec, Variant
from runner.tables.collect import logged_rows
from runner.tables.schema import CLIENTS, TRANSFERS
from tests.conftest import FIXTURES, needs_tor, read_manifest, write_manifest
from tests.specs import ci_small_data, spec_of
from tests.test_run import _stand_in_paths

MEASURED = {"perconnbwrate": {"variant": "conflux-off", "class": "perf", "times": 0.5}}


def _spec(text: str, measured: Any = MEASURED, extra: str = "") -> Spec:
    data = ci_small_data(text)
    data["variants"]["conflux-on"]["consensus_from"] = measured
    if extra:
        data["variants"]["conflux-on"]["consensus"] = {extra: 1000}
    return spec_of(data)


def test_a_measured_parameter_names_a_variant_a_class_and_a_multiple(ci_small_text: str) -> None:
    spec = _spec(ci_small_text)
    measured = spec.variant("conflux-on").consensus_from["perconnbwrate"]
    assert (measured.variant, measured.cls, measured.times) == ("conflux-off", "perf", 0.5)
    assert "0.5 x conflux-off's perf clients" in measured.describe()


@pytest.mark.parametrize(
    ("measured", "extra", "message"),
    [
        ({"perconnbwrate": {"variant": "nope", "class": "perf", "times": 1}}, "", "nope"),
        ({"perconnbwrate": {"variant": "conflux-off", "class": "web", "times": 1}}, "", "web"),
        ({"perconnbwrate": {"variant": "conflux-off", "class": "perf"}}, "", "times"),
        ({"perconnbwrat": {"variant": "conflux-off", "class": "perf", "times": 1}}, "", "perconn"),
        (
            {"perconnbwrate": {"variant": "conflux-off", "class": "perf", "times": -1}},
            "",
            "times",
        ),
        (MEASURED, "perconnbwrate", "give it once"),
        ([1], "", "expected a mapping"),
    ],
)
def test_a_bad_measured_parameter_is_named(
    ci_small_text: str, measured: Any, extra: str, message: str
) -> None:
    with pytest.raises(SpecError, match="consensus_from") as err:
        _spec(ci_small_text, measured, extra)
    assert message in str(err.value)


def test_a_variant_cannot_measure_from_a_measured_one(ci_small_text: str) -> None:
    data = ci_small_data(ci_small_text)
    data["variants"]["conflux-on"]["consensus_from"] = MEASURED
    data["variants"]["conflux-off"]["consensus_from"] = {
        "perconnbwburst": {"variant": "conflux-on", "class": "perf", "times": 1}
    }
    with pytest.raises(SpecError, match="sets its own parameters from another"):
        spec_of(data)


def test_a_measured_run_has_one_identity_before_and_after_measuring(ci_small_text: str) -> None:
    spec = _spec(ci_small_text)
    variant = spec.variant("conflux-on")
    before = spec_parts(spec, variant, 1, SHADOW)
    after = spec_parts(spec, with_measured(variant, {"perconnbwrate": 1234}), 1, SHADOW)
    assert before == after and "measured_from" in before
    # The run it is measured from is part of it: change that run, and this one changes.
    data = ci_small_data(ci_small_text)
    data["variants"]["conflux-on"]["consensus_from"] = MEASURED
    data["variants"]["conflux-off"]["torrc"]["client"].append("NumEntryGuards 2")
    other = spec_of(data)
    changed = spec_parts(other, other.variant("conflux-on"), 1, SHADOW)
    assert changed["measured_from"] != before["measured_from"]
    assert changed["variant"] == before["variant"]
    with pytest.raises(RunError, match="perconnbwrate not measured"):
        with_measured(variant, {})


def _complete_with_real_logs(layout: Layout, variant: str, seed: int) -> None:
    """The run's manifest says complete, and each perf client has the
    fixture's tgen log (a real tgen run's)."""
    run_dir = layout.run_dir(variant, seed)
    manifest = read_manifest(run_dir)
    manifest["status"] = "complete"
    write_manifest(run_dir, manifest)
    for host, info in manifest["hosts"].items():
        if info["role"] == "client":
            home = run_dir / "shadow.data" / "hosts" / host
            home.mkdir(parents=True, exist_ok=True)
            shutil.copy(FIXTURES / "tgen-perfclient.stdout", home / "tgen.1000.stdout")


@needs_tor
def test_measured_variants_run_after_the_runs_they_are_measured_from(
    ci_small_text: str, tmp_path: Path
) -> None:
    spec = _spec(ci_small_text)
    layout = Layout(tmp_path / "results", spec.name)
    tools = Tools(_stand_in_paths(tmp_path, failing=None), {})
    asked: list[tuple[str, int, str]] = []

    def measure(variant: Variant, seed: int) -> dict[str, int]:
        reference = layout.run_dir("conflux-off", seed)
        asked.append((variant.name, seed, run_status(reference)))
        _complete_with_real_logs(layout, "conflux-off", seed)
        return measured_params(partial(logged_rows, layout), variant, seed)

    outcomes = run_experiment(spec, layout, [], 2, tools, SHADOW, measure_params=measure)
    assert {(o.variant, o.seed): o.status for o in outcomes} == {
        ("conflux-off", 1): "complete",
        ("conflux-off", 2): "complete",
        ("conflux-on", 1): "complete",
        ("conflux-on", 2): "complete",
    }
    # Asked once per seed, each time after the reference had run.
    assert sorted(asked) == [("conflux-on", 1, "complete"), ("conflux-on", 2, "complete")]
    manifest = read_manifest(layout.run_dir("conflux-on", 1))
    logs = RunLogs(
        layout.run_dir("conflux-off", 1),
        read_run(layout.run_dir("conflux-off", 1)),
        {"tor": ()},
    )
    rates = [
        b.bytes / b.seconds for b in per_client(TRANSFERS.rows(logs), list(CLIENTS.rows(logs)))
    ]
    expected = round(0.5 * sum(rates) / len(rates))
    settings = manifest["variant_settings"]
    assert settings["consensus"]["perconnbwrate"] == expected > 0
    assert settings["consensus_from"]["perconnbwrate"]["value"] == expected
    assert (
        "perconnbwrate=" + str(expected)
        in (layout.run_dir("conflux-on", 1) / "conf" / "tor.authority.torrc").read_text()
    )
    # Measured runs are current: a second run measures nothing and runs nothing.
    asked.clear()
    again = run_experiment(spec, layout, [], 2, tools, SHADOW, measure_params=measure)
    assert {o.status for o in again} == {"skipped"} and asked == []


@needs_tor
def test_a_failed_reference_fails_the_runs_measured_from_it(
    ci_small_text: str, tmp_path: Path
) -> None:
    spec = _spec(ci_small_text)
    layout = Layout(tmp_path / "results", spec.name)
    tools = Tools(_stand_in_paths(tmp_path, failing="conflux-off"), {})
    outcomes = run_experiment(
        spec,
        layout,
        [],
        2,
        tools,
        SHADOW,
        measure_params=lambda variant, seed: measured_params(
            partial(logged_rows, layout), variant, seed
        ),
    )
    failed = {(o.variant, o.seed): o.error or "" for o in outcomes if o.status == "failed"}
    assert set(failed) == {
        ("conflux-off", 1),
        ("conflux-off", 2),
        ("conflux-on", 1),
        ("conflux-on", 2),
    }
    assert (
        "perconnbwrate of conflux-on is measured from conflux-off/seed-1"
        in failed[("conflux-on", 1)]
    )


def test_a_reference_without_clients_of_the_class_is_named(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "exp")
    with pytest.raises(RunError, match="not complete"):
        class_bandwidth(partial(logged_rows, layout), "unlimited", 3, "bulk")
