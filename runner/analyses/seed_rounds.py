"""Seeds until answered: ``seeds: {min, max, step}`` runs ``min`` seeds
(5 unless the spec says otherwise), then ``step`` more at a time, until
every hypothesis has a decisive verdict (supported, no change that matters,
or contradicted), or ``max`` seeds have run. With ``later: hypotheses`` a
later round runs only the variants the undetermined hypotheses compare:
the first round gives every variant's table, the later ones buy the
answers (a hypothesis decided stops costing runs).

Each look's interval is a repeated confidence interval of the spec's
group-sequential design (runner/analyses/sequential.py), so stopping on the
first decisive look keeps the chance of a wrong verdict at 5%. Each round is
recorded as it ends in ``results/<exp>/seed_rounds.json`` with the boundary it used and
each hypothesis's verdict; the report says how many rounds ran and why they
stopped, and ``collect`` and ``compare`` use the seeds it lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from runner.analyses.answers import UNDETERMINED, Answer
from runner.analyses.sequential import SequentialDesign
from runner.layout import Layout
from runner.manifest import write_json_atomic
from runner.spec.hypotheses import Hypothesis
from runner.spec.model import Spec

ROUNDS_FILE = "seed_rounds.json"


@dataclass(frozen=True)
class RoundResult:
    seeds: tuple[int, ...]
    verdicts: dict[str, str]  # hypothesis -> its verdict at this look
    intervals: dict[str, list[float | None]]  # hypothesis -> [low, high], as changes
    critical: float | None  # the t value of this look's intervals
    answered: bool
    runs: int = 0  # the runs of every variant at the look's seeds


def all_answered(found: list[Answer]) -> bool:
    """Every hypothesis decisive (under 3 seeds none is: see Answer.too_few)."""
    return all(a.verdict != UNDETERMINED for a in found)


def design(spec: Spec) -> SequentialDesign:
    found = SequentialDesign.of(spec)
    assert found is not None
    return found


def next_seeds(spec: Spec, seeds: tuple[int, ...]) -> tuple[int, ...]:
    assert spec.seed_rounds is not None
    looks = design(spec).looks
    more = next((n for n in looks if n > len(seeds)), spec.seed_rounds.max) - len(seeds)
    first = max(seeds) + 1
    return seeds + tuple(range(first, first + more))


def needed_variants(spec: Spec, found: list[Answer]) -> set[str]:
    """The variants the undetermined hypotheses compare, with the variants
    theirs take measured parameters from."""
    return variants_compared(spec, [a.hypothesis for a in found if a.verdict == UNDETERMINED])


def variants_compared(spec: Spec, hypotheses: Iterable[Hypothesis]) -> set[str]:
    """The variants ``hypotheses`` compare, with the variants theirs take
    measured parameters from (run on the same seed, first)."""
    names = {name for h in hypotheses for name in h.variants}
    pending = list(names)
    while pending:
        for measured in spec.variant(pending.pop()).consensus_from.values():
            if measured.variant not in names:
                names.add(measured.variant)
                pending.append(measured.variant)
    return names


def next_round(spec: Spec, current: Spec, found: list[Answer]) -> Spec:
    """The spec of the next round: ``step`` more seeds (to the next planned
    look), for every variant or, with ``later: hypotheses``, for those the
    undetermined hypotheses need; the others keep the seeds they ran."""
    assert spec.seed_rounds is not None
    seeds = next_seeds(spec, current.seeds)
    if spec.seed_rounds.later == "all":
        return replace(current, seeds=seeds)
    added = seeds[len(current.seeds) :]
    needed = needed_variants(spec, found)
    variant_seeds = {
        v.name: current.seeds_of(v.name) + (added if v.name in needed else ())
        for v in spec.variants
    }
    return replace(
        current,
        seeds=seeds,
        variant_seeds={name: s for name, s in variant_seeds.items() if s != seeds},
    )


def stop_reason(spec: Spec, rounds: list[RoundResult], found: list[Answer]) -> str:
    seeds = len(rounds[-1].seeds)
    critical = rounds[-1].critical
    at = f" (t = {critical:.2f})" if critical is not None else ""
    if rounds[-1].answered:
        return (
            f"after {seeds} seeds every hypothesis had a decisive verdict at look "
            f"{len(rounds)}'s boundary{at}"
        )
    open_ones = ", ".join(a.hypothesis.name for a in found if a.verdict == UNDETERMINED)
    return f"reached the most seeds the spec allows ({seeds}){at}; still undetermined: {open_ones}"


def run_in_rounds(
    spec: Spec,
    layout: Layout,
    run_round: Callable[[Spec], int],
    answer_round: Callable[[Spec], list[Answer]],
) -> tuple[Spec, int]:
    """Run rounds of seeds until answered; return the spec with every seed
    that ran, and the worst exit code of the rounds' runs. The record is
    written as each round ends, so an experiment stopped during a round
    leaves the rounds it finished for ``collect`` and ``compare``."""
    assert spec.seed_rounds is not None
    current = spec
    rounds: list[RoundResult] = []
    worst = 0
    while True:
        seeds = current.seeds
        runs = len(current.runs())
        print(
            f"seed round {len(rounds) + 1}: seeds {', '.join(map(str, seeds))} "
            f"({runs} runs of {len(spec.variants)} variants)"
        )
        worst = max(worst, run_round(current))
        found = answer_round(current)
        criticals = [a.critical for a in found if a.critical is not None]
        rounds.append(
            RoundResult(
                seeds,
                {a.hypothesis.name: a.verdict for a in found},
                {a.hypothesis.name: [a.estimate.low, a.estimate.high] for a in found},
                max(criticals) if criticals else None,
                all_answered(found),
                runs,
            )
        )
        if rounds[-1].answered or len(seeds) >= spec.seed_rounds.max:
            break
        following = next_seeds(spec, seeds)[len(seeds) :]
        write_rounds(
            spec,
            layout,
            rounds,
            current,
            f"not finished: round {len(rounds) + 1} (seeds {following[0]}-{following[-1]}) "
            "had not ended when this was recorded (`runner experiment` goes on from it)",
        )
        current = next_round(spec, current, found)
    reason = stop_reason(spec, rounds, found)
    print(f"seed rounds: {len(rounds)}; stopped: {reason}")
    write_rounds(spec, layout, rounds, current, reason)
    return current, worst


def write_rounds(
    spec: Spec, layout: Layout, rounds: list[RoundResult], last: Spec, stopped: str
) -> None:
    """Record the rounds that ended; ``last`` is the spec of the last of them."""
    assert spec.seed_rounds is not None
    plan = design(spec)
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        layout.experiment_dir / ROUNDS_FILE,
        {
            "rule": {
                "min": spec.seed_rounds.min,
                "max": spec.seed_rounds.max,
                "step": spec.seed_rounds.step,
                "looks": list(plan.looks),
                "t_boundaries": [round(plan.t_critical(k, n), 4) for k, n in enumerate(plan.looks)],
            },
            "rounds": [
                {
                    "seeds": list(r.seeds),
                    "verdicts": r.verdicts,
                    "intervals": r.intervals,
                    "critical": r.critical,
                    "answered": r.answered,
                    "runs": r.runs,
                }
                for r in rounds
            ],
            "variant_seeds": {name: list(s) for name, s in last.variant_seeds.items()},
            "stopped": stopped,
        },
    )


def read_rounds(layout: Layout) -> dict[str, Any] | None:
    path = layout.experiment_dir / ROUNDS_FILE
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    except (OSError, ValueError):
        return None


def seeds_in_use(spec: Spec, layout: Layout) -> Spec:
    """A spec with seed rounds, with the seeds its last rounds ran (if any)."""
    if spec.seed_rounds is None:
        return spec
    data = read_rounds(layout)
    if not data or not data.get("rounds"):
        return spec
    names = {v.name for v in spec.variants}
    return replace(
        spec,
        seeds=tuple(int(s) for s in data["rounds"][-1]["seeds"]),
        variant_seeds={
            name: tuple(int(s) for s in seeds)
            for name, seeds in data.get("variant_seeds", {}).items()
            if name in names
        },
    )
