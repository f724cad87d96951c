"""MCTor under Shadow with the patched tor (skipped, with the reason, when
either is absent): a shortened mctor.yaml without loss, stock tor's one connection per
hop against three, and the control (three circuits sharing one connection
per hop), checked by what tor logged and what the client did."""

import csv
from pathlib import Path

import pytest

from runner.experiments.mctor.connections import circuit_spread
from runner.experiments.mctor.tables import PLACEMENTS
from runner.tables.schema import CIRCUITS
from tests.conftest import mctor_variants, needs_patched_tor, needs_shadow, run_experiment

pytestmark = [pytest.mark.shadow, pytest.mark.slow, needs_shadow, needs_patched_tor]

# Short names for mctor.yaml's variants without loss: stock tor's one
# connection per hop, 3 by hashing, and the control (3 circuits on one).
VARIANTS = {
    "n1": "base-n1-noloss",
    "n3-hashing": "base-n3-hashing-noloss",
    "onelink-n3-uniform": "base-onelink3-noloss",
}
PATH = ("relay3guard", "relay5middle", "relay1exit")


@pytest.mark.simulation(
    "3 Shadow runs with the patched tor: mctor's one path, seed 1, 90 s of traffic, N = 1, "
    "N = 3 by hashing and the control"
)
def test_mctor_opens_n_connections_per_hop_and_uses_n_circuits(tmp_path: Path) -> None:
    data = mctor_variants(VARIANTS)
    data["duration"]["measure"] = "90 s"
    data["comparisons"] = [["n3-hashing", "n1"], ["n3-hashing", "onelink-n3-uniform"]]
    data["checks"]["min_transfers_per_size"] = 1
    exp, report = run_experiment(data, tmp_path)

    with (exp / "placements.csv").open() as handle:
        placements = list(csv.DictReader(handle))
    hops = list(zip(("perfclient1exit", *PATH[:-1]), PATH, strict=True))
    for variant, n in (("n1", 1), ("n3-hashing", 3), ("onelink-n3-uniform", 1)):
        for host, peer in hops:
            hop = [
                p
                for p in placements
                if (p["variant"], p["host"], p["peer"]) == (variant, host, peer)
            ]
            assert hop, f"{variant}: no placement logged on {host} -> {peer}"
            assert int(hop[-1]["usable_connections"]) == n, (variant, host, peer, hop[-1])

    circuits = CIRCUITS.read(exp / "circuits.csv")
    carried = {
        (c.variant, c.circuit_id) for c in circuits if c.host == "perfclient1exit" and c.streams
    }
    # MCTor keeps N circuits for streams (the control 3 over one connection),
    # more only where tor replaced one; stock tor promises no number.
    assert sum(v == "n3-hashing" for v, _ in carried) >= 3
    assert sum(v == "onelink-n3-uniform" for v, _ in carried) >= 3
    assert sum(v == "n1" for v, _ in carried) >= 1

    # Followed hop by hop through the logged circuit IDs: MCTor's 3 stream
    # circuits sit on 3 distinct connections at every hop, the control's on one.
    paths = {(v, 1, "perfclient1exit"): PATH for v in ("n3-hashing", "onelink-n3-uniform")}
    spread = circuit_spread(
        PLACEMENTS.read(exp / "placements.csv"),
        circuits,
        paths,
        {"n3-hashing": 3, "onelink-n3-uniform": 1},
    )
    assert [(s.variant, s.followed == s.circuits, s.connections) for s in spread] == [
        ("n3-hashing", True, 3),
        ("n3-hashing", True, 3),
        ("n3-hashing", True, 3),
        ("onelink-n3-uniform", True, 1),
        ("onelink-n3-uniform", True, 1),
        ("onelink-n3-uniform", True, 1),
    ]

    assert "## Rounds of parallel streams" in report
    assert "## Connections on the path" in report and "| NO |" not in report
    assert "## Connections under the circuits carrying the streams" in report
