"""Parsers against logs cut from real Shadow runs of ci-small."""

from pathlib import Path

import pytest

from runner.logs.oniontrace import parse_lines as parse_oniontrace
from runner.logs.tgen import parse_line, parse_lines
from tests.conftest import FIXTURES

SHADOW_EPOCH = 946684800


def _tgen() -> list:  # type: ignore[type-arg]
    with (FIXTURES / "tgen-perfclient.stdout").open() as lines:
        return list(parse_lines(lines))


def test_tgen_finished_transfers_and_their_times() -> None:
    transfers = _tgen()
    assert [t.size for t in transfers] == [51200, 1048576, 5242880, 51200, 1048576]
    assert [t.success for t in transfers] == [True, True, False, True, True]
    first = transfers[0]
    assert first.start - SHADOW_EPOCH == pytest.approx(300.0)
    assert first.end - SHADOW_EPOCH == pytest.approx(300.487)
    assert first.ttfb == pytest.approx(0.160)  # first byte 320000 us - command 160000 us
    assert first.ttlb == pytest.approx(0.327)
    assert first.bytes_received == 51200
    assert first.vertex == "stream_0"


def test_tgen_error_keeps_partial_bytes_and_no_last_byte() -> None:
    failed = _tgen()[2]
    assert failed.error == "TIMEOUT"
    assert failed.ttlb is None
    assert 0 < failed.bytes_received < failed.size
    assert failed.end - failed.start == pytest.approx(3.243, abs=0.001)


def test_tgen_ignores_other_lines_and_reports_malformed_ones() -> None:
    assert parse_line("2000-01-01 00:00:01 946684801.0 [message] [x] driver-heartbeat") is None
    with pytest.raises(ValueError, match="line 2"):
        list(parse_lines(["", "2000-01-01 00:00:01 946684801.0 [stream-success] oops\n"]))


def test_oniontrace_circuits_and_conflux_legs() -> None:
    with (FIXTURES / "oniontrace-conflux-client.stdout").open() as lines:
        circuits = {c.circuit_id: c for c in parse_oniontrace(lines)}
    assert len(circuits) == 15
    sets: dict[str, list[str]] = {}
    for c in circuits.values():
        if c.conflux_id:
            sets.setdefault(c.conflux_id, []).append(c.circuit_id)
    assert sorted(len(legs) for legs in sets.values()) == [2, 2, 2]
    assert all(circuits[i].hops == 3 and circuits[i].status == "BUILT" for i in "456789")
    failed = circuits["13"]
    assert (failed.status, failed.reason, failed.hops, failed.purpose) == (
        "FAILED",
        "DESTROYED",
        2,
        "HS_VANGUARDS",
    )
    general = circuits["15"]
    assert general.purpose == "GENERAL"
    assert general.guard == "relay4guard"  # the first hop, by nickname
    # Legs built before oniontrace subscribed have a guard from their linking.
    assert all(circuits[i].guard.startswith("relay") for i in "456789")
    assert general.build_time == pytest.approx(0.24)
    assert general.time - SHADOW_EPOCH == pytest.approx(53.24)


def test_oniontrace_counts_a_circuit_once(tmp_path: Path) -> None:
    line = (
        "2000-01-01 00:01:00 946684860.000000 [default] [x] Logger: 650 CIRC 7 BUILT "
        "$A~a,$B~b,$C~c PURPOSE=GENERAL TIME_CREATED=2000-01-01T00:00:59.500000\n"
    )
    again = line.replace("946684860.000000", "946684900.000000")
    circuits = list(parse_oniontrace([line, again]))
    assert len(circuits) == 1
    assert circuits[0].build_time == pytest.approx(0.5)


def test_consensus_flags_and_unmeasured_weights() -> None:
    from runner.logs.consensus import parse_consensus

    with (FIXTURES / "cached-consensus-1-authority").open() as lines:
        relays = {r.nickname: r for r in parse_consensus(lines)}
    assert "relay2exit" in relays and "4uthority1" in relays
    assert {"Exit", "Fast", "Stable"} <= relays["relay2exit"].flags
    assert relays["relay6middle"].flags == {"Fast", "Running", "V2Dir", "Valid"}
    assert relays["relay6middle"].bandwidth == 66
    # one authority: tor does not use the bandwidth file's measurements
    assert not any(r.measured for r in relays.values())


def test_oniontrace_counts_client_streams_per_circuit() -> None:
    with (FIXTURES / "oniontrace-web-client.stdout").open() as lines:
        circuits = {c.circuit_id: c for c in parse_oniontrace(lines)}
    carrying = {i: (c.guard, c.streams) for i, c in circuits.items() if c.streams}
    # Three web pages went over circuit 25; directory fetches are not counted.
    assert carrying == {"25": ("relay3guard", 3)}


def test_tgen_session_stopped_by_shadow_keeps_its_finished_transfers() -> None:
    # One web session, ended by SIGTERM (no summary line, no error).
    with (FIXTURES / "tgen-web-session.stdout").open() as lines:
        transfers = list(parse_lines(lines))
    assert [(t.vertex, t.size, t.success) for t in transfers] == [("stream_2", 238000, True)]
