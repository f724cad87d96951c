"""The published claims the hypotheses test, the paper's number beside the
project's: the report's "Claims" section and docs/claims.md (`runner
claims`), both from answers.json records (runner.analyses.answers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runner.analyses.answers import record_estimate
from runner.analyses.stats import number
from runner.report.answers import change_text
from runner.report.forest_rows import NOT_RUN, TOO_FEW, verdict_word
from runner.report.markdown import table
from runner.spec.claims import ClaimsLedger
from runner.spec.hypotheses import QUANTILE_METRICS, SAME
from runner.units import human_size

HEADER = [
    "claim",
    "the claim",
    "hypothesis",
    "reads",
    "paper",
    "project",
    "verdict",
    "paper inside the interval",
]
INTRO = (
    "Which published claim each hypothesis tests, the paper's number beside the project's. "
    "The paper's number is given in the hypothesis's own reading: a time metric reads a "
    "paper's throughput change X as the time change 1/(1 + X) - 1 (+48% throughput is "
    "-32.4% time), a rate metric reads a time change the same way, and counts and CPU "
    "figures (which only a CPU metric reads) are taken as given. *Reads*: the hypothesis's "
    "statistic (its quantile of each client's transfers, its size; a contrast's two client "
    "groups; an interaction's ratio of ratios) and the "
    "smallest change it asks for (for an equivalence, the margin it stays within). The "
    "project's change and its interval (at the level α "
    "the Answers section explains) are the Answers section's; the last column says whether "
    "the paper's number lies inside that interval (- where the claim is qualitative or "
    "there is no interval)."
)


def _percent(fraction: float) -> str:
    return number(fraction * 100, 1, signed=True) + "%"


def paper_text(claim: dict[str, Any]) -> str:
    """Where the paper's number is and the number in the hypothesis's
    reading, e.g. ``Table I, 10 MB: -25.4%``; the paper's own number beside
    it where it was read the other way."""
    figure = str(claim["figure"])
    change, read = claim.get("paper_change"), claim.get("paper_change_in_reading")
    if change is None or read is None:
        return f"{figure}: qualitative"
    text = f"{figure}: {_percent(read)}"
    if _percent(read) != _percent(change):
        text += f" (the paper's {_percent(change)} {claim.get('paper_reading')})"
    return text


def _verdict(record: dict[str, Any]) -> str:
    """The verdict and the seeds behind it: "supported (10 seeds)", "too
    few seeds (2)"."""
    seeds = int(record.get("seeds") or 0)
    word = verdict_word(record)
    if word == TOO_FEW:
        return f"{word} ({seeds})"
    if record.get("futile"):
        word += ", futile"
    outside = " (exploratory)" if record.get("family") == "exploratory" else ""
    return f"{word} ({seeds} seeds){outside}"


def _inside(claim: dict[str, Any]) -> str:
    inside = claim.get("inside_interval")
    return "-" if inside is None else ("yes" if inside else "no")


def reading_text(record: dict[str, Any]) -> str:
    """What a hypothesis reads and the smallest change it asks for, from its
    answers.json record: "p90 ttlb, 400 KiB: at least 10% decrease", or
    for an equivalence "round_completion, peer over user: stays within ±15%"."""
    metric = str(record["metric"])
    what = metric
    if metric in QUANTILE_METRICS:
        q = float(record.get("quantile") or 0.5)
        what = f"{'median' if q == 0.5 else f'p{q * 100:g}'} {metric}"
    parts = [what]
    if record.get("size_bytes"):
        parts.append(human_size(int(record["size_bytes"])))
    if record.get("sizes_bytes"):
        sizes = ", ".join(human_size(int(size)) for size in record["sizes_bytes"])
        parts.append(f"pooled over {sizes}")
    if record.get("contrast"):
        cls, against = record.get("class"), record["contrast"]
        # With a reference of its own, a contrast is of the two groups' changes.
        changes = record.get("reference") not in (None, record.get("variant"))
        parts.append(f"{cls}'s change over {against}'s" if changes else f"{cls} over {against}")
    if record.get("same_clients"):
        parts.append(f"the same clients in {record.get('reference')}")
    if record.get("interaction"):
        parts.append("ratio of ratios")
    smallest = number(float(record["smallest_change"]) * 100, 0)
    if record["expect"] == SAME:
        return f"{', '.join(parts)}: stays within ±{smallest}%"
    return f"{', '.join(parts)}: at least {smallest}% {record['expect']}"


def claim_row(record: dict[str, Any]) -> list[str]:
    """One row of the claims table from an answers.json record with a
    claim; a record with no verdict (a hypothesis not run) says so."""
    claim = record["claim"]
    row = [
        claim["id"],
        claim.get("claim") or "-",
        record["hypothesis"],
        reading_text(record),
        paper_text(claim),
    ]
    if "verdict" not in record:
        return row + [NOT_RUN, "-", "-"]
    project = change_text(
        record_estimate(record), record.get("look"), record.get("critical_t"), record.get("alpha")
    )
    return row + [project, _verdict(record), _inside(claim)]


def claims_body(
    records: Sequence[dict[str, Any]], ledger: ClaimsLedger | None, conditions: str = ""
) -> list[str]:
    """The conditions the runs had (``conditions``: runner.spec.conditions'
    line, where given), the claims table, then a line with the claims the
    spec cannot test and why, and one with its extensions (the project's
    own questions)."""
    rows = [claim_row(r) for r in records if r.get("claim")]
    lines = [f"Its claims are tested {conditions}.", ""] if conditions and rows else []
    lines += table(HEADER, rows) if rows else ["No hypothesis tests a published claim."]
    if ledger is not None and ledger.not_tested:
        lines += [
            "",
            "Not tested here: "
            + "; ".join(f"{key} ({why})" for key, why in ledger.not_tested.items())
            + ".",
        ]
    extensions = [str(r["hypothesis"]) for r in records if r.get("extension")]
    if extensions:
        lines += ["", "Extensions, the project's own questions: " + ", ".join(extensions) + "."]
    return lines


PLOT_TEXT = (
    "The same as a picture, per experiment a panel and per hypothesis a row: the paper's "
    "number (diamond) beside the project's change and its interval (point and bar), on a "
    "log-ratio scale, with the verdict and the seeds behind it."
)


def claims_section(
    records: Sequence[dict[str, Any]],
    ledger: ClaimsLedger | None,
    plot: str | None = None,
    conditions: str = "",
) -> list[str]:
    """The report's Claims section (none where the spec states no hypothesis
    and names no claim), with the forest plot of its claims where ``plot``
    names its file; ``conditions``: as claims_body's."""
    if not records and ledger is None:
        return []
    paper = f" The paper: {ledger.paper}." if ledger is not None else ""
    lines = ["## Claims", "", INTRO + paper, "", *claims_body(records, ledger, conditions)]
    if plot is not None:
        lines += ["", PLOT_TEXT, "", f"![claims]({plot})"]
    return lines


PAGE_INTRO = (
    "Which published claim each experiment's hypotheses test, and the paper's number beside "
    "the project's, from each experiment's latest collected results "
    "(`results/<exp>/answers.json`, or `results/<exp>-local/` for real tor processes). "
    "Written by `make claims` (`python -m runner claims`); not edited by hand. An experiment "
    "with no answers in the results folder keeps its section as this page had it. How a spec "
    "names the claims: [Writing a spec](spec.md). Back to the [README](../README.md)."
)


def experiment_section(
    name: str,
    path: str,
    ledger: ClaimsLedger | None,
    records: list[dict[str, Any]],
    source: str,
    conditions: str = "",
) -> list[str]:
    """One experiment's part of docs/claims.md (its name, its spec's path,
    its ledger, a record per hypothesis, where its answers came from, the
    conditions its runs had): those conditions, its claims table, the
    claims it cannot test and its extensions."""
    paper = f" Paper: {ledger.paper}." if ledger is not None else ""
    return [f"## {name}", "", f"Spec: `{path}`.{paper} Results: {source}.", ""] + claims_body(
        records, ledger, conditions
    )


def claims_page(sections: Sequence[list[str]], plot: str | None = None) -> str:
    """docs/claims.md from each experiment's section (experiment_section),
    with the forest plot of them all where ``plot`` names its file."""
    lines = ["# Published claims and the project's answers", "", PAGE_INTRO, "", INTRO]
    if plot is not None:
        lines += [
            "",
            PLOT_TEXT,
            "",
            f"![The claims, the paper's number beside the project's]({plot})",
        ]
    for section in sections:
        lines += ["", *section]
    return "\n".join(lines) + "\n"


def published_sections(page: str) -> dict[str, list[str]]:
    """The experiments' sections of a claims page as written, by name, each
    one's lines from its heading to the line before the next heading."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in page.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
        if current is not None:
            current.append(line)
    return {name: _trimmed(lines) for name, lines in sections.items()}


def _trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


UNSTORED = (
    "Not in the run store: the runs behind this section are in no clone's `results/store/`, "
    "so it cannot be re-derived from the repository; it is kept as published until its "
    "spec runs again (`make campaign`, or `runner experiment`)."
)


def with_unstored_note(section: list[str]) -> list[str]:
    """A kept section whose runs the store lacks, saying so once, after its Spec: line."""
    if UNSTORED in section:
        return section
    for index, line in enumerate(section):
        if line.startswith("Spec: "):
            return [*section[: index + 1], "", UNSTORED, *section[index + 1 :]]
    return section


def section_has_results(section: list[str]) -> bool:
    """Whether a written section reports collected answers (its Results:
    line names a file rather than saying "not run")."""
    return any(" Results: `" in line for line in section if line.startswith("Spec: "))
