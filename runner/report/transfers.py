"""The report's transfer sections (runner.analyses.transfers): the completion
checks, transfers per variant, class and size, the changes against each
variant's reference, and the CDF plots."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.answers import MIN_INTERVAL_SEEDS
from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.stats import Estimate
from runner.analyses.transfers import Change, TransfersResult
from runner.report.markdown import seconds, table
from runner.report.plots import draw_all
from runner.units import human_size


def transfers_section(result: TransfersResult, inp: Inputs, out: Path) -> Section:
    lines = _summary_lines(result) + _changes_lines(result, inp)
    plots = draw_all(inp.transfers, inp.variants, out)
    return Section(_check_notes(result), lines, plots)


def _check_notes(result: TransfersResult) -> list[str]:
    """The completion checks, for the report's Checks: how many client-runs
    pass, the fewest transfers of a size, and the lowest completion rates."""
    checks, per_size, minimum = result.checks, result.per_size, result.min_per_size
    passed = sum(c.ok for c in checks)
    notes = [
        "",
        f"Every measured client must finish at least one transfer and complete at least "
        f"{result.min_completion:.0%} of the transfers it finished, in every run: "
        f"{passed}/{len(checks)} client-runs pass.",
    ]
    if minimum:
        fewest = min(per_size.values(), default=0)
        notes += [
            "",
            f"Every measured client must complete at least {minimum} transfers of each "
            f"size in every run: the fewest was {fewest}.",
        ]
    worst = sorted(checks, key=lambda c: c.rate)[:3]
    if worst:
        notes += [
            "",
            "Lowest completion: "
            + "; ".join(
                f"{c.variant}/seed-{c.seed} {c.host} {c.completed}/{c.attempted}" for c in worst
            ),
        ]
    return notes


def _summary_lines(result: TransfersResult) -> list[str]:
    """The Transfers section: per class, size and variant, the transfers'
    counts, error rate, times and goodput."""
    lines = [
        "",
        "## Transfers",
        "",
        "Over every seed, with every measured client in every seed counted once: a "
        "quantile is the median over client-runs of each one's quantile, so a client "
        "that finished many transfers does not outvote one that finished few. Times in "
        "seconds from the request to the first/last byte (as tornettools counts them); "
        "goodput is size over time to last byte. The CDF plots draw each seed's "
        "client-weighted ECDF thin, the geometric mean over seeds thick, and a 95% band "
        "across seeds (from 3 seeds on).",
        "",
    ]
    return lines + table(
        [
            "class",
            "size",
            "variant",
            "n ok",
            "failed",
            "error rate",
            "TTFB median",
            "TTFB p90",
            "TTLB median",
            "TTLB p90",
            "goodput median (Mbit/s)",
        ],
        [
            [
                g.cls,
                human_size(g.size),
                g.variant,
                str(g.completed),
                str(g.failed),
                f"{g.error_rate:.1%}",
                seconds(g.ttfb_median),
                seconds(g.ttfb_p90),
                seconds(g.ttlb_median),
                seconds(g.ttlb_p90),
                f"{g.goodput_median:.2f}",
            ]
            for g in result.summaries
        ],
    )


# A change's key: variant, reference, class, size.
ChangeKey = tuple[str, str, str, int]
# The metrics of the Changes table, in its columns' order.
CHANGE_METRICS = ("ttfb", "ttlb", "after_first_byte")


def _changes_lines(result: TransfersResult, inp: Inputs) -> list[str]:
    """The Changes section: each variant against its reference, per class
    and size, with the hypotheses' answers in their cells."""
    lines = [
        "",
        "## Changes",
        "",
        "Relative change of the per-seed median (the median over measured clients of "
        "each client's median) of a variant against its reference "
        "(negative is faster), paired by seed: the geometric mean of the seeds' ratios "
        "minus one, with a 95% t interval on the log scale, so that no bound passes "
        f"-100% (from {MIN_INTERVAL_SEEDS} seeds on: with fewer, the change alone). From 5 "
        "seeds on, a hierarchical bootstrap (seeds, then measured "
        "clients within each seed, then each client's transfers) of the same change "
        "stands beside it as a check on the t interval. "
        "*After first byte* is time to last byte net of time to first byte: the transfer "
        "once started, without the round trip that brought its first byte (a variant "
        "that picks a faster path for the first byte shortens TTLB by that alone).",
        "",
    ]
    by_metric = {
        metric: {(c.variant, c.reference, c.cls, c.size): c for c in found}
        for metric, found in result.changes.items()
    }
    # The bootstrap columns appear only where some change has one (5 seeds on).
    bootstrapped = any(c.bootstrap for m in by_metric.values() for c in m.values())
    header = ["class", "size", "variant", "against", "seeds", "TTFB change", "TTLB change"]
    header += ["after first byte change"]
    if bootstrapped:
        header += ["TTFB bootstrap", "TTLB bootstrap"]
    rows = []
    answers = 0
    for key, change in sorted(by_metric["ttlb"].items(), key=lambda kv: kv[0][2:]):
        row, answered = _change_row(key, change, by_metric, inp, bootstrapped)
        rows.append(row)
        answers += answered
    lines += table(header, rows)
    return lines + _comparisons_notes(len(rows), answers, result.hypotheses_named)


def _change_row(
    key: ChangeKey,
    change: Change,
    by_metric: dict[str, dict[ChangeKey, Change]],
    inp: Inputs,
    bootstrapped: bool,
) -> tuple[list[str], int]:
    """One row of the Changes table, and how many of its cells are a
    hypothesis's answer (given as the Answers section gives it)."""
    cells = []
    answers = 0
    for metric in CHANGE_METRICS:
        answer = inp.answered.get((*key, metric))
        if answer is not None:
            answers += 1
            cells.append(f"{answer[0]}: {answer[1]}")
        else:
            found = by_metric[metric].get(key)
            cells.append(_change_cell(found) if found else "n/a")
    row = [key[2], human_size(key[3]), key[0], key[1], str(change.estimate.n), *cells]
    if bootstrapped:
        first = by_metric["ttfb"].get(key)
        row += [
            first.bootstrap.format(100, "%") if first and first.bootstrap else "n/a",
            change.bootstrap.format(100, "%") if change.bootstrap else "n/a",
        ]
    return row, answers


def _change_cell(change: Change) -> str:
    """A change with its 95% interval; under MIN_INTERVAL_SEEDS seeds the
    change alone, as a hypothesis's cell gives it (an interval from two
    seeds rests on one degree of freedom)."""
    e = change.estimate
    if e.n < MIN_INTERVAL_SEEDS:
        return Estimate(e.mean, None, None, e.n).format(100, "%").split(" (")[0]
    return e.format(100, "%")


def _comparisons_notes(rows: int, answers: int, hypotheses_named: bool) -> list[str]:
    """Which cells answer hypotheses, and that the others are exploratory."""
    lines = []
    if answers:
        lines += [
            "",
            "A cell that begins with a hypothesis's name is that hypothesis's answer, as the "
            "Answers section gives it: at the hypothesis's level α (a share of the family's 5% "
            "for a confirmatory one), with the look's wider interval where the seeds ran in "
            f"rounds, and no interval under {MIN_INTERVAL_SEEDS} seeds.",
        ]
    others = 3 * rows - answers
    return lines + [
        "",
        (f"The other {others}" if answers else f"These {others}")
        + " comparisons are exploratory"
        + (" (the hypotheses are answered above)" if hypotheses_named else "")
        + ": at a 95% level, about one in twenty comparisons of variants that do not "
        "differ will still show an interval that excludes zero, by chance alone.",
    ]
