"""The congestion experiment's tables and report, checked on the collected
tables of a real run.

The fixtures are `make experiment EXP=congestion-small`'s transfers, hop
feedback, N23 and hop window totals, relay load and the circuit placements
of the tree's shared middle, relay8middle (Shadow 3.3.0, tor 0.4.9.11 with
tor-patches), gzipped, beside the spec they ran (spec.yaml).
"""

from collections.abc import Callable
from pathlib import Path

import pytest

from runner.analyses.inputs import Inputs
from runner.analyses.load import load_failures, run_loads
from runner.experiments.congestion.compute import congestion_result
from runner.experiments.congestion.mechanisms import (
    MARUT,
    MARUT_REMOTE,
    class_results,
    connection_sharing,
    hop_window_failures,
    hop_window_of,
    hop_window_runs,
    is_n23,
    is_pctcp,
    mechanism_failures,
    mechanism_totals,
    n23_failures,
    n23_runs,
    pctcp_failures,
    window_of,
)
from runner.experiments.congestion.report import congestion_sections
from runner.experiments.congestion.tables import HOP_FEEDBACK, HOP_WINDOW, N23, HopFeedbackRow
from runner.experiments.mctor.tables import PLACEMENTS
from runner.layout import Layout
from runner.spec.model import Spec, Variant
from runner.tables.schema import RELAY_LOAD, TRANSFERS, TransferRow
from tests.conftest import FIXTURES, fixture_spec, gunzip_fixture

TABLES = FIXTURES / "congestion-small"


@pytest.fixture(scope="module")
def spec() -> Spec:
    return fixture_spec("congestion-small")


def runs_of(
    spec: Spec, switched_on: Callable[[Variant], object] = lambda _: True
) -> set[tuple[str, int]]:
    """(variant, seed) of every run of the variants ``switched_on`` picks
    (all of them by default)."""
    return {(v.name, seed) for v in spec.variants if switched_on(v) for seed in spec.seeds}


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    root = tmp_path_factory.mktemp("results")
    layout = Layout(root, "congestion-small")
    layout.experiment_dir.mkdir()
    for name in (
        "transfers.csv",
        "hop_feedback.csv",
        "n23.csv",
        "hop_window.csv",
        "placements.csv",
        "relay_load.csv",
    ):
        gunzip_fixture(TABLES / f"{name}.gz", layout.experiment_dir)
    return layout


@pytest.fixture(scope="module")
def transfers(layout: Layout) -> list[TransferRow]:
    return TRANSFERS.read(layout.transfers_csv)


@pytest.fixture(scope="module")
def hop_rows(layout: Layout) -> list[HopFeedbackRow]:
    return HOP_FEEDBACK.read_from(layout)


def test_every_variant_and_class_has_results_over_both_seeds(
    spec: Spec, transfers: list[TransferRow]
) -> None:
    results = class_results(transfers, [v.name for v in spec.variants], list(spec.seeds))
    by_name = {v.name: v for v in spec.variants}
    by_variant: dict[str, set[str]] = {}
    for r in results:
        by_variant.setdefault(r.variant, set()).add(r.cls)
        assert r.completed.mean > 0 and r.rate_mbit.mean > 0
        if hop_window_of(by_name[r.variant]) and "bulk" in r.cls:
            # Under hop windows a scenario's bulk clients finished no 5 MiB
            # download in some seeds: the class has results from fewer.
            assert r.seeds >= 1
        else:
            assert r.seeds == 2
            assert r.completed.low is not None and r.completed.high is not None
    assert len(by_variant) == 54
    assert by_variant["hop3-vegas"] == {"web", "bulk"}
    assert by_variant["hop4-pctcp"] == {"web", "bulk"}
    assert by_variant["allbulk-fixed"] == {"allbulk"}
    assert by_variant["tree-marut"] == {"treeweb", "treebulk"}
    assert by_variant["hop4-n23"] == by_variant["hop3-maruthopremote"] == {"web", "bulk"}
    assert by_variant["more4-backtap"] == by_variant["more3-pctcp"] == {"moreweb", "morebulk"}


def test_feedback_flows_from_the_clients_through_each_hop_to_the_exits(
    spec: Spec, hop_rows: list[HopFeedbackRow]
) -> None:
    by_name = {v.name: v for v in spec.variants}
    logged = {r.variant for r in hop_rows}
    assert logged == {v.name for v in spec.variants if window_of(v) in (MARUT, MARUT_REMOTE)}
    for t in mechanism_totals(hop_rows, sorted(logged)):
        length = 4 if t.variant.startswith(("hop4", "more4")) else 3
        assert t.runs == 2 and t.dropped == 0
        # Guards and middles forward what they receive; the exits, at the
        # circuit's last position, receive what they are delivered.
        assert t.forwarded[: length - 1] == t.received[: length - 1]
        assert t.received[length - 1] == t.delivered
        assert t.forwarded[length - 1] == 0
        # Nearly every cell a client originates reaches its exit; the few
        # the exits originate (uploads) go the other way.
        assert 0.99 * t.originated <= t.delivered <= t.originated
        assert t.with_feedback <= t.decisions
        assert sum(t.larger_at) == t.feedback_larger <= t.with_feedback
        if window_of(by_name[t.variant]) == MARUT_REMOTE:
            # The exit's own queue is left out: it never supplies the largest.
            assert by_name[t.variant].consensus["cc_hop_feedback"] == 2
            assert t.larger_at[length - 1] == 0 and t.feedback_larger > 0
        else:
            assert by_name[t.variant].consensus["cc_hop_feedback"] == 1


def test_the_report_section_has_the_table_plots_and_passing_checks(
    spec: Spec, layout: Layout, transfers: list[TransferRow], tmp_path: Path
) -> None:
    runs = runs_of(spec)
    inp = Inputs(spec, layout, transfers, [], {run: [] for run in runs})
    result = congestion_result(inp)
    assert result.failures == []
    section = congestion_sections(result, inp, tmp_path)
    lines, plots = section.lines, section.plots
    text = "\n".join(lines)
    assert "## Congestion control" in text and "### Hop feedback" in text
    assert "at work in every run that switches it on, absent elsewhere (108 runs)" in text
    assert sum(line.startswith("| tree |") for line in lines) == 18
    # Each variant's web / bulk rate ratio: n/a where it runs no web class.
    header = lines.index(
        "| variant | mechanism | decides with | seeds | web / bulk rate (geometric mean) |"
    )
    table = lines[header + 2 : lines.index("", header)]
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in table}
    assert len(rows) == len(spec.variants)
    assert rows["allbulk-fixed"][-2:] == ["", "n/a |"]
    assert rows["tree-fixed"][-2] == "2" and rows["tree-fixed"][-1].endswith("] |")
    by_variant = {r.variant: r for r in result.rate_ratios}
    assert (by_variant["tree-fixed"].web, by_variant["tree-fixed"].bulk) == ("treeweb", "treebulk")
    assert (by_variant["more3-n23"].web, by_variant["more3-n23"].bulk) == ("moreweb", "morebulk")
    assert "N23 checks: credit returned and taken in every run" in text
    assert "Hop window checks: feedback taken and windows decided in every run" in text
    assert "### Connections per circuit (PCTCP)" in text and "PCTCP checks: a connection" in text
    # One TTFB and one TTLB ECDF per scenario and class.
    assert len(plots) == 2 * (2 + 2 + 2 + 2 + 1 + 2) and all(p.is_file() for p in plots)

    # Runs whose tors logged no hop feedback fail the check.
    seed_one = [r for r in HOP_FEEDBACK.read_from(layout) if r.seed == 1]
    missing = mechanism_failures(seed_one, spec.variants, runs)
    assert sorted(f.run for f in missing) == [
        (f"{s}-{m}", 2)
        for s in ("allbulk", "hop3", "hop4", "more3", "more4", "tree")
        for m in ("marut", "marutremote")
    ]


def test_pctcp_gives_every_circuit_a_connection_at_the_shared_middle(
    spec: Spec, layout: Layout
) -> None:
    placements = PLACEMENTS.read_from(layout)
    sharing = {(s.variant, s.seed): s for s in connection_sharing(placements)}
    by_name = {v.name: v for v in spec.variants}
    assert len(sharing) == 108
    for (variant, _), s in sharing.items():
        assert s.placements > 0
        if is_pctcp(by_name[variant]):
            assert s.shared == 0 and s.most == 1
        else:
            # Stock tor: tens of circuits share a connection to one relay.
            assert s.shared > s.placements / 2 and s.most >= 10
    runs = runs_of(spec)
    assert pctcp_failures(list(sharing.values()), spec.variants, runs) == []
    # Without its placements a PCTCP run fails the check.
    missing = [s for s in sharing.values() if s.variant != "tree-pctcp"]
    assert [str(f) for f in pctcp_failures(missing, spec.variants, runs)] == [
        "tree-pctcp/seed-1: PCTCP on, no placement logged",
        "tree-pctcp/seed-2: PCTCP on, no placement logged",
    ]


def test_queues_build_at_the_middles_in_every_run(spec: Spec, layout: Layout) -> None:
    runs = run_loads(RELAY_LOAD.read_from(layout))
    middles = [r for r in runs if r.role == "middle"]
    assert len(middles) == 108
    by_name = {v.name: v for v in spec.variants}
    # The check holds under the references (fixed window and Vegas), and
    # they pass it: the network queues at its middles in every scenario.
    scope = spec.checks.load_variants
    assert len(scope) == 12 and all(not hop_window_of(by_name[v]) for v in scope)
    assert load_failures(runs, spec.checks.load, scope) == []
    # Held to every variant, it fails only runs of hop windows, which leave
    # the middles half idle or more (the finding of this run); every other
    # variant queues at its busiest middle.
    failures = load_failures(runs, spec.checks.load)
    failed = {f.variant for f in failures}
    assert failed and all(hop_window_of(by_name[v]) for v in failed)
    others = [r for r in middles if not hop_window_of(by_name[r.variant])]
    assert len(others) == 72 and min(r.busiest for r in others) >= 0.55
    # The tree's one shared middle carries it: the others idle.
    tree = [r for r in others if r.variant.startswith("tree-")]
    assert all(r.busiest > 0.75 and r.mean < 0.25 for r in tree)


def test_n23_credit_crosses_the_hops_exactly_where_it_is_on(spec: Spec, layout: Layout) -> None:
    runs = n23_runs(N23.read_from(layout))
    by_name = {v.name: v for v in spec.variants}
    assert {(r.variant, r.seed) for r in runs} == runs_of(spec, is_n23)
    for r in runs:
        assert r.credit_sent > 0 and r.credit_received > 0
        # Credit for circuits that closed on the way is dropped: a few per
        # hundred at most.
        assert r.credit_dropped < 0.05 * r.credit_received
        # Hops held circuits for lack of credit.
        assert r.stalls > 0
        assert is_n23(by_name[r.variant])
    complete = runs_of(spec)
    assert n23_failures(runs, spec.variants, complete) == []


def test_hop_windows_react_exactly_where_they_are_on(spec: Spec, layout: Layout) -> None:
    rows = HOP_WINDOW.read_from(layout)
    runs = hop_window_runs(rows)
    by_name = {v.name: v for v in spec.variants}
    assert {(r.variant, r.seed) for r in runs} == runs_of(spec, hop_window_of)
    for r in runs:
        assert r.feedback_received > 0 and r.decisions > 0
        assert r.feedback_dropped < 0.05 * r.feedback_received
        # Windows both grew and shrank.
        assert r.increases > 0 and r.decreases > 0
        marut = hop_window_of(by_name[r.variant]) != "hop window"
        # Only the sources under Marut take the next hops' estimate.
        assert (r.remote_larger > 0) == marut
    # In the tree the exits send into the shared middle: their windows shrank.
    for variant in ("tree-backtap", "tree-maruthop", "tree-maruthopremote"):
        exits = [r for r in rows if r.variant == variant and r.role == "exit"]
        assert sum(r.decreases for r in exits) > 0
    complete = runs_of(spec)
    assert hop_window_failures(runs, spec.variants, complete) == []
