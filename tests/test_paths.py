"""The path check (runner.analyses.paths), the circuits' paths it reads,
and the consensus check that every relay has the flags its role needs."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.inputs import Inputs
from runner.analyses.paths import (
    PositionShare,
    byte_shares,
    circuit_shares,
    path_failures,
    paths_result,
)
from runner.experiments.conflux.consensus import (
    consensus_summaries,
    flag_failures,
    needed_flags,
)
from runner.experiments.conflux.consensus_report import relays_section
from runner.logs.oniontrace import parse_lines as parse_oniontrace
from runner.tables.schema import RELAYS, CircuitRow, RelayLoad, RelayRow
from tests.conftest import FIXTURES, fixture_results


def _circuit(variant: str, host: str, path: tuple[str, ...], streams: int = 1) -> CircuitRow:
    return CircuitRow(
        variant,
        1,
        host,
        "perf",
        "1",
        "BUILT",
        1.0,
        0.1,
        "GENERAL",
        "",
        path[0],
        streams,
        3,
        "",
        path,
    )


def _load(variant: str, relay: str, role: str, read: int) -> RelayLoad:
    return RelayLoad(variant, 1, relay, role, 0.1, 0.2, 1000, 60, read, read)


def test_the_committed_pilot_fixture_fails_the_path_check(tmp_path: Path) -> None:
    # The pilot ran under Shadow when middles never got Stable: every Conflux
    # leg ran guard -> guard -> exit, so its middles read nothing.
    spec, layout = fixture_results("conflux-small-pilot", tmp_path)
    result = paths_result(Inputs(spec, layout, [], [], {}))
    failing = {f.run for f in result.failures}
    assert failing == {(v, s) for v in ("conflux", "confluxm") for s in range(1, 6)}
    assert all("bytes through middle relays" in f.message for f in result.failures)
    middle = {
        (s.variant, s.seed): s.share
        for s in result.shares
        if s.measure == "bytes" and s.position == "middle"
    }
    assert middle[("plain", 1)] > 0.3 and middle[("conflux", 1)] < 0.01


def test_a_variant_through_every_position_passes_and_one_avoiding_middles_fails() -> None:
    positions = {
        (v, 1): {"g1": "guard", "g2": "guard", "m1": "middle", "e1": "exit"}
        for v in ("plain", "conflux")
    }
    measured = {(v, 1): [("client1", "perf")] for v in ("plain", "conflux")}
    circuits = [
        _circuit("plain", "client1", ("g1", "m1", "e1")),
        _circuit("plain", "client1", ("g2", "m1", "e1")),
        _circuit("conflux", "client1", ("g1", "m1", "e1")),
        _circuit("conflux", "client1", ("g2", "g1", "e1")),
        # Not counted: no stream, or not a measured client.
        _circuit("conflux", "client1", ("g2", "g1", "e1"), streams=0),
        _circuit("conflux", "other", ("g2", "g1", "e1")),
    ]
    shares = circuit_shares(circuits, measured, positions)
    got = {(s.variant, s.position): s.share for s in shares}
    assert got[("plain", "middle")] == 1.0 and got[("conflux", "middle")] == 0.5
    assert path_failures(shares, [("conflux", "plain")]) == []
    # Four circuits that all miss the middles could be chance...
    avoiding = [_circuit("conflux", "client1", ("g2", "g1", "e1"))] * 4
    few = circuit_shares(circuits[:2] + avoiding, measured, positions)
    assert [s.share for s in few if (s.variant, s.position) == ("conflux", "middle")] == [0.0]
    assert path_failures(few, [("conflux", "plain")]) == []
    # ...twelve are not: a variant using middles half as often as its
    # reference would show none in 12 under once in a thousand runs.
    avoiding = [_circuit("conflux", "client1", ("g2", "g1", "e1"))] * 12
    failures = path_failures(
        circuit_shares(circuits[:2] + avoiding, measured, positions), [("conflux", "plain")]
    )
    assert [(f.variant, f.seed, f.measure, f.position) for f in failures] == [
        ("conflux", 1, "circuits", "middle")
    ]
    failure = failures[0].failure()
    assert (failure.run, failure.check) == (("conflux", 1), "paths")
    assert str(failure).startswith("conflux/seed-1: 0.0% of its circuits through middle relays")


def test_byte_shares_and_a_position_the_reference_barely_uses() -> None:
    loads = [
        _load("plain", "g1", "guard", 500),
        _load("plain", "m1", "middle", 480),
        _load("plain", "e1", "exit", 20),  # 2%: too little to judge
        _load("new", "g1", "guard", 1000),
        _load("new", "m1", "middle", 0),
        _load("new", "e1", "exit", 0),
    ]
    shares = byte_shares(loads)
    assert sum(s.share for s in shares if s.variant == "plain") == 1.0
    failures = path_failures(shares, [("new", "plain")])
    assert [(f.position, f.share) for f in failures] == [("middle", 0.0)]


def test_client_relays_as_exits_count_in_the_exit_position() -> None:
    loads = [
        _load("unlimited", "g1", "guard", 340),
        _load("unlimited", "m1", "middle", 340),
        _load("unlimited", "e1", "exit", 320),
        _load("relays20", "g1", "guard", 340),
        _load("relays20", "m1", "middle", 340),
        _load("relays20", "e1", "exit", 10),  # 1%: the client relays carry the rest
        _load("relays20", "c1", "client-relay-exit", 310),
    ]
    shares = byte_shares(loads)
    assert path_failures(shares, [("relays20", "unlimited")]) == []
    # Without the client relays the exit position is avoided, and it fails.
    alone = [s for s in shares if s.position != "client-relay-exit"]
    failures = path_failures(alone, [("relays20", "unlimited")])
    assert [f.position for f in failures] == ["exit"]


def test_a_run_without_a_table_is_not_taken_for_an_avoided_position() -> None:
    shares = [PositionShare("plain", 1, "circuits", "middle", 0.9, 10)]
    assert path_failures(shares, [("new", "plain")]) == []


def test_circuits_keep_every_hop_of_their_path() -> None:
    with (FIXTURES / "oniontrace-conflux-client.stdout").open() as lines:
        circuits = {c.circuit_id: c for c in parse_oniontrace(lines)}
    general = circuits["15"]
    assert len(general.path) == 3 and general.path[0] == general.guard == "relay4guard"
    # Legs seen only when linking take their path from that event.
    assert all(len(circuits[i].path) == 3 for i in "456789")


def test_every_relay_needs_fast_and_stable_and_its_role_flag() -> None:
    assert needed_flags("authority") == frozenset()
    assert needed_flags("middle") == {"Fast", "Running", "Stable", "Valid"}
    assert needed_flags("exitguard") == {"Exit", "Fast", "Guard", "Running", "Stable", "Valid"}
    rows = [
        RelayRow(
            "conflux",
            2,
            "relay6middle",
            "middle",
            ("Fast", "Running", "V2Dir", "Valid"),
            66,
            False,
            None,
            None,
        ),
        RelayRow(
            "conflux",
            2,
            "relay1exit",
            "exit",
            ("Exit", "Fast", "Running", "Stable", "Valid"),
            100,
            True,
            None,
            None,
        ),
        RelayRow("conflux", 2, "4uthority1", "authority", ("Authority",), 1, False, None, None),
    ]
    assert [str(f) for f in flag_failures(rows)] == [
        "conflux/seed-2: relays without the flags their role needs in the last consensus: "
        "relay6middle (middle) lacks Stable"
    ]
    assert flag_failures(rows[1:]) == []


def test_the_committed_one_authority_consensus_fails_the_flag_check() -> None:
    from runner.logs.consensus import parse_consensus

    with (FIXTURES / "cached-consensus-1-authority").open() as lines:
        rows = [
            RelayRow(
                "v",
                1,
                r.nickname,
                "middle" if "middle" in r.nickname else "",
                tuple(r.flags),
                r.bandwidth,
                r.measured,
                None,
                None,
            )
            for r in parse_consensus(lines)
        ]
    failures = flag_failures(rows)
    assert len(failures) == 1 and "relay6middle (middle) lacks Stable" in failures[0].message


def _relay(relay: str, role: str, flags: tuple[str, ...], measured: bool = True) -> RelayRow:
    return RelayRow("unlimited", 1, relay, role, flags, 100, measured, None, None)


def test_the_relays_table_counts_the_authority_apart_from_the_specs_relays(
    tmp_path: Path,
) -> None:
    # One authority and six relays: the consensus lists seven, the spec six.
    relay = ("Fast", "Running", "Stable", "Valid")
    rows = [
        _relay("4uthority1", "authority", ("Authority", "Running", "Stable"), measured=False),
        *(_relay(f"relay{i}exit", "exit", ("Exit", *relay)) for i in (1, 2)),
        *(_relay(f"relay{i}guard", "guard", ("Guard", *relay)) for i in (3, 4)),
        *(_relay(f"relay{i}middle", "middle", relay) for i in (5, 6)),
    ]
    spec, layout = fixture_results("tortoise-small", tmp_path)
    RELAYS.write(layout.experiment_dir, rows)
    inp = Inputs(spec, layout, [], [], {})
    result = consensus_summaries(inp)
    [one] = result.summaries
    assert (one.listed, one.authorities, one.relays, one.client_relays) == (7, 1, 6, 0)
    assert (one.guards, one.stable, one.measured) == (2, 6, 6)  # not the authority's
    lines = relays_section(result, inp, tmp_path).lines
    assert "## Relays and authorities in the last consensus" in lines
    text = "\n".join(lines)
    assert "the directory authorities (4uthority1), listed like any relay" in text
    assert "'in consensus' is the sum of three counts" in text
    header = next(line for line in lines if line.startswith("| variant"))
    assert header.startswith("| variant | seed | in consensus | authorities | relays | ")
    assert "| unlimited | 1 | 7 | 1 | 6 | 0 | 2/2 | 2 | 6/6 | 6/6 |" in lines


def test_the_fixture_consensus_counts_the_specs_relays_as_the_spec_gives_them(
    tmp_path: Path,
) -> None:
    spec, layout = fixture_results("tortoise-small", tmp_path)
    result = consensus_summaries(Inputs(spec, layout, [], [], {}))
    given = sum(group.count for group in spec.network.relays)
    assert given == 8 and spec.network.authorities == 3
    assert result.authority_names == ("4uthority1", "4uthority2", "4uthority3")
    assert len(result.summaries) == len(spec.runs())
    for r in result.summaries:
        assert (r.authorities, r.relays) == (3, given), r
        assert r.listed == 11 + r.client_relays
        # Clients run a relay only where the variant asks for it.
        assert (r.client_relays > 0) == bool(spec.variant(r.variant).client_relays), r
    high = next(r for r in result.summaries if r.variant == "relays-high")
    assert high.client_relays == 6  # 40% of 5 bulk and 10% of 40 web clients


def test_bytes_that_follow_a_handful_of_circuits_are_not_taken_for_an_avoided_position() -> None:
    loads = [
        _load("plain", "m1", "middle", 500),
        _load("plain", "g1", "guard", 500),
        _load("new", "m1", "middle", 0),
        _load("new", "g1", "guard", 1000),
    ]
    few = [
        PositionShare("plain", 1, "circuits", "middle", 0.5, 4),
        PositionShare("new", 1, "circuits", "middle", 0.0, 4),
    ]
    assert path_failures(byte_shares(loads) + few, [("new", "plain")]) == []
    many = [
        PositionShare("plain", 1, "circuits", "middle", 0.5, 40),
        PositionShare("new", 1, "circuits", "middle", 0.0, 40),
    ]
    failing = path_failures(byte_shares(loads) + many, [("new", "plain")])
    assert sorted(f.measure for f in failing) == ["bytes", "circuits"]
