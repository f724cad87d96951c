"""Specs that say each thing once: ``extends:`` (runner.spec.compose), the
hypotheses by name with defaults and claim figures named once
(runner.spec.hypothesis_forms)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from runner.spec.compose import merge
from tests.specs import ci_small_data

ROOT = Path(__file__).resolve().parent.parent
CI_SMALL = ROOT / "configs" / "ci-small.yaml"


def test_mappings_merge_by_key_lists_replace_and_null_deletes() -> None:
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": 3}
    over = {"a": {"y": [3], "z": None}, "c": None, "d": 4}
    assert merge(base, over) == {"a": {"x": 1, "y": [3], "z": None}, "b": 2, "d": 4}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": 3}  # unchanged


def test_a_new_key_goes_after_the_key_given_before_it() -> None:
    base = {"n1": 1, "n3": 3, "n5": 5}
    assert list(merge(base, {"n1": 1, "n2": 2, "n3": 3, "n4": 4})) == ["n1", "n2", "n3", "n4", "n5"]
    assert list(merge(base, {"n0": 0})) == ["n0", "n1", "n3", "n5"]
    assert list(merge(base, {"n5": 5, "n6": 6, "n3": None})) == ["n1", "n5", "n6"]


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_spec_states_only_what_differs_from_the_one_it_extends(tmp_path: Path) -> None:
    _write(tmp_path / "ci-small.yaml", ci_small_data())
    child = _write(
        tmp_path / "ci-large.yaml",
        {"extends": "ci-small.yaml", "name": "ci-large", "duration": {"measure": "3 min"}},
    )
    small, large = load_spec(CI_SMALL), load_spec(child)
    assert large.duration.measure == 180 and large.duration.bootstrap == small.duration.bootstrap
    assert large.variants == small.variants and large.network == small.network
    assert "extends" not in large.raw


@pytest.mark.parametrize(
    ("extends", "expected"),
    [
        ("missing.yaml", "no such spec file"),
        ("b.yaml", "expected no cycle of extends, got a.yaml -> b.yaml -> a.yaml"),
        (3, "expected the path of a spec file"),
    ],
)
def test_a_bad_extends_is_named_with_its_file(tmp_path: Path, extends: Any, expected: str) -> None:
    _write(tmp_path / "b.yaml", {"extends": "a.yaml", "name": "b"})
    a = _write(tmp_path / "a.yaml", {"extends": extends, "name": "a"})
    with pytest.raises(SpecError) as info:
        load_spec(a)
    assert info.value.key == "extends" and expected in info.value.expected
    assert info.value.path in (str(a), str(tmp_path / "b.yaml"))


def _ci_small() -> dict[str, Any]:
    data: dict[str, Any] = ci_small_data()
    return data


def test_hypotheses_by_name_take_the_defaults_and_named_figures() -> None:
    listed = _ci_small()
    [hypothesis] = listed["hypotheses"]
    short = _ci_small()
    body = {k: v for k, v in hypothesis.items() if k not in ("name", "smallest_change", "claim")}
    short["hypotheses"] = {hypothesis["name"]: body | {"claim": "the-figure"}}
    short["hypothesis_defaults"] = {"smallest_change": hypothesis["smallest_change"]}
    short["claims"]["figures"] = {"the-figure": hypothesis["claim"]}
    assert parse_spec(short, "s.yaml").hypotheses == parse_spec(listed, "l.yaml").hypotheses
    # A key given as null takes no default.
    short["hypothesis_defaults"]["size"] = "1 MiB"
    short["hypotheses"][hypothesis["name"]]["size"] = None
    assert parse_spec(short, "s.yaml").hypotheses[0].size is None


@pytest.mark.parametrize(
    ("change", "key", "expected"),
    [
        ({"claim": "nameless"}, "hypotheses[0].claim", "a figure named under claims.figures"),
        ({"name": "x"}, "hypotheses.conflux-shortens-5mib.name", "the key is the hypothesis's"),
    ],
)
def test_a_bad_short_hypothesis_is_named(change: dict[str, Any], key: str, expected: str) -> None:
    data = _ci_small()
    [hypothesis] = data["hypotheses"]
    name = hypothesis.pop("name")
    data["hypotheses"] = {name: hypothesis | change}
    with pytest.raises(SpecError) as info:
        parse_spec(data, "s.yaml")
    assert info.value.key == key.replace("conflux-shortens-5mib", name)
    assert expected in info.value.expected


def test_a_figure_no_hypothesis_names_is_an_error() -> None:
    data = _ci_small()
    data["claims"]["figures"] = {"unused": {"id": "C1", "figure": "Table I"}}
    with pytest.raises(SpecError) as info:
        parse_spec(data, "s.yaml")
    assert info.value.key == "claims.figures.unused"


def test_yaml_merge_keys_share_keys_within_a_file_and_a_key_beside_wins(tmp_path: Path) -> None:
    text = CI_SMALL.read_text()
    on = "    torrc:\n      client: [ConfluxEnabled 1]\n    expect: {conflux_legs: 2}"
    assert text.count(on) == 1
    shared = "<<: &on {torrc: {client: [ConfluxEnabled 1]}, expect: {conflux_legs: 2}}"
    # conflux-off's own torrc and expect win over the merged ones; conflux-on
    # takes them from the merge alone.
    merged = text.replace("  conflux-off:\n", f"  conflux-off:\n    {shared}\n").replace(
        on, "    <<: *on\n    #"
    )
    path = tmp_path / "ci-small.yaml"
    path.write_text(merged)
    assert load_spec(path).variants == load_spec(CI_SMALL).variants


def test_an_anchor_names_nothing_in_the_file_extended(tmp_path: Path) -> None:
    base = CI_SMALL.read_text().replace("  conflux-off:\n", "  conflux-off: &off\n")
    (tmp_path / "base.yaml").write_text(base)
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nname: child\nvariants:\n  conflux-on: *off\n")
    with pytest.raises(SpecError) as info:
        load_spec(child)
    assert info.value.path == str(child) and "valid YAML" in info.value.expected
