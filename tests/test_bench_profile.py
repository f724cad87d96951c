"""The cost-profile benchmark: one row per complete Shadow run that has a
CPU profile, its programs' CPU by host role, and the ratio to the same
run's programs as real processes (runner.bench.profile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.bench.profile import COLUMNS, SECTION, main
from runner.layout import Layout
from runner.manifest import RunRecord, write_run
from tests.conftest import ROOT

SPEC = ROOT / "configs" / "ci-small.yaml"
HOSTS = {
    "4uthority1": {"role": "authority"},
    "relay1exit": {"role": "exit"},
    "perfclient1exit": {"role": "client"},
}


def _run(layout: Layout, variant: str, **fields: Any) -> None:
    run_dir = layout.run_dir(variant, 1)
    run_dir.mkdir(parents=True)
    document = {"variant": variant, "seed": 1, "status": "complete", "hosts": HOSTS}
    write_run(run_dir, RunRecord(document | fields))


def _cells(text: str, run: str) -> dict[str, str]:
    row = next(line for line in text.splitlines() if f"| {run} |" in line)
    return dict(zip(COLUMNS, (c.strip() for c in row.strip("|").split("|")), strict=True))


def test_a_run_is_split_by_program_and_role_beside_its_native_cost(tmp_path: Path) -> None:
    shadow, local = (
        Layout(tmp_path / "shadow", "ci-small"),
        Layout(tmp_path / "local", "ci-small-local"),
    )
    profile = {
        "shadow_user_s": 10.0,
        "shadow_system_s": 30.0,
        "programs_s": {
            "4uthority1": {"tor": 2.0, "oniontrace": 1.0},
            "relay1exit": {"tor": 5.0, "oniontrace": 1.0},
            "perfclient1exit": {"tor": 3.0, "tgen": 4.0, "oniontrace": 1.0},
        },
        "not_sampled_s": 3.0,
    }
    cpu = {"generate": 2.0, "simulate": 60.0}
    duration = {"bootstrap_s": 300.0, "measure_s": 600.0}
    _run(
        shadow,
        "conflux-off",
        backend="shadow",
        cpu_profile=profile,
        cpu_phases_s=cpu,
        duration=duration,
    )
    # Shadow's run before profiles existed has no row; a local run has none either.
    _run(shadow, "conflux-on", backend="shadow", cpu_phases_s=cpu)
    # Its local twin: 6 s in all, 2 of them over 120 s of traffic (5x shorter).
    local_cpu = {"relay1exit": {"tor": 1.5}, "perfclient1exit": {"tgen": 0.5}}
    _run(
        local,
        "conflux-off",
        backend="local",
        cpu_phases_s={"generate": 1.0, "simulate": 6.0},
        cpu_s=local_cpu,
        duration={"bootstrap_s": 50.0, "measure_s": 120.0},
    )
    out = tmp_path / "bench.md"
    argv = [str(SPEC), "--results", str(shadow.root), "--native", str(local.root)]
    assert main([*argv, "--label", "before", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count(SECTION) == 1
    assert "conflux-on/seed-1" not in text
    cells = _cells(text, "conflux-off/seed-1")
    assert cells["label"] == "before"
    assert (cells["shadow user"], cells["shadow system"]) == ("10.0", "30.0")
    assert (cells["tor authorities"], cells["tor relays"], cells["tor clients"]) == (
        "2.0",
        "5.0",
        "3.0",
    )
    assert (cells["tgen"], cells["oniontrace"], cells["not sampled"]) == ("4.0", "3.0", "3.0")
    assert cells["total"] == "62.0"
    # 4 s before the traffic and 2 s of it, 5 times as long: 14 s natively.
    assert cells["native"] == "14.0" and cells["ratio"] == "4x"


def test_no_profiled_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.md"
    assert main([str(SPEC), "--results", str(tmp_path), "--out", str(out)]) == 1
    assert "no complete Shadow run with a CPU profile" in capsys.readouterr().err
    assert not out.exists()
