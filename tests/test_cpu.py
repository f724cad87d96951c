"""Relay CPU on the local backend: reading a process's CPU time, the
measured period's share of it, the table and the per-variant figures."""

import os
import time

import pytest

from runner.analyses.cpu import per_run, relay_cpu
from runner.execute.local.processes import measured_cpu
from runner.execute.local.procs import process_cpu_seconds
from runner.manifest import RunRecord
from runner.spec.model import ALL_RELAYS
from runner.tables.schema import ProcessCpu, process_cpu_rows


def test_a_process_cpu_time_grows_while_it_computes() -> None:
    before = process_cpu_seconds(os.getpid())
    assert before is not None and before > 0
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    after = process_cpu_seconds(os.getpid())
    assert after is not None and after - before >= 0.2
    assert process_cpu_seconds(2**22 + 12345) is None  # above pid_max: no such process


def test_measured_cpu_counts_only_the_measured_period() -> None:
    start = {"relay1exit/tor.1000": 4.0, "relay1exit/oniontrace.1001": 0.5}
    end = {
        "relay1exit/tor.1000": 10.25,
        "relay1exit/oniontrace.1001": 0.75,
        "client1/tgen.1003": 1.5,  # started during the period
    }
    assert measured_cpu(start, end) == {
        "relay1exit": {"tor": 6.25, "oniontrace": 0.25},
        "client1": {"tgen": 1.5},
    }


class _Logs:
    def __init__(self, manifest: dict) -> None:  # type: ignore[type-arg]
        self.run = RunRecord(manifest)


def test_the_table_reads_the_manifest_and_is_empty_under_shadow() -> None:
    manifest = {
        "variant": "limit-100",
        "seed": 2,
        "hosts": {"relay1exit": {"role": "exit"}, "client1": {"role": "client"}},
        "cpu_s": {"relay1exit": {"tor": 6.25}, "client1": {"tgen": 1.5, "tor": 2.0}},
    }
    rows = list(process_cpu_rows(_Logs(manifest)))  # type: ignore[arg-type]
    assert [(r.host, r.role, r.program, r.cpu_s) for r in rows] == [
        ("client1", "client", "tgen", 1.5),
        ("client1", "client", "tor", 2.0),
        ("relay1exit", "exit", "tor", 6.25),
    ]
    del manifest["cpu_s"]
    assert list(process_cpu_rows(_Logs(manifest))) == []  # type: ignore[arg-type]


def _row(variant: str, seed: int, host: str, role: str, cpu: float) -> ProcessCpu:
    return ProcessCpu(variant, seed, host, role, "tor", cpu)


def test_relay_cpu_per_variant_and_paired_change() -> None:
    rows = [
        _row("unlimited", 1, "e1", "exit", 10.0),
        _row("unlimited", 1, "g1", "guard", 4.0),
        _row("unlimited", 2, "e1", "exit", 12.0),
        _row("unlimited", 2, "g1", "guard", 6.0),
        _row("limit-100", 1, "e1", "exit", 11.0),
        _row("limit-100", 1, "g1", "guard", 4.4),
        _row("limit-100", 2, "e1", "exit", 13.2),
        _row("limit-100", 2, "g1", "guard", 6.6),
        ProcessCpu("limit-100", 1, "c1", "client", "tor", 99.0),  # not a relay
        ProcessCpu("limit-100", 1, "e1", "exit", "oniontrace", 99.0),  # not tor
    ]
    assert per_run(rows)[("limit-100", ALL_RELAYS, 1)] == pytest.approx(7.7)
    found = {
        (c.variant, c.role): c for c in relay_cpu(rows, ["unlimited", "limit-100"], "unlimited")
    }
    assert found[("unlimited", "exit")].seconds.mean == pytest.approx(11.0)
    assert found[("unlimited", "exit")].change is None
    change = found[("limit-100", ALL_RELAYS)].change
    assert change is not None and change.mean == pytest.approx(0.10)
    assert change.n == 2 and change.low is not None and change.low == pytest.approx(0.10)
    assert ("limit-100", "middle") not in found
