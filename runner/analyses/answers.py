"""Answers to the hypotheses a spec states: an estimate of each change with
its interval, the seeds behind it, and a verdict.

Verdicts, for a change expected in direction d with smallest change m:
supported (the whole interval is beyond m in direction d), no change that
matters (the whole interval inside the band of changes too small to matter:
m on the expected side and its mirror on the log scale, Target.band),
contradicted (the whole interval on the other side of zero, and not inside
the band), otherwise undetermined, with the seeds that would give a decisive
verdict with 80% probability, from the change and the spread between the
seeds seen so far (runner/analyses/power.py).

For ``expect: same`` with margin m (an equivalence): supported (the whole
interval inside the band of changes within m: log ratios within
+-log(1 + m), the band of a change of m either way), contradicted (the
whole interval outside it, wholly beyond +m or wholly below its mirror),
otherwise undetermined. It reads the same interval as any other
hypothesis (its level in the family, its look's boundary), split evenly
between its sides: it has no direction to lean toward. Its seeds needed
are the same prediction, a decisive verdict being inside or wholly
outside the band: a change at the band's edge needs more seeds than any
design (futile in rounds); one outside it, the seeds to show it outside.

The error rate is family-wise over the confirmatory hypotheses (those that
test a published claim) and per comparison for the exploratory ones (the
project's own questions, ``extension:``, and claim hypotheses the spec sets
outside the family, ``exploratory:``). The family is one test per claim,
its hypotheses in their committed order, Holm's step-down across claims
(runner/analyses/family.py). The chance that any confirmatory verdict is
wrong stays at alpha (5%); tests/test_family.py checks it by simulation, on
normal and skewed seeds. Each exploratory verdict's chance is 5% on its own.
A confirmatory interval puts TOWARD (80%) of its level on the side that
would support its claim (runner/analyses/sequential.side_tails).

Each seed's statistic counts every measured client once (the median over
clients of each client's quantile, runner/analyses/stats.client_quantile):
a fast client that finishes many transfers does not outvote a slow one.
Seeds are the unit: the interval is across seeds, at the rule's t values
for the hypothesis's level: one look, or the sequential design's boundary
where the seeds ran in rounds (runner/analyses/sequential.py; both allow
for seeds' log ratios as skewed as the design states, once for the whole
family). A hypothesis pooled over sizes (``sizes:``) takes per seed the
mean of each size's log ratio. Under 3 seeds there is no interval to read;
before a design's first look (``decide_from`` seeds) no verdict; under 5 a
verdict rests on the seeds' spread being normal; from 5 on, seeds whose log
ratios are skewed (sample skewness beyond +-SKEWED) are marked. A
confirmatory hypothesis the plan says the design cannot decide within its
``max`` is *futile*: its rounds stop drawing seeds for it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from runner.analyses.as_data import as_data
from runner.analyses.client_bandwidth import ClientBandwidth, per_client
from runner.analyses.family import (
    CONFIRMATORY,
    EXPLORATORY,
    FamilyShape,
    family,
    first_level,
    layout_of,
    run_family,
)
from runner.analyses.from_data import from_data
from runner.analyses.inputs import ChangeKey
from runner.analyses.power import MIN_SEEDS, Target, seeds_to_decisive
from runner.analyses.relay_work import RelayCpuPerByte, RelayWork, relay_work, unmeasured
from runner.analyses.runs import complete, read_spec_runs
from runner.analyses.sequential import (
    ALPHA,
    Reading,
    SequentialDesign,
    criticals,
    family_reading,
)
from runner.analyses.stats import (
    ClientCount,
    ClientQuantile,
    ClientRate,
    ClientValues,
    Estimate,
    PairedChange,
    interaction_change,
    paired_change,
    ratio_change_ci,
)
from runner.analyses.transfers import METRICS
from runner.analyses.workload_rounds import ClientRoundMean, Round, class_phases, rounds
from runner.layout import Layout
from runner.spec.claims import METRIC_READINGS, ClaimsLedger
from runner.spec.hypotheses import QUANTILE_METRICS, RELAY_METRICS, Hypothesis
from runner.spec.model import DEFAULT_SKEW, Spec
from runner.spec.rule import rule_fingerprint
from runner.tables.schema import CLIENTS, PROCESS_CPU, RELAY_LOAD, SERVED, TransferRow

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NO_CHANGE = "no change that matters"
UNDETERMINED = "undetermined"
MIN_INTERVAL_SEEDS = MIN_SEEDS  # fewer give an interval too wide to read as an answer
NORMAL_SPREAD_SEEDS = 5  # fewer: a verdict rests on the seeds' spread being normal
SKEWED = 1.0  # seeds' log ratios whose sample skewness is beyond this are marked
__all__ = ["CONFIRMATORY", "EXPLORATORY", "family"]
DEFAULT_READING = Reading()


@dataclass(frozen=True)
class Answer:
    hypothesis: Hypothesis
    estimate: Estimate  # relative change, a fraction
    verdict: str
    seeds_needed: int | None = None  # for an undetermined verdict, if the spread is known
    bootstrap: Estimate | None = None
    critical: float | None = None  # the t value of the interval
    look: int | None = None  # the sequential design's look (0-based), if in rounds
    alpha: float = ALPHA  # the level its interval used: its share of the family's, or 5%
    skewness: float | None = None  # of the seeds' log ratios, from NORMAL_SPREAD_SEEDS seeds
    critical_low: float | None = None  # the lower side's t value where it differs
    # Why it has no verdict yet where that is not its interval: gated behind
    # its claim's earlier hypothesis, before the design's first look, or futile.
    held: str | None = None
    futile: bool = False  # the design cannot decide it within its max

    @property
    def too_few(self) -> bool:
        return self.estimate.n < MIN_INTERVAL_SEEDS

    @property
    def few(self) -> bool:
        return self.estimate.n < NORMAL_SPREAD_SEEDS

    @property
    def family(self) -> str:
        return family(self.hypothesis)

    @property
    def skewed(self) -> bool:
        """The seeds' log ratios look skewed: the verdict rests on their skew
        being no more than the rule allows for (sequential.SKEW)."""
        return self.skewness is not None and abs(self.skewness) > SKEWED


def first_step_alpha(
    h: Hypothesis, hypotheses: Sequence[Hypothesis], alpha: float = ALPHA
) -> float:
    """The level of ``h``'s interval at the family's first step over
    ``hypotheses``: alpha over the claims for a confirmatory one (a claim's
    later hypotheses inherit its level), alpha for an exploratory one. The
    plan's level: later steps' are larger."""
    hypotheses = list(hypotheses)
    return first_level(layout_of(hypotheses), hypotheses.index(h), alpha)


def reading_of(spec: Spec, alpha: float = ALPHA) -> Reading:
    """How ``spec``'s family reads its intervals: the skew its design allows
    for and its smallest level, split toward the claims' directions."""
    layout = layout_of(spec.hypotheses)
    skew = spec.seed_rounds.skew if spec.seed_rounds is not None else DEFAULT_SKEW
    first = alpha / len(layout.claims) if layout.claims else alpha
    split = any(split_direction(h) is not None for h in spec.hypotheses)
    return family_reading(first, split, skew)


def split_direction(h: Hypothesis) -> int | None:
    """The direction a hypothesis's interval is split toward: its claim's,
    for a confirmatory one; None (even) otherwise, and for an equivalence,
    whose band has two edges alike."""
    return h.direction if family(h) == CONFIRMATORY and not h.equivalence else None


def target(h: Hypothesis) -> Target:
    return Target(h.direction, h.smallest_change)


def verdict(estimate: Estimate, h: Hypothesis) -> str:
    low, high = estimate.low, estimate.high
    if low is None or high is None:
        return UNDETERMINED
    below, above = target(h).band
    if h.equivalence:
        return equivalence_verdict(low, high, below, above)
    if (h.direction < 0 and high < below) or (h.direction > 0 and low > above):
        return SUPPORTED
    # Inside the band first: a change surely the wrong way but too small to
    # matter is no change that matters, as in an equivalence test.
    if below < low and high < above:
        return NO_CHANGE
    if (h.direction < 0 and low > 0) or (h.direction > 0 and high < 0):
        return CONTRADICTED
    return UNDETERMINED


def equivalence_verdict(low: float, high: float, below: float, above: float) -> str:
    """``expect: same``: supported inside the band (``below``, ``above``),
    contradicted wholly outside it, otherwise undetermined."""
    if below < low and high < above:
        return SUPPORTED
    if low > above or high < below:
        return CONTRADICTED
    return UNDETERMINED


def seeds_needed(
    log_ratios: Sequence[float],
    h: Hypothesis,
    alpha: float = ALPHA,
    reading: Reading | None = None,
) -> int | None:
    """The fewest seeds likely (80%) to give a decisive verdict at level
    ``alpha`` in one look, read as ``reading`` says, if the seeds so far
    tell the change and its spread; None if they cannot (under two). Never
    fewer than MIN_INTERVAL_SEEDS, the fewest a verdict needs."""
    if len(log_ratios) < 2:
        return None
    effect = float(np.mean(log_ratios))
    sd = float(np.std(log_ratios, ddof=1))
    return seeds_to_decisive(
        effect, sd, target(h), alpha=alpha, reading=reading, split=split_direction(h) is not None
    )


def skewness(log_ratios: Sequence[float]) -> float | None:
    """The sample skewness (adjusted Fisher-Pearson, G1) of the seeds' log
    ratios, from NORMAL_SPREAD_SEEDS seeds on; None before, or where they
    barely spread (the same ratio on every seed, up to rounding)."""
    x = np.asarray(log_ratios, dtype=float)
    n = len(x)
    if n < NORMAL_SPREAD_SEEDS:
        return None
    d = x - x.mean()
    m2 = float(np.mean(d * d))
    if m2 <= (1e-9 * (1 + abs(float(x.mean())))) ** 2:
        return None
    g1 = float(np.mean(d**3)) / math.pow(m2, 1.5)
    return g1 * math.sqrt(n * (n - 1)) / (n - 2)


def per_seed_samples(
    h: Hypothesis,
    transfers: Iterable[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round],
    work: Sequence[RelayWork] = (),
) -> tuple[dict[tuple[int, int], ClientValues], Callable[[Any], float]]:
    """(side, seed) -> each measured client's values the hypothesis's
    statistic is taken over (side: the index in ``h.sides``), and that
    statistic. Every metric keeps its values per client, so that every
    client counts once and the plan can tell clients' spread from seeds';
    a relay metric keeps them per relay (``work``: runner.analyses.relay_work)."""
    transfers = list(transfers)
    collected: dict[tuple[int, int], dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))

    def add(
        variant: str,
        seed: int,
        group: str,
        host: str,
        value: Any,
        groups: Mapping[tuple[str, int, str], str] | None = None,
    ) -> None:
        """``groups``: each client's group by (variant, seed, host), for a
        side that reads the clients of another variant's run of the seed."""
        for i, side in enumerate(h.sides):
            read_as = group
            if side.clients_of is not None and groups is not None:
                read_as = groups.get((side.clients_of, seed, host), "")
            if side.holds(variant, read_as):
                collected[(i, seed)][host].append(value)

    def samples() -> dict[tuple[int, int], ClientValues]:
        return {key: dict(by_client) for key, by_client in collected.items()}

    if h.metric == "client_bandwidth":
        groups = {(b.variant, b.seed, b.host): b.group for b in bandwidths}
        for row in transfers:
            group = groups.get((row.variant, row.seed, row.host))
            if group is not None and row.measured and row.success and row.ttlb:
                add(row.variant, row.seed, group, row.host, (row.size, row.ttlb), groups)
        return samples(), ClientRate()
    if h.metric == "round_completion":
        classes = {(row.variant, row.seed, row.host): row.cls for row in transfers}
        # Each round with its phase's number, so that a client's rounds are
        # held to the fences of its own rounds of the same phase.
        numbers = {phase: i for i, phase in enumerate(sorted({r.phase for r in rounds}))}
        for r in rounds:
            if r.completion is not None and (h.phase is None or r.phase == h.phase):
                group = classes.get((r.variant, r.seed, r.host), "")
                add(r.variant, r.seed, group, r.host, (numbers[r.phase], r.completion))
        return samples(), ClientRoundMean()
    if h.metric == "downloads_completed":
        for row in transfers:
            if row.measured and row.success:
                add(row.variant, row.seed, row.cls, row.host, 1.0)
        return samples(), ClientCount()
    if h.metric == "relay_cpu_per_byte":
        for w in work:
            add(w.variant, w.seed, "", w.relay, (w.cpu_s, w.moved_bytes))
        return samples(), RelayCpuPerByte()
    value_of = METRICS[h.metric]
    for row in transfers:
        if not row.measured or not row.success or (h.size is not None and row.size != h.size):
            continue
        value = value_of(row)
        if value is not None:
            add(row.variant, row.seed, row.cls, row.host, value)
    q = h.quantile if h.metric in QUANTILE_METRICS else 0.5
    return samples(), ClientQuantile(q)


# The metrics the report's Changes table gives per (variant, reference,
# class, size), at the median (runner.analyses.transfers.changes).
CHANGES_METRICS = ("ttfb", "ttlb", "after_first_byte")


def changes_key(h: Hypothesis, transfers: Iterable[TransferRow]) -> ChangeKey | None:
    """The Changes table's comparison that is the same as ``h``'s, where
    there is one: a plain median change of a transfer time whose transfers
    (measured, successful, with a value, of its variant or reference, in
    its class and size) all fall in one class and size. The two read the
    same transfers the same way, so they are one comparison with one
    answer. None otherwise."""
    plain = h.interaction is None and h.contrast is None
    if not plain or h.metric not in CHANGES_METRICS or h.quantile != 0.5:
        return None
    value_of = METRICS[h.metric]
    groups = {
        (row.cls, row.size)
        for row in transfers
        if row.measured
        and row.success
        and row.variant in (h.variant, h.reference)
        and (h.cls is None or row.cls == h.cls)
        and (h.size is None or row.size == h.size)
        and value_of(row) is not None
    }
    if len(groups) != 1:
        return None
    ((cls, size),) = groups
    return (h.variant, h.reference, cls, size, h.metric)


def seeded_samples(
    h: Hypothesis, samples: dict[tuple[int, int], ClientValues]
) -> list[tuple[int, tuple[ClientValues, ...]]]:
    """Per seed with values on the first side, in seed order: the seed and
    the values of each of ``h.sides`` in order, as a ratio takes them
    (variant, reference, and for an interaction its variant and reference;
    for a contrast the class and the group set against it). A side with
    none is empty."""
    return [
        (seed, tuple(samples.get((i, seed), {}) for i in range(len(h.sides))))
        for (side, seed) in sorted(samples)
        if side == 0
    ]


def seed_samples(
    h: Hypothesis, samples: dict[tuple[int, int], ClientValues]
) -> list[tuple[ClientValues, ...]]:
    """``seeded_samples`` without the seeds."""
    return [sides for _, sides in seeded_samples(h, samples)]


def seed_change(
    h: Hypothesis,
    seeds: Sequence[tuple[Any, ...]],
    statistic: Callable[[Any], float],
    critical: float | None = None,
) -> PairedChange:
    """The hypothesis's change from ``seed_samples``: a plain ratio or an
    interaction of two."""
    if h.ratio_of_ratios:
        return interaction_change([(a, b, c, d) for a, b, c, d in seeds], statistic, critical)
    return paired_change([(a, b) for a, b in seeds], statistic, critical)


@dataclass(frozen=True)
class Observed:
    """A hypothesis's seeds, before a level is chosen for its interval."""

    hypothesis: Hypothesis
    change: PairedChange
    look: int | None = None  # the sequential design's look, if in rounds
    design: SequentialDesign | None = None
    reading: Reading = DEFAULT_READING  # the family's allowance, for one look
    before_first_look: bool = False  # in rounds, short of the design's first look
    # Why the runs hold nothing for it to read (a relay metric's CPU under Shadow).
    missing: str | None = None

    @property
    def log_ratios(self) -> list[float]:
        return [math.log(r) for r in self.change.ratios]


def observe(
    h: Hypothesis,
    transfers: Iterable[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
    design: SequentialDesign | None = None,
    seeds_ran: int | None = None,
    reading: Reading = DEFAULT_READING,
    work: Sequence[RelayWork] = (),
) -> Observed:
    """``design``: the seeds ran in rounds of this design, ``seeds_ran`` of
    them so far; the interval is then that look's repeated confidence
    interval (the first look's, with no verdict, before it). ``work``: the
    relays' CPU and bytes per run, which a relay metric reads."""
    transfers = list(transfers)
    change = (
        pooled_change(h, transfers, bandwidths, rounds)
        if h.sizes
        else _plain_change(h, transfers, bandwidths, rounds, work)
    )
    look, before = None, False
    if design is not None:
        found = design.look_of(seeds_ran if seeds_ran is not None else len(change.ratios))
        look, before = (0, True) if found is None else (found, False)
    return Observed(h, change, look, design, reading, before, unmeasured(h, work))


def _plain_change(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round],
    work: Sequence[RelayWork] = (),
) -> PairedChange:
    samples, statistic = per_seed_samples(h, transfers, bandwidths, rounds, work)
    return seed_change(h, seed_samples(h, samples), statistic)


def pooled_ratios(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
) -> list[tuple[int, float]]:
    """(seed, ratio) of a hypothesis pooled over its sizes: per seed with a
    ratio at every size, the geometric mean of the sizes' ratios (the mean
    of their log ratios), so each size counts once."""
    by_size = []
    for size in h.sizes:
        one = replace(h, size=size, sizes=())
        samples, statistic = per_seed_samples(one, transfers, bandwidths, rounds)
        ratios = {}
        for seed, sides in seeded_samples(one, samples):
            found = seed_change(one, [sides], statistic).ratios
            if found:
                ratios[seed] = found[0]
        by_size.append(ratios)
    common = sorted(set.intersection(*(set(r) for r in by_size)))
    return [
        (seed, math.exp(float(np.mean([math.log(r[seed]) for r in by_size])))) for seed in common
    ]


def pooled_change(
    h: Hypothesis,
    transfers: Sequence[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
) -> PairedChange:
    """The change of a hypothesis pooled over its sizes (no bootstrap: the
    sizes of a seed share its clients)."""
    ratios = [r for _, r in pooled_ratios(h, transfers, bandwidths, rounds)]
    return PairedChange(ratio_change_ci(ratios), None, ratios)


def critical_values(o: Observed, level: float) -> tuple[float, float] | None:
    """The t values of the rule's interval at ``level`` (lower side, upper
    side): the design's boundary at the look, or one look's over the seeds
    there are; split toward the claim's direction for a confirmatory one."""
    n = len(o.change.ratios)
    if n < 2:
        return None
    direction = split_direction(o.hypothesis)
    if o.design is None or o.look is None:
        return criticals(o.reading.one_look(n), 0, n, level, direction)
    return criticals(o.design, o.look, n, level, direction)


def answer_at(o: Observed, alpha: float) -> Answer:
    """The answer with its interval at level ``alpha`` (no prediction yet)."""
    found_criticals = critical_values(o, alpha)
    estimate = ratio_change_ci(o.change.ratios, critical=found_criticals)
    h = o.hypothesis
    found = verdict(estimate, h) if estimate.n >= MIN_INTERVAL_SEEDS else UNDETERMINED
    held = o.missing
    if o.before_first_look and o.design is not None and held is None:
        found, held = UNDETERMINED, f"before the design's first look ({o.design.looks[0]} seeds)"
    low_t, high_t = found_criticals if found_criticals is not None else (None, None)
    return Answer(
        h,
        estimate,
        found,
        bootstrap=o.change.bootstrap,
        critical=high_t if h.direction < 0 else low_t,
        look=o.look,
        alpha=alpha,
        skewness=skewness(o.log_ratios),
        critical_low=low_t,
        held=held,
    )


def with_prediction(a: Answer, o: Observed) -> Answer:
    """An undetermined answer with the seeds that would decide it at its
    level; a confirmatory one in rounds that needs more than the design's
    ``max`` is futile."""
    if a.verdict != UNDETERMINED:
        return a
    needed = seeds_needed(o.log_ratios, a.hypothesis, a.alpha, o.reading)
    futile = (
        a.family == CONFIRMATORY
        and o.design is not None
        and not o.before_first_look
        and needed is not None
        and needed > o.design.looks[-1]
    )
    return replace(a, seeds_needed=needed, futile=futile)


def decide_family(observed: Sequence[Observed], alpha: float = ALPHA) -> list[Answer]:
    """Every answer: the exploratory ones at ``alpha`` each; the
    confirmatory ones by the family's rule (runner/analyses/family.py),
    each at the level where it was decided, or its level at the end; a
    hypothesis gated behind its claim's undecided one has no verdict."""
    layout = layout_of([o.hypothesis for o in observed])
    found: dict[tuple[int, float], Answer] = {}

    def at(j: int, level: float) -> Answer:
        if (j, level) not in found:
            found[(j, level)] = answer_at(observed[j], level)
        return found[(j, level)]

    def decides(rows: np.ndarray, j: int, levels: np.ndarray) -> np.ndarray:
        return np.array([at(j, float(level)).verdict != UNDETERMINED for level in levels])

    outcome = run_family(layout, decides, 1, alpha)
    result = []
    for j, o in enumerate(observed):
        a = at(j, float(outcome.level[0, j]))
        if outcome.gated[0, j]:
            a = replace(a, verdict=UNDETERMINED, held=_gate_text(layout, observed, j))
        result.append(with_prediction(a, o))
    return _futile_chains(layout, result)


def _gate_text(layout: FamilyShape, observed: Sequence[Observed], j: int) -> str:
    chain = next(c for c in layout.claims if j in c)
    before = observed[chain[chain.index(j) - 1]].hypothesis.name
    return f"gated: tested once {before} is decided (its claim's committed order)"


def _futile_chains(layout: FamilyShape, found: list[Answer]) -> list[Answer]:
    """A claim's hypotheses after a futile one are futile too: they are
    tested only once it is decided."""
    for chain in layout.claims:
        stuck = False
        for j in chain:
            if stuck and found[j].verdict == UNDETERMINED:
                found[j] = replace(found[j], futile=True)
            stuck = stuck or found[j].futile
    return found


def holm(observed: Sequence[Observed], alpha: float = ALPHA) -> list[Answer]:
    """``decide_family``: with one hypothesis a claim, Holm's step-down."""
    return decide_family(observed, alpha)


def answer(
    h: Hypothesis,
    transfers: Iterable[TransferRow],
    bandwidths: Sequence[ClientBandwidth],
    rounds: Sequence[Round] = (),
    design: SequentialDesign | None = None,
    seeds_ran: int | None = None,
    alpha: float = ALPHA,
    work: Sequence[RelayWork] = (),
) -> Answer:
    """One hypothesis on its own, at level ``alpha`` (see ``observe``)."""
    o = observe(h, transfers, bandwidths, rounds, design, seeds_ran, work=work)
    return with_prediction(answer_at(o, alpha), o)


def hypothesis_rounds(spec: Spec, layout: Layout, transfers: Sequence[TransferRow]) -> list[Round]:
    """The rounds of parallel streams, where a hypothesis is about them."""
    if not any(h.metric == "round_completion" for h in spec.hypotheses):
        return []
    return rounds(transfers, SERVED.read_from(layout), class_phases(spec))


def hypothesis_relay_work(spec: Spec, layout: Layout) -> list[RelayWork]:
    """The relays' CPU and bytes per run, where a hypothesis reads them."""
    if not any(h.metric in RELAY_METRICS for h in spec.hypotheses):
        return []
    return relay_work(PROCESS_CPU.read_from(layout), RELAY_LOAD.read_from(layout))


def post_hoc(spec: Spec, layout: Layout) -> str | None:
    """Why the spec's confirmatory verdicts are post hoc, or None: some of
    the complete runs they read were generated under another rule (another
    set of hypotheses or seeds' design, runner.spec.rule), so the rule was
    chosen after runs it decides were seen."""
    family_variants = {v for h in spec.hypotheses if family(h) == CONFIRMATORY for v in h.variants}
    runs = [r for r in complete(read_spec_runs(spec, layout)) if r.variant in family_variants]
    current = rule_fingerprint(spec)
    other = [r for r in runs if r.rule != current]
    if not other:
        return None
    return (
        f"post hoc: {len(other)} of the {len(runs)} runs it reads were generated under "
        "another rule than the spec now states (runner.spec.rule), so it is read as exploratory"
    )


def as_exploratory(spec: Spec, why: str) -> Spec:
    """The spec with its confirmatory hypotheses set outside the family, saying why."""
    return replace(
        spec,
        hypotheses=tuple(
            replace(h, exploratory=why) if family(h) == CONFIRMATORY else h for h in spec.hypotheses
        ),
    )


def answers(spec: Spec, layout: Layout, transfers: list[TransferRow]) -> list[Answer]:
    """Every hypothesis of the spec answered, the confirmatory ones as a
    family, or each as exploratory where the runs predate the rule (post_hoc)."""
    why = post_hoc(spec, layout)
    if why is not None:
        spec = as_exploratory(spec, why)
    clients = CLIENTS.read_from(layout)
    bandwidths = per_client(transfers, clients)
    all_rounds = hypothesis_rounds(spec, layout, transfers)
    work = hypothesis_relay_work(spec, layout)
    reading = reading_of(spec)
    design = SequentialDesign.of(spec, reading.tails)
    return decide_family(
        [
            observe(
                h,
                transfers,
                bandwidths,
                all_rounds,
                design,
                len(shared_seeds(spec, h)),
                reading,
                work,
            )
            for h in spec.hypotheses
        ]
    )


def shared_seeds(spec: Spec, h: Hypothesis) -> set[int]:
    """The seeds every variant a hypothesis reads ran at: its look."""
    return set.intersection(*(set(spec.seeds_of(v)) for v in h.variants))


def hypothesis_fields(h: Hypothesis) -> dict[str, Any]:
    """What a hypothesis compares, as answers.json records it."""
    return {
        "hypothesis": h.name,
        "variant": h.variant,
        "reference": h.reference,
        "interaction": list(h.interaction) if h.interaction else None,
        "contrast": h.contrast,
        # Only where set, so that answers of other hypotheses read as before.
        **({"same_clients": True} if h.same_clients else {}),
        "metric": h.metric,
        "class": h.cls,
        "size_bytes": h.size,
        "sizes_bytes": list(h.sizes) or None,
        "quantile": h.quantile,
        "phase": h.phase,
        "expect": h.expect,
        "smallest_change": h.smallest_change,
    }


def claim_record(
    h: Hypothesis, claims: ClaimsLedger | None, estimate: Estimate | None = None
) -> dict[str, Any] | None:
    """The published claim ``h`` tests as plain data: its id, the claim in
    a few words (from the spec's ledger), where in the paper its number is,
    the number as the paper gives it and in the hypothesis's reading, and
    whether the project's interval (``estimate``, when it has one to read)
    holds it. None for an extension."""
    claim = h.claim
    if claim is None:
        return None
    paper = h.paper_change
    inside = None
    if (
        paper is not None
        and estimate is not None
        and estimate.n >= MIN_INTERVAL_SEEDS
        and estimate.low is not None
        and estimate.high is not None
    ):
        inside = estimate.low <= paper <= estimate.high
    return {
        "id": claim.id,
        "claim": claims.tested.get(claim.id) if claims is not None else None,
        "figure": claim.figure,
        "paper_change": claim.change,
        "paper_reading": claim.reading,
        "reading": METRIC_READINGS[h.metric],
        "paper_change_in_reading": paper,
        "inside_interval": inside,
    }


def no_interval(seeds: int) -> str | None:
    """Why an answer on ``seeds`` seeds gives no interval, or None if it
    gives one: under MIN_INTERVAL_SEEDS the interval is too wide to read
    as an answer, so no part of the report shows one."""
    if seeds >= MIN_INTERVAL_SEEDS:
        return None
    return f"too few seeds ({seeds}): an interval needs at least {MIN_INTERVAL_SEEDS}"


def answer_record(
    a: Answer, cpu: float | None, claims: ClaimsLedger | None = None
) -> dict[str, Any]:
    """An answer as plain data (answers.json): the hypothesis, the change
    and its interval as fractions (``low`` and ``high`` null, and
    ``no_interval`` saying why, under MIN_INTERVAL_SEEDS seeds), the verdict
    and what it cost, and the published claim it tests (``claims``: the
    spec's ledger) or why it is the project's own question."""
    h = a.hypothesis
    why_not = no_interval(a.estimate.n)
    shown = why_not is None
    return {
        **hypothesis_fields(h),
        "seeds": a.estimate.n,
        "change": None if math.isnan(a.estimate.mean) else a.estimate.mean,
        "low": a.estimate.low if shown else None,
        "high": a.estimate.high if shown else None,
        "no_interval": why_not,
        "verdict": a.verdict,
        "seeds_needed": a.seeds_needed,
        "critical_t": a.critical if shown else None,
        "critical_t_low": a.critical_low if shown else None,
        "held": a.held,
        "futile": a.futile,
        "look": a.look,
        "family": a.family,
        "alpha": a.alpha,
        "skewness": a.skewness,
        "skewed": a.skewed,
        "bootstrap": as_data(a.bootstrap),
        "cpu_hours": cpu,
        "claim": claim_record(h, claims, a.estimate),
        "extension": h.extension or None,
        "exploratory": h.exploratory or None,
    }


def record_estimate(record: Mapping[str, Any]) -> Estimate:
    """An answers.json record's change and interval, as the answer had them."""
    change = record.get("change")
    return Estimate(
        float("nan") if change is None else float(change),
        record.get("low"),
        record.get("high"),
        int(record.get("seeds") or 0),
    )


def answer_from_record(record: Mapping[str, Any], h: Hypothesis) -> Answer:
    """An answers.json record read back as the answer it records, ``h``
    being the hypothesis it answers (the spec's): what the report renders.
    Under MIN_INTERVAL_SEEDS seeds the record leaves out the interval and
    its t value, which no part of the report shows there. A field the
    record lacks raises KeyError. A hypothesis the analysis read outside the
    family (post hoc) keeps the record's why."""
    if record.get("exploratory") and not h.exploratory:
        h = replace(h, exploratory=str(record["exploratory"]))
    return Answer(
        h,
        record_estimate(record),
        str(record["verdict"]),
        seeds_needed=record["seeds_needed"],
        bootstrap=from_data(Estimate | None, record["bootstrap"]),
        critical=record["critical_t"],
        critical_low=record.get("critical_t_low"),
        held=record.get("held"),
        futile=bool(record.get("futile", False)),
        look=record["look"],
        alpha=float(record["alpha"]),
        skewness=record["skewness"],
    )


def spec_records(spec: Spec, found: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A record per hypothesis of ``spec`` from the answers.json records
    ``found`` (None: none collected): an answer's record where one answers
    the hypothesis as the spec now states it, with its claim as the spec
    now labels it (hypotheses are not part of a run's identity, so labels
    can change after the runs); otherwise the hypothesis and its claim
    alone, with no ``verdict``: not run."""
    by_name = {str(r.get("hypothesis")): r for r in found or [] if isinstance(r, dict)}
    records = []
    for h in spec.hypotheses:
        fields = hypothesis_fields(h)
        record = by_name.get(h.name)
        if (
            record is not None
            and "verdict" in record
            and all(record.get(k) == v for k, v in fields.items())
        ):
            records.append(
                record
                | {
                    "claim": claim_record(h, spec.claims, record_estimate(record)),
                    "extension": h.extension or None,
                }
            )
        else:
            records.append(
                fields | {"claim": claim_record(h, spec.claims), "extension": h.extension or None}
            )
    return records
