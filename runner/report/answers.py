"""The report's opening section: one row per hypothesis of the spec."""

from __future__ import annotations

import math

from runner.analyses.answers import MIN_INTERVAL_SEEDS, UNDETERMINED, Answer
from runner.analyses.power import MAX_SEEDS
from runner.analyses.stats import Estimate, number
from runner.report.markdown import table


def _prediction(a: Answer) -> str:
    if a.seeds_needed is None:
        return "too few seeds to predict how many would decide it"
    if a.seeds_needed > MAX_SEEDS:
        return f"more than {MAX_SEEDS} seeds would be needed"
    return f"about {a.seeds_needed} seeds would decide it with 80% probability (`runner plan`)"


def _verdict_text(a: Answer) -> str:
    if a.too_few:
        return f"too few seeds ({a.estimate.n}) for an interval: {_prediction(a)}"
    if a.verdict == UNDETERMINED:
        return f"{UNDETERMINED}: {_prediction(a)}"
    if a.few:
        return f"{a.verdict} (rests on a normal spread between only {a.estimate.n} seeds)"
    return a.verdict


def change_text(estimate: Estimate, look: int | None, critical: float | None) -> str:
    """An answer's change with its 95% interval, as the report prints it
    wherever it appears (the Answers, Claims and Changes sections, and the
    console): under MIN_INTERVAL_SEEDS seeds the change alone."""
    if estimate.n < MIN_INTERVAL_SEEDS:
        alone = Estimate(estimate.mean, None, None, estimate.n).format(100, "%")
        return alone.split(" (")[0] + ("" if math.isnan(estimate.mean) else " (no interval)")
    text = estimate.format(100, "%")
    if look is not None and critical is not None:
        text += f" (look {look + 1}, t = {critical:.2f})"
    return text


INTRO = (
    "Each hypothesis the spec states, answered: the change of the variant against its "
    "reference and a verdict. A seed (one sampled network) is the unit: per seed, the "
    "statistic counts every measured client once (the median over clients of each client's "
    "median, or quantile, of the metric), the change is the variant's over the reference's "
    "on the same seed, and the interval is a t interval across seeds on the log scale (the "
    "geometric mean of the ratios; it cannot pass -100%). *Supported*: the whole interval "
    "lies beyond the smallest change that matters, in the expected direction. *No change "
    "that matters*: the whole interval lies within plus or minus that change. "
    "*Contradicted*: otherwise, the whole interval lies on the other side of zero. "
    "Otherwise *undetermined*, with the seeds `runner plan` predicts would give a decisive "
    "verdict with 80% probability. Under 3 seeds there is no interval; under 5 a verdict "
    "rests on the seeds' spread being normal."
)
ROUNDS_NOTE = (
    "The seeds ran in rounds with a group-sequential stopping rule (repeated confidence "
    "intervals at O'Brien-Fleming-type boundaries): each look's interval is wider than a "
    "fixed-size 95% one, by the t value shown, so that stopping at whichever look gives "
    "verdicts keeps the chance of a wrong verdict at 5%."
)


def answer_rows(
    found: list[Answer], cpu: list[float | None] | None = None
) -> tuple[list[str], list[list[str]]]:
    """The Answers table's header and rows: the report's section and the
    console both print these."""
    bootstrapped = any(a.bootstrap for a in found)
    header = ["hypothesis", "what it tests", "change [95% CI]", "seeds", "verdict"]
    if cpu is not None:
        header.insert(4, "CPU-hours")
    if bootstrapped:
        header.insert(3, "bootstrap check")
    rows = []
    for i, a in enumerate(found):
        row = [
            a.hypothesis.name,
            a.hypothesis.describe(),
            change_text(a.estimate, a.look, a.critical),
            str(a.estimate.n),
            _verdict_text(a),
        ]
        if cpu is not None:
            hours = cpu[i]
            row.insert(4, "n/a" if hours is None else number(hours, 2))
        if bootstrapped:
            row.insert(3, a.bootstrap.format(100, "%") if a.bootstrap else "n/a")
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
    lines += [INTRO, ""]
    if rounds:
        lines += [ROUNDS_NOTE, ""]
    lines += table(*answer_rows(found, cpu))
    reasons = [f"- {a.hypothesis.name}: {a.hypothesis.why}" for a in found if a.hypothesis.why]
    if reasons:
        lines += ["", "Why these changes matter:", "", *reasons]
    return lines
