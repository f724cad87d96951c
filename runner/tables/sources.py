"""Which run each (variant, seed) of a spec is, where both the run
directories (``results/<exp>/<variant>/seed-<k>/``) and the run store
(runner/tables/store.py) hold runs, and the experiment's tables assembled
from them.

A run is taken from its run directory where that run is complete and its
identity is what the spec now gives; else from the store, where a stored
run's identity is (the first by key where runs of other tool versions are
stored for it); else the run directory's as it is (stale, failed or
missing). A stored run whose identity differs from what the spec asks is
never mixed in; a run in both places with the same identity is one run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from runner.layout import Layout
from runner.manifest import read_run_if_any, write_json_atomic
from runner.spec.model import Spec
from runner.tables.definition import Table
from runner.tables.runs import RUNS, RunRow, changed_from_spec, missing_row, run_row
from runner.tables.store import StoredRun, by_run, run_key, stored_runs

LOCAL = "run directory"


@dataclass(frozen=True)
class Source:
    """A run of the spec and where it is taken from."""

    row: RunRow  # its row of the runs table
    stored: StoredRun | None = None  # None: its run directory's (or missing)

    @property
    def run(self) -> tuple[str, int]:
        return self.row.variant, self.row.seed

    @property
    def name(self) -> str:
        return LOCAL if self.stored is None else self.stored.key


def fresh(spec: Spec, row: RunRow) -> bool:
    """A complete run whose identity is what ``spec`` now gives."""
    return row.complete and not changed_from_spec(spec, row)


def choose(spec: Spec, local: RunRow | None, stored: Sequence[StoredRun]) -> Source | None:
    """The run a (variant, seed) is, of its run directory's (``local``) and
    its stored runs; None where it has neither."""
    if local is not None and fresh(spec, local):
        # The same run stored (its key is its identity): its rows are the store's.
        same = next((s for s in stored if s.key == run_key(local)), None)
        return Source(local, same)
    usable = [s for s in stored if fresh(spec, s.row)]
    if usable:
        return Source(usable[0].row, usable[0])
    return None if local is None else Source(local)


def run_sources(spec: Spec, layout: Layout) -> list[Source]:
    """A source per run of ``spec``, in its order (a missing row where neither
    place holds the run)."""
    stored = by_run(stored_runs(layout.store_dir))
    found = []
    for variant, seed in spec.runs():
        record = read_run_if_any(layout.run_dir(variant.name, seed))
        local = None if record is None else run_row(record)
        chosen = choose(spec, local, stored.get((variant.name, seed), []))
        found.append(chosen or Source(missing_row(variant.name, seed)))
    return found


def write_runs(layout: Layout, sources: Sequence[Source]) -> list[RunRow]:
    """Write ``runs.csv`` and ``runs.parquet``: a row per run of the spec,
    from its run directory or the store, whichever it is taken from. The
    one writer of the runs table: ``assemble`` calls it with the tables."""
    rows = [s.row for s in sources]
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    RUNS.write(layout.experiment_dir, rows)
    return rows


def _stamp(sources: Sequence[Source]) -> list[list[Any]]:
    return [[s.row.variant, s.row.seed, s.name] for s in sources]


def assemble(
    layout: Layout,
    tables: Sequence[Table[Any]],
    sources: Sequence[Source],
    local_rows: Mapping[str, Sequence[Any]] | None = None,
    stored_before: frozenset[tuple[str, int]] = frozenset(),
) -> dict[str, int]:
    """Write each of ``tables``: the rows of the runs taken from their run
    directories (``local_rows``, as collect just parsed them; None: the
    tables as last written, less the rows of ``stored_before``, the runs
    they took from the store), then those of the runs taken from the store,
    in the spec's order of runs; and ``sources.json``, which says which is
    which, and the runs table of ``sources``. The rows written per table."""
    order = {s.run: i for i, s in enumerate(sources)}
    from_store = {s.run: s.stored for s in sources if s.stored is not None}
    dropped = set(from_store) | stored_before
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for table in tables:
        local = table.read_from(layout) if local_rows is None else local_rows[table.name]
        kept = [r for r in local if (r.variant, r.seed) not in dropped]
        stored = [r for s in from_store.values() for r in s.rows(table)]
        # Stable: a run's rows keep their order; runs the spec no longer has go last.
        rows = sorted(kept + stored, key=lambda r: order.get((r.variant, r.seed), len(order)))
        table.write(layout.experiment_dir, rows)
        counts[table.name] = len(rows)
    write_json_atomic(layout.sources_json, _stamp(sources))
    write_runs(layout, sources)
    return counts


def refresh(spec: Spec, layout: Layout, tables: Sequence[Table[Any]]) -> bool:
    """Assemble the tables again where the runs they should hold are not the
    ones they were last assembled from (runs stored or imported since, or a
    fresh clone with only the store); whether it did. Tables collected before
    the store, with no stored run to add, are left as they are."""
    sources = run_sources(spec, layout)
    previous = None
    if layout.sources_json.is_file():
        previous = json.loads(layout.sources_json.read_text())
    elif not any(s.stored is not None for s in sources):
        return False
    if previous == _stamp(sources) and layout.transfers_csv.is_file():
        return False
    before = frozenset((str(v), int(k)) for v, k, name in previous or [] if name != LOCAL)
    assemble(layout, tables, sources, stored_before=before)
    return True


def stored_seeds_beyond(spec: Spec, layout: Layout) -> dict[str, set[int]]:
    """Per variant, the seeds the store holds a complete run of the spec's
    identity at that ``spec`` does not run the variant at (a campaign's
    seeds, or another clone's)."""
    names = {v.name for v in spec.variants}
    beyond: dict[str, set[int]] = {}
    for s in stored_runs(layout.store_dir):
        variant, seed = s.run
        if variant in names and seed not in spec.seeds_of(variant) and fresh(spec, s.row):
            beyond.setdefault(variant, set()).add(seed)
    return beyond


def with_stored_seeds(spec: Spec, layout: Layout) -> tuple[Spec, list[int]]:
    """``spec`` with the seeds stored beyond its own (stored_seeds_beyond)
    added, each for the variants stored at it; and those seeds."""
    beyond = stored_seeds_beyond(spec, layout)
    extra = sorted(set().union(*beyond.values())) if beyond else []
    if not extra:
        return spec, []
    per_variant = {
        v.name: (*spec.seeds_of(v.name), *sorted(beyond.get(v.name, ()))) for v in spec.variants
    }
    seeds = (*spec.seeds, *extra)
    same = all(s == seeds for s in per_variant.values())
    return replace(spec, seeds=seeds, variant_seeds={} if same else per_variant), extra


def held_in_store(spec: Spec, layout: Layout) -> set[tuple[str, int]]:
    """The runs of ``spec`` with no complete run of its identity in their run
    directory that the store holds one of: nothing to run again. A run
    another variant to be run at its seed measures parameters from
    (``consensus_from``) reads its logs, so it is run again."""
    stored = by_run(stored_runs(layout.store_dir))
    held = set()
    for variant, seed in spec.runs():
        record = read_run_if_any(layout.run_dir(variant.name, seed))
        if record is not None and fresh(spec, run_row(record)):
            continue
        if any(fresh(spec, s.row) for s in stored.get((variant.name, seed), [])):
            held.add((variant.name, seed))
    measured_from = {
        (m.variant, seed)
        for v, seed in spec.runs()
        if (v.name, seed) not in held
        for m in v.consensus_from.values()
    }
    return held - measured_from


def without_runs(spec: Spec, runs: set[tuple[str, int]]) -> Spec:
    """``spec`` less ``runs`` (variant, seed)."""
    if not runs:
        return spec
    per_variant = {
        v.name: tuple(s for s in spec.seeds_of(v.name) if (v.name, s) not in runs)
        for v in spec.variants
    }
    return replace(spec, variant_seeds=per_variant)
