"""The rows of the claims forest plot (runner.report.forest): one per
hypothesis that tests a published claim, from its answers.json record, or
read back from a claims table as docs/claims.md publishes it (an
experiment whose answers this clone lacks keeps its published section, and
its panel is drawn from that section)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.analyses.answers import MIN_INTERVAL_SEEDS

NOT_RUN = "not run"
TOO_FEW = "too few seeds"


@dataclass(frozen=True)
class ForestRow:
    """One claim hypothesis: changes as fractions (-0.25 is -25%), in the
    hypothesis's reading; None where there is none (a qualitative claim, no
    interval under 3 seeds, not run); ``seeds`` None where the published
    table does not say."""

    claim: str
    hypothesis: str
    paper: float | None
    change: float | None
    low: float | None
    high: float | None
    verdict: str
    seeds: int | None

    @property
    def label(self) -> str:
        return f"{self.claim} {self.hypothesis}"


def verdict_word(record: dict[str, Any]) -> str:
    """A run record's verdict as the claims table and plot give it: under
    MIN_INTERVAL_SEEDS seeds, too few seeds for one."""
    if int(record.get("seeds") or 0) < MIN_INTERVAL_SEEDS:
        return TOO_FEW
    return str(record["verdict"])


def _shown(value: Any) -> float | None:
    """A change at the claims table's precision (0.1%), so that a panel
    drawn from records and one drawn from the table they wrote are the
    same picture."""
    return None if value is None else round(float(value) * 100, 1) / 100


def record_row(record: dict[str, Any]) -> ForestRow:
    """A claim hypothesis's row from its answers.json record (as
    runner.analyses.answers.spec_records gives it)."""
    claim = record["claim"]
    run = "verdict" in record
    return ForestRow(
        claim=str(claim["id"]),
        hypothesis=str(record["hypothesis"]),
        paper=_shown(claim.get("paper_change_in_reading")),
        change=_shown(record.get("change")) if run else None,
        low=_shown(record.get("low")) if run else None,
        high=_shown(record.get("high")) if run else None,
        verdict=verdict_word(record) if run else NOT_RUN,
        seeds=int(record.get("seeds") or 0) if run else None,
    )


def record_rows(records: Sequence[dict[str, Any]]) -> list[ForestRow]:
    """The rows of the records that test a claim, in the records' order."""
    return [record_row(r) for r in records if r.get("claim")]


# A claims table's cells as runner.report.claims writes them.
_PAPER = re.compile(r": ([+-]?[\d,.]+)%")
_PROJECT = re.compile(r"^([+-]?[\d,.]+)%(?: \[([+-]?[\d,.]+), ([+-]?[\d,.]+)\])?")
_SEEDS = re.compile(r"\((\d+)(?: seeds?)?\)")
_NOTES = re.compile(r", futile|\s*\(exploratory\)")
_COLUMNS = {"claim": 0, "hypothesis": 2, "paper": 4, "project": 5, "verdict": 6}


def _fraction(text: str | None) -> float | None:
    return None if text is None else float(text.replace(",", "")) / 100


def _table_row(cells: list[str]) -> ForestRow:
    paper = _PAPER.search(cells[_COLUMNS["paper"]])
    project = _PROJECT.match(cells[_COLUMNS["project"]])
    # The table's notes beside a verdict (the claims table, runner/report/claims.py).
    verdict = _NOTES.sub("", cells[_COLUMNS["verdict"]])
    if cells[_COLUMNS["project"]] == NOT_RUN:
        verdict = NOT_RUN
    seeds = _SEEDS.search(verdict)
    return ForestRow(
        claim=cells[_COLUMNS["claim"]],
        hypothesis=cells[_COLUMNS["hypothesis"]],
        paper=_fraction(paper.group(1)) if paper else None,
        change=_fraction(project.group(1)) if project else None,
        low=_fraction(project.group(2)) if project else None,
        high=_fraction(project.group(3)) if project else None,
        verdict=_SEEDS.sub("", verdict).strip() or verdict,
        seeds=int(seeds.group(1)) if seeds else None,
    )


def table_rows(section: Sequence[str]) -> list[ForestRow]:
    """The rows of a published claims table (an experiment's section of
    docs/claims.md, its lines): every table line past the header and its
    rule."""
    lines = [line.strip() for line in section if line.strip().startswith("|")]
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if len(cells) > max(_COLUMNS.values()):
            rows.append(_table_row(cells))
    return rows
