"""The run store: every complete run's collected tables and its record,
kept in the repository (``results/store/<experiment>/<run key>/``) so that
a run outlives the machine that made it.

A stored run is a folder named by its run key (variant, seed and identity
fingerprint) holding ``run.json`` (its identity, tool versions, CPU,
failed checks, its row of the runs table, and each table's row count and
SHA-256) and one ``<table>.csv.gz`` per table in which it has rows,
gzipped with no name and a zero time so that the same rows are the same
bytes on any machine. Logs stay out. ``collect`` writes a run once (into a
temporary folder renamed into place, so no run is ever half-written); a
run collected again with the same tables is left as it is.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import TableError
from runner.layout import partial_path
from runner.manifest import RunRecord
from runner.tables.definition import Table
from runner.tables.runs import RUNS, RunRow

RUN_RECORD = "run.json"
FORMAT = 1
# The most bytes one stored run may take (its tables and run.json): a
# test holds every committed fixture's runs to it (docs/store.md).
RUN_BUDGET_BYTES = 200_000

# What writing a run did.
STORED, SAME, REPLACED = "stored", "same", "replaced"


def run_key(row: RunRow) -> str | None:
    """``<variant>-seed-<k>-<fingerprint>``; None for a run that recorded no identity."""
    if not row.identity:
        return None
    return f"{row.variant}-seed-{row.seed}-{row.identity}"


def gzip_bytes(text: str) -> bytes:
    """``text`` gzipped the same way everywhere: no file name, time zero."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as handle:
        handle.write(text.encode())
    return out.getvalue()


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class StoredRun:
    """A run in the store: where it is, its record, its runs-table row."""

    path: Path
    record: Mapping[str, Any]
    row: RunRow

    @property
    def key(self) -> str:
        return self.path.name

    @property
    def run(self) -> tuple[str, int]:
        return self.row.variant, self.row.seed

    @property
    def table_hashes(self) -> dict[str, str]:
        """Table name -> SHA-256 of its CSV text, for the tables with rows."""
        tables = self.record.get("tables") or {}
        return {name: str(t["sha256"]) for name, t in tables.items()}

    def rows(self, table: Table[Any]) -> list[Any]:
        """The run's rows of ``table`` (none where it had none)."""
        path = self.path / f"{table.name}.csv.gz"
        if not path.is_file():
            return []
        with gzip.open(path, "rt", newline="") as handle:
            return table.read_csv(handle, str(path))

    @property
    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())


@dataclass(frozen=True)
class TableText:
    """One run's rows of a table, as CSV text."""

    rows: int
    text: str


def run_record(
    experiment: str,
    key: str,
    record: RunRecord | None,
    row: RunRow,
    texts: Mapping[str, TableText],
) -> dict[str, Any]:
    """``run.json``: what the run is and made it, what it cost, and its
    tables; from its manifest (``record``) where there is one, else from its
    row of the runs table alone (a results folder whose run directories
    were left behind)."""
    return {
        "format": FORMAT,
        "experiment": experiment,
        "key": key,
        "variant": row.variant,
        "seed": row.seed,
        "identity": row.identity_record(),
        "backend": row.backend,
        "versions": row.tool_versions(),
        "cpu_s": row.cpu_s,
        "cpu_phases_s": record.cpu_phases_s if record is not None else None,
        "tables": {
            name: {"rows": t.rows, "sha256": sha256(t.text)} for name, t in sorted(texts.items())
        },
        "run": dict(zip(RUNS.columns, RUNS.texts(row), strict=True)),
    }


def table_texts(
    tables: Sequence[Table[Any]], rows: Mapping[str, Sequence[Any]]
) -> dict[str, TableText]:
    """Each table in which the run has rows, as CSV text."""
    return {
        t.name: TableText(len(rows[t.name]), t.csv_text(rows[t.name]))
        for t in tables
        if rows.get(t.name)
    }


def write_stored(
    store_dir: Path,
    experiment: str,
    record: RunRecord | None,
    row: RunRow,
    texts: Mapping[str, TableText],
) -> str:
    """Store a run (``texts``: each of its tables with rows, as CSV text):
    STORED, SAME where the store holds it with these tables, or REPLACED
    where it held other tables for it (its logs parse differently now). A
    run with no identity cannot be stored (ValueError)."""
    key = run_key(row)
    if key is None:
        raise ValueError(f"{row.variant}/seed-{row.seed}: no identity recorded: cannot store")
    final = store_dir / key
    existing = read_stored_if_any(final)
    hashes = {name: sha256(t.text) for name, t in texts.items()}
    if existing is not None and existing.table_hashes == hashes:
        return SAME
    work = partial_path(final)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name, t in sorted(texts.items()):
        (work / f"{name}.csv.gz").write_bytes(gzip_bytes(t.text))
    document = run_record(experiment, key, record, row, texts)
    (work / RUN_RECORD).write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    if existing is not None:
        shutil.rmtree(final)
    os.replace(work, final)
    return STORED if existing is None else REPLACED


def copy_stored(run: StoredRun, store_dir: Path) -> Path:
    """A stored run copied whole into ``store_dir`` (through a temporary folder)."""
    final = store_dir / run.key
    work = partial_path(final)
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(run.path, work)
    os.replace(work, final)
    return final


def read_stored(path: Path) -> StoredRun:
    """The stored run in folder ``path``; TableError naming the file where
    its record does not read."""
    where = path / RUN_RECORD
    try:
        document = json.loads(where.read_text())
        cells = document["run"]
        row = RUNS.parse_row(cells, [c for c in RUNS.schema if c.name in cells], str(where))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TableError(f"{where}: not a stored run's record ({exc})") from exc
    return StoredRun(path, document, row)


def read_stored_if_any(path: Path) -> StoredRun | None:
    return read_stored(path) if (path / RUN_RECORD).is_file() else None


def stored_runs(store_dir: Path) -> list[StoredRun]:
    """Every run stored in ``store_dir``, by key (none where there is none)."""
    if not store_dir.is_dir():
        return []
    return [
        read_stored(path)
        for path in sorted(store_dir.iterdir())
        if path.is_dir() and not path.name.endswith(".partial")
    ]


def by_run(stored: Iterable[StoredRun]) -> dict[tuple[str, int], list[StoredRun]]:
    """(variant, seed) -> its stored runs, by key."""
    found: dict[tuple[str, int], list[StoredRun]] = {}
    for s in sorted(stored, key=lambda s: s.key):
        found.setdefault(s.run, []).append(s)
    return found
