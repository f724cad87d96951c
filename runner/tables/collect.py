"""Collect every complete run's logs into the tables the analyses declare.

The registry (runner.experiments) hands in the tables its analyses add;
every table is written for every experiment (empty when its logs say
nothing), as ``<name>.csv`` and ``<name>.parquet``, and each collected
run is kept in the run store (runner/tables/store.py). ``log_damage`` is
every experiment's: one row per log that was missing, empty or had lines
that could not be read (those lines are skipped and counted, see
runner/logs/damage.py). So is ``runs``: one row per run of the spec, from
its record (runner/tables/runs.py), once collection has recorded its time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.console import TERMINAL, Console
from runner.errors import RunError
from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.manifest import RunRecord, read_run_if_any, record_collected
from runner.spec.model import Spec
from runner.tables.definition import Table
from runner.tables.runs import RUNS, run_row
from runner.tables.schema import CLIENTS, LOG_DAMAGE, TRANSFERS, ClientRow, TransferRow
from runner.tables.sources import assemble, run_sources
from runner.tables.store import run_key, table_texts, write_stored

# A run that recorded no identity (made before runs recorded one) is not stored.
NOT_STORED = "not stored"


@dataclass(frozen=True)
class Collected:
    runs: int  # the run directories collected
    rows: dict[str, int]  # table name -> rows written
    damaged_logs: int = 0
    from_store: int = 0  # the runs the tables took from the run store
    # What storing each collected run did (runner.tables.store) -> its runs.
    stored: dict[str, list[str]] = field(default_factory=dict)

    def line(self, where: str) -> str:
        """What collect says it did: the runs, and the rows of each table
        that has any (every table is written; one of an analysis the spec
        does not ask for is empty, and naming it says nothing)."""
        counts = ", ".join(f"{n} {name}" for name, n in self.rows.items() if n)
        runs = f"{self.runs} run{'' if self.runs == 1 else 's'}"
        if self.from_store:
            runs += f" and {self.from_store} from the run store"
        return f"collected {runs}: {counts or 'no rows'} -> {where}"


def parsed_tables(declared: Sequence[Table[Any]]) -> list[Table[Any]]:
    """The tables read from the runs' logs: the declared ones (each once:
    runner.experiments.tables_of), then log damage (known once every other
    table has read its logs)."""
    return [*declared, LOG_DAMAGE]


def tables(declared: Sequence[Table[Any]]) -> list[Table[Any]]:
    """Every table collection writes: the parsed ones, then the runs."""
    return [*parsed_tables(declared), RUNS]


def _warn_damage(run_dir: Path, logs: RunLogs, console: Console) -> None:
    for d in logs.damaged():
        console.err(f"warning: {run_dir}: {d.summary()}")
        for example in d.examples:
            console.err(f"    {example}")


def logged_rows(
    layout: Layout, variant: str, seed: int
) -> tuple[list[ClientRow], list[TransferRow]]:
    """One complete run's clients and transfers, read from its logs now,
    before the experiment is collected (a variant's parameters measured
    from another's run, runner.analyses.measured_params); a RunError where
    the run is not complete."""
    run_dir = layout.run_dir(variant, seed)
    record = read_run_if_any(run_dir)
    if record is None or not record.complete:
        raise RunError(f"{variant}/seed-{seed} is not complete ({run_dir})")
    logs = RunLogs(run_dir, record, {"tor": ()})
    return list(CLIENTS.rows(logs)), list(TRANSFERS.rows(logs))


def collect(
    spec: Spec, layout: Layout, declared: Sequence[Table[Any]], console: Console = TERMINAL
) -> Collected:
    """Parse every complete run of ``spec`` into the ``declared`` tables
    (the registry's, runner.experiments.TABLES), store each in the run store,
    and write the experiment's tables from those runs and the stored runs
    the spec asks for that no run directory holds (runner.tables.sources).
    Damaged log lines are skipped, counted in log_damage.csv and reported on
    stderr."""
    wanted = parsed_tables(declared)
    rows: dict[str, list[Any]] = {t.name: [] for t in wanted}
    stored = parse_and_store(spec, layout, wanted, rows, console)
    parsed_runs = {_run_of(name) for names in stored.values() for name in names}
    runs = len(parsed_runs)
    sources = run_sources(spec, layout)
    # Taken from the store alone: no run directory here holds them.
    from_store = sum(1 for s in sources if s.stored is not None and s.run not in parsed_runs)
    if not runs and not from_store:  # no tables from nothing: compare would report empty ones
        return Collected(0, {t.name: 0 for t in wanted})
    counts = assemble(layout, wanted, sources, rows)  # and the runs table
    return Collected(runs, counts, counts[LOG_DAMAGE.name], from_store, stored)


def _run_of(name: str) -> tuple[str, int]:
    """(variant, seed) of ``<variant>/seed-<k>``."""
    variant, seed = name.rsplit("/seed-", 1)
    return variant, int(seed)


def parse_and_store(
    spec: Spec,
    layout: Layout,
    wanted: Sequence[Table[Any]],
    rows: dict[str, list[Any]] | None = None,
    console: Console = TERMINAL,
) -> dict[str, list[str]]:
    """Parse each complete run of ``spec`` in its run directory into the
    ``wanted`` tables and keep it in the run store; add its rows to ``rows``
    where given. What storing did (runner.tables.store) -> its runs
    (``<variant>/seed-<k>``). The experiment's tables are left as they are."""
    tor_markers = tuple(dict.fromkeys(m for t in wanted for m in t.tor_markers))
    stored: dict[str, list[str]] = {}
    for variant, seed in spec.runs():
        run_dir = layout.run_dir(variant.name, seed)
        record = read_run_if_any(run_dir)
        if record is None or not record.complete:
            continue
        parsed, record = _parse_run(run_dir, record, wanted, tor_markers, console)
        for name, found in parsed.items():
            if rows is not None:
                rows[name] += found
        outcome = _store_run(layout, record, wanted, parsed)
        stored.setdefault(outcome, []).append(f"{variant.name}/seed-{seed}")
    return stored


def _parse_run(
    run_dir: Path,
    record: RunRecord,
    wanted: Sequence[Table[Any]],
    tor_markers: tuple[str, ...],
    console: Console,
) -> tuple[dict[str, list[Any]], RunRecord]:
    """One complete run's rows of each table, and its record with the time
    collecting it took."""
    started = time.monotonic()
    cpu_started = time.thread_time()
    logs = RunLogs(run_dir, record, {"tor": tor_markers})
    parsed = {table.name: list(table.rows(logs)) for table in wanted}
    _warn_damage(run_dir, logs, console)
    collected = record_collected(
        run_dir,
        record,
        collect_s=round(time.monotonic() - started, 3),
        collect_cpu_s=round(time.thread_time() - cpu_started, 3),
    )
    return parsed, collected


def _store_run(
    layout: Layout, record: RunRecord, wanted: Sequence[Table[Any]], parsed: dict[str, list[Any]]
) -> str:
    """Store a collected run (NOT_STORED where it recorded no identity)."""
    row = run_row(record)
    if run_key(row) is None:
        return NOT_STORED
    texts = table_texts(wanted, parsed)
    return write_stored(layout.store_dir, layout.experiment, record, row, texts)
