"""The report's opening section: one row per hypothesis of the spec."""

from __future__ import annotations

import math

from runner.analyses.answers import (
    MIN_INTERVAL_SEEDS,
    NORMAL_SPREAD_SEEDS,
    SKEWED,
    UNDETERMINED,
    Answer,
)
from runner.analyses.power import MAX_SEEDS
from runner.analyses.sequential import ALPHA, TOWARD
from runner.analyses.stats import Estimate, number
from runner.report.markdown import table


def _prediction(a: Answer) -> str:
    if a.seeds_needed is None:
        return "too few seeds to predict how many would decide it"
    if a.seeds_needed > MAX_SEEDS:
        return f"more than {MAX_SEEDS} seeds would be needed"
    return (
        f"about {a.seeds_needed} seeds would decide it alone with 80% probability "
        "(a fixed-size count from these seeds; `runner plan` sizes rounds deciding them all)"
    )


def _skew_note(a: Answer) -> str:
    if not a.skewed or a.skewness is None:
        return ""
    return (
        f"; skewed seeds (skewness {a.skewness:+.2f}): rests on their skew being no more "
        "than the design allows for (its `skew`)"
    )


def _verdict_text(a: Answer) -> str:
    if a.held is not None:
        return f"{UNDETERMINED}: {a.held}" + (
            "; futile: the design cannot decide it within its max" if a.futile else ""
        )
    if a.futile:
        return (
            f"{UNDETERMINED}, futile: {_prediction(a)}, more than the design's max; its "
            "rounds stop drawing seeds for it"
        )
    if a.too_few:
        return f"too few seeds ({a.estimate.n}) for an interval: {_prediction(a)}"
    if a.verdict == UNDETERMINED:
        return f"{UNDETERMINED}: {_prediction(a)}{_skew_note(a)}"
    if a.few:
        return f"{a.verdict} (rests on a normal spread between only {a.estimate.n} seeds)"
    return a.verdict + _skew_note(a)


def level_text(alpha: float) -> str:
    """An interval's alpha as the report prints it: 5%, 1.67%, 0.333%."""
    return f"{alpha * 100:.3g}%"


def change_text(
    estimate: Estimate, look: int | None, critical: float | None, alpha: float | None = None
) -> str:
    """An answer's change with its interval, as the report prints it
    wherever it appears (the Answers, Claims and Changes sections, and the
    console): the level the interval used (``alpha``), the look and the t
    value where known; under MIN_INTERVAL_SEEDS seeds the change alone."""
    if estimate.n < MIN_INTERVAL_SEEDS:
        alone = Estimate(estimate.mean, None, None, estimate.n).format(100, "%")
        return alone.split(" (")[0] + ("" if math.isnan(estimate.mean) else " (no interval)")
    text = estimate.format(100, "%")
    parts = [] if alpha is None else [f"α = {level_text(alpha)}"]
    if look is not None:
        parts.append(f"look {look + 1}")
    if critical is not None and (look is not None or alpha is not None):
        parts.append(f"t = {critical:.2f}")
    return text + (f" ({', '.join(parts)})" if parts else "")


INTRO = (
    "Each hypothesis the spec states, answered: the change of the variant against its "
    "reference and a verdict. A seed (one sampled network) is the unit: per seed, the "
    "statistic counts every measured client once (the median over clients of each client's "
    "median, or quantile, of the metric), the change is the variant's over the reference's "
    "on the same seed, and the interval is a t interval across seeds on the log scale (the "
    "geometric mean of the ratios; it cannot pass -100%). *Supported*: the whole interval "
    "lies beyond the smallest change that matters, in the expected direction. *No change "
    "that matters*: the whole interval lies within the band of changes too small to matter, "
    "from the smallest change on the expected side to its mirror on the log scale (for a "
    "10% decrease, -10% to +11.1%; for a 10% increase, -9.1% to +10%). *Contradicted*: "
    "otherwise, the whole interval lies on the other side of zero. A hypothesis that "
    "expects no change (*stays within ±m*, an equivalence) is supported where the whole "
    "interval lies within the band of ±m (-13.0% to +15% for 15%: a factor of 1.15 either "
    "way) and contradicted where it lies wholly outside it. Otherwise "
    "*undetermined*, with the seeds a fixed-size design would need to decide that "
    "hypothesis alone with 80% probability at its level, from these seeds' change and "
    "spread (answers.json's `seeds_needed`); `runner plan` gives the seeds in rounds that "
    "decide every hypothesis together (its M), from the spread's parts: the two differ. "
    "Under 3 seeds there is no interval; "
    f"under {NORMAL_SPREAD_SEEDS} a verdict rests on the seeds' spread being normal."
)
FAMILY_NOTE = (
    "Error rates. The confirmatory hypotheses (each tests a published claim) are one "
    "family with one test per claim: a claim's hypotheses are tested in the order the spec "
    "commits (a later one only once the one before it is decided: *gated* until then), "
    f"claims start at α = {level_text(ALPHA)} / K each (K claims) and a claim decided to "
    "its end shares its level among the claims still open (Holm's step-down across "
    "claims), so that the chance of any wrong confirmatory verdict stays at "
    f"{level_text(ALPHA)}. A confirmatory interval puts {TOWARD:.0%} of its level on the "
    "side that would support its claim (an equivalence's, half on each side). The "
    "exploratory ones (the project's own questions, and claim hypotheses the spec sets "
    "outside the family, with why) are "
    f"each at {level_text(ALPHA)} on its own: across several of them some wrong verdict "
    "is more likely than that. Every interval allows for seeds' log ratios as skewed as "
    "the design states (skewness 1 unless it says otherwise), found once for the family: "
    "its t values are normal theory's at a lower level, so that seeds as skewed as a "
    "shifted lognormal of that skewness err at α or less. *Skewed seeds* marks a "
    f"hypothesis whose seeds' log ratios have a sample skewness beyond ±{SKEWED:g} (from "
    f"{NORMAL_SPREAD_SEEDS} seeds): its verdict rests on their skew being no more than "
    "the design allows for."
)
ROUNDS_NOTE = (
    "The seeds ran in rounds with a group-sequential stopping rule (repeated confidence "
    "intervals at O'Brien-Fleming-type boundaries): each look's interval is wider than a "
    "fixed-size one, by the t value shown, so that stopping at whichever look gives "
    "verdicts keeps those error rates."
)


def answer_rows(
    found: list[Answer], cpu: list[float | None] | None = None
) -> tuple[list[str], list[list[str]]]:
    """The Answers table's header and rows: the report's section and the
    console both print these."""
    bootstrapped = any(a.bootstrap for a in found)
    header = ["hypothesis", "family", "what it tests", "change [interval]", "seeds", "verdict"]
    if cpu is not None:
        header.insert(5, "CPU-hours")
    if bootstrapped:
        header.insert(4, "bootstrap check")
    rows = []
    for i, a in enumerate(found):
        row = [
            a.hypothesis.name,
            a.family,
            a.hypothesis.describe(),
            change_text(a.estimate, a.look, a.critical, a.alpha),
            str(a.estimate.n),
            _verdict_text(a),
        ]
        if cpu is not None:
            hours = cpu[i]
            row.insert(5, "n/a" if hours is None else number(hours, 2))
        if bootstrapped:
            row.insert(4, a.bootstrap.format(100, "%") if a.bootstrap else "n/a")
        rows.append(row)
    return header, rows


def console_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    """The Answers for a terminal: per hypothesis its name and what it
    tests on one line, then each other column of its row on a line of its
    own (a table's row of long cells wraps beyond reading there)."""
    lines = []
    for row in rows:
        cells = dict(zip(header, row, strict=True))
        lines.append(f"{cells.pop('hypothesis')}: {cells.pop('what it tests')}")
        lines += [f"  {name}: {value}" for name, value in cells.items()]
    return lines


def answers_section(
    found: list[Answer], cpu: list[float | None] | None = None, rounds: bool = False
) -> list[str]:
    """The section; ``cpu``: the CPU-hours behind each answer, in order."""
    lines = ["", "## Answers", ""]
    if not found:
        return lines + [
            "This spec states no hypotheses, so nothing below is a test: every comparison "
            "in the report is exploratory."
        ]
    # The answers first, then what their error rates mean.
    lines += [INTRO, "", *table(*answer_rows(found, cpu))]
    reasons = [f"- {a.hypothesis.name}: {a.hypothesis.why}" for a in found if a.hypothesis.why]
    if reasons:
        lines += ["", "Why these changes matter:", "", *reasons]
    lines += ["", FAMILY_NOTE]
    if rounds:
        lines += ["", ROUNDS_NOTE]
    return lines
