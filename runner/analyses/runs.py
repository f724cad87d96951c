"""What the runs were, as functions over the ``runs`` table's rows
(runner.tables.runs): the runs of a spec (``missing`` where none was
recorded), the ones that failed, the stale ones, and what they cost.

Which runs are stale is decided here once, by ``analyze``, which writes it
to ``stale.json``; the report and the console read that decision and never
compare identities themselves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.checks import Failure
from runner.layout import Layout
from runner.manifest import STATUS_MISSING
from runner.network.identity import TOOLS_PART
from runner.spec.model import Spec
from runner.tables.runs import RUNS, RunRow, changed_from_spec, missing_row

RunKey = tuple[str, int]  # (variant, seed)


def spec_runs(spec: Spec, rows: Iterable[RunRow]) -> list[RunRow]:
    """A row per run of ``spec``, in its order: the table's, or a missing
    one where the table has none."""
    by_run = {(r.variant, r.seed): r for r in rows}
    return [by_run.get((v.name, s)) or missing_row(v.name, s) for v, s in spec.runs()]


def read_spec_runs(spec: Spec, layout: Layout) -> list[RunRow]:
    """``spec_runs`` of the collected runs table (every run missing where
    none was collected)."""
    return spec_runs(spec, RUNS.read_from(layout))


def complete(runs: Iterable[RunRow]) -> list[RunRow]:
    return [r for r in runs if r.complete]


def missing(runs: Iterable[RunRow]) -> list[RunRow]:
    return [r for r in runs if r.status == STATUS_MISSING]


def failed(runs: Iterable[RunRow]) -> list[Failure]:
    """A failure per run that is not complete: its status, and the first
    line of its error."""
    return [
        Failure(r.variant, r.seed, "run", f"run {r.status}" + (f": {r.error}" if r.error else ""))
        for r in runs
        if not r.complete
    ]


@dataclass(frozen=True)
class StaleRun:
    """A complete run whose identity differs from what the spec gave when
    analyze read it, and the parts of its identity that differ."""

    variant: str
    seed: int
    changed: list[str]

    @property
    def name(self) -> str:
        return f"{self.variant}/seed-{self.seed}"


def stale(spec: Spec, runs: Iterable[RunRow]) -> list[StaleRun]:
    """Each complete run whose identity differs from what ``spec`` now
    gives, with the parts that differ (analyze's decision, stale.json)."""
    found = []
    for r in complete(runs):
        changed = changed_from_spec(spec, r)
        if changed:
            found.append(StaleRun(r.variant, r.seed, changed))
    return found


def tool_sets(runs: Iterable[RunRow]) -> set[str]:
    """The distinct sets of tool versions the complete runs were made with."""
    return {
        str(identity["parts"].get(TOOLS_PART))
        for r in complete(runs)
        if (identity := r.identity_record()) is not None
    }


def measured_clients(runs: Iterable[RunRow]) -> dict[RunKey, list[tuple[str, str]]]:
    """(host, class) of each complete run's measured clients."""
    return {(r.variant, r.seed): r.measured() for r in complete(runs)}


def cpu_hours(spec: Spec, runs: Sequence[RunRow], variants: Iterable[str]) -> float | None:
    """The CPU-hours of ``variants``' runs at every seed in use (the runs
    never made left out); None if a run did not record its CPU."""
    by_run = {(r.variant, r.seed): r for r in runs}
    total = 0.0
    for variant in variants:
        for seed in spec.seeds_of(variant):
            row = by_run.get((variant, seed))
            if row is None or row.status == STATUS_MISSING:
                continue
            if row.cpu_s is None:
                return None
            total += row.cpu_s
    return total / 3600
