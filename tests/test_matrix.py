"""Factorial designs: a matrix of factors expands into the plain variants."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.cli import main
from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from tests.conftest import CI_SMALL, FIXTURES, ROOT


def _plain(name: str) -> dict[str, Any]:
    """congestion configs as they were written out by hand, variant by variant."""
    data: dict[str, Any] = json.loads(
        (FIXTURES / "congestion" / f"{name}-expanded.json").read_text()
    )
    return data


@pytest.mark.parametrize("name", ["congestion-small", "congestion"])
def test_the_congestion_matrices_expand_to_the_variants_written_out_before(name: str) -> None:
    path = ROOT / "configs" / f"{name}.yaml"
    assert len(path.read_text().splitlines()) < 230
    spec = load_spec(path)
    before = _plain(name)
    # Added since: the single scenario (one bulk client, the starvation
    # check) and its client class, absent from the others.
    single = {v.name for v in spec.variants if v.factors["scenario"] == "single"}
    assert len(single) == 9
    variants = {v.name: dataclasses.asdict(v) for v in spec.variants if v.name not in single}
    assert len(variants) == 54
    for body in variants.values():
        assert body["clients"].pop("solo") == 0
        assert set(body.pop("factors")) == {"scenario", "mechanism"}
        assert body.pop("opens_network") is False  # keys added since
        assert body.pop("client_relay_role") == "middle"
        assert body.pop("consensus_from") == {}
        assert body.pop("topology") is None
    as_json = json.loads(json.dumps(variants))  # tuples as lists, as the file has them
    assert as_json == before["variants"]
    comparisons = [list(c) for c in spec.comparisons if c[0] not in single]
    assert sorted(comparisons) == sorted(before["comparisons"])
    assert len(comparisons) == len(before["comparisons"]) == 48
    load_variants = [v for v in spec.checks.load_variants if v not in single]
    assert sorted(load_variants) == sorted(before["load_variants"])
    assert spec.baseline == before["baseline"]
    tree = spec.variant("tree-n23")
    assert tree.factors == {"scenario": "tree", "mechanism": "n23"}


def _spec_with(matrix: dict[str, Any], **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CI_SMALL.read_text())
    data.pop("variants")
    data.pop("hypotheses")
    data["baseline"] = "a-x"
    data["matrix"] = matrix
    data.update(extra)
    return data


MATRIX = {
    "name": "{f}-{g}",
    "description": "{f}, {g}",
    "all": {"torrc": {"client": ["ConfluxEnabled 0"]}},
    "factors": {
        "f": {
            "a": {"description": "level a", "torrc": {"client": ["SafeLogging 0"]}},
            "b": {"consensus": {"cc_alg": 0}},
        },
        "g": {"x": {"consensus": {"circwindow": 500}}, "y": {"tor": "stock"}},
    },
}


def test_levels_merge_and_carry_their_factors() -> None:
    spec = parse_spec(_spec_with(MATRIX), "m.yaml")
    assert [v.name for v in spec.variants] == ["a-x", "a-y", "b-x", "b-y"]
    ax = spec.variant("a-x")
    assert ax.torrc == {"client": ("ConfluxEnabled 0", "SafeLogging 0")}
    assert ax.consensus == {"circwindow": 500}
    assert ax.description == "level a, x"
    assert spec.variant("b-x").consensus == {"cc_alg": 0, "circwindow": 500}
    assert spec.variant("b-y").factors == {"f": "b", "g": "y"}


def test_per_factor_comparisons_and_exclusions() -> None:
    matrix = dict(MATRIX, exclude=[{"f": "b", "g": "y"}])
    comparisons = [{"factor": "g", "pairs": [["y", "x"]]}, ["b-x", "a-x"]]
    spec = parse_spec(_spec_with(matrix, comparisons=comparisons), "m.yaml")
    assert [v.name for v in spec.variants] == ["a-x", "a-y", "b-x"]
    assert spec.comparisons == (("a-y", "a-x"), ("b-x", "a-x"))


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (
            {"factors": {**MATRIX["factors"], "g": {"x": {"consensus": {"cc_alg": 2}}}}},
            "matrix.factors.g.x.consensus.cc_alg",
            "also set by matrix.factors.f.b",
        ),
        ({"name": "{f}"}, "matrix.name", "one placeholder for each factor"),
        ({"exclude": [{"f": "c"}]}, "matrix.exclude[0].f", "unknown factor or level"),
    ],
)
def test_conflicting_or_unknown_levels_are_errors(
    change: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(_spec_with(dict(MATRIX, **change)), "m.yaml")
    assert info.value.key == key
    assert message in info.value.expected


def test_validate_expand_prints_a_plain_spec_that_loads_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ROOT / "configs" / "congestion-small.yaml"
    assert main(["validate", "--expand", "--force", str(path)]) == 0
    text = capsys.readouterr().out
    data = yaml.safe_load(text)
    assert "matrix" not in data and len(data["variants"]) == 63
    again = parse_spec(data, "expanded.yaml")
    assert again.variants == load_spec(path).variants
