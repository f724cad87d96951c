"""Collect every complete run's logs into the tables the analyses declare.

The registry (runner.experiments) hands in the tables its analyses add;
every table is written for every experiment (empty when its logs say nothing), one
CSV per table. ``log_damage.csv`` is every experiment's: one row per log that
was missing, empty or had lines that could not be read (those lines are
skipped and counted, see runner/logs/damage.py).
"""

from __future__ import annotations

import csv
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.manifest import (
    CPU_PHASES,
    STATUS_COMPLETE,
    read_manifest,
    run_status,
    write_manifest,
)
from runner.spec.model import Spec
from runner.tables.schema import Table

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


@dataclass(frozen=True)
class Collected:
    runs: int
    rows: dict[str, int]  # table name -> rows written
    damaged_logs: int = 0


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


LOG_DAMAGE = Table("log_damage", LOG_DAMAGE_COLUMNS, damage_rows)


def tables(declared: Sequence[Table]) -> list[Table]:
    """Every table, once, in the order declared; log damage last (it is
    known once every other table has read its logs)."""
    seen: dict[str, Table] = {}
    for table in declared:
        seen.setdefault(table.name, table)
    return [*seen.values(), LOG_DAMAGE]


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def _warn_damage(run_dir: Path, logs: RunLogs) -> None:
    for d in logs.damaged():
        print(f"warning: {run_dir}: {d.summary()}", file=sys.stderr)
        for example in d.examples:
            print(f"    {example}", file=sys.stderr)


def collect(spec: Spec, layout: Layout, declared: Sequence[Table]) -> Collected:
    """Parse every complete run of ``spec`` into the ``declared`` tables
    (the registry's, runner.experiments.TABLES). Damaged log lines are
    skipped, counted in log_damage.csv and reported on stderr."""
    wanted = tables(declared)
    tor_markers = tuple(dict.fromkeys(m for t in wanted for m in t.tor_markers))
    rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in wanted}
    runs = 0
    for seed in spec.seeds:
        for variant in spec.variants:
            run_dir = layout.run_dir(variant.name, seed)
            if run_status(run_dir) != STATUS_COMPLETE:
                continue
            started = time.monotonic()
            cpu_started = time.thread_time()
            manifest = read_manifest(run_dir)
            logs = RunLogs(run_dir, manifest, {"tor": tor_markers})
            for table in wanted:
                rows[table.name] += table.rows(logs)
            _warn_damage(run_dir, logs)
            manifest["phases"]["collect_s"] = round(time.monotonic() - started, 3)
            if isinstance(manifest.get(CPU_PHASES), dict):
                manifest[CPU_PHASES]["collect"] = round(time.thread_time() - cpu_started, 3)
            write_manifest(run_dir, manifest)
            runs += 1
    if not runs:  # no tables from nothing: compare would report empty ones
        return Collected(0, {t.name: 0 for t in wanted})
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    for table in wanted:
        _write_csv(layout.table_csv(table.name), table.columns, rows[table.name])
    counts = {name: len(table_rows) for name, table_rows in rows.items()}
    return Collected(runs, counts, counts[LOG_DAMAGE.name])
