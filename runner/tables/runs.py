"""The ``runs`` table: one row per run of the spec, from its record
(runner/manifest.py), so that the analyses and the report read what the
runs were (status, backend, identity, phase times, CPU, measured clients,
where it ran) from a table and never open a run directory.

It is written with the tables alone (runner.tables.sources.write_runs,
as collect assembles them, or as the tables are assembled again from the
run store), so that it says what the run directories (and the run store)
held when those tables were made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.manifest import STATUS_COMPLETE, STATUS_MISSING, RunRecord, read_run_if_any
from runner.network.backends import backend_named
from runner.network.identity import changed_parts, spec_parts
from runner.spec.model import Spec
from runner.tables.definition import Table, column

# The phases whose wall seconds a row holds, each as ``<phase>_s``.
PHASES = ("generate", "simulate", "wait", "bootstrap", "collect")
# The relays a run's size counts (the seed plan scales by them).
_COUNTED_RELAYS = ("guard", "middle", "exit")


@dataclass(frozen=True)
class RunRow:
    """A run of the spec: what its record says, or ``missing`` where it has none."""

    variant: str
    seed: int
    status: str  # generated, complete, failed or missing
    backend: str = column(default="")
    error: str = column(default="")  # the first line of why it failed
    identity: str = column(default="")  # its fingerprint (runner.network.identity)
    # The identity's parts, and the tools' versions, as JSON objects: their
    # names are the identity's and the tools', not the table's.
    identity_parts: str = column(default="")
    versions: str = column(default="")
    # Wall seconds per phase; empty where the run did not record it
    # (``wait`` and ``bootstrap`` are the local backend's).
    generate_s: float | None = column(default=None)
    simulate_s: float | None = column(default=None)
    wait_s: float | None = column(default=None)
    bootstrap_s: float | None = column(default=None)
    collect_s: float | None = column(default=None)
    cpu_s: float | None = column(default=None)  # every phase's; empty where not recorded
    # Each measured client as ``host=class``.
    measured_clients: tuple[str, ...] = column(sep=" ", default=())
    clients: int = column(default=0)
    relays: int = column(default=0)
    hosts: int = column(default=0)
    # Where it ran: the node, the runs at once in its pool and the CPUs they shared.
    node: str = column(default="")
    jobs: int | None = column(default=None)
    machine_cpus: int | None = column(default=None)
    # The rule its spec's verdicts were to be decided by when it was
    # generated (runner.spec.rule); "" before runs recorded it.
    rule: str = column(default="")

    @property
    def complete(self) -> bool:
        return self.status == STATUS_COMPLETE

    def phase_s(self, name: str) -> float | None:
        value: float | None = getattr(self, f"{name}_s")
        return value

    def measured(self) -> list[tuple[str, str]]:
        """(host, class) of each measured client."""
        return [(host, cls) for host, _, cls in (c.partition("=") for c in self.measured_clients)]

    def identity_record(self) -> dict[str, Any] | None:
        """The identity as the run recorded it; None where it recorded none."""
        if not self.identity_parts:
            return None
        return {"fingerprint": self.identity, "parts": json.loads(self.identity_parts)}

    def tool_versions(self) -> dict[str, str | None]:
        return dict(json.loads(self.versions)) if self.versions else {}


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def run_row(run: RunRecord) -> RunRow:
    """The row of a run's record."""
    hosts = run.hosts.values()
    identity = run.identity
    placement = run.placement
    return RunRow(
        variant=run.variant,
        seed=run.seed,
        status=str(run.status),
        backend=run.backend or "",
        error=run.error.splitlines()[0] if run.error else "",
        identity=str(identity.get("fingerprint", "")) if identity else "",
        identity_parts=_json(identity.get("parts", {})) if identity else "",
        versions=_json(run.versions) if run.versions else "",
        **{f"{name}_s": run.phase_s(name) for name in PHASES},
        cpu_s=run.cpu_seconds,
        measured_clients=tuple(f"{host}={cls}" for host, cls in run.measured_clients()),
        clients=sum(1 for h in hosts if h.get("role") == "client"),
        relays=sum(1 for h in hosts if h.get("role") in _COUNTED_RELAYS),
        hosts=len(hosts),
        node=str(placement.get("node") or ""),
        jobs=placement.get("jobs"),
        machine_cpus=placement.get("machine_cpus"),
        rule=run.rule,
    )


def changed_from_spec(spec: Spec, row: RunRow) -> list[str]:
    """The parts of the run's identity that differ from what ``spec`` now
    gives for its variant and seed (every part where it recorded none); a
    variant the spec no longer has is a part too. A seed the spec does not
    list is not: a run of another seed of the same design is the spec's."""
    if row.variant not in {v.name for v in spec.variants}:
        return ["variant (not in the spec)"]
    expected = spec_parts(spec, spec.variant(row.variant), row.seed, backend_named(row.backend))
    return changed_parts(row.identity_record(), expected)


def missing_row(variant: str, seed: int) -> RunRow:
    """A run of the spec that has no record."""
    return RunRow(variant, seed, STATUS_MISSING)


def run_rows(spec: Spec, layout: Layout) -> list[RunRow]:
    """A row per run of ``spec``, from its run directory's record."""
    rows = []
    for variant, seed in spec.runs():
        record = read_run_if_any(layout.run_dir(variant.name, seed))
        rows.append(missing_row(variant.name, seed) if record is None else run_row(record))
    return rows


def _logs_row(logs: RunLogs) -> Iterator[RunRow]:
    yield run_row(logs.run)


# Written whole (every run, complete or not: runner.tables.sources.write_runs), not per run's logs.
RUNS = Table("runs", RunRow, _logs_row)
