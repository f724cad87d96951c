"""``runner store import`` and ``runner store list``: the run store
(runner/tables/store.py) from the command line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from runner.console import Console
from runner.errors import SpecError
from runner.layout import STORE
from runner.spec.model import Spec
from runner.tables.store import stored_runs


def kilobytes(size: int) -> str:
    return f"{size / 1000:.1f} KB"


def config_specs(configs: Path) -> dict[str, Spec]:
    """Every spec in ``configs`` by name (one that does not load is left out)."""
    from runner.experiments import load_spec

    specs = {}
    for path in sorted(configs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError:
            continue
        specs[spec.name] = spec
    return specs


def import_store(source: Path, configs: Path, results: Path, console: Console) -> int:
    """Add the runs ``source`` holds to ``results``'s run store; 1 where
    any is refused (then none is added)."""
    from runner.experiments import TABLES
    from runner.tables.collect import parsed_tables
    from runner.tables.store_import import import_runs

    done = import_runs(source, config_specs(configs), results, parsed_tables(TABLES))
    for why in done.refused:
        console.err(f"refused: {why}")
    if done.refused:
        console.err(f"nothing imported from {source}: {len(done.refused)} runs refused")
        return 1
    console.out(
        f"imported {len(done.added)} runs into {results / STORE}"
        f" ({len(done.present)} already stored, {done.skipped} not complete)"
    )
    for key in done.added:
        console.out(f"  {key}")
    return 0


def list_store(results: Path, experiment: str | None, console: Console) -> int:
    """Per experiment: its stored runs, seeds, variants and bytes."""
    root = results / STORE
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if experiment is not None:
        folders = [p for p in folders if p.name == experiment]
    if not folders:
        console.out(f"no runs stored in {root}" + (f" for {experiment}" if experiment else ""))
        return 0
    total = 0
    for folder in folders:
        runs = stored_runs(folder)
        seeds: dict[str, set[int]] = defaultdict(set)
        for run in runs:
            seeds[run.row.variant].add(run.row.seed)
        size = sum(r.size_bytes for r in runs)
        total += size
        console.out(f"{folder.name}: {len(runs)} runs, {kilobytes(size)}")
        for variant, found in sorted(seeds.items()):
            listed = ",".join(str(s) for s in sorted(found))
            console.out(f"  {variant}: {len(found)} seeds ({listed})")
    console.out(f"in all: {kilobytes(total)} in {root}")
    return 0


def analyze_stored(spec_path: Path, results: Path, console: Console) -> list[str]:
    """Analyze the spec's experiment on each backend whose run store holds
    runs of its identity, so that its answers.json are those of its runs
    here and in the store (in a fresh clone, the store's alone); the
    experiment folders analysed. The backend whose answers were the latest
    is analysed last, so stays the latest."""
    from runner.execute.lock import ExperimentBusy
    from runner.tables.sources import run_sources
    from runner.workflow.backend_choice import BACKEND_NAMES
    from runner.workflow.pipeline import Experiment

    quiet = Console(lambda _: None, console.err)  # the answers go to the claims page
    experiments = [
        Experiment.load(spec_path, results, backend, reading=True, console=quiet)
        for backend in BACKEND_NAMES
    ]
    analysed = []
    for exp in sorted(experiments, key=lambda e: _answers_time(e.layout.data_json("answers"))):
        spec = exp.analysed_spec()
        if not any(s.stored is not None for s in run_sources(spec, exp.layout)):
            continue
        try:
            with exp.lock():
                exp.analyze()
        except ExperimentBusy as exc:
            console.err(f"warning: {exc}: its answers are taken as they are")
            continue
        analysed.append(exp.layout.experiment)
    return analysed


def _answers_time(path: Path) -> float:
    return path.stat().st_mtime if path.is_file() else 0.0
