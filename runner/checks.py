"""A failed check as a record: the run it fails (if one), the check, and
what went wrong. Runs are found by their key, never by parsing the text,
so ``--retry-failed`` retries a run however its failure is worded; the
text the report and the console show is ``str(failure)``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import NotAnalyzedError


@dataclass(frozen=True)
class Failure:
    variant: str | None  # None: an experiment-wide check
    seed: int | None  # None: not tied to one run (a check over a variant's seeds)
    check: str  # a short stable name: "paths", "load", "conflux-legs", ...
    message: str
    where: str | None = None  # within the run: a host, a log, "client → server"

    @property
    def run(self) -> tuple[str, int] | None:
        """The (variant, seed) it fails; None where it is no one run's."""
        if self.variant is None or self.seed is None:
            return None
        return (self.variant, self.seed)

    def subject(self) -> str:
        """What failed, as the report names it: ``variant/seed-k host``."""
        run = self.variant or ""
        if self.variant is not None and self.seed is not None:
            run += "/seed-" + str(self.seed)
        return " ".join(part for part in (run, self.where) if part)

    def __str__(self) -> str:
        subject = self.subject()
        return f"{subject}: {self.message}" if subject else self.message


def failures_by_run(failures: Iterable[Failure]) -> dict[tuple[str, int], list[Failure]]:
    """The failures tied to one run, by its (variant, seed)."""
    found: dict[tuple[str, int], list[Failure]] = {}
    for failure in failures:
        if failure.run is not None:
            found.setdefault(failure.run, []).append(failure)
    return found


def runs_with_failures(checks_json: Path) -> set[tuple[str, int]]:
    """The (variant, seed) of every run a failure in ``checks_json`` (as
    ``analyze`` wrote it, runner.analyses.analyze.checks_record) is tied to;
    none where analyze has not written it."""
    if not checks_json.is_file():
        return set()
    try:
        data = json.loads(checks_json.read_text())
        records = [f for a in data["analyses"] for f in a["failures"]]
        records += list(data["runs"]) + list(data["log_damage"])
        runs = [_run_of(record) for record in records]
    except (ValueError, KeyError, TypeError) as exc:
        raise NotAnalyzedError(
            f"{checks_json}: not checks as analyze writes them (expected keys analyses, runs "
            f"and log_damage, each a list of failures with variant and seed): {exc}; "
            "run `python -m runner analyze` again"
        ) from exc
    return {run for run in runs if run is not None}


def _run_of(record: dict[str, Any]) -> tuple[str, int] | None:
    variant, seed = record.get("variant"), record.get("seed")
    return None if variant is None or seed is None else (str(variant), int(seed))
