"""``runner campaign``: the choice of runs (runner/workflow/campaign.py)
made from each spec's answers today, then run step by step on the chosen
executor, each step's runs stored as they complete, until the next step
would pass the CPU budget.

Each experiment's answers are computed as ``analyze`` computes them, from
its run directories and the run store together, with the seeds stored
beyond the spec's own (an earlier campaign's, here or on another machine).
A campaign's new seeds come after every seed the experiment has run or
stored, so that no seed is run twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.console import Console
from runner.layout import Layout
from runner.manifest import read_run_if_any
from runner.spec.model import Spec
from runner.tables.store import stored_runs
from runner.workflow.campaign import (
    CampaignResult,
    OpenClaim,
    Step,
    choose_steps,
    cpu_per_variant,
    open_claims,
    run_steps,
    step_spec,
)
from runner.workflow.options import RunOptions
from runner.workflow.pipeline import Experiment

HOUR = 3600.0
_SEED_DIR = re.compile(r"seed-(\d+)")


@dataclass(frozen=True)
class Planned:
    """One experiment as the campaign found it."""

    exp: Experiment
    spec: Spec  # with the seeds stored beyond its own
    claims: list[OpenClaim]
    cpu: dict[str, float]  # predicted CPU seconds per variant ("" for any)
    next_seed: int


def next_free_seed(spec: Spec, layout: Layout) -> int:
    """The first seed after every seed the spec lists, any run directory
    holds and the store holds a run of (of any identity)."""
    taken = set(spec.seeds) | {s.row.seed for s in stored_runs(layout.store_dir)}
    for variant in spec.variants:
        folder = layout.run_dir(variant.name, 0).parent
        if folder.is_dir():
            taken |= {int(m[1]) for p in folder.iterdir() if (m := _SEED_DIR.fullmatch(p.name))}
    return max(taken, default=0) + 1


def plan_experiment(exp: Experiment, console: Console) -> Planned | None:
    """The experiment's open claims, CPU per variant and next seed, from its
    answers today; None (saying why) where it has nothing to run for."""
    from runner.analyses.answers import answers
    from runner.experiments import TABLES
    from runner.tables.collect import parsed_tables
    from runner.tables.schema import TRANSFERS
    from runner.tables.sources import refresh, run_sources

    name = exp.written.name
    if not exp.written.hypotheses:
        return None
    spec, layout = exp.analysed_spec(), exp.layout
    refresh(spec, layout, parsed_tables(TABLES))
    if not layout.transfers_csv.is_file():
        console.out(
            f"{name}: no runs yet: run its first seeds with "
            f"`python -m runner experiment {exp.written.path}`"
        )
        return None
    claims = open_claims(spec, answers(spec, layout, TRANSFERS.read(layout.transfers_csv)))
    if not claims:
        console.out(f"{name}: every confirmatory claim has a verdict (or it tests none)")
        return None
    cpu = cpu_per_variant(s.row for s in run_sources(spec, layout))
    opened = ", ".join(f"{c.hypothesis} ({c.seeds} seeds, ~{c.seeds_needed})" for c in claims)
    console.out(f"{name}: open: {opened}")
    if not cpu:
        console.out(f"{name}: no run recorded its CPU: left out (nothing to price a seed by)")
    return Planned(exp, spec, claims, cpu, next_free_seed(spec, layout))


def step_cpu(planned: Planned, step: Step) -> float:
    """The CPU seconds a step's runs recorded; the predicted CPU of each
    run that recorded none (failed early, or made elsewhere)."""
    total = 0.0
    for variant in step.variants:
        record = read_run_if_any(planned.exp.layout.run_dir(variant, step.seed))
        used = record.cpu_seconds if record is not None else None
        total += used if used is not None else planned.cpu.get(variant, planned.cpu[""])
    return total


def campaign(
    specs: Sequence[str | Path],
    budget_h: float,
    results: str | Path,
    backend: str | None,
    options: RunOptions,
    console: Console,
    fits: Callable[[Experiment], None] | None = None,
) -> CampaignResult:
    """Choose the steps over ``specs`` within ``budget_h`` CPU-hours and run
    them; ``fits`` refuses (raises) an experiment too large for where its
    runs go, before any run starts."""
    budget_s = budget_h * HOUR
    planned: dict[str, Planned] = {}
    for path in specs:
        exp = Experiment.load(path, results, backend, console=console)
        found = plan_experiment(exp, console)
        if found is not None:
            planned[exp.written.name] = found
    steps = choose_steps(
        {n: p.claims for n, p in planned.items()},
        {n: p.cpu for n, p in planned.items()},
        {n: p.next_seed for n, p in planned.items()},
        budget_s,
    )
    _tell_choice(steps, budget_s, console)
    for name in dict.fromkeys(s.experiment for s in steps):
        if fits is not None:
            fits(planned[name].exp)

    def run_step(step: Step) -> float:
        p = planned[step.experiment]
        with p.exp.lock():
            p.exp.run_and_store(step_spec(p.spec, step), options)
        return step_cpu(p, step)

    result = run_steps(steps, run_step, budget_s, console)
    _tell_result(result, [planned[s.experiment] for s in result.ran], console)
    return result


def _tell_choice(steps: Sequence[Step], budget_s: float, console: Console) -> None:
    if not steps:
        console.out(
            f"campaign: no step fits {budget_s / HOUR:.2f} CPU-h "
            "(no open claim of an experiment with priced runs, or a seed costs more)"
        )
        return
    predicted = sum(s.cpu_s for s in steps)
    console.out(
        f"campaign: {len(steps)} steps, ~{predicted / HOUR:.2f} of {budget_s / HOUR:.2f} CPU-h, "
        "most claims' seeds per CPU-hour first (a claim nearer its verdict counts more):"
    )
    for index, step in enumerate(steps, 1):
        console.out(f"  {index}. {step.why()}")


def _tell_result(result: CampaignResult, ran: Sequence[Planned], console: Console) -> None:
    runs = sum(len(s.variants) for s in result.ran)
    console.out(
        f"campaign: {len(result.ran)} steps ({runs} runs) in "
        f"{result.spent_s / HOUR:.2f} of {result.budget_s / HOUR:.2f} CPU-h, "
        "each run stored as it completed"
    )
    for path in dict.fromkeys(str(p.exp.written.path) for p in ran):
        console.out(f"  answers with them: python -m runner analyze {path}")
