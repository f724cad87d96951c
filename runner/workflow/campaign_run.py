"""``runner campaign``: the choice of runs (runner/workflow/campaign.py)
made from each spec's answers today, then run step by step on the chosen
executor, each step's runs stored as they complete, until the next step
would pass the CPU budget.

Each experiment's answers are computed as ``analyze`` computes them, from
its run directories and the run store together, with the seeds stored
beyond the spec's own (an earlier campaign's, here or on another machine).
A campaign first fills the design's own seeds where a variant its open
claims read is missing (a round left part-run), then draws new seeds after
every seed the experiment has run or stored; no run is made twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.console import Console
from runner.errors import DataError, RunError, SpecError
from runner.layout import Layout
from runner.manifest import STATUS_FAILED, read_run_if_any, run_status
from runner.spec.model import Spec
from runner.tables.store import stored_runs
from runner.workflow.campaign import (
    CampaignResult,
    OpenClaim,
    Seeds,
    Step,
    choose_steps,
    chosen_claims,
    open_claims,
    predicted_cpu,
    probe_step,
    run_steps,
    step_spec,
    unrun_claims,
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
    seeds: Seeds


def variants_at_seeds(spec: Spec, layout: Layout) -> dict[int, set[str]]:
    """The variants each seed has a run of: a stored run (of any identity)
    or a run directory here that is complete or under way; a failed run
    (a simulation that stopped) is to be run again, as ``experiment`` does."""
    present: dict[int, set[str]] = {}
    for stored in stored_runs(layout.store_dir):
        present.setdefault(stored.row.seed, set()).add(stored.row.variant)
    for variant in spec.variants:
        folder = layout.run_dir(variant.name, 0).parent
        if folder.is_dir():
            for p in folder.iterdir():
                if (m := _SEED_DIR.fullmatch(p.name)) and run_status(p) != STATUS_FAILED:
                    present.setdefault(int(m[1]), set()).add(variant.name)
    return present


def next_free_seed(spec: Spec, layout: Layout) -> int:
    """The first seed after every seed the spec lists, any run directory
    holds and the store holds a run of (of any identity)."""
    return max(set(spec.seeds) | set(variants_at_seeds(spec, layout)), default=0) + 1


def campaign_seeds(spec: Spec, layout: Layout) -> Seeds:
    """The design's seeds, the first free seed after them, and what each
    seed already has."""
    return Seeds(spec.seeds, next_free_seed(spec, layout), variants_at_seeds(spec, layout))


def plan_experiment(
    exp: Experiment, console: Console, wanted: frozenset[str] = frozenset()
) -> Planned | None:
    """The experiment's open claims (those in ``wanted``, by hypothesis or
    claim id, where it names any), CPU per variant and next seed, from its
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
        claims = chosen_claims(spec, unrun_claims(spec), wanted)
        if not claims:
            console.out(f"{name}: no confirmatory claim among {', '.join(sorted(wanted))}")
            return None
        console.out(f"{name}: no runs yet: a probe run prices its seeds")
        return Planned(exp, spec, claims, {}, campaign_seeds(spec, layout))
    seeds = campaign_seeds(spec, layout)
    found = answers(spec, layout, TRANSFERS.read(layout.transfers_csv))
    claims = open_claims(spec, found, seeds.present)
    if not claims:
        console.out(f"{name}: every confirmatory claim has a verdict (or it tests none)")
        return None
    claims = chosen_claims(spec, claims, wanted)
    if not claims:
        console.out(f"{name}: no open confirmatory claim among {', '.join(sorted(wanted))}")
        return None
    cpu = predicted_cpu(spec, (s.row for s in run_sources(spec, layout)))
    opened = ", ".join(f"{c.hypothesis} ({c.seeds} seeds, ~{c.seeds_needed})" for c in claims)
    console.out(f"{name}: open: {opened}")
    if not cpu:
        console.out(f"{name}: no run recorded its CPU: a probe run prices its seeds")
    return Planned(exp, spec, claims, cpu, seeds)


def step_cpu(planned: Planned, step: Step) -> float:
    """The CPU seconds a step's runs recorded; the predicted CPU of each
    run that recorded none (failed early, or made elsewhere)."""
    total = 0.0
    for variant in step.variants:
        record = read_run_if_any(planned.exp.layout.run_dir(variant, step.seed))
        used = record.cpu_seconds if record is not None else None
        total += used if used is not None else planned.cpu.get(variant, planned.cpu.get("", 0.0))
    return total


def campaign(
    specs: Sequence[str | Path],
    budget_h: float,
    results: str | Path,
    backend: str | None,
    options: RunOptions,
    console: Console,
    fits: Callable[[Experiment], None] | None = None,
    wanted: frozenset[str] = frozenset(),
) -> CampaignResult:
    """Choose the steps over ``specs`` within ``budget_h`` CPU-hours and run
    them, for the open claims ``wanted`` names (by hypothesis or claim id;
    all where it is empty); an experiment ``fits`` refuses (raises RunError: too large for
    where its runs go) is left out, saying why, before any run starts.
    Once the chosen steps have run, the choice is made again from the
    answers and the budget left (runs cost other than predicted, and a
    claim may be decided), until no step fits."""
    budget_s = budget_h * HOUR
    ran: list[Step] = []
    spent = 0.0
    paths: dict[str, str] = {}  # experiment -> its spec's path
    while True:
        found, seen = _campaign_pass(
            specs, budget_s, spent, results, backend, options, console, fits, wanted
        )
        paths |= seen
        ran += found.ran
        spent += found.spent_s
        if not found.ran or found.left_out:
            result = CampaignResult(found.code, ran, spent, budget_s, found.left_out)
            break
        console.out(f"campaign: {len(ran)} steps run; choosing again with what is left")
    _tell_result(result, [paths[n] for n in dict.fromkeys(s.experiment for s in ran)], console)
    return result


def _campaign_pass(
    specs: Sequence[str | Path],
    budget_s: float,
    spent_s: float,
    results: str | Path,
    backend: str | None,
    options: RunOptions,
    console: Console,
    fits: Callable[[Experiment], None] | None,
    wanted: frozenset[str],
) -> tuple[CampaignResult, dict[str, str]]:
    """One choice of steps within what is left of the budget, and its run;
    with each planned experiment's spec path."""
    planned: dict[str, Planned] = {}
    for path in specs:
        exp = Experiment.load(path, results, backend, console=console)
        found = plan_experiment(exp, console, wanted)
        if found is not None and _fits(exp, fits, console):
            planned[exp.written.name] = found
    # A design no run prices yet runs its probe first; the choice is then
    # made again with its CPU.
    probes = [
        step
        for p in planned.values()
        if not p.cpu and (step := probe_step(p.spec, p.claims, p.seeds)) is not None
    ]
    steps = probes or choose_steps(
        {n: p.claims for n, p in planned.items()},
        {n: p.cpu for n, p in planned.items()},
        {n: p.seeds for n, p in planned.items()},
        budget_s - spent_s,
    )
    _tell_choice(steps, budget_s - spent_s, console)

    def run_step(step: Step) -> float:
        p = planned[step.experiment]
        with p.exp.lock():
            p.exp.run_and_store(step_spec(p.spec, step), options)
        return step_cpu(p, step)

    result = run_steps(steps, run_step, budget_s, console, spent_s)
    return result, {n: str(p.exp.written.path) for n, p in planned.items()}


def _fits(exp: Experiment, fits: Callable[[Experiment], None] | None, console: Console) -> bool:
    """Whether ``exp``'s runs fit where they go; one that does not (a full-size
    config on a small machine, a data file missing) is left out, saying
    why, and the rest go on."""
    if fits is None:
        return True
    try:
        fits(exp)
    except (RunError, SpecError, DataError) as error:  # too large, or its inputs unreadable
        console.out(f"{exp.written.name}: left out: {error}")
        return False
    return True


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


def _tell_result(result: CampaignResult, paths: Sequence[str], console: Console) -> None:
    runs = sum(len(s.variants) for s in result.ran)
    console.out(
        f"campaign: {len(result.ran)} steps ({runs} runs) in "
        f"{result.spent_s / HOUR:.2f} of {result.budget_s / HOUR:.2f} CPU-h, "
        "each run stored as it completed"
    )
    for path in paths:
        console.out(f"  answers with them: python -m runner analyze {path}")
