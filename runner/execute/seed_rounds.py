"""Seeds until answered: ``seeds: {min, max, step}`` runs ``min`` seeds, then
``step`` more at a time, until every hypothesis's 95% interval is narrower
than its smallest change that matters, or ``max`` seeds have run.

The rule looks only at the intervals' widths, never at which side of zero
they lie, so stopping does not favour an answer. Each round is recorded in
``results/<exp>/seed_rounds.json``; the report says how many rounds ran and
why they stopped, and ``collect`` and ``compare`` use the seeds it lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from runner.analyses.answers import Answer
from runner.execute.manifest import write_json_atomic
from runner.layout import Layout
from runner.spec.model import Spec

ROUNDS_FILE = "seed_rounds.json"


@dataclass(frozen=True)
class RoundResult:
    seeds: tuple[int, ...]
    widths: dict[str, float | None]  # hypothesis -> its interval's width (a change)
    answered: bool


def width(a: Answer) -> float | None:
    low, high = a.estimate.low, a.estimate.high
    return None if low is None or high is None else high - low


def all_answered(found: list[Answer]) -> bool:
    """Every interval narrower than its hypothesis's smallest change."""
    return all((w := width(a)) is not None and w < a.hypothesis.smallest_change for a in found)


def next_seeds(spec: Spec, seeds: tuple[int, ...]) -> tuple[int, ...]:
    assert spec.seed_rounds is not None
    more = min(spec.seed_rounds.step, spec.seed_rounds.max - len(seeds))
    first = max(seeds) + 1
    return seeds + tuple(range(first, first + more))


def stop_reason(spec: Spec, rounds: list[RoundResult], found: list[Answer]) -> str:
    seeds = len(rounds[-1].seeds)
    if rounds[-1].answered:
        return (
            f"after {seeds} seeds every hypothesis's 95% interval was narrower than its "
            "smallest change that matters"
        )
    wide = ", ".join(
        f"{a.hypothesis.name} ({'no interval' if width(a) is None else f'{width(a):.0%}'} "
        f"wide, needs < {a.hypothesis.smallest_change:.0%})"
        for a in found
        if (w := width(a)) is None or w >= a.hypothesis.smallest_change
    )
    return f"reached the most seeds the spec allows ({seeds}); still too wide: {wide}"


def run_in_rounds(
    spec: Spec,
    layout: Layout,
    run_round: Callable[[Spec], int],
    answer_round: Callable[[Spec], list[Answer]],
) -> tuple[Spec, int]:
    """Run rounds of seeds until answered; return the spec with every seed
    that ran, and the worst exit code of the rounds' runs."""
    assert spec.seed_rounds is not None
    seeds = spec.seeds
    rounds: list[RoundResult] = []
    worst = 0
    while True:
        current = replace(spec, seeds=seeds)
        print(f"seed round {len(rounds) + 1}: seeds {', '.join(map(str, seeds))}")
        worst = max(worst, run_round(current))
        found = answer_round(current)
        rounds.append(
            RoundResult(seeds, {a.hypothesis.name: width(a) for a in found}, all_answered(found))
        )
        if rounds[-1].answered or len(seeds) >= spec.seed_rounds.max:
            break
        seeds = next_seeds(spec, seeds)
    reason = stop_reason(spec, rounds, found)
    print(f"seed rounds: {len(rounds)}; stopped: {reason}")
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        layout.experiment_dir / ROUNDS_FILE,
        {
            "rule": {
                "min": spec.seed_rounds.min,
                "max": spec.seed_rounds.max,
                "step": spec.seed_rounds.step,
            },
            "rounds": [
                {"seeds": list(r.seeds), "widths": r.widths, "answered": r.answered} for r in rounds
            ],
            "stopped": reason,
        },
    )
    return replace(spec, seeds=seeds), worst


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
    return replace(spec, seeds=tuple(int(s) for s in data["rounds"][-1]["seeds"]))
