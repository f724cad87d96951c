"""An experiment's results for a notebook: its tables as pandas DataFrames
(from the Parquet files collection writes; from the CSV files, read by the
tables' definitions, where a run predates them), the answers to its
hypotheses, its checks and each analysis's result (the JSON files
``runner analyze`` writes)::

    import runner
    results = runner.load("results/ci-small")
    results.transfers.groupby("variant").ttlb_s.median()
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from runner.experiments import TABLES
from runner.tables.collect import tables as all_tables
from runner.tables.definition import Table


@dataclass
class Results:
    """One experiment's collected results; each table is also an attribute
    (``results.transfers``)."""

    path: Path
    tables: dict[str, pd.DataFrame]
    answers: pd.DataFrame  # one row per hypothesis (answers.json)
    checks: dict[str, Any] = field(default_factory=dict)  # checks.json
    analyses: dict[str, Any] = field(default_factory=dict)  # analyses/<name>.json, by name

    def __repr__(self) -> str:
        """A short summary, for a notebook: the experiment, each table's row
        count (the empty ones by name), the answers, checks and analyses."""
        filled = ", ".join(f"{n} {len(t)}" for n, t in self.tables.items() if len(t))
        empty = ", ".join(n for n, t in self.tables.items() if not len(t))
        parts = [f"tables (rows): {filled or 'none'}"] + ([f"empty: {empty}"] if empty else [])
        passed = self.checks.get("passed")
        checks = "no checks" if passed is None else "checks passed" if passed else "checks failed"
        parts.append(checks)
        parts += [f"{len(self.answers)} answers", f"{len(self.analyses)} analyses"]
        return f"<Results {self.path.name} ({self.path}): {'; '.join(parts)}>"

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(f"{name!r}: no such table (the tables: {', '.join(sorted(tables))})")


def _from_csv(table: Table[Any], path: Path) -> pd.DataFrame:
    rows = table.read(path)
    columns = {c.attribute: c.name for c in table.schema}
    return pd.DataFrame(
        [{columns[k]: v for k, v in dataclasses.asdict(r).items()} for r in rows],
        columns=table.columns,
    )


def load(path: str | Path) -> Results:
    """The results collected under ``path`` (``results/<experiment>``)."""
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such results folder (run `runner collect` first)")
    tables = {}
    for table in all_tables(TABLES):
        parquet, csv = folder / f"{table.name}.parquet", folder / f"{table.name}.csv"
        if parquet.is_file():
            tables[table.name] = pd.read_parquet(parquet)
        elif csv.is_file():
            tables[table.name] = _from_csv(table, csv)
    answers_path, checks_path = folder / "answers.json", folder / "checks.json"
    answers = json.loads(answers_path.read_text()) if answers_path.is_file() else []
    checks = json.loads(checks_path.read_text()) if checks_path.is_file() else {}
    analyses = {
        path.stem: json.loads(path.read_text())
        for path in sorted((folder / "analyses").glob("*.json"))
    }
    return Results(folder, tables, pd.DataFrame(answers), checks, analyses)
