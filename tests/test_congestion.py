"""The congestion experiment's measurements: hop feedback logs (cut from a
real run with tor-patches/0005), windows and scenarios of variants,
downloads and rates per class, and the mechanism's totals and checks."""

import math
from pathlib import Path

import pytest

from runner.experiments.congestion.hop_feedback_log import last_totals, parse_line
from runner.experiments.congestion.hop_window_log import last_totals as hop_window_last_totals
from runner.experiments.congestion.hop_window_log import parse_line as hop_window_parse_line
from runner.experiments.congestion.mechanisms import (
    FIXED,
    MARUT,
    MARUT_REMOTE,
    VEGAS,
    class_results,
    connection_sharing,
    estimate_of,
    hop_window_failures,
    hop_window_runs,
    is_congestion_experiment,
    is_n23,
    mechanism_failures,
    mechanism_of,
    mechanism_totals,
    n23_failures,
    n23_runs,
    pctcp_failures,
    rate_ratios,
    scenario_of,
    window_of,
)
from runner.experiments.congestion.n23_log import N23Totals
from runner.experiments.congestion.n23_log import last_totals as n23_last_totals
from runner.experiments.congestion.n23_log import parse_line as n23_parse_line
from runner.experiments.congestion.tables import (
    HOP_FEEDBACK,
    HOP_WINDOW,
    N23,
    HopFeedbackRow,
    HopWindowRow,
    N23Row,
)
from runner.experiments.mctor.tables import PlacementRow
from runner.layout import SHADOW_DATA
from runner.logs.run_logs import RunLogs
from runner.manifest import RunRecord
from runner.spec.model import Variant
from runner.tables.schema import TransferRow
from tests.conftest import FIXTURES


def _variant(name: str, **consensus: int) -> Variant:
    """A variant as a scenario x mechanism matrix names it (or a plain one)."""
    scenario, _, mechanism = name.rpartition("-")
    factors = {"scenario": scenario, "mechanism": mechanism} if scenario else {}
    return Variant(name=name, tor="patched", torrc={}, consensus=consensus, factors=factors)


def test_the_exit_log_ends_with_the_runs_totals() -> None:
    with (FIXTURES / "tor-hop-feedback-exit.stdout").open() as lines:
        totals = last_totals(lines)
    assert totals is not None
    # A 4-hop run: the exit, the sending end, receives at position 4.
    assert (totals.delivered, totals.decisions, totals.with_feedback) == (2734, 2734, 2734)
    assert totals.feedback_larger == 97
    assert totals.received == (0, 0, 0, 2734, 0, 0, 0, 0)
    assert totals.forwarded == (0,) * 8
    assert totals.larger_at == (5, 7, 68, 17, 0, 0, 0, 0)
    assert sum(totals.larger_at) == totals.feedback_larger


def test_a_middle_forwards_what_it_receives() -> None:
    with (FIXTURES / "tor-hop-feedback-middle.stdout").open() as lines:
        totals = last_totals(lines)
    assert totals is not None
    assert totals.received == totals.forwarded == (3, 2969, 349, 0, 0, 0, 0, 0)
    assert totals.originated == totals.delivered == totals.decisions == 0


def test_other_lines_are_not_totals() -> None:
    assert parse_line("Jan 01 00:05:59.064 [notice] Bootstrapped 100% (done): Done") is None
    # A truncated line is not mistaken for totals.
    assert parse_line("[notice] Hop feedback totals: originated 4; delivered 2") is None
    assert last_totals(["no totals here\n"]) is None


def test_collect_takes_each_hosts_last_totals(tmp_path: Path) -> None:
    hosts = tmp_path / SHADOW_DATA / "hosts"
    for host, fixture in (("relay1exit", "exit"), ("relay11middle", "middle")):
        (hosts / host).mkdir(parents=True)
        (hosts / host / "tor.1000.stdout").write_bytes(
            (FIXTURES / f"tor-hop-feedback-{fixture}.stdout").read_bytes()
        )
    (hosts / "server1exit").mkdir()
    manifest = {
        "variant": "hop4-marut",
        "seed": 1,
        "hosts": {
            "relay1exit": {"role": "exit"},
            "relay11middle": {"role": "middle"},
            "server1exit": {"role": "server"},
        },
    }
    rows = list(HOP_FEEDBACK.rows(RunLogs(tmp_path, RunRecord(manifest))))
    assert [r.host for r in rows] == ["relay11middle", "relay1exit"]
    HOP_FEEDBACK.write(tmp_path, rows)
    back = HOP_FEEDBACK.read(tmp_path / "hop_feedback.csv")
    assert back[1].received == (0, 0, 0, 2734, 0, 0, 0, 0)
    assert back[1].role == "exit" and back[0].forwarded[1] == 2969


def test_windows_and_scenarios_come_from_the_variant() -> None:
    fixed = _variant("tree-fixed", cc_alg=0)
    vegas = _variant("tree-vegas", cc_alg=2)
    marut = _variant("hop4-marut", cc_alg=2, cc_hop_feedback=1)
    assert [window_of(v) for v in (fixed, vegas, marut)] == [FIXED, VEGAS, MARUT]
    assert [scenario_of(v) for v in (fixed, vegas, marut)] == ["tree", "tree", "hop4"]
    assert scenario_of(_variant("plain")) == "plain"
    # The factor's level, not the name, says which.
    renamed = Variant(
        name="tree-fixed", tor="patched", torrc={}, consensus={}, factors={"scenario": "hop3"}
    )
    assert scenario_of(renamed) == "hop3"
    assert is_congestion_experiment([fixed, marut])
    assert not is_congestion_experiment([fixed, vegas])
    pctcp = Variant(
        name="tree-pctcp",
        tor="patched",
        torrc={"all": ("MCTorConnections 1", "MCTorPerCircuit 1")},
        consensus={"cc_alg": 0},
        factors={"scenario": "tree", "mechanism": "pctcp"},
    )
    assert (scenario_of(pctcp), mechanism_of(pctcp)) == ("tree", "fixed window + PCTCP")
    assert mechanism_of(fixed) == FIXED


def _placed(variant: str, seed: int, *circuits: int) -> PlacementRow:
    return PlacementRow(variant, seed, "relay4guard", "relay8middle", 1.0, 7, 3, 3, circuits)


def test_pctcp_checks_need_a_connection_per_circuit_exactly_where_it_is_on() -> None:
    pctcp = Variant(
        name="tree-pctcp", tor="patched", torrc={"all": ("MCTorPerCircuit 1",)}, consensus={}
    )
    fixed = _variant("tree-fixed", cc_alg=0)
    placements = [
        _placed("tree-pctcp", 1, 1, 1, 0),
        _placed("tree-pctcp", 1, 1, 1, 1),
        _placed("tree-pctcp", 2, 1, 2, 1),  # two circuits on one connection
        _placed("tree-fixed", 1, 3),
        _placed("tree-fixed", 2, 1),  # never shared
    ]
    sharing = connection_sharing(placements)
    assert [(s.variant, s.seed, s.placements, s.shared, s.most) for s in sharing] == [
        ("tree-fixed", 1, 1, 1, 3),
        ("tree-fixed", 2, 1, 0, 1),
        ("tree-pctcp", 1, 2, 0, 1),
        ("tree-pctcp", 2, 1, 1, 2),
    ]
    runs = {("tree-pctcp", 1), ("tree-pctcp", 2), ("tree-pctcp", 3), ("tree-fixed", 1)}
    runs |= {("tree-fixed", 2)}
    assert [str(f) for f in pctcp_failures(sharing, [pctcp, fixed], runs)] == [
        "tree-pctcp/seed-2: PCTCP on, but 1 of 1 placements found a connection carrying 2 circuits",
        "tree-pctcp/seed-3: PCTCP on, no placement logged",
        "tree-fixed/seed-2: PCTCP off, but no connection ever carried two circuits",
    ]


def _download(variant: str, seed: int, cls: str, ttlb: float | None) -> TransferRow:
    return TransferRow(
        variant=variant,
        seed=seed,
        host="perfclient1exit",
        cls=cls,
        measured=True,
        size=1_000_000,
        start=0.0,
        ttfb=0.1 if ttlb else None,
        ttlb=ttlb,
        success=ttlb is not None,
        error="" if ttlb else "STALLOUT",
    )


def test_downloads_and_rates_per_class_over_seeds() -> None:
    rows = [
        _download("v", 1, "bulk", 1.0),  # 8 Mbit/s
        _download("v", 1, "bulk", 2.0),  # 4 Mbit/s
        _download("v", 2, "bulk", 4.0),  # 2 Mbit/s
        _download("v", 2, "bulk", None),  # failed: not a completed download
        _download("v", 1, "web", 8.0),
    ]
    results = {r.cls: r for r in class_results(rows, ["v"], [1, 2])}
    bulk = results["bulk"]
    assert bulk.seeds == 2 and bulk.failed == 1
    assert bulk.completed.mean == pytest.approx(1.5)  # 2 and 1 per run
    assert bulk.rate_mbit.mean == pytest.approx((6.0 + 2.0) / 2)
    assert bulk.rate_mbit.low is not None and bulk.rate_mbit.low < 4.0 < bulk.rate_mbit.high
    assert results["web"].seeds == 1 and results["web"].completed.low is None


MODELS = {"web": "web", "bulk": "bulk", "allbulk": "bulk", "moreweb": "web"}


def test_the_web_bulk_rate_ratio_is_a_ratio_per_seed_then_their_geometric_mean() -> None:
    rows = [
        _download("v", 1, "web", 1.0),  # 8 Mbit/s
        _download("v", 1, "bulk", 2.0),  # 4 Mbit/s: 2 in seed 1
        _download("v", 2, "web", 4.0),  # 2 Mbit/s
        _download("v", 2, "bulk", 1.0),  # 8 Mbit/s: 0.25 in seed 2
        _download("v", 3, "web", 1.0),
        _download("v", 3, "bulk", None),  # no bulk download completed: seed left out
        _download("bulkonly", 1, "allbulk", 1.0),
        _download("twoweb", 1, "web", 1.0),
        _download("twoweb", 1, "moreweb", 1.0),
        _download("twoweb", 1, "bulk", 1.0),
    ]
    found = rate_ratios(rows, ["v", "bulkonly", "twoweb"], [1, 2, 3], MODELS)
    ratios = {r.variant: r for r in found}
    v = ratios["v"]
    assert (v.web, v.bulk, v.seeds) == ("web", "bulk", 2)
    # sqrt(2 x 0.25), not the arithmetic mean's 1.125.
    assert v.ratio.mean == pytest.approx(math.sqrt(0.5))
    assert v.ratio.low is not None and v.ratio.high is not None
    assert 0 < v.ratio.low < v.ratio.mean < v.ratio.high
    assert not v.ratio.signed and v.ratio.format(1, "", 2).startswith("0.71 [")
    # Without exactly one web and one bulk class there is no ratio.
    for name in ("bulkonly", "twoweb"):
        none = ratios[name]
        assert (none.web, none.bulk, none.seeds) == (None, None, 0)
        assert math.isnan(none.ratio.mean) and none.ratio.format() == "n/a"


def test_a_ratio_and_its_inverse_average_to_one_over_seeds() -> None:
    from runner.analyses.stats import ratio_ci

    even = ratio_ci([2.0, 0.5])
    assert even.mean == pytest.approx(1.0) and even.n == 2
    assert ratio_ci([3.0]).mean == pytest.approx(3.0) and ratio_ci([3.0]).low is None
    assert math.isnan(ratio_ci([]).mean)


def _hop_row(variant: str, seed: int, host: str, **counts: object) -> HopFeedbackRow:
    base: dict[str, object] = {
        "originated": 0,
        "delivered": 0,
        "dropped": 0,
        "decisions": 0,
        "with_feedback": 0,
        "feedback_larger": 0,
        "received": (),
        "forwarded": (),
        "larger_at": (),
    }
    base.update(counts)
    return HopFeedbackRow(variant=variant, seed=seed, host=host, role="", **base)  # type: ignore[arg-type]


def test_mechanism_totals_add_positions_over_tors() -> None:
    rows = [
        _hop_row("m", 1, "client", originated=10),
        _hop_row("m", 1, "guard", received=(10, 0, 0), forwarded=(10, 0, 0)),
        _hop_row("m", 1, "middle", received=(0, 10), forwarded=(0, 9)),
        _hop_row(
            "m",
            2,
            "exit",
            received=(0, 0, 9),
            delivered=9,
            decisions=6,
            with_feedback=4,
            feedback_larger=1,
            larger_at=(0, 1, 0),
        ),
    ]
    totals = {t.variant: t for t in mechanism_totals(rows, ["m", "v"])}
    m = totals["m"]
    assert m.runs == 2 and m.originated == 10
    assert m.received == (10, 10, 9) and m.forwarded == (10, 9, 0)
    assert m.larger_share == pytest.approx(0.25)
    assert totals["v"].runs == 0 and totals["v"].received == ()


def test_mechanism_checks_need_feedback_exactly_where_it_is_on() -> None:
    marut = _variant("hop3-marut", cc_alg=2, cc_hop_feedback=1)
    vegas = _variant("hop3-vegas", cc_alg=2)
    runs = {("hop3-marut", 1), ("hop3-marut", 2), ("hop3-vegas", 1)}
    rows = [
        _hop_row("hop3-marut", 1, "relay1exit", delivered=5, with_feedback=3),
        _hop_row("hop3-marut", 2, "relay1exit", delivered=5, with_feedback=0),
        _hop_row("hop3-vegas", 1, "perfclient1exit", originated=2),
    ]
    failures = mechanism_failures(rows, [marut, vegas], runs)
    assert len(failures) == 2
    assert str(failures[0]).startswith("hop3-marut/seed-2: hop feedback on")
    assert str(failures[1]).startswith("hop3-vegas/seed-1: hop feedback off, but 2")
    assert {(f.run, f.check) for f in failures} == {
        (("hop3-marut", 2), "hop-feedback"),
        (("hop3-vegas", 1), "hop-feedback"),
    }
    assert mechanism_failures(rows[:1], [marut], {("hop3-marut", 1)}) == []


def _n23_row(variant: str, seed: int, host: str, sent: int, received: int) -> N23Row:
    return N23Row(variant, seed, host, "guard", sent, received, 0, 1, 100, 10)


def test_n23_runs_and_checks_need_credit_exactly_where_it_is_on() -> None:
    n23 = _variant("tree-n23", cc_alg=0, n23=1)
    fixed = _variant("tree-fixed", cc_alg=0)
    assert is_n23(n23) and not is_n23(fixed)
    assert (scenario_of(n23), mechanism_of(n23)) == ("tree", "no end-to-end window + N23")
    kept = _variant("tree-n23e2e", cc_alg=0, n23=1, hop_flow_e2e_window=1)
    assert mechanism_of(kept) == "fixed window + N23"
    assert estimate_of(n23).startswith("per hop only")
    assert is_congestion_experiment([fixed, n23])
    rows = [
        _n23_row("tree-n23", 1, "relay4guard", 5, 4),
        _n23_row("tree-n23", 1, "relay8middle", 7, 6),
        _n23_row("tree-n23", 2, "relay4guard", 3, 0),  # credit sent, none taken
        _n23_row("tree-fixed", 1, "relay4guard", 2, 2),  # N23 off, yet credit
    ]
    runs = n23_runs(rows)
    assert [(r.variant, r.seed, r.tors, r.credit_sent, r.credit_received) for r in runs] == [
        ("tree-fixed", 1, 1, 2, 2),
        ("tree-n23", 1, 2, 12, 10),
        ("tree-n23", 2, 1, 3, 0),
    ]
    assert runs[1].cells_sent == 200 and runs[1].stalls == 2
    complete = {("tree-n23", 1), ("tree-n23", 2), ("tree-n23", 3), ("tree-fixed", 1)}
    assert [str(f) for f in n23_failures(runs, [n23, fixed], complete)] == [
        "tree-n23/seed-2: N23 on, but 3 credit cells were sent and 0 taken",
        "tree-n23/seed-3: N23 on, but 0 credit cells were sent and 0 taken",
        "tree-fixed/seed-1: N23 off, but 2 credit cells were sent",
    ]
    assert n23_failures(runs[1:2], [n23], {("tree-n23", 1)}) == []


def test_the_n23_middle_log_ends_with_the_runs_totals() -> None:
    with (FIXTURES / "tor-n23-middle.stdout").open() as lines:
        totals = n23_last_totals(lines)
    assert totals == N23Totals(2339, 2328, 0, 114, 47225, 2613)
    # The shared middle of the tree returns N2 = 20 credits per cell for the
    # cells it forwards: its credit cells cover nearly every relay cell.
    assert totals.credit_sent * 20 <= totals.cells_sent < (totals.credit_sent + 50) * 20
    assert n23_parse_line("[notice] N23 totals: credit cells sent 4; received 2") is None


def test_the_hop_window_exit_log_ends_with_the_runs_totals() -> None:
    with (FIXTURES / "tor-hop-window-exit.stdout").open() as lines:
        totals = hop_window_last_totals(lines)
    assert totals is not None
    assert (totals.feedback_received, totals.decisions, totals.remote_larger) == (6500, 3179, 2477)
    assert (totals.increases, totals.decreases) == (86, 390)
    assert totals.mean_window == pytest.approx(25018 / 3179)
    assert hop_window_parse_line("[notice] Hop window totals: feedback cells sent 1") is None


def test_the_backtap_exit_log_gives_entries_and_the_cells_that_packed_them() -> None:
    # The exit of congestion-small's single scenario under BackTap
    # (tor-patches/0007 as its design describes it): one circuit, so about
    # one entry per feedback cell.
    with (FIXTURES / "tor-backtap-exit.stdout").open() as lines:
        totals = hop_window_last_totals(lines)
    assert totals is not None
    assert (totals.feedback_sent, totals.feedback_received, totals.feedback_dropped) == (
        307,
        17273,
        0,
    )
    assert (totals.feedback_cells_sent, totals.feedback_cells_received) == (264, 17187)
    assert (totals.feedback_unsent, totals.feedback_cells_dropped) == (0, 0)
    assert (totals.stalls, totals.cells_sent, totals.decisions) == (15160, 99911, 926)
    assert totals.entries_per_cell == pytest.approx(307 / 264)
    # A line of the first form reads as one entry per cell.
    first = hop_window_parse_line(
        "[notice] Hop window totals: feedback cells sent 5; received 4; dropped 1; "
        "stalls 0; relay cells sent 9; before feedback 2; decisions 3; increases 1; "
        "decreases 1; remote larger 0; window sum 96"
    )
    assert first is not None
    assert (first.feedback_sent, first.feedback_cells_sent, first.feedback_unsent) == (5, 5, 0)
    assert (first.feedback_dropped, first.feedback_cells_dropped) == (1, 0)


def test_collect_takes_each_hosts_last_n23_and_hop_window_totals(tmp_path: Path) -> None:
    hosts = tmp_path / SHADOW_DATA / "hosts"
    for host, fixture in (("relay8middle", "n23-middle"), ("relay2exit", "hop-window-exit")):
        (hosts / host).mkdir(parents=True)
        (hosts / host / "tor.1000.stdout").write_bytes(
            (FIXTURES / f"tor-{fixture}.stdout").read_bytes()
        )
    manifest = {
        "variant": "tree-maruthop",
        "seed": 1,
        "hosts": {"relay8middle": {"role": "middle"}, "relay2exit": {"role": "exit"}},
    }
    logs = RunLogs(tmp_path, RunRecord(manifest))
    N23.write(tmp_path, list(N23.rows(logs)))
    HOP_WINDOW.write(tmp_path, list(HOP_WINDOW.rows(logs)))
    (n23,) = N23.read(tmp_path / "n23.csv")
    assert (n23.host, n23.role, n23.credit_sent) == ("relay8middle", "middle", 2339)
    (window,) = HOP_WINDOW.read(tmp_path / "hop_window.csv")
    assert (window.host, window.remote_larger, window.seed) == ("relay2exit", 2477, 1)


def test_hop_window_checks_need_reports_exactly_where_it_is_on() -> None:
    backtap = _variant("tree-backtap", cc_alg=0, hop_window=1)
    marut = _variant("tree-maruthopremote", cc_alg=0, hop_window=1, hop_window_marut=2)
    fixed = _variant("tree-fixed", cc_alg=0)
    assert mechanism_of(backtap) == "no end-to-end window + hop window"
    assert mechanism_of(marut) == "no end-to-end window + hop window + Marut (remote hops)"
    assert scenario_of(marut) == "tree"
    assert "c_diff carried up from the next hops" in estimate_of(marut)
    assert "middles hold no window" in estimate_of(marut)
    assert window_of(_variant("hop3-marutremote", cc_alg=2, cc_hop_feedback=2)) == MARUT_REMOTE

    def row(variant: str, seed: int, sent: int, received: int, decisions: int) -> HopWindowRow:
        return HopWindowRow(
            variant=variant, seed=seed, host="relay1exit", role="exit",
            feedback_sent=sent, feedback_received=received, feedback_dropped=0, stalls=0,
            cells_sent=10, cells_before_feedback=1, decisions=decisions, increases=0,
            decreases=0, remote_larger=0, window_sum=32 * decisions,
        )  # fmt: skip

    rows = [
        row("tree-backtap", 1, 4, 5, 2),
        row("tree-backtap", 1, 1, 1, 1),
        row("tree-backtap", 2, 4, 5, 0),  # reports, no decision
        row("tree-fixed", 1, 3, 0, 0),  # off, yet reports sent
    ]
    runs = hop_window_runs(rows)
    assert [(r.variant, r.seed, r.tors, r.feedback_received, r.decisions) for r in runs] == [
        ("tree-backtap", 1, 2, 6, 3),
        ("tree-backtap", 2, 1, 5, 0),
        ("tree-fixed", 1, 1, 0, 0),
    ]
    assert runs[0].mean_window == 32
    complete = {("tree-backtap", 1), ("tree-backtap", 2), ("tree-fixed", 1)}
    assert [str(f) for f in hop_window_failures(runs, [backtap, fixed], complete)] == [
        "tree-backtap/seed-2: hop window on, but 5 feedback entries were taken and "
        "0 windows decided",
        "tree-fixed/seed-1: hop window off, but 3 feedback entries were sent",
    ]
