"""Every hypothesis names the published claim it tests (or says why it is
the project's own question), and the report puts the paper's number beside
the project's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.answers import (
    SUPPORTED,
    UNDETERMINED,
    Answer,
    answer_record,
    spec_records,
    verdict,
)
from runner.analyses.stats import Estimate
from runner.cli import main
from runner.errors import SpecError
from runner.experiments import ANALYSES, load_spec, parse_spec
from runner.network.backends import SHADOW
from runner.network.identity import spec_parts
from runner.report.answers import answers_section
from runner.report.claims import UNSTORED, claims_body, claims_section, reading_text
from runner.report.compare import compare
from runner.spec.claims import Claim, ClaimsLedger, in_reading
from runner.spec.hypotheses import Hypothesis
from tests.conftest import CI_SMALL, FIXTURES, ROOT, fixture_report, fixture_results
from tests.specs import ci_small_data, spec_of


def _ci_small() -> dict[str, Any]:
    data: dict[str, Any] = ci_small_data()
    return data


def _refused(data: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as caught:
        parse_spec(data, "claims.yaml")
    return caught.value


def test_a_hypothesis_with_neither_claim_nor_extension_is_refused() -> None:
    data = _ci_small()
    del data["hypotheses"][0]["claim"]
    error = _refused(data)
    assert error.key == "hypotheses[0]"
    assert str(error).startswith("claims.yaml: hypotheses[0]: expected exactly one of `claim:`")
    assert "`extension:`" in str(error) and "got neither" in str(error)


def test_a_hypothesis_with_both_claim_and_extension_is_refused() -> None:
    data = _ci_small()
    data["hypotheses"][0]["extension"] = "the project's own question"
    error = _refused(data)
    assert error.key == "hypotheses[0]" and "got both" in error.expected
    assert "`claim:`" in error.expected and "`extension:`" in error.expected


def test_a_claim_not_under_claims_tested_is_refused() -> None:
    data = _ci_small()
    data["hypotheses"][0]["claim"]["id"] = "C9"
    error = _refused(data)
    assert error.key == "hypotheses[0].claim.id"
    assert "claim C9 is not under claims.tested (tested: C1)" in error.expected


def test_a_claim_needs_the_claims_section() -> None:
    data = _ci_small()
    del data["claims"]
    error = _refused(data)
    assert error.key == "hypotheses[0].claim.id" and "needs the spec's `claims:`" in error.expected


def test_a_tested_claim_that_no_hypothesis_names_is_refused() -> None:
    data = _ci_small()
    data["claims"]["tested"]["C2"] = data["claims"]["not_tested"].pop("C2")
    error = _refused(data)
    assert error.key == "claims.tested.C2" and "no hypothesis names claim C2" in error.expected


def test_a_claim_is_tested_or_not_not_both() -> None:
    data = _ci_small()
    data["claims"]["not_tested"]["C1"] = "no second leg"
    error = _refused(data)
    assert error.key == "claims.not_tested.C1" and "also under claims.tested" in error.expected


@pytest.mark.parametrize(
    ("claim", "key", "message"),
    [
        ({"change": "25.4%"}, "claim.change", "a signed percentage"),
        ({"change": -0.254}, "claim.change", "a signed percentage"),
        ({"reading": None}, "claim.reading", "required with a change"),
        ({"reading": "speed"}, "claim.reading", "expected one of time, throughput, count"),
        ({"change": None}, "claim.reading", "a reading applies to a change only"),
        ({"figure": None}, "claim.figure", "required key is missing"),
        ({"figure": " "}, "claim.figure", "a non-empty string"),
        ({"id": "c1"}, "claim.id", "a letter and digits"),
        ({"page": 3}, "claim.page", "unknown key"),
    ],
)
def test_a_claim_says_where_and_what_the_paper_number_is(
    claim: dict[str, Any], key: str, message: str
) -> None:
    data = _ci_small()
    body = data["hypotheses"][0]["claim"]
    for name, value in claim.items():
        if value is None:
            body.pop(name)
        else:
            body[name] = value
    error = _refused(data)
    assert error.key == f"hypotheses[0].{key}" and message in error.expected


def test_an_extension_says_why() -> None:
    data = _ci_small()
    del data["hypotheses"][0]["claim"]
    del data["claims"]
    data["hypotheses"][0]["extension"] = ""
    error = _refused(data)
    assert error.key == "hypotheses[0].extension" and "non-empty string" in error.expected
    data["hypotheses"][0]["extension"] = "  the project's own question "
    (h,) = parse_spec(data, "claims.yaml").hypotheses
    assert (h.claim, h.extension, h.paper_change) == (None, "the project's own question", None)


def test_the_claims_section_is_read() -> None:
    spec = load_spec(CI_SMALL)
    assert spec.claims is not None and set(spec.claims.tested) == {"C1"}
    assert set(spec.claims.not_tested) == {"C2", "C3", "C4", "C5"}
    (h,) = spec.hypotheses
    assert h.claim is not None
    assert (h.claim.id, h.claim.figure, h.claim.change, h.claim.reading) == (
        "C1",
        "Table I, 5 MB",
        -0.567,
        "time",
    )


def test_every_config_labels_every_hypothesis() -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        spec = load_spec(path)
        for h in spec.hypotheses:
            assert (h.claim is None) != (not h.extension), (path.name, h.name)
        if any(h.claim for h in spec.hypotheses):
            assert spec.claims is not None, path.name


def test_claims_do_not_change_a_runs_identity() -> None:
    data = _ci_small()
    before = spec_of(data)
    data["hypotheses"][0]["claim"]["figure"] = "Table I, 10 MB"
    data["claims"]["not_tested"].pop("C5")
    after = spec_of(data)
    for variant in before.variants:
        assert spec_parts(before, variant, 1, SHADOW) == spec_parts(after, variant, 1, SHADOW)


@pytest.mark.parametrize(
    ("change", "reading", "metric", "expected"),
    [
        (0.48, "throughput", "ttlb", 1 / 1.48 - 1),  # -32.4%
        (0.265, "throughput", "round_completion", 1 / 1.265 - 1),  # -20.9%
        (-0.15, "throughput", "after_first_byte", 1 / 0.85 - 1),  # +17.6%
        (-0.254, "time", "goodput", 1 / 0.746 - 1),  # +34.0%
        (-0.254, "time", "client_bandwidth", 1 / 0.746 - 1),
        (-0.254, "time", "ttfb", -0.254),  # the same kind: as given
        (0.27, "throughput", "client_bandwidth", 0.27),
        (0.067, "count", "downloads_completed", 0.067),
        (0.067, "count", "ttlb", 0.067),  # a count: as given
        (0.3, "throughput", "downloads_completed", 0.3),
    ],
)
def test_the_paper_number_in_the_hypothesis_reading(
    change: float, reading: str, metric: str, expected: float
) -> None:
    assert in_reading(change, reading, metric) == pytest.approx(expected)
    assert round(in_reading(0.48, "throughput", "ttlb") * 100, 1) == -32.4


# The Claims table, from the records answers.json holds.

LEDGER = ClaimsLedger(
    paper="Conflux",
    tested={"C1": "Conflux shortens downloads", "M3": "five downloads finish faster"},
    not_tested={"C4": "no tail hypothesis"},
)
CONFLUX_10MB = Claim(id="C1", figure="Table I, 10 MB", change=-0.254, reading="time")


def _hypothesis(claim: Claim | None = CONFLUX_10MB, **changes: Any) -> Hypothesis:
    fields: dict[str, Any] = {
        "name": "conflux-shortens-10mb",
        "variant": "conflux",
        "reference": "plain",
        "metric": "ttlb",
        "expect": "decrease",
        "smallest_change": 0.10,
        "cls": "perf",
        "size": 10_000_000,
        "claim": claim,
        "extension": "" if claim else "the project's own question",
    }
    return Hypothesis(**(fields | changes))


def _record(h: Hypothesis, low: float, high: float, n: int = 5) -> dict[str, Any]:
    """The answers.json record of an answer with this interval, read back."""
    estimate = Estimate((low + high) / 2, low, high, n)
    found = verdict(estimate, h) if n >= 3 else UNDETERMINED
    record = answer_record(Answer(h, estimate, found, critical=2.78), 0.5, LEDGER)
    loaded: dict[str, Any] = json.loads(json.dumps(record))
    return loaded


def _row(record: dict[str, Any]) -> str:
    (line,) = [
        x for x in claims_body([record], LEDGER) if x.startswith("| C") or x.startswith("| M")
    ]
    return line


def test_the_claims_table_puts_the_paper_number_beside_the_project_interval() -> None:
    h = _hypothesis()
    inside = _record(h, -0.40, -0.16)
    assert inside["claim"] == {
        "id": "C1",
        "claim": "Conflux shortens downloads",
        "figure": "Table I, 10 MB",
        "paper_change": -0.254,
        "paper_reading": "time",
        "reading": "time",
        "paper_change_in_reading": -0.254,
        "inside_interval": True,
    }
    assert inside["extension"] is None
    assert _row(inside) == (
        "| C1 | Conflux shortens downloads | conflux-shortens-10mb "
        "| median ttlb, 10 MB: at least 10% decrease | Table I, 10 MB: -25.4% "
        "| -28.0% [-40.0, -16.0] (α = 5%, t = 2.78) | supported (5 seeds) | yes |"
    )
    outside = _record(h, -0.20, -0.02)
    assert outside["claim"]["inside_interval"] is False
    assert _row(outside).endswith(
        "| -11.0% [-20.0, -2.0] (α = 5%, t = 2.78) | undetermined (5 seeds) | no |"
    )


def test_a_throughput_claim_is_read_as_a_time_and_says_so() -> None:
    claim = Claim(
        id="M3",
        figure="five concurrent downloads, 5 circuits vs 1",
        change=0.48,
        reading="throughput",
    )
    h = _hypothesis(claim, name="n5-download", metric="round_completion", size=None, cls=None)
    record = _record(h, -0.40, -0.30)
    assert record["claim"]["paper_change_in_reading"] == pytest.approx(1 / 1.48 - 1)
    assert _row(record) == (
        "| M3 | five downloads finish faster | n5-download "
        "| round_completion: at least 10% decrease | five concurrent downloads, "
        "5 circuits vs 1: -32.4% (the paper's +48.0% throughput) | -35.0% [-40.0, -30.0] "
        "(α = 5%, t = 2.78) | supported (5 seeds) | yes |"
    )


def test_qualitative_claims_and_too_few_seeds_have_no_inside() -> None:
    qualitative = _record(_hypothesis(Claim(id="C1", figure="Table I")), -0.40, -0.16)
    assert qualitative["claim"]["inside_interval"] is None
    assert (
        "| Table I: qualitative | -28.0% [-40.0, -16.0] (α = 5%, t = 2.78) "
        "| supported (5 seeds) | - |" in (_row(qualitative))
    )
    few = _record(_hypothesis(), -0.40, -0.16, n=2)
    assert few["claim"]["inside_interval"] is None
    assert _row(few).endswith("| -28.0% (no interval) | too few seeds (2) | - |")


def test_the_claims_and_answers_sections_print_one_interval_text() -> None:
    h = _hypothesis()
    estimate = Estimate(-0.28, -0.40, -0.16, 5)
    a = Answer(h, estimate, SUPPORTED, critical=3.5, look=1, alpha=0.05 / 3)
    answers_row = [x for x in answers_section([a]) if x.startswith("| conflux")][0]
    record = json.loads(json.dumps(answer_record(a, None, LEDGER)))
    text = "-28.0% [-40.0, -16.0] (α = 1.67%, look 2, t = 3.50)"
    assert f"| {text} |" in answers_row and f"| {text} |" in _row(record)


def test_the_claims_section_lists_what_the_spec_cannot_test_and_its_extensions() -> None:
    records = [
        _record(_hypothesis(), -0.40, -0.16),
        _record(_hypothesis(None, name="own"), -0.1, 0),
    ]
    lines = claims_section(records, LEDGER)
    assert lines[:2] == ["## Claims", ""] and lines[2].endswith("The paper: Conflux.")
    assert lines[-3:] == [
        "Not tested here: C4 (no tail hypothesis).",
        "",
        "Extensions, the project's own questions: own.",
    ]
    assert claims_section([], None) == []


def test_a_hypothesis_without_answers_is_not_run() -> None:
    spec = load_spec(CI_SMALL)
    (record,) = spec_records(spec, None)
    assert "verdict" not in record and record["claim"]["id"] == "C1"
    assert _row(record) == (
        "| C1 | Conflux (2 legs) shortens downloads against Tor | conflux-shortens-5mib "
        "| median ttlb, 5 MiB: at least 10% decrease | Table I, 5 MB: -56.7% | not run | - | - |"
    )
    # An answer to an earlier form of the hypothesis does not answer it.
    earlier = _record(
        _hypothesis(name="conflux-shortens-5mib", claim=spec.hypotheses[0].claim), -0.6, -0.5
    )
    (record,) = spec_records(spec, [earlier])
    assert "verdict" not in record


def test_the_report_opens_with_the_claims_and_answers_json_holds_them(tmp_path: Path) -> None:
    report = fixture_report("conflux-small-pilot", tmp_path)
    text = report.read_text()
    assert text.index("## Claims") < text.index("## Answers") < text.index("## Variants")
    page = (report.parent / "report.html").read_text()
    assert page.index("<h2>Claims</h2>") < page.index("<table>") < page.index("<h2>Answers</h2>")
    records = json.loads((report.parent.parent / "answers.json").read_text())
    by_name = {r["hypothesis"]: r for r in records}
    claim = by_name["confluxm-shortens-10mb-further"]["claim"]
    assert (claim["id"], claim["figure"], claim["paper_change"]) == (
        "C2",
        "Table I, ConfluxM, 10 MB",
        -0.244,
    )
    assert claim["inside_interval"] is True  # the pilot's interval is wide
    after = by_name["conflux-shortens-10mb-after-first-byte"]
    assert after["claim"] is None and "first byte" in after["extension"]
    # The table in the report is the one answers.json gives.
    spec = load_spec(ROOT / "tests" / "fixtures" / "conflux-small-pilot" / "spec.yaml")
    assert "\n".join(claims_body(spec_records(spec, records), spec.claims)) in text


# `runner claims`: docs/claims.md from every config and its latest answers.


def _claims_page(tmp_path: Path, results: Path) -> str:
    configs = tmp_path / "configs"
    configs.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "conflux-small-pilot" / "spec.yaml", configs / "conflux-small.yaml")
    shutil.copy(CI_SMALL, configs / "ci-small.yaml")
    out = tmp_path / "docs" / "claims.md"
    argv = ["claims", "--configs", str(configs), "--results", str(results), "--out", str(out)]
    assert main(argv) == 0
    # Each renamed into place: no temporary file left.
    assert sorted(p.name for p in out.parent.iterdir()) == ["claims.md", "claims.svg"]
    return out.read_text()


def test_runner_claims_writes_each_experiments_claims_beside_its_answers(tmp_path: Path) -> None:
    results = tmp_path / "results"
    spec, layout = fixture_results("conflux-small-pilot", results)
    report = compare(spec, layout, ANALYSES).path.read_text()
    page = _claims_page(tmp_path, results)
    assert page.startswith("# Published claims and the project's answers\n")
    assert "Written by `make claims` (`python -m runner claims`)" in page
    conflux = page.split("## conflux-small\n")[1]
    assert f"Results: `{layout.data_json('answers')}`." in conflux
    # The rows are the report's own.
    rows = [line for line in report.split("## Answers")[0].splitlines() if line.startswith("| C")]
    assert len(rows) == 3 and all(row in conflux for row in rows)
    assert "Not tested here: C3 (no hypothesis compares ConfluxM with plain Tor);" in conflux
    assert "Extensions, the project's own questions: conflux-shortens-10mb-after-first-byte." in (
        conflux
    )
    ci_small = page.split("## ci-small\n")[1].split("## conflux-small")[0]
    assert "Results: not run (no `" in ci_small
    assert (
        "| C1 | Conflux (2 legs) shortens downloads against Tor | conflux-shortens-5mib "
        "| median ttlb, 5 MiB: at least 10% decrease | Table I, 5 MB: -56.7% | not run | - | - |"
    ) in ci_small


def test_runner_claims_reads_the_local_backends_answers_too(tmp_path: Path) -> None:
    results = tmp_path / "results"
    spec, layout = fixture_results("conflux-small-pilot", results)
    compare(spec, layout, ANALYSES)
    local = results / "conflux-small-local"
    layout.experiment_dir.rename(local)
    page = _claims_page(tmp_path, results)
    assert f"Results: `{local / 'answers.json'}`." in page
    assert (
        "| -28.3% [-67.8, +60.0] (α = 5%, look 1, t = 5.05) | undetermined (5 seeds) "
        "(exploratory) | yes |" in page
    )
    (local / "answers.json").write_text("{not json")
    (tmp_path / "docs" / "claims.md").unlink()  # nothing published to keep
    page = _claims_page(tmp_path, results)
    assert "does not read as JSON" in page and "| not run | - | - |" in page


def test_runner_claims_keeps_published_results_an_experiment_lacks_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    spec, layout = fixture_results("conflux-small-pilot", results)
    compare(spec, layout, ANALYSES)
    published = _claims_page(tmp_path, results)
    conflux = published.split("## conflux-small\n")[1]
    assert "| undetermined (5 seeds) (exploratory) | yes |" in conflux
    plot = (tmp_path / "docs" / "claims.svg").read_text()
    # A clone that has run only ci-small: no conflux-small answers here.
    shutil.rmtree(layout.experiment_dir)
    capsys.readouterr()
    page = _claims_page(tmp_path, results)
    # conflux-small's rows as published, not "not run", saying the store lacks its runs
    assert page.count(UNSTORED) == 1
    assert page.replace("\n\n" + UNSTORED, "") == published
    assert page.split("## conflux-small\n")[1].index(UNSTORED) < page.split("## conflux-small\n")[
        1
    ].index("| claim |")
    assert _claims_page(tmp_path, results) == page  # said once, however often it is kept
    # Its panel drawn from the published rows: the same picture.
    assert (tmp_path / "docs" / "claims.svg").read_text() == plot
    said = capsys.readouterr().out
    assert "2 experiments, 0 with collected answers" in said
    assert "conflux-small: not run here (no `" in said
    assert f"`{layout.data_json('answers')}`" in said
    assert "kept its published section" in said
    # ci-small was "not run" in the published page: nothing to keep, written afresh.
    assert "ci-small:" not in said
    # A hypothesis added since the page was written: the kept section lacks it, and says so.
    spec_file = tmp_path / "configs" / "conflux-small.yaml"
    added = yaml.safe_load(spec_file.read_text())
    extra = dict(added["hypotheses"][0], name="conflux-shortens-400kb-again")
    added["hypotheses"].append(extra)
    spec_file.write_text(yaml.safe_dump(added, sort_keys=False))
    main(
        [
            "claims",
            "--configs",
            str(spec_file.parent),
            "--results",
            str(results),
            "--out",
            str(tmp_path / "docs" / "claims.md"),
        ]
    )
    assert "it has no row for conflux-shortens-400kb-again" in capsys.readouterr().out
    shutil.copy(FIXTURES / "conflux-small-pilot" / "spec.yaml", spec_file)
    # An unreadable answers file keeps the published section too, and says why.
    layout.experiment_dir.mkdir(parents=True)
    layout.data_json("answers").write_text("{not json")
    assert _claims_page(tmp_path, results) == page
    assert "does not read as JSON" in capsys.readouterr().out


def test_the_committed_claims_page_has_every_configs_hypotheses() -> None:
    page = (ROOT / "docs" / "claims.md").read_text()
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        spec = load_spec(path)
        section = page.split(f"\n## {spec.name}\n")[1].split("\n## ")[0]
        assert f"`configs/{path.name}`" in section
        for h in spec.hypotheses:
            assert f"| {h.name} |" in section or f" {h.name}" in section, (spec.name, h.name)


def test_the_docs_name_the_spec_keys_and_link_the_page() -> None:
    text = (ROOT / "docs" / "spec.md").read_text()
    for key in ("claim:", "extension:", "claims:", "not_tested", "reading", "figure"):
        assert key in text, key
    assert "(docs/claims.md)" in (ROOT / "README.md").read_text()
    assert "make claims" in (ROOT / "Makefile").read_text()


def test_the_reads_column_names_the_quantile_size_form_and_smallest_change() -> None:
    base = {"metric": "ttlb", "quantile": 0.9, "size_bytes": 400 * 1000, "expect": "decrease"}
    assert reading_text(base | {"smallest_change": 0.1}) == (
        "p90 ttlb, 400 KB: at least 10% decrease"
    )
    contrast = {
        "metric": "client_bandwidth",
        "class": "client-relay",
        "contrast": "others",
        "expect": "increase",
        "smallest_change": 0.1,
    }
    assert reading_text(contrast) == (
        "client_bandwidth, client-relay over others: at least 10% increase"
    )
    interaction = base | {"quantile": 0.5, "interaction": ["conflux", "plain"]}
    assert reading_text(interaction | {"smallest_change": 0.05}) == (
        "median ttlb, 400 KB, ratio of ratios: at least 5% decrease"
    )
