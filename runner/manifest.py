"""A run's ``manifest.json``: what produced the run and what each host is.

Written atomically (temporary file, then rename), so a reader never sees
half a manifest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runner.checks import Failure, failures_by_run

MANIFEST = "manifest.json"

# CPU seconds a run used, per phase (generate: its wall time, see
# runner/execute/run.py; simulate: Shadow's or the local processes'; collect):
# its cost.
CPU_PHASES = "cpu_phases_s"

STATUS_GENERATED = "generated"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)


def read_manifest(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / MANIFEST).read_text())
    return data


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    write_json_atomic(run_dir / MANIFEST, manifest)


def run_status(run_dir: Path) -> str | None:
    """The status of a run directory, or None if it has no readable manifest."""
    try:
        return str(read_manifest(run_dir).get("status"))
    except (OSError, ValueError):
        return None


def run_cpu_seconds(run_dir: Path) -> float | None:
    """The CPU seconds a run used in all its phases; None if its manifest
    does not say (runs made before CPU was recorded)."""
    try:
        phases = read_manifest(run_dir).get(CPU_PHASES)
    except (OSError, ValueError):
        return None
    if not isinstance(phases, dict) or "simulate" not in phases:
        return None
    return float(sum(phases.values()))


def backends_with_runs(candidates: dict[str, Path]) -> list[str]:
    """Of ``{backend: experiment dir}``, the backends whose directory holds a
    run made with that backend (as its manifest says)."""
    found = []
    for backend, experiment_dir in candidates.items():
        for path in sorted(experiment_dir.glob(f"*/seed-*/{MANIFEST}")):
            try:
                made_with = json.loads(path.read_text()).get("backend")
            except (OSError, ValueError, AttributeError):
                continue
            if made_with == backend:
                found.append(backend)
                break
    return found


def record_check_failures(
    run_dirs: dict[tuple[str, int], Path], failures: Iterable[Failure]
) -> int:
    """Write into each complete run's manifest the texts of the report's
    failed checks that are its own (by their run, whatever their wording),
    so that a re-run with --retry-failed runs it again; the runs with any."""
    by_run = failures_by_run(failures)
    marked = 0
    for run, run_dir in run_dirs.items():
        if run_status(run_dir) != STATUS_COMPLETE:
            continue
        mine = [str(f) for f in by_run.get(run, [])]
        manifest = read_manifest(run_dir)
        if manifest.get("checks_failed", []) != mine:
            manifest["checks_failed"] = mine
            write_manifest(run_dir, manifest)
        marked += bool(mine)
    return marked
