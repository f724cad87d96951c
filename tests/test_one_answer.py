"""One comparison, one answer: where a hypothesis answers a comparison, the
Answers, Claims and Changes sections, answers.json and the console give
the same change with the same interval, or, under 3 seeds, the change
with no interval anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.answers import MIN_INTERVAL_SEEDS
from runner.analyses.stats import Estimate
from runner.experiments import parse_spec
from runner.spec.model import Spec
from tests.conftest import FIXTURES, fixture_report

BOUNDS = re.compile(r"\[[^\]]*\]")
# A hypothesis added to tortoise-small's spec that is one of its Changes
# rows (bulk, 1 MB, limit-100 against unlimited, TTLB): its 2 seeds give
# that row an interval of its own unless the report withholds it.
ROW_HYPOTHESIS = {
    "name": "limit-slows-1mb",
    "variant": "limit-100",
    "reference": "unlimited",
    "metric": "ttlb",
    "class": "bulk",
    "size": "1 MB",
    "expect": "increase",
    "smallest_change": "10%",
    "extension": "a test's own question, on one row of the Changes table",
}


def _tortoise_with_a_row_hypothesis() -> Spec:
    path = FIXTURES / "tortoise-small" / "spec.yaml"
    data = yaml.safe_load(path.read_text())
    data["hypotheses"].append(ROW_HYPOTHESIS)
    return parse_spec(data, str(path))


def _section(text: str, title: str) -> list[list[str]]:
    """The table rows of a section, as lists of cells."""
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in body.splitlines()
        if line.startswith("| ") and not line.startswith("|---")
    ]


def _column(rows: list[list[str]], name: str) -> int:
    return rows[0].index(name)


def _places(text: str, hypothesis: str) -> dict[str, list[str]]:
    """Every text the report gives for a hypothesis's change: its Answers
    cell, its Claims cell, and each Changes cell that names it."""
    answers = _section(text, "Answers")
    change = _column(answers, "change [interval]")
    found = {"answers": [r[change] for r in answers[1:] if r[0] == hypothesis]}
    claims = _section(text, "Claims")
    if "## Claims" in text and len(claims) > 1:
        project = _column(claims, "project")
        hyp = _column(claims, "hypothesis")
        found["claims"] = [r[project] for r in claims[1:] if r[hyp] == hypothesis]
    changes = _section(text, "Changes")
    found["changes"] = [
        cell.removeprefix(f"{hypothesis}: ")
        for row in changes[1:]
        for cell in row
        if cell.startswith(f"{hypothesis}: ")
    ]
    return found


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("tortoise-small", None),  # 2 seeds, no hypothesis is one Changes row
        ("tortoise-small", _tortoise_with_a_row_hypothesis),  # 2 seeds, one is
        ("conflux-small-pilot", None),  # 5 seeds in rounds: the look's wider interval
    ],
)
def test_each_hypothesis_has_one_interval_text_or_none_across_the_report(
    name: str, spec: Any, tmp_path: Path
) -> None:
    report = fixture_report(name, tmp_path, spec() if spec else None)
    text = report.read_text()
    records = json.loads((report.parent.parent / "answers.json").read_text())
    for record in records:
        hypothesis = record["hypothesis"]
        places = _places(text, hypothesis)
        assert len(places["answers"]) == 1, hypothesis
        texts = {t for cells in places.values() for t in cells}
        # Every place gives the same words: the Answers section's.
        assert texts == set(places["answers"]), (hypothesis, places)
        intervals = {b for t in texts for b in BOUNDS.findall(t)}
        if record["seeds"] < MIN_INTERVAL_SEEDS:
            assert intervals == set() and texts.pop().endswith("(no interval)")
            assert record["low"] is None and record["high"] is None
            assert record["critical_t"] is None
            assert record["no_interval"] == (
                f"too few seeds ({record['seeds']}): an interval needs at least 3"
            )
        else:
            assert len(intervals) == 1, (hypothesis, intervals)
            assert record["no_interval"] is None
            shown = Estimate(record["change"], record["low"], record["high"], record["seeds"])
            assert shown.format(100, "%") in texts.pop()


def test_a_hypothesis_on_a_changes_row_takes_that_row_over(tmp_path: Path) -> None:
    spec = _tortoise_with_a_row_hypothesis()
    text = fixture_report("tortoise-small", tmp_path, spec).read_text()
    changes = _section(text, "Changes")
    header = changes[0]
    (row,) = [r for r in changes[1:] if r[:4] == ["bulk", "1 MB", "limit-100", "unlimited"]]
    assert row[header.index("TTLB change")] == "limit-slows-1mb: +115.1% (no interval)"
    # The row's other metrics are not the hypothesis's: exploratory, and with
    # 2 seeds the change alone, as the hypothesis's cell (no interval under 3).
    assert row[header.index("TTFB change")] == "-35.2%"
    assert not any(BOUNDS.search(cell) for r in changes[1:] for cell in r)
    assert "A cell that begins with a hypothesis's name is that hypothesis's answer" in text
    assert "The other 329 comparisons are exploratory" in text
    # Without the hypothesis the row is exploratory, the change alone.
    plain = fixture_report("tortoise-small", tmp_path / "plain").read_text()
    assert "| -35.2% | +115.1% | +125.2% |" in plain
    # From 3 seeds on an exploratory cell has its interval.
    pilot = _section((FIXTURES / "conflux-small-pilot" / "report.md").read_text(), "Changes")
    assert all(BOUNDS.search(cell) for r in pilot[1:] for cell in r[5:8] if cell != "n/a")
    assert "These 330 comparisons are exploratory" in plain


def test_the_console_gives_the_reports_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.cli import main

    fixture_report("tortoise-small", tmp_path)
    capsys.readouterr()
    spec = FIXTURES / "tortoise-small" / "spec.yaml"
    main(["compare", str(spec), "--results", str(tmp_path), "--backend", "shadow"])
    out = capsys.readouterr().out
    console = out.split("\nAnswers:\n", 1)[1].splitlines()
    text = (tmp_path / "tortoise-small" / "report" / "report.md").read_text()
    answers = _section(text, "Answers")
    header = answers[0]
    expected = []
    for row in answers[1:]:
        cells = dict(zip(header, row, strict=True))
        expected.append(f"{cells.pop('hypothesis')}: {cells.pop('what it tests')}")
        expected += [f"  {k}: {v}" for k, v in cells.items()]
    assert console == expected
    assert "  change [interval]: -50.3% (no interval)" in console
    assert "  family: exploratory" in console
    assert not any(line.startswith("|") for line in console)
