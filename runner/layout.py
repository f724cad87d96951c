"""Where everything lives under ``results/``; the only module that knows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# Inside a run directory: the hosts' files as the simulation (or the local
# backend) leaves them, and the template they start from.
SHADOW_DATA = "shadow.data"
SHADOW_TEMPLATE = "shadow.data.template"
# Under results/: every complete run's tables and record, committed with the
# project (runner/tables/store.py), one folder per experiment.
STORE = "store"


@dataclass(frozen=True)
class Layout:
    root: Path  # results/
    experiment: str

    @property
    def experiment_dir(self) -> Path:
        return self.root / self.experiment

    def run_dir(self, variant: str, seed: int) -> Path:
        return self.experiment_dir / variant / f"seed-{seed}"

    def key_store(self, clock: str, seed: int) -> Path:
        return self.experiment_dir / "keys" / clock / f"seed-{seed}"

    def table_csv(self, name: str) -> Path:
        return self.experiment_dir / f"{name}.csv"

    def data_json(self, name: str) -> Path:
        """The answers and checks as data (``analyze`` writes them), beside the tables."""
        return self.experiment_dir / f"{name}.json"

    @property
    def analyses_dir(self) -> Path:
        """Where ``analyze`` writes each analysis's result as data."""
        return self.experiment_dir / "analyses"

    def analysis_json(self, analysis: str) -> Path:
        """An analysis's result as data: ``analyses/<its name>.json``."""
        name = re.sub(r"[^a-z0-9]+", "-", analysis.lower()).strip("-")
        return self.analyses_dir / f"{name}.json"

    @property
    def transfers_csv(self) -> Path:
        return self.experiment_dir / "transfers.csv"

    @property
    def circuits_csv(self) -> Path:
        return self.experiment_dir / "circuits.csv"

    @property
    def relays_csv(self) -> Path:
        return self.experiment_dir / "relays.csv"

    @property
    def clients_csv(self) -> Path:
        return self.experiment_dir / "clients.csv"

    @property
    def served_csv(self) -> Path:
        return self.experiment_dir / "served.csv"

    @property
    def log_damage_csv(self) -> Path:
        return self.experiment_dir / "log_damage.csv"

    @property
    def store_dir(self) -> Path:
        """The experiment's runs in the run store: ``results/store/<experiment>/``."""
        return self.root / STORE / self.experiment

    @property
    def sources_json(self) -> Path:
        """Which run each of the tables' runs is (a run directory or a stored
        run), as the tables were last assembled."""
        return self.experiment_dir / "sources.json"

    @property
    def report_dir(self) -> Path:
        return self.experiment_dir / "report"


def partial_path(path: Path) -> Path:
    """Where a directory or file is built before it is renamed into place."""
    return path.with_name(path.name + ".partial")


def stale_path(run_dir: Path) -> Path:
    """Where a complete run of another identity waits while its replacement runs."""
    return run_dir.with_name(run_dir.name + ".stale")
