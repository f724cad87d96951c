"""Seeds until answered: ``seeds: {min, max, step}`` runs ``min`` seeds
(5 unless the spec says otherwise), then ``step`` more at a time, to the
design's next look, until every confirmatory hypothesis (every hypothesis,
where none tests a claim) has a decisive verdict (supported, no change that
matters, or contradicted) or is futile, or ``max`` seeds have run. With ``later: hypotheses`` a
later round runs only the variants the undetermined hypotheses compare:
the first round gives every variant's table, the later ones buy the
answers (a hypothesis decided stops costing runs).

Each look's interval is a repeated confidence interval of the spec's
group-sequential design (runner/analyses/sequential.py), at the level the
hypothesis has (its share of the family's 5% for a confirmatory one, one
test per claim with Holm's step-down across claims; 5% for an exploratory
one: runner/analyses/family.py),
so stopping on the first decisive look keeps those error rates. Each round
is recorded as it ends in ``results/<exp>/seed_rounds.json`` with the
boundaries and levels it used and each hypothesis's verdict; the report
says how many rounds ran and why they stopped, and ``collect`` and
``compare`` use the seeds it lists.

The boundaries hold for the design the rounds ran under: raising ``max``
(or changing ``min`` or ``step``) once rounds have run lets the seeds seen
choose the design, which voids them. ``runner experiment`` refuses that
(``check_design``) unless told ``--new-design``; the record then keeps the
change, and the report says the error rates do not hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from runner.analyses.answers import CONFIRMATORY, UNDETERMINED, Answer, family, reading_of
from runner.analyses.sequential import SequentialDesign
from runner.console import TERMINAL, Console
from runner.errors import SpecError
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
    critical: float | None  # the largest t value of this look's intervals
    answered: bool
    runs: int = 0  # the runs of every variant at the look's seeds
    alphas: dict[str, float] = field(default_factory=dict)  # hypothesis -> its level
    criticals: dict[str, float | None] = field(default_factory=dict)  # hypothesis -> its t


def deciding(found: list[Answer]) -> list[Answer]:
    """The answers the rounds wait for: the confirmatory family's, or every
    hypothesis's where the spec tests no claim."""
    confirmatory = [a for a in found if a.family == CONFIRMATORY]
    return confirmatory or list(found)


def still_open(found: list[Answer]) -> list[Answer]:
    """The answers the rounds still draw seeds for: undetermined and not futile."""
    return [a for a in deciding(found) if a.verdict == UNDETERMINED and not a.futile]


def all_answered(found: list[Answer]) -> bool:
    """Every hypothesis the rounds wait for decisive or futile (under 3
    seeds none is decisive: see Answer.too_few)."""
    return not still_open(found)


def design(spec: Spec) -> SequentialDesign:
    found = SequentialDesign.of(spec, reading_of(spec).tails)
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
    return variants_compared(spec, [a.hypothesis for a in still_open(found)])


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


def first_round(spec: Spec) -> Spec:
    """The spec of the first round: every variant, or with ``later:
    family`` only the variants the confirmatory family compares (those
    its rounds wait for, runner.analyses.family)."""
    assert spec.seed_rounds is not None
    if spec.seed_rounds.later != "family":
        return spec
    confirmatory = [h for h in spec.hypotheses if family(h) == CONFIRMATORY]
    needed = variants_compared(spec, confirmatory or spec.hypotheses)
    return replace(spec, variant_seeds={v.name: () for v in spec.variants if v.name not in needed})


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
    futile = [a.hypothesis.name for a in deciding(found) if a.futile]
    futile_text = f"; futile (the design cannot decide them): {', '.join(futile)}" if futile else ""
    if rounds[-1].answered:
        decided = "a decisive verdict" if not futile else "a decisive verdict or was futile"
        return (
            f"after {seeds} seeds every hypothesis the rounds wait for had {decided} "
            f"at look {len(rounds)}'s boundary{at}{futile_text}"
        )
    open_ones = ", ".join(a.hypothesis.name for a in still_open(found))
    return (
        f"reached the most seeds the spec allows ({seeds}){at}; still undetermined: "
        f"{open_ones}{futile_text}"
    )


def run_in_rounds(
    spec: Spec,
    layout: Layout,
    run_round: Callable[[Spec], int],
    answer_round: Callable[[Spec], list[Answer]],
    design_changes: Sequence[dict[str, Any]] = (),
    console: Console = TERMINAL,
) -> tuple[Spec, int]:
    """Run rounds of seeds until answered; return the spec with every seed
    that ran, and the worst exit code of the rounds' runs. The record is
    written as each round ends, so an experiment stopped during a round
    leaves the rounds it finished for ``collect`` and ``compare``;
    ``design_changes`` (``check_design``) go into it."""
    assert spec.seed_rounds is not None
    current = first_round(spec)
    rounds: list[RoundResult] = []
    worst = 0
    while True:
        seeds = current.seeds
        runs = len(current.runs())
        console.out(
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
                {a.hypothesis.name: a.alpha for a in found},
                {a.hypothesis.name: a.critical for a in found},
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
            design_changes,
            f"not finished: round {len(rounds) + 1} (seeds {following[0]}-{following[-1]}) "
            "had not ended when this was recorded (`runner experiment` goes on from it)",
        )
        current = next_round(spec, current, found)
    reason = stop_reason(spec, rounds, found)
    console.out(f"seed rounds: {len(rounds)}; stopped: {reason}")
    write_rounds(spec, layout, rounds, current, design_changes, reason)
    return current, worst


def write_rounds(
    spec: Spec,
    layout: Layout,
    rounds: list[RoundResult],
    last: Spec,
    design_changes: Sequence[dict[str, Any]],
    stopped: str,
) -> None:
    """Record the rounds that ended; ``last`` is the spec of the last of them."""
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        layout.experiment_dir / ROUNDS_FILE,
        {
            "rule": rule_record(spec),
            "rounds": [
                {
                    "seeds": list(r.seeds),
                    "verdicts": r.verdicts,
                    "intervals": r.intervals,
                    "critical": r.critical,
                    "answered": r.answered,
                    "runs": r.runs,
                    "alphas": r.alphas,
                    "criticals": r.criticals,
                }
                for r in rounds
            ],
            "variant_seeds": {name: list(s) for name, s in last.variant_seeds.items()},
            "design_changes": list(design_changes),
            "stopped": stopped,
        },
    )


def rule_record(spec: Spec) -> dict[str, Any]:
    """The design and its boundaries: at 5% (an exploratory hypothesis)
    and, for the family's first step (5% over its claims), each side's."""
    assert spec.seed_rounds is not None
    plan = design(spec)
    confirmatory = sum(family(h) == CONFIRMATORY for h in spec.hypotheses)
    claims = {h.claim.id for h in spec.hypotheses if h.claim is not None and not h.exploratory}
    record: dict[str, Any] = {
        **design_keys(spec),
        "looks": list(plan.looks),
        "skew": plan.skew,
        "allowance": round(plan.ratio, 4),
        "t_boundaries": _rounded(plan.boundaries()),
        "confirmatory": confirmatory,
        "claims": len(claims),
    }
    if claims:
        lower, upper = plan.tails
        record["family_t_boundaries"] = {
            "toward": _rounded(plan.side_boundaries(upper)),
            "away": _rounded(plan.side_boundaries(lower)),
        }
    return record


def _rounded(bounds: Sequence[float]) -> list[float]:
    return [round(t, 4) for t in bounds]


def design_keys(spec: Spec) -> dict[str, Any]:
    """What a design is: ``seeds: {min, max, step}``."""
    assert spec.seed_rounds is not None
    r = spec.seed_rounds
    keys: dict[str, Any] = {"min": r.min, "max": r.max, "step": r.step}
    return keys


def check_design(spec: Spec, layout: Layout, new_design: bool) -> list[dict[str, Any]]:
    """The design changes to record for this experiment's rounds: those
    recorded so far, and this one if the spec's design differs from the one
    the recorded rounds ran under and ``new_design`` allows it; a SpecError
    if it differs and does not."""
    data = read_rounds(layout)
    if not data or not data.get("rounds"):
        return []
    changes = list(data.get("design_changes") or [])
    rule = data.get("rule", {})
    ran = {key: rule.get(key) for key in ("min", "max", "step")}
    now = design_keys(spec)
    if ran == now:
        return changes
    seen = len(data["rounds"][-1]["seeds"])
    if not new_design:
        raise SpecError(
            spec.path,
            "seeds",
            f"{_design_text(ran)} is the design {len(data['rounds'])} rounds ({seen} seeds) "
            f"already ran under, and the spec now says {_design_text(now)}: a design changed "
            "after seeing seeds voids the error rates its boundaries promise. Restore it, or "
            "pass --new-design to run under the new one (the report will say the error rates "
            "do not hold)",
        )
    return changes + [{"from": ran, "to": now, "after_seeds": seen}]


def _design_text(keys: dict[str, Any]) -> str:
    return f"{{min: {keys['min']}, max: {keys['max']}, step: {keys['step']}}}"


def design_change_lines(spec: Spec, data: dict[str, Any]) -> list[str]:
    """What the report says where the design changed after rounds had run,
    or where the spec's differs from the recorded rounds' design."""
    lines = [
        f"- design changed after rounds had run (`--new-design`): seeds "
        f"{_design_text(c['from'])} to {_design_text(c['to'])} after {c['after_seeds']} "
        "seeds: the error rates the boundaries promise do not hold for these answers"
        for c in data.get("design_changes") or []
    ]
    rule = data.get("rule", {})
    ran = {key: rule.get(key) for key in ("min", "max", "step")}
    if ran != design_keys(spec):
        lines.append(
            f"- the spec's seeds {_design_text(design_keys(spec))} differ from the design the "
            f"recorded rounds ran under, {_design_text(ran)}: the answers use the spec's, "
            "whose error rates do not hold for seeds already seen (restore the design, or run "
            "`runner experiment --new-design`)"
        )
    return lines


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


def narrowed_line(written: Spec, in_use: Spec, layout: Layout) -> str | None:
    """What every command that takes its seeds from the recorded rounds
    (``seeds_in_use``) says: the file and the seeds; None where the rounds
    narrowed nothing."""
    if (in_use.seeds, in_use.variant_seeds) == (written.seeds, written.variant_seeds):
        return None
    line = (
        f"seeds narrowed by {layout.experiment_dir / ROUNDS_FILE}: "
        f"{', '.join(map(str, in_use.seeds))} (the spec lists {len(written.seeds)})"
    )
    fewer = sorted(name for name, seeds in in_use.variant_seeds.items() if seeds != in_use.seeds)
    if fewer:
        line += f"; {len(fewer)} variants at fewer seeds: {', '.join(fewer)}"
    return line
