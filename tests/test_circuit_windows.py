"""Each circuit's hop windows (tor-patches/0009): the log lines, the
circuits followed hop by hop from their clients, and web's windows against
bulk's, on the logs of a real run (congestion-small's tree under BackTap,
seed 1: tests/fixtures/tor-hop-window-circuits)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from runner.experiments.congestion import circuit_window_log as parse
from runner.experiments.congestion.circuit_paths import circuit_path_failures
from runner.experiments.congestion.circuit_windows import UNLINKED, CircuitWindowRow
from runner.experiments.congestion.tables import CIRCUIT_WINDOWS
from runner.experiments.congestion.window_classes import carried_downloads, position_windows
from runner.layout import SHADOW_DATA
from runner.logs.run_logs import RunLogs
from runner.manifest import RunRecord
from runner.spec.model import Variant
from tests.conftest import FIXTURES

RUN = FIXTURES / "tor-hop-window-circuits"
LINE = (
    "Jan 01 00:06:27.059 [notice] Hop window circuit open: direction in; prev 100.1.0.7 "
    "id 2899291619; next 100.1.0.1 id 3098816005; holds 1; cells sent 23796; in flight sum "
    "464820; stalls 758; decisions 993; window sum 48388; window max 72; window 23; samples "
    "6637; rtt sum 429905495 usec; base rtt 42722 usec; age 138907 msec"
)
MODELS = {"treeweb": "web", "treebulk": "bulk"}


def _hosts() -> dict[str, Any]:
    hosts: dict[str, Any] = json.loads((RUN / "hosts.json").read_text())
    return hosts


def _run_dir(tmp_path: Path, hosts: dict[str, Any]) -> RunLogs:
    """The fixture laid out as a run: each tor's lines in its host's folder."""
    for log in RUN.glob("*.stdout.gz"):
        host = log.name.removesuffix(".stdout.gz")
        (tmp_path / SHADOW_DATA / "hosts" / host).mkdir(parents=True)
        with gzip.open(log, "rt") as lines:
            (tmp_path / SHADOW_DATA / "hosts" / host / "tor.1000.stdout").write_text(lines.read())
    manifest = {"variant": "tree-backtap-noloss", "seed": 1, "hosts": hosts}
    return RunLogs(tmp_path, RunRecord(manifest))


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[CircuitWindowRow]:
    logs = _run_dir(tmp_path_factory.mktemp("run"), _hosts())
    return list(CIRCUIT_WINDOWS.rows(logs))


def test_a_line_reads_whole() -> None:
    window = parse.parse_line(LINE)
    assert window is not None
    assert window.circuit == ("100.1.0.7", 2899291619, "100.1.0.1", 3098816005)
    assert (window.direction, window.holds, window.closed) == ("in", True, False)
    assert (window.cells_sent, window.inflight_sum, window.stalls) == (23796, 464820, 758)
    assert (window.decisions, window.window_sum, window.window_max, window.window) == (
        993,
        48388,
        72,
        23,
    )
    assert (window.samples, window.rtt_sum_usec, window.base_rtt_usec) == (
        6637,
        429905495,
        42722,
    )
    assert window.age_ms == 138907
    assert parse.parse_line(LINE.replace("open", "closed")).closed  # type: ignore[union-attr]
    assert parse.parse_line(LINE[:-20]) is None


def test_each_circuit_keeps_its_last_line_and_a_damaged_line_is_counted() -> None:
    later = LINE.replace("cells sent 23796", "cells sent 30000")
    closed = later.replace("open", "closed")
    reused = LINE.replace("cells sent 23796", "cells sent 5")
    other = LINE.replace("direction in", "direction out")
    errors: list[tuple[int, str]] = []
    windows = parse.last_per_circuit(
        [LINE, other, LINE[:-20], later, closed, reused, "unrelated"],
        lambda number, line, why: errors.append((number, why)),
    )
    # The first circuit ended closed at 30000 cells; its ids came back for
    # a new circuit (5 cells); the other direction is its own line.
    assert [(w.direction, w.cells_sent, w.closed) for w in windows] == [
        ("in", 30000, True),
        ("out", 23796, False),
        ("in", 5, False),
    ]
    assert errors == [(3, "not a hop window circuit line")]


def test_circuits_are_followed_from_their_clients(rows: list[CircuitWindowRow]) -> None:
    hosts = _hosts()
    clients = {h for h, info in hosts.items() if info["role"] == "client"}
    used = carried_downloads(rows)
    assert {circuit.split(">")[0] for _, _, circuit in used} == clients
    by_circuit: dict[str, list[CircuitWindowRow]] = defaultdict(list)
    for r in rows:
        if ("tree-backtap-noloss", 1, r.circuit_name) in used and r.direction == "in":
            by_circuit[r.circuit_name].append(r)
    for circuit, mine in by_circuit.items():
        path = sorted((r.position, r.role, r.host) for r in mine)
        # Guard, the pinned middle, exit: every used circuit crosses the
        # congested middle (MiddleNodes relay8middle), one class throughout.
        assert [p for p, _, _ in path] == [1, 2, 3], circuit
        assert [role for _, role, _ in path] == ["guard", "middle", "exit"], circuit
        assert path[1][2] == "relay8middle", circuit
        assert len({(r.client, r.cls) for r in mine}) == 1
        assert mine[0].cls == hosts[mine[0].client]["class"]
    # The relays' own circuits reach no client.
    assert any(r.position == UNLINKED and not r.client for r in rows)


def test_without_addresses_nothing_is_followed(tmp_path: Path) -> None:
    hosts = {h: {k: v for k, v in info.items() if k != "ip"} for h, info in _hosts().items()}
    rows = list(CIRCUIT_WINDOWS.rows(_run_dir(tmp_path, hosts)))
    assert rows and all(r.position == UNLINKED for r in rows)
    assert position_windows(rows, ["tree-backtap-noloss"], MODELS) == []


def test_the_table_round_trips(rows: list[CircuitWindowRow], tmp_path: Path) -> None:
    CIRCUIT_WINDOWS.write(tmp_path, rows)
    assert CIRCUIT_WINDOWS.read(tmp_path / "hop_window_circuits.csv") == rows


def test_web_and_bulk_windows_pool_each_class_circuits(rows: list[CircuitWindowRow]) -> None:
    (guard, middle, exit_) = position_windows(rows, ["tree-backtap-noloss"], MODELS)
    assert [p.position for p in (guard, middle, exit_)] == [1, 2, 3]
    assert middle.relays == ("relay8middle",)
    assert (middle.web, middle.bulk) == ("treeweb", "treebulk")
    assert (middle.web_circuits, middle.bulk_circuits) == (5, 5)
    used = carried_downloads(rows)
    here = [
        r
        for r in rows
        if r.position == 2
        and r.direction == "in"
        and ("tree-backtap-noloss", 1, r.circuit_name) in used
    ]

    def pooled(cls: str, top: str, bottom: str) -> float:
        mine = [r for r in here if r.cls == cls]
        return sum(getattr(r, top) for r in mine) / sum(getattr(r, bottom) for r in mine)

    web = pooled("treeweb", "window_sum", "decisions")
    bulk = pooled("treebulk", "window_sum", "decisions")
    assert middle.web_window.mean == pytest.approx(web)
    assert middle.bulk_window.mean == pytest.approx(bulk)
    assert middle.window_ratio.mean == pytest.approx(web / bulk)
    assert middle.inflight_ratio.mean == pytest.approx(
        pooled("treeweb", "inflight_sum", "cells_sent")
        / pooled("treebulk", "inflight_sum", "cells_sent")
    )
    # One seed: a level, with no interval.
    assert middle.web_window.n == 1 and middle.web_window.low is None
    assert not math.isnan(guard.window_ratio.mean)


def _variant(name: str, **consensus: int) -> Variant:
    return Variant(name=name, tor="patched", torrc={}, consensus=consensus, factors={})


BACKTAP = _variant("tree-backtap-noloss", cc_alg=0, hop_window=1)
MARUT = _variant("tree-backtap-noloss", cc_alg=0, hop_window=1, hop_window_marut=1)
COMPLETE = {("tree-backtap-noloss", 1)}


def test_backtap_runs_on_every_hop_of_the_carried_circuits(rows: list[CircuitWindowRow]) -> None:
    assert circuit_path_failures(rows, [BACKTAP], COMPLETE) == []
    # Not judged: an incomplete run, a variant without hop windows.
    assert circuit_path_failures(rows, [BACKTAP], set()) == []
    assert circuit_path_failures(rows, [_variant("tree-backtap-noloss", cc_alg=0)], COMPLETE) == []


def test_a_hop_off_the_design_path_fails(rows: list[CircuitWindowRow]) -> None:
    # The middle of one carried circuit never decided its window.
    used = carried_downloads(rows)
    victim = next(
        r
        for r in rows
        if r.position == 2 and r.direction == "in" and (r.variant, r.seed, r.circuit_name) in used
    )
    broken = [dataclasses.replace(r, decisions=0) if r is victim else r for r in rows]
    (failure,) = circuit_path_failures(broken, [BACKTAP], COMPLETE)
    assert failure.check == "hop-window-path" and failure.run == ("tree-backtap-noloss", 1)
    assert f"{victim.circuit_name} hop 2 (relay8middle) never decided its window" in failure.message
    # The same run read as Marut: its guards and middle held windows, which
    # Marut's design leaves to the exit alone.
    (failure,) = circuit_path_failures(rows, [MARUT], COMPLETE)
    assert "20 of 30 hops of 10 circuits" in failure.message
    assert "held a window before the exit" in failure.message
    # The authors' Marut (level 3) is judged as Marut: the exit alone.
    authors = _variant("tree-backtap-noloss", cc_alg=0, hop_window=1, hop_window_marut=3)
    (failure,) = circuit_path_failures(rows, [authors], COMPLETE)
    assert "20 of 30 hops of 10 circuits" in failure.message
    assert "held a window before the exit" in failure.message
    # A closed circuit's last line says every relay held a window (tor has
    # dropped its next hop by then): read as unknown, not as off the path.
    # The same circuits open say it.
    closed = [dataclasses.replace(r, closed=1) for r in rows]
    assert circuit_path_failures(closed, [authors], COMPLETE) == []
    opened = [dataclasses.replace(r, closed=0) for r in rows]
    (failure,) = circuit_path_failures(opened, [authors], COMPLETE)
    assert "20 of 30 hops of 10 circuits" in failure.message
    # No circuit followed from a client at all.
    lost = [dataclasses.replace(r, position=UNLINKED, circuit_name="") for r in rows]
    (failure,) = circuit_path_failures(lost, [BACKTAP], COMPLETE)
    assert failure.message == "no circuit that carried streams was followed"
