"""N23 per-hop credit under Shadow with the patched tor (skipped, with the
reason, when either is absent): the tree scenario of congestion-small,
shortened, with the fixed window against the fixed window plus N23
(tor-patches/0006) and smaller bulk downloads, checked by what tor logged."""

from pathlib import Path

import pytest

from runner.experiments.congestion.mechanisms import n23_runs
from runner.experiments.congestion.tables import N23
from tests.conftest import (
    TREE_TOLERATED,
    congestion_tree,
    needs_patched_tor,
    needs_shadow,
    run_experiment,
)

pytestmark = [pytest.mark.shadow, pytest.mark.slow, needs_shadow, needs_patched_tor]


@pytest.mark.simulation(
    "2 Shadow runs at once with the patched tor: congestion-small's tree, seed 1, 45 s of "
    "traffic, the fixed window against it with N23"
)
def test_credit_crosses_every_hop_and_holds_circuits(tmp_path: Path) -> None:
    data = congestion_tree([["tree-n23-noloss", "tree-fixed-noloss"]])
    exp, report = run_experiment(data, tmp_path, TREE_TOLERATED)

    rows = N23.read_if_present(exp / "n23.csv")
    # Only the variant that switches it on logs N23 at all.
    assert rows and {r.variant for r in rows} == {"tree-n23-noloss"}
    by_host = {r.host: r for r in rows}
    # Credit goes back across every hop of the tree's circuits, both ways:
    # clients return it to guards for the data they receive, guards to
    # relay8middle, relay8middle to exits; and the other way for requests.
    for role in ("client", "guard", "exit"):
        mine = [r for r in rows if r.role == role]
        assert mine and sum(r.credit_sent for r in mine) > 0, role
        assert sum(r.credit_received for r in mine) > 0, role
    middle = by_host["relay8middle"]
    assert middle.credit_sent > 0 and middle.credit_received > 0
    # Credit still on its way when its circuit closes finds no circuit and
    # is dropped: a few per hundred.
    received = sum(r.credit_received for r in rows)
    assert sum(r.credit_dropped for r in rows) < 0.05 * received
    # Credit limited what was sent: after the first credit every hop knew
    # its next hop ran N23, and most relay cells went out under credit.
    (run,) = n23_runs(rows)
    assert run.cells_before_credit < run.cells_sent / 2
    assert "N23 checks: credit returned and taken in every run" in report
