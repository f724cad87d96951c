"""The tidy tables: each one's columns, and its rows from a run's logs.

``transfers.csv``: one row per transfer a client finished; ``served.csv``:
one per transfer a server finished (uploads end there); ``circuits.csv``:
one per circuit built or failed; ``placements.csv``: one per circuit that a
tor with MCTorConnections placed on a connection; ``hop_feedback.csv`` and
``n23.csv`` and ``hop_window.csv``: the hop feedback, N23 and hop window
totals of each tor that logged them;
``relays.csv`` and
``clients.csv``: the consensus and the clients. Times are seconds since the
network started. The analyses (runner.analyses) say which tables they add;
runner.tables.collect writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.layout import SHADOW_DATA
from runner.logs import bandwidth as parse_bandwidth
from runner.logs import consensus as parse_consensus
from runner.logs import oniontrace as parse_oniontrace
from runner.logs import tgen as parse_tgen
from runner.logs.run_logs import RunLogs
from runner.logs.tgen import Transfer
from runner.spec.model import RELAY_ROLES

TRANSFER_COLUMNS = [
    "variant",
    "seed",
    "host",
    "class",
    "measured",
    "transfer_id",
    "vertex",
    "size_bytes",
    "bytes_received",
    "send_bytes",
    "start_s",
    "end_s",
    "ttfb_s",
    "ttlb_s",
    "success",
    "error",
]
SERVED_COLUMNS = [
    "variant",
    "seed",
    "server",
    "peer",
    "vertex",
    "size_bytes",
    "bytes_received",
    "start_s",
    "end_s",
    "success",
]
RELAY_COLUMNS = [
    "variant",
    "seed",
    "relay",
    "role",
    "flags",
    "weight",
    "measured",
    "client_limit_rate",
    "client_limit_burst",
]
CLIENT_COLUMNS = [
    "variant",
    "seed",
    "host",
    "class",
    "measured",
    "link",
    "client_relay",
    "bandwidth_down_bits",
    "bandwidth_up_bits",
]
RELAY_LOAD_COLUMNS = [
    "variant",
    "seed",
    "relay",
    "role",
    "capacity_bytes",
    "seconds",
    "mean_read_bytes",
    "mean_written_bytes",
    "mean_utilisation",
    "p90_utilisation",
]
# Local backend only: Shadow simulates time, not CPU.
PROCESS_CPU_COLUMNS = ["variant", "seed", "host", "role", "program", "cpu_s"]
CIRCUIT_COLUMNS = [
    "variant",
    "seed",
    "host",
    "class",
    "circuit_id",
    "status",
    "time_s",
    "build_s",
    "purpose",
    "hops",
    "reason",
    "conflux_id",
    "guard",
    "streams",
]


def _client_logs(logs: RunLogs, program: str) -> Iterator[tuple[dict[str, Any], Path]]:
    """Each client's logs of ``program``, with the row fields that name the client."""
    manifest = logs.manifest
    for host, info in sorted(manifest["hosts"].items()):
        if info["role"] != "client":
            continue
        who = {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "host": host,
            "class": info["class"],
        }
        for log in logs.of(host, program):
            yield who | {"measured": int(info["measured"])}, log


def round6(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def _tgen_transfers(logs: RunLogs, log: Path) -> list[Transfer]:
    """A tgen log's finished transfers; lines that do not parse are skipped."""
    lines = logs.lines(log, parse_tgen.RECORD_MARKERS)
    return list(parse_tgen.parse_lines(lines, logs.on_error(log)))


def _transfer_fields(t: Transfer, epoch: float) -> dict[str, Any]:
    """What a client's and a server's row of a tgen transfer share."""
    return {
        "vertex": t.vertex,
        "size_bytes": t.size,
        "bytes_received": t.bytes_received,
        "start_s": round6(t.start - epoch),
        "end_s": round6(t.end - epoch),
        "success": int(t.success),
    }


def transfer_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    epoch = float(logs.manifest.get("clock_epoch", 0))
    for who, log in _client_logs(logs, "tgen"):
        for t in _tgen_transfers(logs, log):
            yield (
                who
                | _transfer_fields(t, epoch)
                | {
                    "transfer_id": t.transfer_id,
                    "send_bytes": t.send_size,
                    "ttfb_s": round6(t.ttfb),
                    "ttlb_s": round6(t.ttlb),
                    "error": t.error,
                }
            )


def served_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """What the servers finished: an upload's last byte arrives there."""
    manifest = logs.manifest
    epoch = float(manifest.get("clock_epoch", 0))
    for host, info in sorted(manifest["hosts"].items()):
        if info["role"] != "server":
            continue
        for log in logs.of(host, "tgen"):
            for t in _tgen_transfers(logs, log):
                yield {
                    "variant": manifest["variant"],
                    "seed": manifest["seed"],
                    "server": host,
                    "peer": t.peer,
                } | _transfer_fields(t, epoch)


def tor_logs(logs: RunLogs) -> Iterator[tuple[str, str, Iterator[str]]]:
    """(host, role, lines) for the stdout log of every tor host of a run,
    the lines that hold one of the record markers the tables declared."""
    for host, info in sorted(logs.manifest["hosts"].items()):
        if info["role"] == "server":
            continue
        for log in logs.of(host, "tor"):
            yield host, info["role"], logs.lines(log, logs.record_markers.get("tor", ()))


def circuit_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    epoch = float(logs.manifest.get("clock_epoch", 0))
    for who, log in _client_logs(logs, "oniontrace"):
        del who["measured"]
        lines = logs.lines(log, parse_oniontrace.RECORD_MARKERS)
        for c in parse_oniontrace.parse_lines(lines, logs.on_error(log)):
            yield who | {
                "circuit_id": c.circuit_id,
                "status": c.status,
                "time_s": round6(c.time - epoch),
                "build_s": round6(c.build_time),
                "purpose": c.purpose,
                "hops": c.hops,
                "reason": c.reason,
                "conflux_id": c.conflux_id,
                "guard": c.guard,
                "streams": c.streams,
            }


def relay_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """The relays of the last consensus the first authority made."""
    manifest = logs.manifest
    hosts = manifest["hosts"]
    authority = next((h for h, info in sorted(hosts.items()) if info["role"] == "authority"), None)
    if authority is None:
        return
    consensus = logs.run_dir / SHADOW_DATA / "hosts" / authority / "cached-consensus"
    if not consensus.is_file():
        return
    lines = logs.lines(consensus, parse_consensus.RECORD_MARKERS)
    for relay in parse_consensus.parse_consensus(lines, logs.on_error(consensus)):
        limit = hosts.get(relay.nickname, {}).get("client_limit") or {}
        yield {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "relay": relay.nickname,
            "role": hosts.get(relay.nickname, {}).get("role", ""),
            "flags": " ".join(sorted(relay.flags)),
            "weight": relay.bandwidth,
            "measured": int(relay.measured),
            # What the relay was told to allow each non-relay client.
            "client_limit_rate": limit.get("rate_bytes", ""),
            "client_limit_burst": limit.get("burst_bytes", ""),
        }


def client_rows(manifest: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each client of a run: its class, link and whether it also runs a relay."""
    for host, info in sorted(manifest["hosts"].items()):
        if info["role"] != "client":
            continue
        yield {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "host": host,
            "class": info["class"],
            "measured": int(info["measured"]),
            "link": info.get("link") or "",
            "client_relay": int(bool(info.get("client_relay"))),
            "bandwidth_down_bits": info["bandwidth_down_bits"],
            "bandwidth_up_bits": info["bandwidth_up_bits"],
        }


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def relay_load_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """How busy each relay was over the measured period, from the bytes its
    tor read and wrote each second (oniontrace's BW events): a second's
    utilisation is the larger of the two over the relay's link capacity."""
    manifest = logs.manifest
    duration = manifest.get("duration") or {}
    begin = float(manifest.get("clock_epoch", 0)) + float(duration.get("bootstrap_s", 0))
    end = begin + float(duration.get("measure_s", 0))
    for host, info in sorted(manifest["hosts"].items()):
        if info["role"] not in RELAY_ROLES:
            continue
        capacity = int(info["bandwidth_up_bits"]) // 8
        seconds = []
        for log in logs.of(host, "oniontrace"):
            lines = logs.lines(log, parse_bandwidth.RECORD_MARKERS)
            seconds += [
                s
                for s in parse_bandwidth.parse_lines(lines, logs.on_error(log))
                if begin <= s.time < end
            ]
        if not seconds or capacity <= 0:
            continue
        used = [max(s.read, s.written) / capacity for s in seconds]
        yield {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "relay": host,
            "role": info["role"],
            "capacity_bytes": capacity,
            "seconds": len(seconds),
            "mean_read_bytes": round(sum(s.read for s in seconds) / len(seconds)),
            "mean_written_bytes": round(sum(s.written for s in seconds) / len(seconds)),
            "mean_utilisation": f"{sum(used) / len(used):.4f}",
            "p90_utilisation": f"{_p90(used):.4f}",
        }


def process_cpu_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """The CPU seconds each host's programs used over the measured period,
    as the local backend recorded them in the manifest (none under Shadow)."""
    manifest = logs.manifest
    for host, programs in sorted((manifest.get("cpu_s") or {}).items()):
        role = manifest["hosts"].get(host, {}).get("role", "")
        for program, seconds in sorted(programs.items()):
            yield {
                "variant": manifest["variant"],
                "seed": manifest["seed"],
                "host": host,
                "role": role,
                "program": program,
                "cpu_s": seconds,
            }


@dataclass(frozen=True)
class Table:
    """A tidy table, ``<experiment>/<name>.csv``: ``rows`` gives one run's
    rows; ``tor_markers``: the tor log lines it reads (a line holding one
    carries a record, for the damaged-line accounting)."""

    name: str
    columns: list[str]
    rows: Callable[[RunLogs], Iterable[dict[str, Any]]]
    tor_markers: tuple[str, ...] = ()


TRANSFERS = Table("transfers", TRANSFER_COLUMNS, transfer_rows)
SERVED = Table("served", SERVED_COLUMNS, served_rows)
CIRCUITS = Table("circuits", CIRCUIT_COLUMNS, circuit_rows)
RELAYS = Table("relays", RELAY_COLUMNS, relay_rows)
CLIENTS = Table("clients", CLIENT_COLUMNS, lambda logs: client_rows(logs.manifest))
RELAY_LOAD = Table("relay_load", RELAY_LOAD_COLUMNS, relay_load_rows)
PROCESS_CPU = Table("process_cpu", PROCESS_CPU_COLUMNS, process_cpu_rows)
