"""MCTor's measurements: placement logs, rounds, Tukey's fences, fairness
and the connection checks. Parsers read logs cut from a real mctor run."""

import gzip

import pytest
import yaml

from runner.analyses.answers import answer
from runner.analyses.workload_rounds import (
    ClientRoundMean,
    Round,
    fairness_gaps,
    rounds,
    summarize,
    tukey_fences,
)
from runner.experiments import parse_spec
from runner.experiments.mctor.compute import pinned_paths, unpinned
from runner.experiments.mctor.connections import (
    circuit_spread,
    hop_checks,
    pinned_path,
    stream_circuits,
)
from runner.experiments.mctor.placement_log import parse_line, parse_lines, read_fingerprint
from runner.experiments.mctor.tables import PlacementRow
from runner.logs.tgen import Transfer
from runner.logs.tgen import parse_lines as parse_tgen
from runner.phases import Phase
from runner.spec.hypotheses import Hypothesis
from runner.tables.schema import CircuitRow, ServedRow, TransferRow
from tests.conftest import FIXTURES, ROOT

SHADOW_EPOCH = 946684800
MIDDLE = "38FD1A359A3C7A83E6DA58C824D4E54A10D65EE8"
PHASES = {
    "user": (
        Phase("video", 3, 131072, "down"),
        Phase("upload", 6, 2097152, "up"),
    )
}


def test_placements_from_a_real_guard_log() -> None:
    with (FIXTURES / "tor-mctor-guard.stdout").open() as lines:
        placements = list(parse_lines(lines))
    assert len(placements) == 12  # the 4 other lines are not placements
    first = placements[0]
    assert first.time == pytest.approx(20.016)
    assert (first.connection, first.open_connections, first.usable_connections) == (4, 1, 1)
    assert first.circuits == {4: 1}
    last = placements[-1]
    assert last.peer == MIDDLE
    assert last.time == pytest.approx(8 * 60 + 56.074)
    # Both ends connected at once: 4 open, the best 3 still take circuits.
    assert (last.open_connections, last.usable_connections) == (4, 3)
    assert sorted(last.circuits) == [13, 14, 18, 19]
    assert last.connection in last.circuits
    assert read_fingerprint((FIXTURES / "fingerprint-mctor-guard").read_text()) == (
        "relay3guard",
        "8B8CFC9AFA74050351523B728F6AD50293D35250",
    )


def test_placement_line_on_a_later_day_and_other_lines() -> None:
    line = (
        "Jan 02 00:00:01.500 [notice] MCTor: circuit placed on connection 7 to "
        f"${MIDDLE}; open connections: 2; usable: 1; outbound circuits: 7:1,9:0"
    )
    placement = parse_line(line)
    assert placement is not None
    assert placement.time == pytest.approx(86401.5)
    assert (placement.open_connections, placement.usable_connections) == (2, 1)
    assert placement.circuits == {7: 1, 9: 0}
    assert parse_line("Jan 01 00:00:01.000 [notice] Bootstrapped 100% (done): Done") is None
    assert (placement.circuit_id, placement.origin, placement.from_id) == (None, None, None)


def test_placement_lines_name_the_circuit() -> None:
    prefix = (
        f"Jan 01 00:09:00.000 [notice] MCTor: circuit placed on connection 7 to ${MIDDLE}; "
        "open connections: 2; usable: 2; outbound circuits: 7:1,9:1; "
    )
    client = parse_line(prefix + "circuit ID 2147483650, origin 23")
    relay = parse_line(prefix + "circuit ID 3000000000, from ID 2147483650")
    assert client is not None and relay is not None
    assert (client.circuit_id, client.origin, client.from_id) == (2147483650, 23, None)
    assert (relay.circuit_id, relay.origin, relay.from_id) == (3000000000, None, 2147483650)
    assert parse_line(prefix + "circuit ID x, origin 23") is None


def _transfer(t: Transfer, host: str = "perfclient1exit") -> TransferRow:
    return TransferRow(
        "n3", 1, host, "user", True, t.size, t.start - SHADOW_EPOCH, t.ttfb, t.ttlb,
        t.success, t.error, t.vertex, t.end - SHADOW_EPOCH, t.send_size,
    )  # fmt: skip


def _served(t: Transfer) -> ServedRow:
    return ServedRow(
        "n3", 1, "server1exit", t.peer, t.vertex, t.bytes_received,
        t.start - SHADOW_EPOCH, t.end - SHADOW_EPOCH, t.success,
    )  # fmt: skip


def _upload_fixture() -> tuple[list[TransferRow], list[ServedRow]]:
    with (FIXTURES / "tgen-rounds-upload-client.stdout").open() as lines:
        client = [_transfer(t) for t in parse_tgen(lines)]
    with (FIXTURES / "tgen-rounds-upload-server.stdout").open() as lines:
        server = [_served(t) for t in parse_tgen(lines)]
    return client, server


def test_upload_round_ends_when_the_server_has_the_last_byte() -> None:
    client, server = _upload_fixture()
    assert {s.peer for s in server} == {"perfclient1exit"}
    assert all(c.send_bytes == 2097152 for c in client)
    (upload,) = rounds(client, server, PHASES)
    assert upload.phase == "upload" and upload.finished == 6 and upload.failed == 0
    # Server's last success at 309.178 s; the streams started at 306.643 s
    # (the client's own records end later, at 309.304 s).
    assert upload.completion == pytest.approx(309.178 - 306.643, abs=1e-3)
    assert upload.throughput_mbit == pytest.approx(6 * 2097152 * 8 / 2.535 / 1e6, rel=1e-3)


def test_upload_round_without_its_server_records_is_still_running() -> None:
    client, server = _upload_fixture()
    assert rounds(client, server[:5], PHASES) == []


def _row(vertex: str, start: float, end: float, ok: bool = True, host: str = "c1") -> TransferRow:
    return TransferRow(
        "v", 1, host, "user", True, 131072, start, 0.1, end - start if ok else None, ok,
        "" if ok else "PROXY-STALLOUT", vertex, end, 1000,
    )  # fmt: skip


def test_download_rounds_group_streams_started_together() -> None:
    rows = [_row(f"stream_p0_{i}", 10.0, 11.0 + i) for i in range(3)]
    rows += [_row(f"stream_p0_{i}", 30.0, 31.0, ok=(i != 1)) for i in range(3)]
    rows += [_row("stream_p0_0", 50.0, 51.0)]  # the rest still running at the end
    result = rounds(rows, [], PHASES)
    assert [(r.start, r.completion, r.failed) for r in result] == [
        (10.0, 3.0, 0),
        (30.0, None, 1),
    ]
    assert result[0].payload == 3 * 131072


def test_a_video_over_a_few_connections_is_one_round_of_every_request() -> None:
    """4 range requests over 2 connections: streams 0 and 1 start the round
    together, 2 and 3 follow on their connections; the round ends with the
    last request and moves every request's bytes."""
    video = (Phase("video", 4, 131072, "down", over=2),)
    rows = [_row("stream_p0_0", 10.0, 11.0), _row("stream_p0_1", 10.0, 12.0)]
    rows += [_row("stream_p0_2", 11.0, 13.5), _row("stream_p0_3", 12.0, 12.5)]
    rows += [_row("stream_p0_0", 20.0, 21.0), _row("stream_p0_1", 20.0, 21.0)]
    rows += [_row("stream_p0_2", 21.0, 22.0)]  # the second round still running
    (result,) = rounds(rows, [], {"user": video})
    assert (result.start, result.completion, result.finished) == (10.0, 3.5, 4)
    assert result.payload == 4 * 131072


def _round(variant: str, seed: int, completion: float, host: str = "c1") -> Round:
    return Round(variant, seed, host, "video", 0.0, 1, 1, 0, completion, 1_000_000)


def test_tukey_fences_and_outliers_left_out_of_the_means() -> None:
    assert tukey_fences([1, 2, 3, 4, 5]) == (-1.0, 7.0)
    values = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 9.0]
    rs = [_round("v", 1 + i % 2, c) for i, c in enumerate(values)]
    (summary,) = summarize(rs, ["v"])
    assert summary.outliers == 1 and summary.rounds == 7
    assert summary.completion.n == 2
    assert summary.completion.mean == pytest.approx(1.0, abs=0.05)


def _download_rounds(variant: str, seed: int, seconds: list[float]) -> list[Round]:
    return [
        Round(variant, seed, "c1", "download", 30.0 * i, 5, 5, 0, s, 10_485_760)
        for i, s in enumerate(seconds)
    ]


def test_one_long_round_does_not_move_the_round_completion_hypothesis() -> None:
    """The paper dropped rounds beyond Tukey's fences; a client's mean of
    every round let one stalled round stand for many."""
    h = Hypothesis(
        name="n5-download",
        variant="n5",
        reference="n1",
        metric="round_completion",
        expect="decrease",
        smallest_change=0.10,
        phase="download",
    )
    steady = [5.0, 5.2, 4.8, 5.1, 4.9, 5.0, 5.3, 4.7, 5.0, 5.1, 4.9, 5.0]
    base: list[Round] = []
    for seed in (1, 2, 3):
        base += _download_rounds("n5", seed, [s * (1 + 0.01 * seed) for s in steady])
        base += _download_rounds("n1", seed, [2 * s for s in steady])
    stalled = [*base, *_download_rounds("n5", 1, [60.0])]
    plain = answer(h, [], [], base).estimate
    with_stall = answer(h, [], [], stalled).estimate
    assert plain.n == with_stall.n == 3
    assert with_stall.mean == pytest.approx(plain.mean)
    assert plain.mean == pytest.approx(-0.49, abs=0.01)


def test_round_fences_are_each_clients_own_for_each_phase() -> None:
    mean = ClientRoundMean()
    # One client's rounds: its 20-s round is beyond its fences; the other
    # client's 10-s rounds are its own, not outliers of the first's.
    assert mean({"a": [(0, 1.0)] * 10 + [(0, 20.0)], "b": [(0, 10.0)] * 10}) == 5.5
    # Fences over a phase's rounds only: pooled with ten 1-s video rounds,
    # three 10-s download rounds would fall beyond (both quartiles 1 s).
    assert mean({"a": [(0, 1.0)] * 10 + [(1, 10.0)] * 3}) == pytest.approx(40 / 13)
    assert tukey_fences([1.0] * 10 + [10.0] * 3) == (1.0, 1.0)


def test_fairness_gap_is_zero_for_equal_users_and_grows_with_the_difference() -> None:
    rs = [_round("fair", s, 1.0, "c1") for s in (1, 2)]
    rs += [_round("fair", s, 1.0, "c2") for s in (1, 2)]
    rs += [_round("unfair", s, 1.0, "c1") for s in (1, 2)]
    rs += [_round("unfair", s, 2.0, "c2") for s in (1, 2)]
    rs += [_round("alone", s, 1.0, "c1") for s in (1, 2)]
    gaps = {g.variant: g.gap.mean for g in fairness_gaps(rs, ["fair", "unfair", "alone"])}
    assert gaps == {"fair": pytest.approx(0.0), "unfair": pytest.approx(0.5)}


def test_pinned_path_needs_one_relay_per_position() -> None:
    lines = ["MCTorConnections 3", "EntryNodes g", "MiddleNodes m", "ExitNodes e"]
    assert pinned_path(lines) == ("g", "m", "e")
    assert pinned_path(lines[:3]) is None
    assert pinned_path([*lines[:3], "ExitNodes e1,e2"]) is None


def _placement(
    host: str, peer: str, time: float, counts: tuple[int, ...], usable: int | None = None
) -> PlacementRow:
    usable = len(counts) if usable is None else usable
    return PlacementRow("v", 1, host, peer, time, 1, len(counts), usable, counts)


def test_hop_checks_take_each_hops_last_placement() -> None:
    placements = [
        _placement("c1", "g", 1.0, (1,)),
        _placement("c1", "g", 2.0, (2, 1, 1)),
        _placement("g", "m", 3.0, (1, 1, 1, 1)),  # one too many
        _placement("m", "x", 1.0, (1, 1)),
        _placement("m", "x", 5.0, (3, 3, 2, 1), usable=3),  # one retired
        _placement("c1", "other", 6.0, (1,)),  # not on the path
    ]
    paths = {("v", 1, "c1"): ("g", "m", "x"), ("v", 1, "c2"): ("g", "m", "x")}
    checks = {(h.host, h.peer): h for h in hop_checks(placements, paths, {"v": 3})}
    assert set(checks) == {("c1", "g"), ("g", "m"), ("m", "x"), ("c2", "g")}
    assert checks[("c1", "g")].ok and checks[("c1", "g")].circuits == (2, 1, 1)
    assert not checks[("g", "m")].ok and checks[("g", "m")].usable_connections == 4
    assert checks[("m", "x")].ok and checks[("m", "x")].placements == 2
    assert checks[("m", "x")].open_connections == 4 and checks[("m", "x")].most_usable == 3
    assert checks[("c2", "g")].open_connections is None and not checks[("c2", "g")].ok
    assert hop_checks(placements, paths, {}) == []


def test_stream_circuits_count_circuits_that_carried_streams() -> None:
    def circ(cid: str, streams: int, host: str = "c1") -> CircuitRow:
        return CircuitRow("v", 1, host, "user", cid, "BUILT", 1.0, 0.5, "GENERAL", "", "g", streams)

    circuits = [circ("1", 10), circ("2", 12), circ("3", 0), circ("4", 3, "c2")]
    circuits += [circ("5", 2, "c3"), circ("6", 40, "c3"), circ("7", 45, "c3")]
    clients = [("v", 1, "c1"), ("v", 1, "c2"), ("v", 1, "c3")]
    result = stream_circuits(circuits, clients, {"v": 2})
    # Too few circuits fail; a replaced circuit's streams are counted
    # beyond the two busiest.
    assert [(u.host, u.circuits, u.streams, u.beyond, u.ok) for u in result] == [
        ("c1", 2, 22, 0, True),
        ("c2", 1, 3, 0, False),
        ("c3", 3, 87, 2, True),
    ]
    # Stock tor (N = 1) may use several circuits: shown, not judged.
    (stock,) = stream_circuits(circuits, [("v", 1, "c1")], {"v": 1})
    assert (stock.circuits, stock.ok) == (2, None)


def _placed(
    host: str, peer: str, conn: int, cid: int, origin: int | None = None, came: int | None = None
) -> PlacementRow:
    return PlacementRow("v", 1, host, peer, 1.0, conn, 3, 3, (1, 1, 1), cid, origin, came)


def _carrying(*ids: int) -> list[CircuitRow]:
    return [
        CircuitRow("v", 1, "c1", "user", str(i), "BUILT", 1.0, 0.5, "GENERAL", "", "g", 5)
        for i in ids
    ] + [CircuitRow("v", 1, "c1", "user", "99", "BUILT", 1.0, 0.5, "GENERAL", "", "g", 0)]


def test_circuit_spread_follows_each_stream_circuit_hop_by_hop() -> None:
    paths = {("v", 1, "c1"): ("g", "m", "x")}
    # Three stream circuits (global ids 11-13) on three connections at every
    # hop; circuit 99 carried no stream and another client's circuit (from
    # ID 500) shares the middle's connection 41: neither counts.
    placements = [
        _placed("c1", "g", 1, 101, origin=11),
        _placed("c1", "g", 2, 102, origin=12),
        _placed("c1", "g", 3, 103, origin=13),
        _placed("c1", "g", 1, 199, origin=99),
        _placed("g", "m", 21, 201, came=101),
        _placed("g", "m", 22, 202, came=102),
        _placed("g", "m", 23, 203, came=103),
        _placed("m", "x", 41, 301, came=201),
        _placed("m", "x", 42, 302, came=202),
        _placed("m", "x", 43, 303, came=203),
        _placed("m", "x", 41, 304, came=500),
    ]
    spread = circuit_spread(placements, _carrying(11, 12, 13), paths, {"v": 3})
    assert [(s.host, s.circuits, s.followed, s.connections, s.ok) for s in spread] == [
        ("c1", 3, 3, 3, True),
        ("g", 3, 3, 3, True),
        ("m", 3, 3, 3, True),
    ]
    # The control (MCTorCircuits 3 over MCTorConnections 1) expects one.
    control = circuit_spread(placements, _carrying(11, 12, 13), paths, {"v": 1})
    assert [s.ok for s in control] == [False, False, False]

    # Two circuits share the middle's connection: that hop fails alone.
    shared = [
        p if p.circuit_id != 302 else _placed("m", "x", 41, 302, came=202) for p in placements
    ]
    spread = circuit_spread(shared, _carrying(11, 12, 13), paths, {"v": 3})
    assert [(s.connections, s.ok) for s in spread] == [(3, True), (3, True), (2, False)]

    # A circuit lost on the way (no line at the middle) is not followed.
    lost = [p for p in placements if p.circuit_id != 303]
    spread = circuit_spread(lost, _carrying(11, 12, 13), paths, {"v": 3})
    assert [(s.followed, s.ok) for s in spread] == [(3, True), (3, True), (2, False)]


def test_circuit_spread_without_circuit_ids_is_not_judged() -> None:
    paths = {("v", 1, "c1"): ("g", "m", "x")}
    old = [PlacementRow("v", 1, "c1", "g", 1.0, 1, 1, 1, (1,))]
    spread = circuit_spread(old, _carrying(11), paths, {"v": 1})
    assert [s.ok for s in spread] == [None, None, None]
    assert circuit_spread(old, _carrying(11), paths, {}) == []


FINGERPRINTS = {
    "2ACFEA4FF813502B590BF0BB33135071CD2CCF47": "relay3guard",
    "43D2EEB125ED80747F3B7870072C683EB3257229": "relay5middle",
    "C07A970F04F1DD96001F7D3835C2CC27038DC82D": "relay1exit",
}


def test_circuits_followed_through_real_logs_sit_on_distinct_connections() -> None:
    """The placement lines of one n3-hashing run under Shadow (the client,
    its guard and the middle): its 3 stream circuits (oniontrace's 24-26)
    are followed through the logged IDs onto 3 connections at every hop."""
    placements = []
    for host in ("perfclient1exit", "relay3guard", "relay5middle"):
        with gzip.open(FIXTURES / f"tor-mctor-ids-{host}.stdout.gz", "rt") as lines:
            for p in parse_lines(lines):
                placements.append(
                    PlacementRow(
                        "n3-hashing",
                        1,
                        host,
                        FINGERPRINTS.get(p.peer, p.peer),
                        p.time,
                        p.connection,
                        p.open_connections,
                        p.usable_connections,
                        tuple(p.circuits.values()),
                        p.circuit_id,
                        p.origin,
                        p.from_id,
                    )  # fmt: skip
                )
    assert all(p.circuit_id is not None for p in placements)
    client = [p for p in placements if p.host == "perfclient1exit"]
    assert len(client) == 33 and all(p.origin is not None for p in client)
    circuits = [
        CircuitRow("n3-hashing", 1, "perfclient1exit", "user", str(cid), "BUILT", 250.0, 0.3,
                   "GENERAL", "", "relay3guard", streams)
        for cid, streams in ((24, 36), (25, 40), (26, 32), (27, 0))
    ]  # fmt: skip
    paths = {("n3-hashing", 1, "perfclient1exit"): ("relay3guard", "relay5middle", "relay1exit")}
    spread = circuit_spread(placements, circuits, paths, {"n3-hashing": 3})
    assert [(s.host, s.followed, s.connections, s.ok) for s in spread] == [
        ("perfclient1exit", 3, 3, True),
        ("relay3guard", 3, 3, True),
        ("relay5middle", 3, 3, True),
    ]


def test_the_path_a_config_pins_for_every_client_is_found_and_a_missing_one_fails() -> None:
    # mctor-small pins the path in the torrc section every client reads
    # (client), not in the measured class's own: both count.
    config = ROOT / "configs" / "mctor-small.yaml"
    spec = parse_spec(yaml.safe_load(config.read_text()), str(config))
    measured = {(v.name, 1): [("user1", "user")] for v in spec.variants}
    paths = pinned_paths(spec, measured)
    assert set(paths.values()) == {("relay3guard", "relay5middle", "relay1exit")}
    assert len(paths) == len(spec.variants)
    expected = {v.name: v.expect["mctor_connections"] for v in spec.variants}
    assert unpinned(measured, paths, expected) == []
    lost = dict(list(paths.items())[1:])
    (failure,) = unpinned(measured, lost, expected)
    assert str(failure).startswith(f"{spec.variants[0].name}/seed-1 user1: no path pinned")
