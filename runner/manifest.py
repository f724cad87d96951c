"""A run's ``manifest.json``: what produced the run and what each host is.

The only module that knows the manifest's keys. ``RunRecord`` reads it,
typed; each stage adds its part through a ``record_*`` function
(generation, the run, its failure, collection; the report's checks are
checks.json's, runner/analyses/analyze.py). The
keys stay those older runs wrote, so their manifests load as they are, and
keys this module does not name are kept as read.

Written atomically (temporary file, then rename), so a reader never sees
half a manifest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

MANIFEST = "manifest.json"

# CPU seconds a run used, per phase (generate: its wall time, see
# runner/execute/run_all.py; simulate: Shadow's or the local processes'; collect):
# its cost.
CPU_PHASES = "cpu_phases_s"

STATUS_GENERATED = "generated"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"
# Not a manifest's: what the runs table says of a run with none.
STATUS_MISSING = "missing"

# One host as generation records it (runner.network.generate.host_records).
# Not every key is there in every manifest: older runs lack the later ones.
HostInfo = TypedDict(
    "HostInfo",
    {
        "role": str,
        "class": str,
        "variant": str,
        "measured": bool,
        "workload": str | None,
        "link": str | None,
        "client_relay": bool,
        "client_relay_as": str | None,
        "origin": str | None,  # the measured relay it was drawn as, if any
        "torrc_sections": list[str],
        # A relay's limit on non-relay clients: rate_bytes, burst_bytes, per_client.
        "client_limit": dict[str, Any] | None,
        "ip": str,
        "region": str,
        "network_node_id": int,
        "bandwidth_up_bits": int,
        "bandwidth_down_bits": int,
        # A measured client's relays in a variant that pins its path:
        # guards, middles, exits (runner.network.pinned_paths).
        "pinned_path": dict[str, list[str]],
    },
    total=False,
)


@dataclass(frozen=True)
class WhereRan:
    """Where a run ran, and beside how many others (the contention its CPU
    time was measured under)."""

    node: str
    threads: int
    cpus: list[int] | None
    cpu_pinning: bool
    slurm_job: str | None
    jobs: int | None  # runs at once in its pool
    machine_cpus: int | None  # the CPUs they shared


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunRecord:
    """A run's manifest, typed. ``document`` is the JSON object as read (or
    about to be written); the properties are what the stages read of it."""

    document: Mapping[str, Any]

    @property
    def variant(self) -> str:
        return str(self.document["variant"])

    @property
    def seed(self) -> int:
        return int(self.document["seed"])

    @property
    def status(self) -> str | None:
        status = self.document.get("status")
        return None if status is None else str(status)

    @property
    def complete(self) -> bool:
        return self.status == STATUS_COMPLETE

    @property
    def backend(self) -> str | None:
        backend = self.document.get("backend")
        return None if backend is None else str(backend)

    @property
    def error(self) -> str | None:
        """Why the run failed, where it did."""
        error = self.document.get("error")
        return None if error is None else str(error)

    @property
    def hosts(self) -> dict[str, HostInfo]:
        hosts: dict[str, HostInfo] = self.document.get("hosts") or {}
        return hosts

    def measured_clients(self) -> list[tuple[str, str]]:
        """(host, class) of each measured client, by host."""
        return [
            (h, str(i.get("class", ""))) for h, i in sorted(self.hosts.items()) if i.get("measured")
        ]

    @property
    def clock_epoch(self) -> float:
        """Where the run's clock started (seconds; 0 under Shadow)."""
        return float(self.document.get("clock_epoch") or 0)

    @property
    def local_network(self) -> str | None:
        """Where a local run's hosts live (runner.network.backends)."""
        network = self.document.get("local_network")
        return None if network is None else str(network)

    @property
    def bootstrap_s(self) -> float:
        """The time before the measured period (planned, or as a local run took it)."""
        return float((self.document.get("duration") or {}).get("bootstrap_s", 0))

    @property
    def measure_s(self) -> float:
        return float((self.document.get("duration") or {}).get("measure_s", 0))

    @property
    def identity(self) -> dict[str, Any] | None:
        """``{"fingerprint": ..., "parts": {...}}`` (runner.network.identity);
        None where the run recorded none."""
        identity = self.document.get("identity")
        return identity if isinstance(identity, dict) else None

    @property
    def rule(self) -> str:
        """The fingerprint of the rule its spec stated when it was generated
        (runner.spec.rule); "" for a run from before runs recorded it."""
        spec = self.document.get("spec") or {}
        return str(spec.get("rule") or "")

    @property
    def versions(self) -> dict[str, str | None]:
        return dict(self.document.get("versions") or {})

    def phase_s(self, name: str) -> float | None:
        """The wall seconds of a phase (generate, simulate, wait, collect,
        and a local run's bootstrap and traffic); None where not recorded."""
        value = (self.document.get("phases") or {}).get(f"{name}_s")
        return None if value is None else float(value)

    @property
    def cpu_seconds(self) -> float | None:
        """The CPU seconds the run used in all its phases; None where it does
        not say (runs made before CPU was recorded)."""
        phases = self.document.get(CPU_PHASES)
        if not isinstance(phases, dict) or "simulate" not in phases:
            return None
        return float(sum(phases.values()))

    @property
    def cpu_phases_s(self) -> dict[str, float]:
        """The CPU seconds of each phase (generate, simulate, collect) where recorded."""
        phases = self.document.get(CPU_PHASES)
        return {k: float(v) for k, v in phases.items()} if isinstance(phases, dict) else {}

    @property
    def cpu_profile(self) -> dict[str, Any]:
        """Where a simulated run's CPU went: Shadow's own threads, each
        host's programs, and what no sample saw (empty for older runs)."""
        return dict(self.document.get("cpu_profile") or {})

    @property
    def process_cpu_s(self) -> dict[str, dict[str, float]]:
        """host -> program -> CPU seconds over the measured period (local runs)."""
        return dict(self.document.get("cpu_s") or {})

    @property
    def placement(self) -> dict[str, Any]:
        """Where the run ran: node, threads, CPUs, jobs at once, the machine's CPUs."""
        placement = self.document.get("placement")
        return placement if isinstance(placement, dict) else {}

    def _with(self, **fields: Any) -> RunRecord:
        return RunRecord({**self.document, **fields})

    def _with_phases(self, **seconds: float) -> RunRecord:
        """With these phases' wall seconds (``generate=1.2``: ``generate_s``)."""
        phases = dict(self.document.get("phases") or {})
        phases |= {f"{name}_s": value for name, value in seconds.items()}
        return self._with(phases=phases)


def read_run(run_dir: Path) -> RunRecord:
    """The run's record; OSError or ValueError where it has no readable one."""
    data = json.loads((run_dir / MANIFEST).read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{run_dir / MANIFEST}: not a JSON object")
    return RunRecord(data)


def read_run_if_any(run_dir: Path) -> RunRecord | None:
    try:
        return read_run(run_dir)
    except (OSError, ValueError):
        return None


def write_run(run_dir: Path, record: RunRecord) -> None:
    write_json_atomic(run_dir / MANIFEST, dict(record.document))


def run_status(run_dir: Path) -> str | None:
    """The status of a run directory, or None if it has no readable manifest."""
    record = read_run_if_any(run_dir)
    return None if record is None else str(record.document.get("status"))


def record_generated(
    run_dir: Path,
    *,
    experiment: str,
    variant: str,
    seed: int,
    backend: str,
    local_network: str | None,
    clock_epoch: float,
    spec_path: str,
    spec_sha256: str,
    identity: dict[str, Any],
    variant_settings: dict[str, Any],
    bootstrap_s: float,
    measure_s: float,
    versions: dict[str, str | None],
    programs: dict[str, str],
    command: list[str],
    hosts: dict[str, HostInfo],
    generate_s: float,
    rule: str = "",
) -> RunRecord:
    """Write the generated run's record: what it is, what made it, its
    hosts, and the rule its spec's verdicts were then to be decided by
    (runner.spec.rule)."""
    record = RunRecord(
        {
            "experiment": experiment,
            "variant": variant,
            "seed": seed,
            "backend": backend,
            "local_network": local_network,
            # Local runs set their clock's start when they start.
            "clock_epoch": clock_epoch,
            "status": STATUS_GENERATED,
            "spec": {"path": spec_path, "sha256": spec_sha256, "rule": rule},
            "identity": identity,
            "variant_settings": variant_settings,
            "duration": {"bootstrap_s": bootstrap_s, "measure_s": measure_s},
            "versions": versions,
            "programs": programs,
            "command": command,
            "hosts": hosts,
            "phases": {"generate_s": generate_s},
        }
    )
    write_run(run_dir, record)
    return record


def record_cpu_profile(record: RunRecord, profile: Mapping[str, Any]) -> RunRecord:
    """A simulated run's CPU by where it went (runner.execute.child_cpu); not yet written."""
    return record._with(cpu_profile=dict(profile))


def record_local_clock(
    record: RunRecord,
    *,
    clock_epoch: float,
    process_cpu_s: dict[str, dict[str, float]],
    bootstrap_s: float,
    measure_s: float,
    phases_s: dict[str, float],
) -> RunRecord:
    """A local run's clock, its processes' CPU, the measured period as it
    ran in real time (the tables read them) and the wall seconds of its
    phases (``bootstrap_s``, ``traffic_s``); not yet written."""
    return record._with(
        clock_epoch=clock_epoch,
        cpu_s=process_cpu_s,
        duration={"bootstrap_s": bootstrap_s, "measure_s": measure_s},
    )._with_phases(**{name.removesuffix("_s"): seconds for name, seconds in phases_s.items()})


def record_simulated(
    run_dir: Path,
    record: RunRecord,
    *,
    generate_cpu_s: float,
    simulate_cpu_s: float,
    work_s: float,
    waited_s: float,
    placement: WhereRan,
) -> RunRecord:
    """Write the run's record as complete, with its cost and where it ran."""
    done = record._with_phases(simulate=work_s, wait=waited_s)._with(
        **{CPU_PHASES: {"generate": generate_cpu_s, "simulate": simulate_cpu_s}},
        placement=asdict(placement),
        status=STATUS_COMPLETE,
    )
    write_run(run_dir, done)
    return done


def record_failed(run_dir: Path, error: str) -> None:
    """Mark a generated run failed, with why; nothing where it was never generated."""
    if (run_dir / MANIFEST).is_file():
        write_run(run_dir, read_run(run_dir)._with(status=STATUS_FAILED, error=error))


def record_collected(
    run_dir: Path, record: RunRecord, collect_s: float, collect_cpu_s: float
) -> RunRecord:
    """Write the time collection took on the run (its CPU where the run
    records CPU at all)."""
    collected = record._with_phases(collect=collect_s)
    cpu = record.document.get(CPU_PHASES)
    if isinstance(cpu, dict):
        collected = collected._with(**{CPU_PHASES: cpu | {"collect": collect_cpu_s}})
    write_run(run_dir, collected)
    return collected


def backends_with_runs(candidates: dict[str, Path]) -> list[str]:
    """Of ``{backend: experiment dir}``, the backends whose directory holds a
    run made with that backend (as its manifest says)."""
    found = []
    for backend, experiment_dir in candidates.items():
        for path in sorted(experiment_dir.glob(f"*/seed-*/{MANIFEST}")):
            record = read_run_if_any(path.parent)
            if record is not None and record.backend == backend:
                found.append(backend)
                break
    return found
