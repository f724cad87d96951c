"""Each experiment's claims are labelled with the conditions its runs had
(runner.spec.conditions): what its spec says of its network and traffic,
then the spec's own `claims.conditions`, so that a verdict reads as under
those and not the paper's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from runner.experiments import load_spec
from runner.report.claims import claims_body, experiment_section
from runner.spec.conditions import conditions_line

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_tortoise_smalls_line_says_what_differs_from_the_paper() -> None:
    line = conditions_line(load_spec(CONFIGS / "tortoise-small.yaml"))
    assert line.startswith("under tortoise-small's own conditions (8 relays, 45 clients")
    assert "(40 web, 5 bulk)" in line
    assert "5 min of traffic a run" in line
    # 11 of 45 and 21 of 45 clients run a relay (0.4 x 5 + 0.225 x 40, ...).
    assert "client relays 11 (24%) and 21 (47%) of the clients" in line
    assert "growth of 50% more clients" in line
    assert (
        "perconnbwrate and perconnbwburst at 1.4x and 2.9x unlimited's bulk clients' mean "
        "bandwidth on the same seed" in line
    )


def test_a_spec_without_these_choices_says_only_its_size() -> None:
    line = conditions_line(load_spec(CONFIGS / "ci-small.yaml"))
    assert (
        line
        == "under ci-small's own conditions (6 relays, 4 clients (4 perf); 10 min of traffic a run)"
    )


def test_the_specs_own_text_follows_and_the_tables_show_the_line() -> None:
    spec = load_spec(CONFIGS / "tortoise-small.yaml")
    assert spec.claims is not None
    spec = replace(spec, claims=replace(spec.claims, conditions="limits at ratios"))
    line = conditions_line(spec)
    assert line.endswith("): limits at ratios")
    record = {
        "hypothesis": "h",
        "metric": "client_bandwidth",
        "expect": "decrease",
        "smallest_change": 0.2,
        "claim": {"id": "T2", "figure": "f"},
    }
    body = claims_body([record], spec.claims, line)
    assert body[0] == f"Its claims are tested {line}."
    section = experiment_section("tortoise-small", "x.yaml", spec.claims, [record], "r", line)
    assert f"Its claims are tested {line}." in section
    # No claim row, no line: nothing is said to hold under them.
    assert claims_body([], spec.claims, line)[0] == "No hypothesis tests a published claim."
