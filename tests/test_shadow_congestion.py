"""Hop feedback under Shadow with the patched tor (skipped, with the reason,
when either is absent): the tree scenario of congestion-small, shortened,
with Vegas against Vegas plus hop feedback and smaller bulk downloads,
checked by what tor logged."""

import csv
from pathlib import Path

import pytest

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
    "traffic, Vegas against Vegas with hop feedback"
)
def test_hop_feedback_reaches_the_exit_and_feeds_its_window(tmp_path: Path) -> None:
    data = congestion_tree([["tree-marut-noloss", "tree-vegas-noloss"]])
    exp, report = run_experiment(data, tmp_path, TREE_TOLERATED)

    with (exp / "hop_feedback.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    # Only the variant that switches it on sends feedback.
    assert rows and {r["variant"] for r in rows} == {"tree-marut-noloss"}
    by_role: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by_role.setdefault(r["role"], []).append(r)

    def total(role: str, column: str, position: int | None = None) -> int:
        values = [r[column] for r in by_role.get(role, [])]
        if position is None:
            return sum(int(v) for v in values)
        return sum(int(v.split(";")[position - 1]) for v in values)

    originated = total("client", "originated")
    assert originated > 0
    # Every tree circuit crosses a guard, then relay8middle, then an exit:
    # positions 1, 2 and 3 from the client.
    assert total("guard", "received", 1) > 0
    assert total("guard", "forwarded", 1) == total("guard", "received", 1)
    middle = [r for r in by_role["middle"] if r["host"] == "relay8middle"]
    assert middle and int(middle[0]["received"].split(";")[1]) > 0
    delivered = total("exit", "delivered")
    assert 0 < delivered <= originated
    assert total("exit", "received", 3) == delivered
    # The exits decided their windows with the feedback.
    assert total("exit", "with_feedback") > 0
    assert "### Hop feedback" in report and "Hop feedback checks FAILED" not in report
