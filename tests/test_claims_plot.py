"""The claims forest plot's rows (runner.report.forest_rows) and its SVG
(runner.report.forest); tests/test_report_html.py checks it in a browser."""

from __future__ import annotations

import math
import re

import pytest

from runner.report.claims import claims_body
from runner.report.forest import ROW_ID, _log_ratio, _percent, forest_svg
from runner.report.forest_rows import NOT_RUN, ForestRow, record_rows, table_rows


def _record(
    name: str,
    seeds: int,
    change: float | None,
    low: float | None,
    high: float | None,
    verdict: str = "undetermined",
    paper: float | None = -0.254,
) -> dict[str, object]:
    return {
        "hypothesis": name,
        "metric": "ttlb",
        "quantile": 0.5,
        "size_bytes": 10_000_000,
        "expect": "decrease",
        "smallest_change": 0.1,
        "seeds": seeds,
        "change": change,
        "low": low,
        "high": high,
        "verdict": verdict,
        "look": None,
        "critical_t": 2.78,
        "alpha": 0.05,
        "claim": {
            "id": "C1",
            "claim": "Conflux shortens downloads",
            "figure": "Table I, 10 MB",
            "paper_change": paper,
            "paper_reading": "time",
            "reading": "time",
            "paper_change_in_reading": paper,
            "inside_interval": None,
        },
    }


RECORDS = [
    _record("decided", 10, -0.28123, -0.40456, -0.16011, "supported"),
    _record("few", 2, -0.3, None, None),
    _record("qualitative", 6, 0.12, -0.05, 0.33, "undetermined", paper=None),
    {
        "hypothesis": "not-yet",
        "metric": "ttlb",
        "quantile": 0.5,
        "size_bytes": None,
        "expect": "decrease",
        "smallest_change": 0.1,
        "claim": _record("x", 0, 0, 0, 0)["claim"],
    },
    {"hypothesis": "extension", "claim": None, "extension": "the project's own"},
]


def test_a_row_per_claim_hypothesis_with_its_numbers_verdict_and_seeds() -> None:
    rows = record_rows(RECORDS)
    assert [r.hypothesis for r in rows] == ["decided", "few", "qualitative", "not-yet"]
    decided, few, qualitative, not_yet = rows
    assert decided == ForestRow("C1", "decided", -0.254, -0.281, -0.405, -0.16, "supported", 10)
    assert decided.label == "C1 decided"
    assert (few.verdict, few.seeds, few.low, few.high) == ("too few seeds", 2, None, None)
    assert qualitative.paper is None and qualitative.change == pytest.approx(0.12)
    assert (not_yet.verdict, not_yet.seeds, not_yet.change) == (NOT_RUN, None, None)


def test_a_published_table_reads_back_as_the_rows_its_records_give() -> None:
    # docs/claims.md keeps an experiment's section where a clone lacks its
    # answers; its panel is drawn from that table.
    assert table_rows(claims_body(RECORDS, None)) == record_rows(RECORDS)


def test_the_axis_is_a_log_ratio_in_percent() -> None:
    assert _log_ratio(-0.5) == pytest.approx(-_log_ratio(1.0))
    assert _log_ratio(0.0) == 0
    assert [_percent(_log_ratio(c)) for c in (-0.5, 0.0, 1.0)] == ["-50%", "0", "+100%"]
    assert math.isfinite(_log_ratio(-1.0))  # a -100% change still has a place


def test_the_svg_has_a_row_each_and_is_the_same_bytes_each_time() -> None:
    panels = [("conflux-small", record_rows(RECORDS)), ("empty", [])]
    svg = forest_svg(panels)
    assert svg == forest_svg(panels)
    assert len(re.findall(f'id="{ROW_ID}', svg)) == 4
    assert "conflux-small" in svg and ">empty<" not in svg  # a panel without rows is left out
    assert "supported, 10 seeds" in svg and "too few seeds, 2 seeds" in svg
    assert not re.search(r"<dc:date>|Matplotlib v", svg)
    assert forest_svg([("empty", [])]) == ""
