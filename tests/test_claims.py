"""Every hypothesis names the published claim it tests (or says why it is
the project's own question), and the report puts the paper's number beside
the project's."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from runner.network.backends import SHADOW
from runner.network.identity import spec_parts
from runner.spec.claims import in_reading
from tests.conftest import CI_SMALL, ROOT


def _ci_small() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CI_SMALL.read_text())
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
    before = parse_spec(data, "ci-small.yaml")
    data["hypotheses"][0]["claim"]["figure"] = "Table I, 10 MB"
    data["claims"]["not_tested"].pop("C5")
    after = parse_spec(data, "ci-small.yaml")
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
