"""The project's configs taken together: those whose variants run the
patched or the staged tor (``runner check``), and each one's claims beside its latest
collected answers (``runner claims``)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.console import Console
from runner.errors import SpecError
from runner.layout import Layout
from runner.network.backends import BACKENDS
from runner.workflow.backend_choice import BACKEND_NAMES

if TYPE_CHECKING:
    from runner.spec.hypotheses import Hypothesis


def built_tor_configs(configs: Path) -> dict[str, list[str]]:
    """For each tor build of the project's own ("patched", "staged"), the
    configs in ``configs`` with a variant that runs it (``tor: <build>``),
    by name; one that does not load is named with why under each."""
    from runner.experiments import load_spec

    names: dict[str, list[str]] = {"patched": [], "staged": []}
    for path in sorted(configs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as exc:
            for found in names.values():
                found.append(f"{path.name} (does not load: {exc})")
            continue
        for build, found in names.items():
            if any(v.tor == build for v in spec.variants):
                found.append(spec.name)
    return names


def spec_path(given: str, configs: Path = Path("configs")) -> Path:
    """The spec file a command names: a path, or an experiment's name
    (``ci-small`` for configs/ci-small.yaml). A file that is not there is
    refused naming the experiments in ``configs``, the closest first."""
    path = Path(given)
    if path.is_file():
        return path
    named = configs / f"{given}.yaml"
    if path.suffix not in (".yaml", ".yml") and len(path.parts) == 1 and named.is_file():
        return named
    names = sorted(p.stem for p in configs.glob("*.yaml"))
    if not names:
        raise SpecError(given, "(file)", "no such spec file")
    import difflib

    close = difflib.get_close_matches(path.stem, names, n=1)
    hint = f"did you mean {close[0]} ({configs / close[0]}.yaml)? " if close else ""
    raise SpecError(
        given,
        "(file)",
        f"no such spec file; {hint}the experiments in {configs}/: {', '.join(names)} "
        f"(give a path, or a name: `runner experiment {names[0]}`)",
    )


@dataclass(frozen=True)
class ClaimsPage:
    path: Path
    experiments: int
    answered: int  # the experiments with collected answers here
    # The experiments with no answers here whose published section (with
    # results) was kept from the page as it was, rather than made "not run":
    # each one's name and why it has no answers here.
    kept: tuple[tuple[str, str], ...] = ()


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


def _missing_rows(hypotheses: Sequence[Hypothesis], section: list[str]) -> str:
    """What a kept section lacks of the spec as it is now (a hypothesis
    added since it was written), as the console says it."""
    missing = [h.name for h in hypotheses if h.claim and not any(h.name in s for s in section)]
    if not missing:
        return ""
    return f"; it has no row for {', '.join(missing)} (added since: run the experiment)"


def write_claims_page(
    configs: Path, results: Path, out: Path, console: Console | None = None
) -> ClaimsPage:
    """Write the page of every config's claims beside the project's answers,
    and its forest plot beside it (``out`` as .svg); each config with stored
    runs is analysed first, from them and its run directories: a fresh
    clone's page is the store's.

    An experiment with no answers under ``results`` keeps its section of the
    page already at ``out`` where that section reports results: a clone that
    ran one experiment must not publish "not run" over the others'
    findings. Its panel of the plot is drawn from that section."""
    from runner.analyses.answers import spec_records
    from runner.experiments import load_spec
    from runner.layout import Layout
    from runner.report.claims import (
        experiment_section,
        published_sections,
        section_has_results,
        with_unstored_note,
    )
    from runner.report.forest_rows import record_rows, table_rows
    from runner.spec.conditions import conditions_line
    from runner.tables.store import stored_runs
    from runner.workflow.store import analyze_stored

    say = console or Console.quiet()
    published = published_sections(out.read_text()) if out.is_file() else {}
    sections, panels, answered, kept = [], [], 0, []
    for path in sorted(configs.glob("*.yaml")):
        spec = load_spec(path)
        for analysed in analyze_stored(path, results, say):
            say.out(f"analysed {analysed}: its runs here and in the run store")
        found, source = _latest_answers(answers_files(results, spec.name))
        previous = published.get(spec.name, [])
        if found is None and section_has_results(previous):
            if not stored_runs(Layout(results, spec.name).store_dir):
                previous = with_unstored_note(previous)
            sections.append(previous)
            panels.append((spec.name, table_rows(previous)))
            kept.append((spec.name, source + _missing_rows(spec.hypotheses, previous)))
            continue
        answered += found is not None
        records = spec_records(spec, found)
        sections.append(
            experiment_section(
                spec.name, str(path), spec.claims, records, source, conditions_line(spec)
            )
        )
        panels.append((spec.name, record_rows(records)))
    _write_page(out, sections, panels)
    return ClaimsPage(out, len(sections), answered, tuple(kept))


def _write_page(out: Path, sections: list[list[str]], panels: list[Any]) -> None:
    """docs/claims.md and docs/claims.svg, each renamed into place: never
    half a page."""
    from runner.report.claims import claims_page
    from runner.report.forest import forest_svg

    out.parent.mkdir(parents=True, exist_ok=True)
    plot = out.with_suffix(".svg")
    svg = forest_svg(panels)
    texts = {out: claims_page(sections, plot.name if svg else None)}
    if svg:
        texts[plot] = svg
    elif plot.exists():  # no claim hypothesis left to draw: no stale picture
        plot.unlink()
    for path, text in texts.items():
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
