"""PCTCP's transport under Shadow with the patched tor (skipped, with the
reason, when either is absent): mctor.yaml's control, 3 circuits that
would share one connection per hop, with MCTorPerCircuit 1
(tor-patches/0003) on the user and the relays, checked by what tor logged."""

from pathlib import Path

import pytest

from runner.experiments.mctor.connections import circuit_spread
from runner.experiments.mctor.tables import PLACEMENTS
from runner.tables.schema import CIRCUITS
from tests.conftest import mctor_variants, needs_patched_tor, needs_shadow, run_experiment

pytestmark = [pytest.mark.shadow, pytest.mark.slow, needs_shadow, needs_patched_tor]

PATH = ("relay3guard", "relay5middle", "relay1exit")


@pytest.mark.simulation(
    "1 Shadow run with the patched tor: mctor's control with MCTorPerCircuit 1, seed 1, "
    "60 s of traffic"
)
def test_every_circuit_gets_a_connection_of_its_own(tmp_path: Path) -> None:
    data = mctor_variants({"pctcp": "base-onelink3-noloss"})
    data["duration"]["measure"] = "60 s"
    pctcp = data["variants"]["pctcp"]
    pctcp["description"] = "3 circuits, each on a connection of its own at every hop"
    pctcp["torrc"] = {role: [*lines, "MCTorPerCircuit 1"] for role, lines in pctcp["torrc"].items()}
    pctcp.pop("expect")  # the connections per hop follow the circuits, not N
    data["checks"]["min_transfers_per_size"] = 1
    exp, _ = run_experiment(data, tmp_path)

    placements = PLACEMENTS.read(exp / "placements.csv")
    # Every placement, on the user and on every relay, put the circuit on a
    # connection that carried no other: no connection to a peer ever
    # carries more than one of this tor's outbound circuits.
    relays = {p.host for p in placements if p.from_id is not None}
    assert set(PATH[:-1]) <= relays
    shared = [p for p in placements if max(p.circuits, default=0) != 1]
    assert not shared, shared
    # More connections than one per peer: one per circuit.
    assert max(p.open_connections for p in placements if p.host == "relay3guard") >= 3

    # The user's stream circuits (3, more if tor replaced one), followed hop
    # by hop, each sit on a connection of their own at every hop, where
    # without PCTCP they share one.
    circuits = CIRCUITS.read(exp / "circuits.csv")
    spread = circuit_spread(
        placements, circuits, {("pctcp", 1, "perfclient1exit"): PATH}, {"pctcp": 3}
    )
    assert len(spread) == 3 and all(s.circuits >= 3 for s in spread)
    assert all(s.followed == s.connections == s.circuits for s in spread), spread
