"""Load under Shadow (skipped, with the reason, when Shadow or the published
data is absent): markov clients driven by the PrivCount models load a
network of relays sampled from tor-2018, and the load check sees it against
the same network without them; cross traffic on the middles' own hosts
takes their links."""

import csv
import json
from pathlib import Path

import pytest
import yaml

from runner.datasets import PACKET_MODEL, RELAYS_2018, STREAM_MODEL
from runner.layout import SHADOW_DATA
from runner.logs.tgen import parse_lines as parse_tgen
from tests.conftest import CI_SMALL, needs_data, needs_shadow, run_experiment


@pytest.mark.shadow
@pytest.mark.slow
@pytest.mark.simulation(
    "2 Shadow runs at once (quiet, loaded): 6 relays from tor-2018, 2 perf and 12 markov "
    "clients, 5 minutes of bootstrap and 2 of traffic"
)
@needs_shadow
@needs_data(RELAYS_2018, STREAM_MODEL, PACKET_MODEL)
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
    data.pop("claims", None)  # the claims they tested
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


@pytest.mark.shadow
@pytest.mark.slow
@pytest.mark.simulation(
    "2 Shadow runs at once (quiet, crossed): ci-small, seed 1, 4 cross-traffic flows on the "
    "middles, 5 minutes of bootstrap and 2 of traffic"
)
@needs_shadow
def test_cross_traffic_fills_the_middles_links(tmp_path: Path) -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["name"] = "cross-traffic"
    data["seeds"] = [1]
    data["duration"] = {"bootstrap": "5 min", "measure": "2 min"}
    data["network"]["cross_traffic"] = {"relays": ["middle"], "flows": 4, "size": "5 MiB"}
    conflux_off = data["variants"]["conflux-off"]
    data["variants"] = {"quiet": conflux_off | {"cross_flows": 0}, "crossed": conflux_off}
    data["baseline"] = "quiet"
    data.pop("hypotheses")
    data.pop("claims", None)  # the claims they tested
    data["checks"] = {"min_completion": 0.0}
    exp, _ = run_experiment(data, tmp_path)

    for variant in ("quiet", "crossed"):
        run = exp / variant / "seed-1"
        manifest = json.loads((run / "manifest.json").read_text())
        middles = [h for h, info in manifest["hosts"].items() if info["role"] == "middle"]
        assert len(middles) == 2
        for middle in middles:
            logs = list((run / SHADOW_DATA / "hosts" / middle).glob("tgen.*.stdout"))
            if variant == "quiet":
                assert not logs
                continue
            (log,) = logs
            with log.open() as handle:
                done = [t for t in parse_tgen(handle) if t.success]
            link = manifest["hosts"][middle]["bandwidth_down_bits"] / 8
            # Four TCP flows with nothing to stop them but the middle's own
            # downlink: together they take most of it over the 2 minutes.
            assert sum(t.bytes_received for t in done) > 0.3 * link * 120, middle
