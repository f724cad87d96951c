"""``runner store import``: runs collected elsewhere (a results folder, or a
``.tar``/``.tar.gz`` archive of one, from a cluster or another machine)
added to this clone's run store.

A results folder gives its runs two ways: an experiment's collected tables
(``<exp>/runs.csv`` and the other tables, split here run by run) and its
own run store (``store/<exp>/<run key>/``). Every complete run is checked
before anything is written: one whose experiment has no spec here, or
whose identity differs from what its spec now gives, or whose tables
differ from a run already stored under the same identity, is refused,
naming both; then nothing is imported.
"""

from __future__ import annotations

import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.errors import TableError
from runner.layout import STORE, Layout
from runner.manifest import read_run_if_any
from runner.network.backends import backend_named
from runner.spec.model import Spec
from runner.tables.definition import Table
from runner.tables.runs import RUNS, RunRow, changed_from_spec
from runner.tables.store import (
    RUN_RECORD,
    STORED,
    StoredRun,
    TableText,
    copy_stored,
    read_stored,
    read_stored_if_any,
    run_key,
    sha256,
    table_texts,
    write_stored,
)

ARCHIVES = (".tar", ".tar.gz", ".tgz")


@dataclass(frozen=True)
class Candidate:
    """A complete run found in what is imported, ready to store."""

    experiment: str  # its results folder's name: <spec name>[-local]
    row: RunRow
    texts: Mapping[str, TableText]
    where: str  # where it was found, as messages name it
    stored: StoredRun | None = None  # found in a run store: copied as it is
    run_dir: Path | None = None  # its run directory, where its manifest may be

    @property
    def hashes(self) -> dict[str, str]:
        if self.stored is not None:
            return self.stored.table_hashes
        return {name: sha256(t.text) for name, t in self.texts.items()}


@dataclass(frozen=True)
class Imported:
    added: list[str] = field(default_factory=list)  # run keys newly stored
    present: list[str] = field(default_factory=list)  # already stored, the same tables
    refused: list[str] = field(default_factory=list)  # why each refused run was refused
    skipped: int = 0  # runs that were not complete


def split_by_run(
    experiment_dir: Path, tables: Sequence[Table[Any]]
) -> dict[tuple[str, int], dict[str, list[Any]]]:
    """An experiment's collected tables, run by run: (variant, seed) ->
    table name -> its rows."""
    found: dict[tuple[str, int], dict[str, list[Any]]] = {}
    for table in tables:
        for row in table.read_if_present(experiment_dir / f"{table.name}.csv"):
            found.setdefault((row.variant, row.seed), {}).setdefault(table.name, []).append(row)
    return found


def collected_candidates(
    experiment_dir: Path, tables: Sequence[Table[Any]]
) -> tuple[list[Candidate], int]:
    """The complete runs of an experiment's collected tables, and how many
    of its runs were not complete."""
    rows = split_by_run(experiment_dir, tables)
    found, skipped = [], 0
    for run in RUNS.read(experiment_dir / "runs.csv"):
        if not run.complete:
            skipped += run.status != "missing"
            continue
        where = f"{experiment_dir}/runs.csv"
        texts = table_texts(tables, rows.get((run.variant, run.seed), {}))
        run_dir = experiment_dir / run.variant / f"seed-{run.seed}"
        found.append(Candidate(experiment_dir.name, run, texts, where, run_dir=run_dir))
    return found, skipped


def stored_candidates(store_root: Path) -> list[Candidate]:
    """The runs of a run store (``store/``: a folder per experiment)."""
    return [
        Candidate(path.parent.name, s.row, {}, str(path), s)
        for path in sorted(store_root.glob(f"*/*/{RUN_RECORD}"))
        if not path.parent.name.endswith(".partial")
        for s in [read_stored(path.parent)]
    ]


def candidates(root: Path, tables: Sequence[Table[Any]]) -> tuple[list[Candidate], int]:
    """Every complete run under ``root``: a results folder (its experiments'
    collected tables and its run store) or one experiment's folder."""
    found: list[Candidate] = []
    skipped = 0
    for runs_csv in sorted(root.rglob("runs.csv")):
        if STORE in runs_csv.relative_to(root).parts:
            continue
        more, not_complete = collected_candidates(runs_csv.parent, tables)
        found += more
        skipped += not_complete
    for store in sorted(p for p in root.rglob(STORE) if p.is_dir()):
        found += stored_candidates(store)
    return found, skipped


def refusal(candidate: Candidate, specs: Mapping[str, Spec], results: Path) -> str | None:
    """Why ``candidate`` cannot be stored here, or None."""
    row = candidate.row
    identity = row.identity_record()
    name = str((identity or {}).get("parts", {}).get("experiment", ""))
    spec = specs.get(name)
    what = f"{candidate.where}: {row.variant}/seed-{row.seed}"
    if identity is None or run_key(row) is None:
        return f"{what}: records no identity"
    if spec is None:
        return f"{what}: experiment {name!r} has no spec here (known: {', '.join(sorted(specs))})"
    changed = changed_from_spec(spec, row)
    if changed:
        return (
            f"{what}: its identity is not what {spec.path} now gives "
            f"(differs in {', '.join(changed)})"
        )
    target = store_dir_of(spec, row, results) / str(run_key(row))
    existing = read_stored_if_any(target)
    if existing is not None and existing.table_hashes != candidate.hashes:
        differ = sorted(
            n
            for n in set(existing.table_hashes) | set(candidate.hashes)
            if existing.table_hashes.get(n) != candidate.hashes.get(n)
        )
        return (
            f"{what}: its tables ({', '.join(differ)}) differ from the run stored under "
            f"the same identity in {target}"
        )
    return None


def refusals(found: Sequence[Candidate], specs: Mapping[str, Spec], results: Path) -> list[str]:
    """Why each refused run is refused: against the specs and the store,
    and where two runs found under one identity have different tables."""
    refused = [why for c in found if (why := refusal(c, specs, results)) is not None]
    first: dict[str, Candidate] = {}
    for c in found:
        key = str(run_key(c.row))
        other = first.setdefault(key, c)
        if other is not c and other.hashes != c.hashes:
            refused.append(
                f"{c.where}: {c.row.variant}/seed-{c.row.seed}: its tables differ from "
                f"those of the same identity in {other.where}"
            )
    return refused


def store_dir_of(spec: Spec, row: RunRow, results: Path) -> Path:
    """Where a run of ``spec`` is stored: by its backend's results folder name."""
    return Layout(results, backend_named(row.backend).experiment_name(spec.name)).store_dir


def spec_of(candidate: Candidate, specs: Mapping[str, Spec]) -> Spec:
    identity = candidate.row.identity_record() or {}
    return specs[str(identity.get("parts", {}).get("experiment"))]


@contextmanager
def unpacked(path: Path) -> Iterator[Path]:
    """The folder ``path`` is, or an archive of one unpacked into a
    temporary folder (its members may not leave it)."""
    if path.is_dir():
        yield path
        return
    if not path.is_file() or not path.name.endswith(ARCHIVES):
        raise TableError(f"{path}: expected a results folder or a {'/'.join(ARCHIVES)} archive")
    with tempfile.TemporaryDirectory(prefix="store-import-") as tmp:
        try:
            with tarfile.open(path) as archive:
                archive.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise TableError(f"{path}: cannot unpack ({exc})") from exc
        yield Path(tmp)


def import_runs(
    path: Path, specs: Mapping[str, Spec], results: Path, tables: Sequence[Table[Any]]
) -> Imported:
    """Store every complete run found in ``path`` under ``results``'s run
    store, checked against ``specs`` (by name) first: where any is refused,
    none is stored."""
    with unpacked(path) as root:
        found, skipped = candidates(root, tables)
        if not found and not skipped:
            # A campaign stores its runs without collecting them, so its
            # experiment folder alone holds nothing to import.
            raise TableError(
                f"{path}: no run found: expected collected runs (an experiment's runs.csv) "
                f"or a run store ({STORE}/) under it; a campaign's runs are in its results "
                f"folder's {STORE}/, so give the results folder"
            )
        refused = refusals(found, specs, results)
        if refused:
            return Imported(refused=refused, skipped=skipped)
        added, present = [], []
        for c in found:
            key = str(run_key(c.row))
            target = store_dir_of(spec_of(c, specs), c.row, results)
            if c.stored is not None:
                if read_stored_if_any(target / key) is None:
                    copy_stored(c.stored, target)
                    added.append(key)
                else:
                    present.append(key)
                continue
            record = read_run_if_any(
                Path(c.where.split(" (")[0]).parent / c.row.variant / f"seed-{c.row.seed}"
            )
            outcome = write_stored(target, target.name, record, c.row, c.texts)
            (added if outcome == STORED else present).append(key)
        return Imported(sorted(set(added)), sorted(set(present) - set(added)), [], skipped)
