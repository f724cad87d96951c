"""Hop windows under Shadow with the patched tor (skipped, with the reason,
when either is absent): the tree scenario of congestion-small, shortened,
with BackTap's hop windows and Marut's window at the sending end
(tor-patches/0007) and
smaller bulk downloads, checked by what tor logged."""

from pathlib import Path

import pytest

from runner.experiments.congestion.mechanisms import hop_window_runs
from runner.experiments.congestion.tables import CIRCUIT_WINDOWS, HOP_WINDOW
from runner.experiments.congestion.window_classes import carried_downloads
from tests.conftest import (
    TREE_TOLERATED,
    congestion_tree,
    needs_patched_tor,
    needs_shadow,
    run_experiment,
)

pytestmark = [pytest.mark.shadow, pytest.mark.slow, needs_shadow, needs_patched_tor]


@pytest.mark.simulation(
    "3 Shadow runs with the patched tor: congestion-small's tree, seed 1, 45 s of traffic, "
    "the fixed window, BackTap's hop windows and Marut's window on them, each circuit's "
    "windows followed from its client"
)
def test_reports_cross_every_hop_and_windows_react_at_the_shared_middle(
    tmp_path: Path,
) -> None:
    data = congestion_tree(
        [
            ["tree-backtap-noloss", "tree-fixed-noloss"],
            ["tree-maruthop-noloss", "tree-backtap-noloss"],
        ]
    )
    exp, report = run_experiment(data, tmp_path, TREE_TOLERATED)

    rows = HOP_WINDOW.read_if_present(exp / "hop_window.csv")
    # Only the variants that switch it on log hop windows at all.
    assert rows and {r.variant for r in rows} == {"tree-backtap-noloss", "tree-maruthop-noloss"}
    middle_decisions: dict[str, int] = {}
    for variant in ("tree-backtap-noloss", "tree-maruthop-noloss"):
        mine = [r for r in rows if r.variant == variant]
        # Reports of forwarded cells go back across every hop of the tree's
        # circuits: clients report to guards, guards to relay8middle,
        # relay8middle to exits (and the other way for requests).
        for role in ("client", "guard", "exit"):
            of_role = [r for r in mine if r.role == role]
            assert sum(r.feedback_sent for r in of_role) > 0, (variant, role)
            assert sum(r.feedback_received for r in of_role) > 0, (variant, role)
        (middle,) = [r for r in mine if r.host == "relay8middle"]
        assert middle.feedback_sent > 0 and middle.feedback_received > 0
        # Entries travel packed: never more cells than entries. A cell is
        # dropped whole only where it arrives before its tor has the
        # consensus that switches hop windows on: a handful at the start.
        for r in mine:
            assert 0 < r.feedback_cells_sent <= r.feedback_sent, (variant, r.host)
        cells = sum(r.feedback_cells_received for r in mine)
        assert sum(r.feedback_cells_dropped for r in mine) < 0.01 * cells, variant
        # Reports still on their way when their circuit closes find no
        # circuit and are dropped: a few per hundred.
        received = sum(r.feedback_received for r in mine)
        assert sum(r.feedback_dropped for r in mine) < 0.05 * received
        # The exits send into the shared middle, the congested hop: their
        # windows were decided from its reports, and shrank there.
        exits = [r for r in mine if r.role == "exit"]
        assert sum(r.decisions for r in exits) > 0
        assert sum(r.decreases for r in exits) > 0, variant
        middle_decisions[variant] = middle.decisions
    # BackTap's middle holds a window for every circuit it forwards and
    # decides it once per RTT; Marut's holds none for them, only for the
    # circuits it starts itself (directory fetches, reachability tests).
    backtap_decisions = middle_decisions["tree-backtap-noloss"]
    assert middle_decisions["tree-maruthop-noloss"] < 0.1 * backtap_decisions
    # Under Marut the exits, the circuits' sending ends for downloads, took
    # the c_diff carried from the next hops over their own at some decisions.
    (marut,) = hop_window_runs([r for r in rows if r.variant == "tree-maruthop-noloss"])
    assert marut.remote_larger > 0
    assert "Hop window checks: feedback taken and windows decided in every run" in report
    # Each circuit's lines (tor-patches/0009), followed from its client: the
    # circuits that carried the tree's streams cross relay8middle, which
    # under BackTap holds a window for each and under Marut none.
    circuits = CIRCUIT_WINDOWS.read_if_present(exp / "hop_window_circuits.csv")
    for variant, holds in (("tree-backtap-noloss", True), ("tree-maruthop-noloss", False)):
        mine = [r for r in circuits if r.variant == variant]
        used = carried_downloads(mine)
        clients = {circuit.split(">")[0] for _, _, circuit in used}
        assert len(clients) >= 8, (variant, clients)
        middles = [
            r
            for r in mine
            if (r.variant, r.seed, r.circuit_name) in used
            and r.position == 2
            and r.direction == "in"
        ]
        assert {r.host for r in middles} == {"relay8middle"}, variant
        assert {r.holds for r in middles} == {holds}, variant
        assert {r.cls for r in middles} == {"treeweb", "treebulk"}, variant
