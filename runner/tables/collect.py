"""Collect every complete run's logs into tidy tables.

``transfers.csv``: one row per transfer a client finished; ``served.csv``:
one per transfer a server finished (uploads end there); ``circuits.csv``:
one per circuit built or failed; ``placements.csv``: one per circuit that a
tor with MCTorConnections placed on a connection; ``hop_feedback.csv``: the
hop feedback totals of each tor that logged them; ``relays.csv`` and
``clients.csv``: the consensus and the clients; ``log_damage.csv``: one row
per log that was missing, empty or had lines that could not be read (those
lines are skipped and counted, see runner/logs/damage.py). Times are seconds
since the network started.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from runner.execute.manifest import STATUS_COMPLETE, read_manifest, run_status, write_manifest
from runner.layout import Layout
from runner.logs import consensus as parse_consensus
from runner.logs import mctor as parse_mctor
from runner.logs import oniontrace as parse_oniontrace
from runner.logs import tgen as parse_tgen
from runner.logs.damage import LogDamage, clean_lines
from runner.logs.hop_feedback import PER_POSITION, HopFeedbackTotals, last_totals
from runner.logs.mctor import read_fingerprint
from runner.logs.tgen import Transfer
from runner.network.shadow_config import SHADOW_DATA
from runner.spec.model import Spec

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
PLACEMENT_COLUMNS = [
    "variant",
    "seed",
    "host",
    "peer",
    "time_s",
    "connection",
    "open_connections",
    "usable_connections",
    "circuits",
]
# Per-position counts are ";"-separated.
HOP_FEEDBACK_COLUMNS = ["variant", "seed", "host", "role"] + [
    f.name for f in fields(HopFeedbackTotals)
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
LOG_DAMAGE_COLUMNS = [
    "variant",
    "seed",
    "log",
    "skipped_lines",
    "lost_records",
    "missing",
    "empty",
    "examples",
]
TOR_RECORD_MARKERS = parse_mctor.RECORD_MARKERS + ("Hop feedback totals",)
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


@dataclass(frozen=True)
class Collected:
    runs: int
    transfers: int
    circuits: int
    damaged_logs: int = 0


class RunLogs:
    """The logs of one run, read line by line through ``clean_lines``: what
    was damaged is recorded per log, once however often a log is read."""

    def __init__(self, run_dir: Path, manifest: dict[str, Any]) -> None:
        self.run_dir, self.manifest = run_dir, manifest
        self.damage: dict[str, LogDamage] = {}

    def of(self, host: str, program: str) -> list[Path]:
        """``host``'s logs of ``program``; none is recorded as a missing log."""
        logs = sorted((self.run_dir / SHADOW_DATA / "hosts" / host).glob(f"{program}.*.stdout"))
        if not logs:
            name = f"{SHADOW_DATA}/hosts/{host}/{program}.*.stdout"
            self.damage.setdefault(name, LogDamage(name, missing=True))
        return logs

    def lines(self, path: Path, markers: tuple[str, ...]) -> Iterator[str]:
        name = str(path.relative_to(self.run_dir))
        first_read = name not in self.damage
        damage = self.damage.setdefault(name, LogDamage(name, markers))
        return clean_lines(path, damage if first_read else LogDamage(name, markers))

    def on_error(self, path: Path) -> Callable[[int, str, str], None]:
        return self.damage[str(path.relative_to(self.run_dir))].skip

    def damaged(self) -> list[LogDamage]:
        return [d for _, d in sorted(self.damage.items()) if d.damaged]


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


def _round(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def _tgen_transfers(logs: RunLogs, log: Path) -> list[Transfer]:
    """A tgen log's finished transfers; lines that do not parse are skipped."""
    lines = logs.lines(log, parse_tgen.RECORD_MARKERS)
    return list(parse_tgen.parse_lines(lines, logs.on_error(log)))


def transfer_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    epoch = float(logs.manifest.get("clock_epoch", 0))
    for who, log in _client_logs(logs, "tgen"):
        for t in _tgen_transfers(logs, log):
            yield who | {
                "transfer_id": t.transfer_id,
                "vertex": t.vertex,
                "size_bytes": t.size,
                "bytes_received": t.bytes_received,
                "send_bytes": t.send_size,
                "start_s": _round(t.start - epoch),
                "end_s": _round(t.end - epoch),
                "ttfb_s": _round(t.ttfb),
                "ttlb_s": _round(t.ttlb),
                "success": int(t.success),
                "error": t.error,
            }


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
                    "vertex": t.vertex,
                    "size_bytes": t.size,
                    "bytes_received": t.bytes_received,
                    "start_s": _round(t.start - epoch),
                    "end_s": _round(t.end - epoch),
                    "success": int(t.success),
                }


def _nicknames(run_dir: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """Relay fingerprint -> host name, from the fingerprint files tor wrote."""
    names = {}
    for host in manifest["hosts"]:
        path = run_dir / SHADOW_DATA / "hosts" / host / "fingerprint"
        if path.is_file():
            names[read_fingerprint(path.read_text())[1]] = host
    return names


def _tor_logs(logs: RunLogs) -> Iterator[tuple[str, str, Iterator[str]]]:
    """(host, role, lines) for the stdout log of every tor host of a run."""
    for host, info in sorted(logs.manifest["hosts"].items()):
        if info["role"] == "server":
            continue
        for log in logs.of(host, "tor"):
            yield host, info["role"], logs.lines(log, TOR_RECORD_MARKERS)


def placement_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """MCTor's placement log lines of every tor host (none unless it was on)."""
    manifest = logs.manifest
    names = _nicknames(logs.run_dir, manifest)
    for host, _role, lines in _tor_logs(logs):
        for p in parse_mctor.parse_lines(lines):
            yield {
                "variant": manifest["variant"],
                "seed": manifest["seed"],
                "host": host,
                "peer": names.get(p.peer, "$" + p.peer),
                "time_s": _round(p.time),
                "connection": p.connection,
                "open_connections": p.open_connections,
                "usable_connections": p.usable_connections,
                "circuits": ";".join(f"{c}:{n}" for c, n in sorted(p.circuits.items())),
            }


def hop_feedback_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    """The last hop feedback totals each tor host logged (none unless on)."""
    manifest = logs.manifest
    for host, role, lines in _tor_logs(logs):
        totals = last_totals(lines)
        if totals is None:
            continue
        row: dict[str, Any] = {
            "variant": manifest["variant"],
            "seed": manifest["seed"],
            "host": host,
            "role": role,
        }
        for name, value in asdict(totals).items():
            row[name] = ";".join(map(str, value)) if name in PER_POSITION else value
        yield row


def circuit_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    epoch = float(logs.manifest.get("clock_epoch", 0))
    for who, log in _client_logs(logs, "oniontrace"):
        del who["measured"]
        lines = logs.lines(log, parse_oniontrace.RECORD_MARKERS)
        for c in parse_oniontrace.parse_lines(lines, logs.on_error(log)):
            yield who | {
                "circuit_id": c.circuit_id,
                "status": c.status,
                "time_s": _round(c.time - epoch),
                "build_s": _round(c.build_time),
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


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def damage_rows(logs: RunLogs) -> Iterator[dict[str, Any]]:
    for d in logs.damaged():
        yield {
            "variant": logs.manifest["variant"],
            "seed": logs.manifest["seed"],
            "log": d.log,
            "skipped_lines": d.skipped,
            "lost_records": d.lost,
            "missing": int(d.missing),
            "empty": int(d.empty),
            "examples": " | ".join(d.examples),
        }


def _warn_damage(run_dir: Path, logs: RunLogs) -> None:
    for d in logs.damaged():
        print(f"warning: {run_dir}: {d.summary()}", file=sys.stderr)
        for example in d.examples:
            print(f"    {example}", file=sys.stderr)


def collect(spec: Spec, layout: Layout) -> Collected:
    """Parse every complete run of ``spec`` into its tables. Damaged log
    lines are skipped, counted in log_damage.csv and reported on stderr."""
    transfers: list[dict[str, Any]] = []
    circuits: list[dict[str, Any]] = []
    relays: list[dict[str, Any]] = []
    clients: list[dict[str, Any]] = []
    served: list[dict[str, Any]] = []
    placements: list[dict[str, Any]] = []
    hop_feedback: list[dict[str, Any]] = []
    damage: list[dict[str, Any]] = []
    runs = 0
    for seed in spec.seeds:
        for variant in spec.variants:
            run_dir = layout.run_dir(variant.name, seed)
            if run_status(run_dir) != STATUS_COMPLETE:
                continue
            started = time.monotonic()
            manifest = read_manifest(run_dir)
            logs = RunLogs(run_dir, manifest)
            transfers += transfer_rows(logs)
            circuits += circuit_rows(logs)
            relays += relay_rows(logs)
            clients += client_rows(manifest)
            served += served_rows(logs)
            placements += placement_rows(logs)
            hop_feedback += hop_feedback_rows(logs)
            damage += damage_rows(logs)
            _warn_damage(run_dir, logs)
            manifest["phases"]["collect_s"] = round(time.monotonic() - started, 3)
            write_manifest(run_dir, manifest)
            runs += 1
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    _write_csv(layout.transfers_csv, TRANSFER_COLUMNS, transfers)
    _write_csv(layout.circuits_csv, CIRCUIT_COLUMNS, circuits)
    _write_csv(layout.relays_csv, RELAY_COLUMNS, relays)
    _write_csv(layout.clients_csv, CLIENT_COLUMNS, clients)
    _write_csv(layout.served_csv, SERVED_COLUMNS, served)
    _write_csv(layout.placements_csv, PLACEMENT_COLUMNS, placements)
    _write_csv(layout.hop_feedback_csv, HOP_FEEDBACK_COLUMNS, hop_feedback)
    _write_csv(layout.log_damage_csv, LOG_DAMAGE_COLUMNS, damage)
    return Collected(runs, len(transfers), len(circuits), len(damage))
