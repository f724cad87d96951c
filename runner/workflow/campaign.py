"""``runner campaign --budget <CPU-hours> [specs...]``: the runs that bring
the most open confirmatory claims closest to a verdict per CPU-hour, run
seed by seed, each stored as it completes, stopping before the budget.

What is open comes from one function, ``open_claims``, over the answers
the statistics give today (runner.analyses.answers): a confirmatory
hypothesis without a decisive verdict, with the seeds its answer says a
verdict needs. The choice is greedy over steps, one new seed of one
experiment for the variants its open claims read: each step's worth is the
sum over the claims it advances of one over the seeds each still needs
(a claim one seed from a verdict counts most), over its predicted CPU
(the stored runs' CPU per variant; a variant never run, the runs' CPU per
simulated second times its own simulated seconds). A step whose predicted
CPU is more than what is left of the budget is never started. A design
with no run yet is priced by one probe run first: its cheapest variant
(by simulated time) of its first open claim, at its first seed. The runs are stored by
``collect``, so a later campaign, here or on another machine with the same
store, starts from them.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from runner.analyses.answers import CONFIRMATORY, MIN_INTERVAL_SEEDS, UNDETERMINED, Answer
from runner.analyses.family import family
from runner.analyses.sequential import SequentialDesign
from runner.console import Console
from runner.spec.model import Spec
from runner.tables.runs import RunRow


@dataclass(frozen=True)
class OpenClaim:
    """A confirmatory hypothesis with no verdict yet."""

    experiment: str
    hypothesis: str
    seeds: int  # the seeds its answer rests on
    seeds_needed: int  # the seeds a verdict likely needs (at least one more)
    variants: tuple[str, ...]

    @property
    def short(self) -> int:
        return max(0, self.seeds_needed - self.seeds)


def at_a_look(spec: Spec, seeds: int) -> int:
    """The seeds of the design's first deciding look at or after ``seeds``
    (verdicts come only at looks: a design with looks at 2, 6, 10 and 14
    that decides from 7 first decides at 10); ``seeds`` where the design
    has no rounds, the last look past them."""
    design = SequentialDesign.of(spec)
    if design is None:
        return seeds
    return next((n for n in design.looks if n >= seeds), design.looks[-1])


def open_claims(
    spec: Spec, found: Sequence[Answer], ran: Mapping[int, set[str]] | None = None
) -> list[OpenClaim]:
    """The spec's confirmatory hypotheses not yet decided, with the seeds
    each needs: its answer's ``seeds_needed`` where the spread is known,
    else the fewest an interval needs, and never fewer than the seeds of
    the design's first look (``decide_from``). A design in rounds draws no
    seed past its ``max``: a claim it cannot decide there (futile) or that
    has had them all is closed, as the rounds close it. The seeds it has had
    are those its estimate rests on, or where more, the seeds at which every
    variant it reads ran (``ran``: the variants at each seed): a seed whose
    ratio is undefined (no bulk download done on either side) still counts
    towards the max, so such a claim is not drawn seeds without end. The
    one place the campaign reads the statistics' rule."""
    claims = []
    rounds = spec.seed_rounds
    most = rounds.max if rounds is not None else None
    for a in found:
        if a.family != CONFIRMATORY or (not a.too_few and a.verdict != UNDETERMINED):
            continue
        have = a.estimate.n
        variants = with_references(spec, a.hypothesis.variants)
        drawn = sum(1 for at in (ran or {}).values() if set(variants) <= at)
        if a.futile or (most is not None and max(have, drawn) >= most):
            continue
        needed = at_a_look(spec, max(a.seeds_needed or 0, MIN_INTERVAL_SEEDS, have + 1))
        if most is not None:  # no more seeds than the max leaves
            needed = min(needed, most, have + most - drawn)
        claims.append(OpenClaim(spec.name, a.hypothesis.name, have, needed, variants))
    return claims


def unrun_claims(spec: Spec) -> list[OpenClaim]:
    """Before any run of the design: every confirmatory hypothesis, each
    needing the seeds of the design's first look."""
    needed = at_a_look(spec, MIN_INTERVAL_SEEDS)
    return [
        OpenClaim(spec.name, h.name, 0, needed, with_references(spec, h.variants))
        for h in spec.hypotheses
        if family(h) == CONFIRMATORY
    ]


def chosen_claims(
    spec: Spec, claims: Sequence[OpenClaim], wanted: frozenset[str]
) -> list[OpenClaim]:
    """The claims among ``claims`` a user asked for: by hypothesis name or
    by the id of the published claim it tests (T1, B7); every claim where
    ``wanted`` is empty."""
    if not wanted:
        return list(claims)
    tests = {h.name: h.claim.id for h in spec.hypotheses if h.claim is not None}
    return [c for c in claims if c.hypothesis in wanted or tests.get(c.hypothesis) in wanted]


def unknown_claims(specs: Sequence[Spec], wanted: frozenset[str]) -> list[str]:
    """The names in ``wanted`` that no hypothesis of ``specs`` has, nor the
    claim any of them tests."""
    known = {h.name for s in specs for h in s.hypotheses}
    known |= {h.claim.id for s in specs for h in s.hypotheses if h.claim is not None}
    return sorted(wanted - known)


def with_references(spec: Spec, names: Iterable[str]) -> tuple[str, ...]:
    """``names`` and the variants they measure consensus parameters from
    (``consensus_from``, on the same seed), which run at the seed too."""
    found = list(dict.fromkeys(names))
    for name in found:  # grows as references are found
        for measured in spec.variant(name).consensus_from.values():
            if measured.variant not in found:
                found.append(measured.variant)
    return tuple(found)


@dataclass(frozen=True)
class Step:
    """One new seed of one experiment: the variants to run at it."""

    experiment: str
    seed: int
    variants: tuple[str, ...]
    cpu_s: float  # predicted
    claims: tuple[str, ...]  # the hypotheses it brings a seed closer

    def why(self) -> str:
        return (
            f"{self.experiment} seed {self.seed}: {', '.join(self.variants)} "
            f"(~{self.cpu_s / 3600:.2f} CPU-h) for {', '.join(self.claims)}"
        )


def cpu_per_variant(runs: Iterable[RunRow]) -> dict[str, float]:
    """The mean CPU seconds of each variant's complete runs that recorded
    theirs, and ``""`` for all variants together (a variant never run)."""
    by_variant: dict[str, list[float]] = {}
    for r in runs:
        if r.complete and r.cpu_s is not None:
            by_variant.setdefault(r.variant, []).append(r.cpu_s)
            by_variant.setdefault("", []).append(r.cpu_s)
    return {v: statistics.fmean(cpus) for v, cpus in by_variant.items()}


def simulated_seconds(spec: Spec, variant: str) -> float:
    """The seconds a run of ``variant`` simulates: bootstrap and traffic."""
    return spec.duration.bootstrap + spec.measure_of(variant)


def predicted_cpu(spec: Spec, runs: Iterable[RunRow]) -> dict[str, float]:
    """Each variant's CPU seconds a run: the mean of its own recorded runs,
    else the recorded runs' CPU per simulated second times its own simulated
    seconds (variants that simulate their own time differ by several
    times); ``""`` as ``cpu_per_variant`` gives it. Empty with no recorded run."""
    rows = [r for r in runs if r.complete and r.cpu_s is not None]
    own = cpu_per_variant(rows)
    if not own:
        return {}
    per_second = sum(r.cpu_s or 0.0 for r in rows) / sum(
        simulated_seconds(spec, r.variant) for r in rows
    )
    scaled = {v.name: per_second * simulated_seconds(spec, v.name) for v in spec.variants}
    return scaled | own


def probe_step(spec: Spec, claims: Sequence[OpenClaim], seeds: Seeds) -> Step | None:
    """A design with no run yet: its cheapest variant (by simulated time)
    of its first open claim, at the first seed of its order, to price the
    rest; predicted at no CPU (nothing prices it yet). None without claims."""
    if not claims:
        return None
    first = claims[0]
    variant = min(first.variants, key=lambda v: (simulated_seconds(spec, v), v))
    return Step(spec.name, next(seeds.order()), (variant,), 0.0, (first.hypothesis,))


@dataclass
class Seeds:
    """Where an experiment's next runs go: the design's own seeds in their
    order first (a round left part-run is filled before a new seed is
    drawn), then the seeds after every one taken; and the variants each
    seed already has (run here or stored), so no run is made twice."""

    design: tuple[int, ...]
    after: int  # the first seed past every seed taken
    present: dict[int, set[str]] = field(default_factory=dict)

    def order(self) -> Iterator[int]:
        yield from sorted(s for s in self.design if s < self.after)
        yield from itertools.count(self.after)

    def missing(self, seed: int, variants: Iterable[str]) -> set[str]:
        return set(variants) - self.present.get(seed, set())


@dataclass
class _Experiment:
    """What the choice tracks of one experiment."""

    claims: list[OpenClaim]
    cpu: Mapping[str, float]
    seeds: Seeds
    short: dict[str, int] = field(default_factory=dict)

    def step(self, name: str) -> tuple[Step, float] | None:
        """The first seed, in the design's order, that lacks a variant of a
        claim still short, with the variants it lacks, and its worth per CPU
        second; None where no claim is short."""
        open_now = [c for c in self.claims if self.short[c.hypothesis] > 0]
        if not open_now:
            return None
        for seed in self.seeds.order():  # ends: past `after` no seed has a variant
            advanced = [c for c in open_now if self.seeds.missing(seed, c.variants)]
            if advanced:
                break
        variants = tuple(
            sorted(set().union(*(self.seeds.missing(seed, c.variants) for c in advanced)))
        )
        cpu = sum(self.cpu.get(v, self.cpu[""]) for v in variants)
        worth = sum(1 / self.short[c.hypothesis] for c in advanced)
        names = tuple(c.hypothesis for c in advanced)
        return Step(name, seed, variants, cpu, names), worth / max(cpu, 1e-9)

    def take(self, step: Step) -> None:
        self.seeds.present.setdefault(step.seed, set()).update(step.variants)
        for name in step.claims:
            self.short[name] -= 1


def choose_steps(
    claims: Mapping[str, list[OpenClaim]],
    cpu: Mapping[str, Mapping[str, float]],
    seeds: Mapping[str, Seeds],
    budget_s: float,
) -> list[Step]:
    """The steps, best worth per CPU first, whose predicted CPU fits the
    budget in all (experiments with no recorded CPU are left out)."""
    state = {
        name: _Experiment(found, cpu[name], seeds[name], {c.hypothesis: c.short for c in found})
        for name, found in claims.items()
        if found and cpu.get(name)
    }
    chosen: list[Step] = []
    left = budget_s
    while True:
        options = [(s, w) for e, x in state.items() if (found := x.step(e)) for s, w in [found]]
        options = [(s, w) for s, w in options if s.cpu_s <= left]
        if not options:
            return chosen
        step, _ = max(options, key=lambda o: (o[1], o[0].experiment))
        chosen.append(step)
        left -= step.cpu_s
        state[step.experiment].take(step)


@dataclass(frozen=True)
class CampaignResult:
    code: int
    ran: list[Step]
    spent_s: float
    budget_s: float
    left_out: list[Step]  # chosen but not started: the budget had no room left


def run_steps(
    steps: Sequence[Step],
    run_step: Callable[[Step], float],
    budget_s: float,
    console: Console,
    spent_before: float = 0.0,
) -> CampaignResult:
    """Run each step (``run_step`` runs and stores it, and gives the CPU
    seconds it took) while its predicted CPU fits what is left of the
    budget after ``spent_before``; say what each costs against the budget.
    The result's ``spent_s`` counts this call's steps only."""
    spent = spent_before
    ran: list[Step] = []
    for index, step in enumerate(steps):
        if spent + step.cpu_s > budget_s:
            console.out(
                f"stop: {step.why()} would pass the budget "
                f"({spent / 3600:.2f} of {budget_s / 3600:.2f} CPU-h spent)"
            )
            return CampaignResult(0, ran, spent - spent_before, budget_s, list(steps[index:]))
        console.out(f"running {step.why()}")
        spent += run_step(step)
        ran.append(step)
        console.out(
            f"  done: {spent / 3600:.2f} of {budget_s / 3600:.2f} CPU-h spent "
            f"({spent / budget_s:.0%})"
        )
    return CampaignResult(0, ran, spent - spent_before, budget_s, [])


def step_spec(spec: Spec, step: Step) -> Spec:
    """The spec that runs ``step``'s variants at its seed alone."""
    return replace(
        spec,
        seeds=(step.seed,),
        variant_seeds={
            v.name: (step.seed,) if v.name in step.variants else () for v in spec.variants
        },
    )
