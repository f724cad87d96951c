"""Real simulations under Shadow (skipped, with the reason, when it is absent).

A shortened ci-small (one seed, three minutes of traffic) keeps these to a
couple of minutes on two cores.
"""

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, needs_shadow, read_manifest
from tests.specs import ci_small_data, write_spec

pytestmark = [pytest.mark.shadow, pytest.mark.slow, needs_shadow]


def _short_spec(text: str, tmp_path: Path) -> Path:
    data = ci_small_data(text)
    data["seeds"] = [1]
    data["duration"]["measure"] = "3 min"
    return write_spec(data, tmp_path)


def _runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", *args], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.smoke
@pytest.mark.simulation(
    "2 Shadow runs at once: ci-small's variants, seed 1, 5 minutes of bootstrap and 3 of traffic"
)
def test_experiment_end_to_end(ci_small_text: str, tmp_path: Path) -> None:
    spec = _short_spec(ci_small_text, tmp_path)
    results = tmp_path / "results"
    proc = _runner("experiment", str(spec), "--results", str(results), "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exp = results / "ci-small"
    report = (exp / "report" / "report.md").read_text()
    assert re.search(r"^2/2 runs complete: 2 ran in \d+m\d\ds$", proc.stdout, re.M)
    assert "client-runs pass" in report and "FAILED" not in report
    assert (exp / "report" / "ttlb-perf-5242880.png").stat().st_size > 10_000

    with (exp / "transfers.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    for variant in ("conflux-off", "conflux-on"):
        mine = [r for r in rows if r["variant"] == variant]
        assert {r["host"] for r in mine} == {f"perfclient{i}exit" for i in range(1, 5)}
        assert sum(r["success"] == "1" for r in mine) >= 0.95 * len(mine) > 0

    # The feature under test was active: conflux legs link only where it is on.
    with (exp / "circuits.csv").open() as handle:
        circuits = list(csv.DictReader(handle))
    legs: dict[tuple[str, str], set[str]] = {}
    for c in circuits:
        if c["conflux_id"]:
            legs.setdefault((c["variant"], c["conflux_id"]), set()).add(c["circuit_id"])
    assert not any(v == "conflux-off" for v, _ in legs)
    on = [len(ids) for (v, _), ids in legs.items() if v == "conflux-on"]
    assert on and max(on) == 2

    manifest = read_manifest(exp / "conflux-on" / "seed-1")
    assert set(manifest["phases"]) == {"generate_s", "simulate_s", "wait_s", "collect_s"}
    assert manifest["versions"]["shadow"].startswith("3.")

    again = _runner("run", str(spec), "--results", str(results))
    assert again.returncode == 0
    assert "2 of 2 runs already complete" in again.stdout


@pytest.mark.simulation(
    "2 Shadow runs one after the other: ci-small's conflux-off, seed 1, in 2 fresh results folders"
)
def test_two_fresh_results_folders_give_the_same_transfers(
    ci_small_text: str, tmp_path: Path
) -> None:
    """The same spec and seed in fresh folders: the same keys, the same bytes."""
    data = ci_small_data(_short_spec(ci_small_text, tmp_path).read_text())
    data["variants"] = {"conflux-off": data["variants"]["conflux-off"]}
    data["baseline"] = "conflux-off"
    data.pop("hypotheses")
    data.pop("claims", None)  # the claims they tested
    # A folder of its own: beside the short ci-small.yaml, a spec that keeps
    # `name: ci-small` is refused as a copy (runner.spec.own_name).
    spec = tmp_path / "one" / "one-variant.yaml"
    spec.parent.mkdir()
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    tables = []
    for name in ("first", "second"):
        results = tmp_path / name
        for command in ("run", "collect"):
            proc = _runner(command, str(spec), "--results", str(results), "--backend", "shadow")
            assert proc.returncode == 0, proc.stdout + proc.stderr
        tables.append((results / "ci-small" / "transfers.csv").read_bytes())
        hosts = results / "ci-small" / "conflux-off" / "seed-1" / "shadow.data.template" / "hosts"
        tables.append((hosts / "relay1exit" / "fingerprint").read_bytes())
    assert tables[0].count(b"\n") > 20
    assert tables[0] == tables[2] and tables[1] == tables[3]
