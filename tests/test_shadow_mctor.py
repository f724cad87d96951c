"""MCTor under Shadow with the patched tor (skipped, with the reason, when
either is absent): a shortened mctor-small, stock tor's one connection per
hop against three, checked by what tor logged and what the client did."""

import csv
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, needs_patched_tor, needs_shadow, run_experiment

pytestmark = [pytest.mark.shadow, needs_shadow, needs_patched_tor]


def test_mctor_opens_n_connections_per_hop_and_uses_n_circuits(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "configs" / "mctor-small.yaml").read_text())
    data["seeds"] = [1]
    data["duration"]["measure"] = "90 s"
    data["variants"] = {k: v for k, v in data["variants"].items() if k in ("n1", "n3-hashing")}
    data["comparisons"] = [["n3-hashing", "n1"]]
    data.pop("hypotheses", None)  # they name variants left out
    data["checks"]["min_transfers_per_size"] = 1
    exp, report = run_experiment(data, tmp_path)

    with (exp / "placements.csv").open() as handle:
        placements = list(csv.DictReader(handle))
    path = [("perfclient1exit", "relay3guard"), ("relay3guard", "relay5middle")]
    path += [("relay5middle", "relay1exit")]
    for variant, n in (("n1", 1), ("n3-hashing", 3)):
        for host, peer in path:
            hop = [
                p
                for p in placements
                if (p["variant"], p["host"], p["peer"]) == (variant, host, peer)
            ]
            assert hop, f"{variant}: no placement logged on {host} -> {peer}"
            assert int(hop[-1]["usable_connections"]) == n, (variant, host, peer, hop[-1])

    with (exp / "circuits.csv").open() as handle:
        carried = {
            (c["variant"], c["circuit_id"])
            for c in csv.DictReader(handle)
            if c["host"] == "perfclient1exit" and int(c["streams"] or 0) > 0
        }
    # MCTor keeps exactly N circuits for streams; stock tor promises no number.
    assert sum(v == "n3-hashing" for v, _ in carried) == 3
    assert sum(v == "n1" for v, _ in carried) >= 1

    assert "## Rounds of parallel streams" in report
    assert "## Connections on the path" in report and "| NO |" not in report
