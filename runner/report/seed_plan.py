"""``runner plan``'s text: what the pilot measured and what an answer costs."""

from __future__ import annotations

import math

from runner.analyses.power import MAX_SEEDS
from runner.analyses.stats import number
from runner.planning.joint_plan import LAST_LOOK_INFLATION, SIMULATED_UP_TO
from runner.planning.seed_plan import (
    INTERVAL,
    PROBABILITY,
    PilotConditions,
    Plan,
    Prediction,
)
from runner.report.markdown import table


def _seeds(n: int) -> str:
    return f"> {MAX_SEEDS}" if n > MAX_SEEDS else str(n)


def _part(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _hours(value: float) -> str:
    return "n/a" if not math.isfinite(value) else number(value, 2)


def render(plan: Plan, cores_here: int, cores_there: int) -> list[str]:
    return [
        *_heading(plan),
        *_spread_section(plan),
        *_cost_section(plan),
        *_designs_section(plan, cores_here, cores_there),
        "",
        *_cheapest_text(plan),
    ]


def _heading(plan: Plan) -> list[str]:
    """The pilot's design, and the design planned where it is not the pilot's."""
    lines = [
        f"# Plan from the pilot: seeds {', '.join(map(str, plan.seeds))}, {plan.variants} "
        f"variants, {plan.measured_clients} measured clients and {plan.relays} relays a network",
        "",
    ]
    base = plan.base
    if base.name != "pilot":
        lines += [
            f"Planned: {base.name}, scaled from the pilot's design by {base.clients:g}x the "
            f"measured clients, {base.relays:g}x the relays, {base.measure:g}x the measurement "
            f"and {base.bootstrap:g}x the bootstrap. The spread between networks is assumed "
            "to fall as 1 / relays and the busiest relay's load as clients / relays; a pilot "
            "of the design itself would measure both. Every design below is on top of it.",
            "",
        ]
    return lines


def _spread_section(plan: Plan) -> list[str]:
    """Per hypothesis, the change, the spread between seeds and its parts,
    and the seeds a fixed-size design needs; then how sure those seeds are."""
    lines = [
        "## The change and the spread between seeds, per hypothesis",
        "",
        "Variances of a seed's log ratio (variant over reference). *Transfers*: between a "
        "client's transfers; *clients*: between measured clients, n/a where a seed has only "
        "one measured client, whose part then stays in *seeds*; *seeds*: between networks "
        "beyond both. Seeds to decide: the "
        f"fewest seeds whose fixed-size interval is decisive with {PROBABILITY:.0%} "
        "probability, at the change and spread seen, at the hypothesis's level (5% / K for "
        "a confirmatory one, K the claims of the family, its first step, split 80/20 toward "
        "its claim; 5% for an exploratory one) "
        "and allowing for skewed seeds as the report's answers do. The report's answers "
        'give a count of the same kind ("about N seeds would decide it alone") from the '
        "collected seeds' change and spread directly, not from these parts, so it can "
        "differ; the seeds to run are the Designs' M and expected seeds below, which decide "
        "every hypothesis together.",
        "",
    ]
    # The seeds to decide are the first design's (as configured).
    first = plan.predictions[0] if plan.predictions else None
    rows = []
    for h in plan.hypotheses:
        s = plan.spreads.get(h.name)
        if s is None:
            why = plan.unmeasured.get(h.name, "under 2 paired seeds")
            rows.append([h.name, "n/a", "-", "-", "-", "-", why])
            continue
        needed = first.fixed_seeds.get(h.name) if first else None
        rows.append(
            [
                h.name,
                f"{math.expm1(s.effect) * 100:+.1f}%",
                f"{s.total:.4f}",
                _part(s.transfers),
                _part(s.clients),
                f"{s.between:.4f}",
                "n/a" if needed is None else _seeds(needed),
            ]
        )
    lines += table(
        ["hypothesis", "change", "variance", "transfers", "clients", "seeds", "seeds to decide"],
        rows,
    )
    if first is not None:
        lines += ["", *uncertainty_text(first, len(plan.seeds))]
    return lines


def _cost_section(plan: Plan) -> list[str]:
    """What a run costs, what that was measured under, and how loaded the
    pilot's busiest relays were."""
    cost = plan.cost
    lines = ["", "## Cost", ""]
    if cost is None:
        lines += ["The pilot's runs recorded no CPU time: no cost can be given."]
    else:
        if cost.fitted:
            how = f"fitted on the pilot's {cost.runs} runs"
        elif cost.runs == 1:
            how = "split by host counts, as one run is too few to fit"
        else:
            how = (
                f"split by host counts, as the pilot's {cost.runs} runs are too few, or show "
                "no slope, to fit"
            )
        lines += [
            f"A run costs {number(cost.fixed_cpu_s, 0)} CPU seconds fixed, plus "
            f"{number(cost.cpu_s_per_byte * cost.bytes_per_run, 0)} for the "
            f"{number(cost.bytes_per_run / 1e6, 0)} MB its measured clients moved: {how}. "
            f"Its wall time is {cost.wall_per_cpu:.2f} times its CPU time.",
        ]
        if plan.conditions is not None:
            lines += ["", *conditions_text(plan.conditions)]
    if plan.busiest is not None:
        lines += [
            "",
            f"The busiest relay was {plan.busiest:.0%} busy on average (a network over "
            "50% is loaded: measured clients that load it change the question); "
            "the busiest of each position: "
            + ", ".join(f"{role} {value:.0%}" for role, value in sorted(plan.busiest_roles.items()))
            + ". A larger design's load is predicted per position, from each client "
            "group's traffic over the position's capacity.",
        ]
    return lines


def _designs_section(plan: Plan, cores_here: int, cores_there: int) -> list[str]:
    """Each design's seeds in rounds, its chance of deciding every
    hypothesis, and its CPU-hours and wall time here and on a larger machine."""
    lines = [
        "",
        "## Designs",
        "",
        "Seeds in rounds, `seeds: {min: 5, max: M, step: 2}` with the group-sequential rule, "
        "looks from the design's `decide_from`, which stops at the first look where every "
        "confirmatory hypothesis is decisive (every hypothesis, where none tests a claim; "
        "the confirmatory ones by the family's rule: one test per claim, Holm's step-down "
        "across claims). M is the smallest whose rule decides all those hypotheses "
        f"together with {PROBABILITY:.0%} probability, simulated on seeds drawn for every "
        "hypothesis at once, their log ratios as correlated as the pilot's (taken halfway "
        "toward none); all of them must be decided at once, which is less likely than each "
        "alone, but the family's later steps read the claims still open at a larger "
        "level than its first, at which the seeds to decide above are taken. *All decided*: "
        "that probability at M; expected seeds: what the rule runs on average, stopping at M "
        "if not all are decided. CPU-hours at the expected "
        f"seeds (and at M); wall time at the expected seeds, one run a core, here ({cores_here} "
        f"cores) and on {cores_there}." + _later_rounds(plan),
        "",
    ]
    rows = [_design_row(p, plan.variants, cores_here, cores_there) for p in plan.predictions]
    lines += table(
        [
            "design",
            "M",
            "all decided",
            "expected seeds",
            "CPU-hours",
            f"wall h ({cores_here} cores)",
            f"wall h ({cores_there} cores)",
            "busiest relay",
            "note",
        ],
        rows,
    )
    if plan.predictions:
        lines += ["", *joint_text(plan.predictions[0])]
    return lines


def _cheapest_text(plan: Plan) -> list[str]:
    """The cheapest design that decides every hypothesis without loading the network."""
    best = plan.best
    if best is None:
        return ["No design here decides every hypothesis without loading the network."]
    return [
        f"Cheapest that keeps the load: **{best.alternative.name}**, about "
        f"{best.expected_seeds:.1f} seeds expected (at most {_seeds(best.rule_max)}, "
        f"deciding every hypothesis with {_chance(best.all_decided)} probability), "
        f"{_hours(best.cpu_hours_expected)} CPU-hours.",
    ]


def _chance(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.0%}"


def joint_text(p: Prediction) -> list[str]:
    """What a design's rule decides, all hypotheses together, in plain
    sentences."""
    if not p.fixed_seeds:
        return []
    if p.rule_max > MAX_SEEDS or not math.isfinite(p.all_decided):
        return [
            f"{_design_name(p)}, no `max` up to {MAX_SEEDS} seeds decides every hypothesis "
            f"with {PROBABILITY:.0%} probability."
        ]
    confirmatory = (
        f", and every confirmatory one with {_chance(p.confirmatory_decided)}"
        if math.isfinite(p.confirmatory_decided)
        else ""
    )
    how = (
        ""
        if p.simulated
        else f" These are a fixed-size design's figures, its `max` "
        f"{LAST_LOOK_INFLATION - 1:.0%} above: rules of more than {SIMULATED_UP_TO} seeds are "
        "not simulated."
    )
    return [
        f"{_design_name(p)}, the rule with `max: {p.rule_max}` decides every hypothesis with "
        f"{_chance(p.all_decided)} probability{confirmatory}, and is expected to stop after "
        f"{p.expected_seeds:.1f} seeds.{how}"
    ]


def uncertainty_text(p: Prediction, pilot_seeds: int) -> list[str]:
    """How far the pilot's few seeds tell the seeds needed, in plain
    sentences."""
    if p.seeds_interval is None or p.seeds_point is None:
        return []
    low, high = p.seeds_interval
    hopeful = (
        " The pilot's own figures are at the hopeful end: the seeds needed grow faster as a "
        "change nears its smallest change, or the seeds spread more, than they fall the other "
        "way, and every hypothesis has to be decided."
        if p.seeds_point < low
        else ""
    )
    return [
        f"How sure these seeds are: {pilot_seeds} pilot seeds tell each change and spread only "
        f"roughly. {_design_name(p)}, a fixed-size design needs {_seeds(p.seeds_point)} seeds "
        f"to decide each hypothesis the rounds wait for with {PROBABILITY:.0%} probability at "
        "the pilot's figures (the largest of their seeds to decide above); drawing each "
        "change and spread from what the pilot's seeds allow, it needs "
        f"{_seeds(low)} to {_seeds(high)} seeds (an "
        f"{INTERVAL[1] - INTERVAL[0]:.0%} interval).{hopeful} The M, expected seeds and costs "
        "below rest on the pilot's figures and are as uncertain."
    ]


def _design_name(p: Prediction) -> str:
    name = p.alternative.name
    return "As configured" if name == "as configured" else f"With {name}"


def _counts(values: tuple[int, ...]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def conditions_text(c: PilotConditions) -> list[str]:
    """What the pilot's cost was measured under, and how far to trust it,
    in plain sentences."""
    if c.at_once:
        where = "one machine" if c.machines <= 1 else f"{c.machines} machines"
        cpus = f" of {_counts(c.machine_cpus)} CPUs" if c.machine_cpus else ""
        contention = (
            f"The pilot ran up to {_counts(c.at_once)} runs at once, on {where}{cpus}. Each "
            "run's CPU time was measured with the others running beside it, so it includes "
            "what they cost each other: runs at once share the machine's caches and memory "
            "bandwidth."
        )
    else:
        contention = (
            "The pilot's manifests do not record how many runs were at once (they were made "
            "before runs recorded it). Each run's CPU time was measured with whatever else "
            "ran beside it, and includes what those runs cost it: runs at once share the "
            "machine's caches and memory bandwidth."
        )
    if c.farthest_off is None:
        trust = (
            "How far to trust the figure: one run shows nothing of how much runs vary, so "
            "take the CPU-hours below as a rough guide only."
        )
    else:
        trust = (
            f"How far to trust the figure: the pilot's {c.runs} runs came within "
            f"{c.farthest_off:.0%} of it, so take the CPU-hours below as good to about that "
            "on a machine like the pilot's with as many runs at once, and as further off "
            "with more or fewer at once, or on another machine."
        )
    return [contention, "", trust]


def _later_rounds(plan: Plan) -> str:
    later = plan.predictions[0].later_variants if plan.predictions else None
    if later is None:
        return ""
    return (
        f" The spec's later rounds run only the {later} of its {plan.variants} variants that "
        "its hypotheses compare (`later: hypotheses`): every variant at the first 5 seeds, "
        f"those {later} beyond."
    )


def _design_row(p: Prediction, variants: int, here: int, there: int) -> list[str]:
    seeds = p.expected_seeds
    finite = math.isfinite(seeds)
    notes = ["loads the network"] if p.loads else []
    if not p.simulated and p.rule_max <= MAX_SEEDS:
        notes.append(f"over {SIMULATED_UP_TO} seeds: fixed-size figures")
    note = "; ".join(notes)
    return [
        p.alternative.name,
        _seeds(p.rule_max),
        _chance(p.all_decided),
        f"{seeds:.1f}" if finite else "n/a",
        f"{_hours(p.cpu_hours_expected)} ({_hours(p.cpu_hours_max)})",
        _hours(p.wall_hours(here, variants, math.ceil(seeds))) if finite else "n/a",
        _hours(p.wall_hours(there, variants, math.ceil(seeds))) if finite else "n/a",
        "n/a" if p.busiest is None else f"{p.busiest:.0%}",
        note,
    ]
