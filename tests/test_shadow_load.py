"""Background traffic under Shadow (skipped, with the reason, when Shadow or
the published data is absent): markov clients driven by the PrivCount
models load a network of relays sampled from tor-2018, and the load check
sees it against the same network without them."""

import csv
from pathlib import Path

import pytest
import yaml

from runner.network.datasets import PACKET_MODEL, RELAYS_2018, STREAM_MODEL
from tests.conftest import CI_SMALL, needs_data, needs_shadow, run_experiment

pytestmark = [pytest.mark.shadow, needs_shadow, needs_data(RELAYS_2018, STREAM_MODEL, PACKET_MODEL)]


def test_markov_background_clients_load_the_relays(tmp_path: Path) -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["name"] = "load-check"
    data["seeds"] = [1]
    data["duration"] = {"bootstrap": "5 min", "measure": "2 min"}
    # Scaled to a tenth, so that a dozen users make a difference.
    data["network"]["relays"] = {"any": {"count": 6, "sample": "tor-2018", "bandwidth_scale": 0.1}}
    data["network"]["clients"]["perf"]["count"] = 2
    data["network"]["clients"]["background"] = {
        "count": 12,
        "workload": "background",
        "measured": False,
        "bandwidth": "50 Mbit",
    }
    data["workloads"]["perf"]["params"]["sizes"] = ["50 KiB", "1 MiB"]
    data["workloads"]["background"] = {"model": "markov", "params": {"flow_interval": "20 s"}}
    conflux_off = data["variants"]["conflux-off"]
    data["variants"] = {
        "quiet": conflux_off | {"clients": {"background": 0}},
        "loaded": conflux_off,
    }
    data["baseline"] = "quiet"
    data.pop("hypotheses")
    data["checks"] = {"min_completion": 0.0, "load": {"relays": ["0%", "100%"]}}
    exp, report = run_experiment(data, tmp_path)

    with (exp / "transfers.csv").open() as handle:
        transfers = list(csv.DictReader(handle))
    background = [t for t in transfers if t["class"] == "background" and t["success"] == "1"]
    assert background and {t["variant"] for t in background} == {"loaded"}
    assert all(t["measured"] == "0" for t in background)
    # The models drew streams of many sizes, not one fixed size.
    assert len({t["bytes_received"] for t in background}) > 10

    with (exp / "relay_load.csv").open() as handle:
        loads = list(csv.DictReader(handle))
    mean = {
        v: sum(float(r["mean_utilisation"]) for r in loads if r["variant"] == v)
        / sum(r["variant"] == v for r in loads)
        for v in ("quiet", "loaded")
    }
    assert all(r["seconds"] == "120" for r in loads)
    assert mean["loaded"] > 2 * mean["quiet"] and mean["loaded"] > 0.02, mean
    assert "## Load" in report and "| loaded | relays |" in report
