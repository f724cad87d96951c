"""The report's opening section: one row per hypothesis of the spec."""

from __future__ import annotations

from runner.analyses.answers import MAX_SEEDS, UNDETERMINED, Answer, answer
from runner.analyses.client_bandwidth import per_client, read_clients
from runner.analyses.mctor import Round, rounds
from runner.layout import Layout
from runner.report.markdown import table
from runner.report.mctor import class_phases
from runner.spec.model import Spec
from runner.tables.rows import TransferRow, read_served


def _verdict_text(a: Answer) -> str:
    if a.verdict != UNDETERMINED:
        return a.verdict
    if a.seeds_needed is None:
        return f"{UNDETERMINED}: too few seeds to tell how many would resolve it"
    if a.seeds_needed > MAX_SEEDS:
        return f"{UNDETERMINED}: more than {MAX_SEEDS} seeds would be needed"
    return f"{UNDETERMINED}: about {a.seeds_needed} seeds would likely resolve it"


def answers(spec: Spec, layout: Layout, transfers: list[TransferRow]) -> list[Answer]:
    clients = read_clients(layout.clients_csv) if layout.clients_csv.is_file() else []
    bandwidths = per_client(transfers, clients)
    all_rounds: list[Round] = []
    if any(h.metric == "round_completion" for h in spec.hypotheses):
        served = read_served(layout.served_csv) if layout.served_csv.is_file() else []
        all_rounds = rounds(transfers, served, class_phases(spec))
    return [answer(h, transfers, bandwidths, all_rounds) for h in spec.hypotheses]


def answers_section(found: list[Answer]) -> list[str]:
    lines = ["", "## Answers", ""]
    if not found:
        return lines + [
            "This spec states no hypotheses, so nothing below is a test: every comparison "
            "in the report is exploratory."
        ]
    lines += [
        "Each hypothesis the spec states, answered: the change of the variant against its "
        "reference (the geometric mean of the per-seed ratios, with a 95% t interval on "
        "the log scale) and a verdict. *Supported*: the whole interval lies beyond the "
        "smallest change that matters, in the expected direction. *No change that "
        "matters*: the whole interval lies within plus or minus that change. "
        "*Contradicted*: otherwise, the whole interval lies on the other side of zero. "
        "Otherwise *undetermined*, "
        "with the seeds that would likely narrow the interval below that change, from "
        "the spread between the seeds so far.",
        "",
    ]
    bootstrapped = any(a.bootstrap for a in found)
    header = ["hypothesis", "what it tests", "change [95% CI]", "seeds", "verdict"]
    if bootstrapped:
        header.insert(3, "bootstrap check")
    rows = []
    for a in found:
        row = [
            a.hypothesis.name,
            a.hypothesis.describe(),
            a.estimate.format(100, "%"),
            str(a.estimate.n),
            _verdict_text(a),
        ]
        if bootstrapped:
            row.insert(3, a.bootstrap.format(100, "%") if a.bootstrap else "n/a")
        rows.append(row)
    lines += table(header, rows)
    reasons = [f"- {a.hypothesis.name}: {a.hypothesis.why}" for a in found if a.hypothesis.why]
    if reasons:
        lines += ["", "Why these changes matter:", "", *reasons]
    return lines
