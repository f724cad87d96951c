"""The project's configs taken together: those whose variants run the
patched tor (``runner check``), and each one's claims beside its latest
collected answers (``runner claims``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import SpecError
from runner.experiment.backend import BACKEND_NAMES
from runner.experiment.console import Console
from runner.layout import Layout
from runner.network.backends import BACKENDS


def patched_configs(configs: Path) -> list[str]:
    """The configs in ``configs`` with a variant that runs the patched tor
    (``tor: patched``), by name; one that does not load is named with why."""
    from runner.experiments import load_spec

    names = []
    for path in sorted(configs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as exc:
            names.append(f"{path.name} (does not load: {exc})")
            continue
        if any(v.tor == "patched" for v in spec.variants):
            names.append(spec.name)
    return names


@dataclass(frozen=True)
class ClaimsPage:
    path: Path
    experiments: int
    answered: int  # the experiments with collected answers


def answers_files(results: Path, name: str) -> list[Path]:
    """Where each backend's collect and compare leave the experiment's
    answers: results/<name>/answers.json and results/<name>-local/."""
    return [
        Layout(results, BACKENDS[backend].experiment_name(name)).data_json("answers")
        for backend in BACKEND_NAMES
    ]


def _latest_answers(candidates: list[Path]) -> tuple[Any, str]:
    """The latest collected answers of either backend, and where they came
    from (or why there are none), as the page says it."""
    present = [c for c in candidates if c.is_file()]
    if not present:
        return None, "not run (no " + " or ".join(f"`{c}`" for c in candidates) + ")"
    latest = max(present, key=lambda c: c.stat().st_mtime)
    try:
        return json.loads(latest.read_text()), f"`{latest}`"
    except (OSError, ValueError) as exc:
        return None, f"not run ({latest} does not read as JSON: {exc})"


def write_claims_page(
    configs: Path, results: Path, out: Path, console: Console | None = None
) -> ClaimsPage:
    """Write the page of every config's claims beside the project's answers
    (each config with stored runs analysed first, from them and its run
    directories: a fresh clone's page is the store's)."""
    from runner.analyses.answers import spec_records
    from runner.experiment.store import analyze_stored
    from runner.experiments import load_spec
    from runner.report.claims import claims_page

    say = console or Console.quiet()
    experiments = []
    for path in sorted(configs.glob("*.yaml")):
        spec = load_spec(path)
        for analysed in analyze_stored(path, results, say):
            say.out(f"analysed {analysed}: its runs here and in the run store")
        found, source = _latest_answers(answers_files(results, spec.name))
        experiments.append((spec.name, str(path), spec.claims, spec_records(spec, found), source))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")  # renamed into place: never half a page
    tmp.write_text(claims_page(experiments))
    os.replace(tmp, out)
    answered = sum(1 for e in experiments if not e[4].startswith("not run"))
    return ClaimsPage(out, len(experiments), answered)
