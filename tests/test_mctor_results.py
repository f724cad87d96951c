"""MCTor's mechanism, checked on the collected tables of a real run.

The fixtures are `make experiment EXP=mctor-small`'s tables (Shadow
3.3.0, tor 0.4.9.11 with tor-patches), gzipped, beside the spec they ran
(spec.yaml); placements are cut to the hops of
the measured clients' paths, circuits to those that carried streams.
"""

from collections import Counter
from pathlib import Path

import pytest

from runner.analyses.answers import hypothesis_rounds
from runner.analyses.workload_rounds import class_phases, fairness_gaps, rounds
from runner.experiments.mctor.compute import pinned_paths
from runner.experiments.mctor.connections import circuit_spread, hop_checks, stream_circuits
from runner.experiments.mctor.tables import PLACEMENTS, PlacementRow
from runner.layout import Layout
from runner.planning.seed_plan import make_plan
from runner.spec.model import Spec
from runner.tables.schema import CIRCUITS, SERVED, TRANSFERS, CircuitRow, ServedRow, TransferRow
from tests.conftest import FIXTURES, fixture_spec, gunzip_fixture

TABLES = FIXTURES / "mctor-small"


def _table(name: str, tmp: Path) -> Path:
    return gunzip_fixture(TABLES / f"{name}.gz", tmp)


@pytest.fixture(scope="module")
def spec() -> Spec:
    return fixture_spec("mctor-small")


@pytest.fixture(scope="module")
def tables(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[TransferRow], list[ServedRow], list[PlacementRow], list[CircuitRow]]:
    tmp = tmp_path_factory.mktemp("mctor")
    return (
        TRANSFERS.read(_table("transfers.csv", tmp)),
        SERVED.read(_table("served.csv", tmp)),
        PLACEMENTS.read(_table("placements.csv", tmp)),
        CIRCUITS.read(_table("circuits.csv", tmp)),
    )


def _paths(spec: Spec, transfers: list[TransferRow]) -> dict[tuple[str, int, str], tuple[str, ...]]:
    measured: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for t in transfers:
        if t.measured and (t.host, t.cls) not in measured.setdefault((t.variant, t.seed), []):
            measured[(t.variant, t.seed)].append((t.host, t.cls))
    paths = pinned_paths(spec, measured)
    assert len(paths) == sum(len(hosts) for hosts in measured.values())
    return paths


def test_every_hop_has_the_connections_the_variant_asks_for(spec: Spec, tables) -> None:  # type: ignore[no-untyped-def]
    transfers, _, placements, _ = tables
    expected = {v.name: v.expect.get("mctor_connections") for v in spec.variants}
    assert None not in expected.values()
    checks = hop_checks(placements, _paths(spec, transfers), expected)  # type: ignore[arg-type]
    # 3 hops per run, and a second client hop where two users share the path.
    runs = {(v.name, seed) for v in spec.variants for seed in spec.seeds}
    fair = {r for r in runs if r[0].startswith("fair-")}
    assert len(checks) == 3 * len(runs) + len(fair)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    # Where both ends connected at once, more were open than asked for, and
    # the pruning left exactly N taking circuits (stock tor: one).
    crossed = [c for c in checks if (c.open_connections or 0) > c.expected]
    assert crossed and {c.expected for c in crossed} - {1}
    assert all(c.usable_connections == c.expected for c in crossed)
    # With MCTor every usable connection carries circuits.
    assert all(sum(n > 0 for n in c.circuits) >= c.expected for c in checks if c.expected > 1)


def test_streams_ride_n_circuits(spec: Spec, tables) -> None:  # type: ignore[no-untyped-def]
    transfers, _, _, circuits = tables
    expected = {
        v.name: v.expect.get("mctor_circuits") or v.expect.get("mctor_connections")
        for v in spec.variants
    }
    used = stream_circuits(circuits, _paths(spec, transfers), expected)  # type: ignore[arg-type]
    assert used and all(u.ok is not False for u in used), [u for u in used if u.ok is False]
    assert all(u.streams > 50 for u in used)
    # The control keeps its 3 circuits apart from its one connection.
    control = [u for u in used if u.variant in ("onelink-n3-uniform", "busy-onelink-n3-uniform")]
    assert len(control) == 4 and all(u.circuits >= 3 for u in control)
    # Nearly every stream rides the N busiest circuits: a circuit replaced
    # early (n5, seed 2: one that shared a connection, for one built on the
    # fifth) carried a handful.
    assert all(u.beyond <= 0.05 * u.streams for u in used), [
        u for u in used if u.beyond > 0.05 * u.streams
    ]
    assert any(u.circuits > u.expected for u in used)


def test_stream_circuits_sit_on_n_distinct_connections_at_every_hop(  # type: ignore[no-untyped-def]
    spec: Spec, tables
) -> None:
    transfers, _, placements, circuits = tables
    expected = {v.name: v.expect.get("mctor_connections") for v in spec.variants}
    spread = circuit_spread(placements, circuits, _paths(spec, transfers), expected)  # type: ignore[arg-type]
    # Every measured client's 3 hops are followed, in every run.
    measured = {(s.variant, s.seed, s.client) for s in spread}
    assert len(spread) == 3 * len(measured)
    assert all(s.ok for s in spread), [s for s in spread if not s.ok]
    by_variant: dict[str, set[int]] = {}
    for s in spread:
        by_variant.setdefault(s.variant, set()).add(s.connections)
    assert by_variant["n3-uniform"] == {3}
    assert by_variant["n5-uniform"] == {5}
    assert by_variant["onelink-n3-uniform"] == {1}
    assert by_variant["busy-onelink-n3-uniform"] == {1}


def test_every_run_completes_rounds_of_every_phase(spec: Spec, tables) -> None:  # type: ignore[no-untyped-def]
    transfers, served, _, _ = tables
    phases = class_phases(spec)
    all_rounds = rounds(transfers, served, phases)
    complete = Counter((r.variant, r.seed, r.host, r.phase) for r in all_rounds if r.complete)
    for (variant, seed, host), _path in _paths(spec, transfers).items():
        for phase in ("video", "upload", "download"):
            assert complete[(variant, seed, host, phase)] >= 2, (variant, seed, host, phase)
    # Uploads end at the server, after the client started them.
    uploads = [r for r in all_rounds if r.phase == "upload" and r.completion is not None]
    assert uploads and all(r.completion > 0 for r in uploads)


def test_fairness_gaps_only_where_two_users_share_the_path(spec: Spec, tables) -> None:  # type: ignore[no-untyped-def]
    transfers, served, _, _ = tables
    phases = class_phases(spec)
    variants = [v.name for v in spec.variants]
    gaps = fairness_gaps(rounds(transfers, served, phases), variants)
    assert {g.variant for g in gaps} == {v for v in variants if v.startswith("fair-")}
    assert all(0 <= g.gap.mean < 1 and g.gap.n == len(spec.seeds) for g in gaps)


def test_the_plan_prices_round_hypotheses_from_their_rounds(
    spec: Spec, tables, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """`runner plan` reads the rounds the hypotheses are about (it once
    passed none, and planned every round hypothesis as n/a)."""
    transfers = tables[0]
    layout = Layout(tmp_path, spec.name)
    layout.experiment_dir.mkdir(parents=True)
    _table("served.csv", tmp_path).rename(layout.table_csv("served"))
    assert hypothesis_rounds(spec, layout, transfers)
    plan = make_plan(spec, layout, transfers, [], [])
    round_hypotheses = [h.name for h in spec.hypotheses if h.metric == "round_completion"]
    assert round_hypotheses
    assert set(plan.spreads) >= set(round_hypotheses)
