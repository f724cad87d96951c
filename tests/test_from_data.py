"""from_data reads as_data's JSON back as the type it was: every registered
analysis's result, computed on the committed fixtures, comes back equal
(NaN equal to NaN), and each shape as_data writes reads back as its type."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import pytest
import yaml

from runner.analyses.as_data import as_data
from runner.analyses.from_data import from_data
from runner.analyses.inputs import collected_inputs
from runner.analyses.runs import read_spec_runs
from runner.experiments import ANALYSES, parse_spec
from runner.spec.model import Spec
from tests.conftest import FIXTURES, fixture_results, fixture_spec

T = TypeVar("T")


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def round_trip(hint: Any, value: Any) -> Any:
    return from_data(hint, json.loads(json.dumps(as_data(value))))


def keep_up_spec() -> Spec:
    """congestion-small's spec with keep-up checks (no fixture asks them)."""
    data = yaml.safe_load((FIXTURES / "congestion-small" / "spec.yaml").read_text())
    data["checks"]["keep_up"] = [
        {"factor": "mechanism", "reference": "fixed", "metric": "busiest_relay", "within": "10%"},
        {
            "factor": "mechanism",
            "reference": "fixed",
            "metric": "client_bandwidth",
            "class": "bulk",
            "at_least": "90%",
        },
    ]
    return parse_spec(data, str(FIXTURES / "congestion-small" / "spec.yaml"))


def pinned_spec() -> Spec:
    """The conflux-small pilot's spec with its conflux variant pinned to two
    legs (no fixture pins a path; its circuits then mostly run off the pin)."""
    spec = fixture_spec("conflux-small-pilot")
    variants = tuple(replace(v, pinned_path=2) if v.name == "conflux" else v for v in spec.variants)
    return replace(spec, variants=variants)


CASES = {
    "conflux-small-pilot": lambda: fixture_spec("conflux-small-pilot"),
    "conflux-small-pinned": pinned_spec,
    "congestion-small": keep_up_spec,
    "mctor-small": lambda: fixture_spec("mctor-small"),
    "tortoise-small": lambda: fixture_spec("tortoise-small"),
}


def test_the_fixtures_ask_every_registered_analysis() -> None:
    asked = {
        a.name for spec in (case() for case in CASES.values()) for a in ANALYSES if a.applies(spec)
    }
    assert asked == {a.name for a in ANALYSES}


@pytest.mark.parametrize("name", CASES)
def test_every_analysis_result_reads_back_as_it_was(name: str, tmp_path: Path) -> None:
    spec, layout = fixture_results(name, tmp_path, CASES[name]())
    inputs = collected_inputs(spec, layout, read_spec_runs(spec, layout))
    for analysis in ANALYSES:
        if analysis.applies(spec):
            result = analysis.compute(inputs)
            assert same(round_trip(analysis.result_type, result), result), analysis.name


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Part(Generic[T]):
    rows: list[T]
    label: Literal["a", "b"] = "a"


@dataclass(frozen=True)
class Shapes:
    rate: float
    maybe: float | None
    by_pair: dict[tuple[str, int], float]
    by_name: dict[str, list[int]]
    counts: tuple[int, ...]
    pair: tuple[str, float]
    tags: set[str]
    where: Path
    colour: Colour
    part: Part[tuple[int, int]] | None
    parts: list[Part[str]]
    anything: Any = None
    later: int = dataclasses.field(default=0, init=False)


def test_each_shape_as_data_writes_reads_back_as_its_type() -> None:
    shapes = Shapes(
        rate=float("nan"),
        maybe=None,
        by_pair={("a", 1): 0.5, ("b", 2): float("inf")},
        by_name={"x": [1, 2]},
        counts=(1, 2, 3),
        pair=("p", 2.5),
        tags={"b", "a"},
        where=Path("results/x"),
        colour=Colour.RED,
        part=Part([(1, 2)], "b"),
        parts=[Part(["s"])],
        anything={"k": [1]},
    )
    object.__setattr__(shapes, "later", 7)
    back = round_trip(Shapes, shapes)
    assert math.isnan(back.rate) and back.maybe is None
    # An infinity is written as null: it comes back as NaN.
    assert back.by_pair[("a", 1)] == 0.5 and math.isnan(back.by_pair[("b", 2)])
    assert back.counts == (1, 2, 3) and back.pair == ("p", 2.5)
    assert back.tags == {"a", "b"} and back.where == Path("results/x")
    assert back.colour is Colour.RED and back.later == 7
    assert back.part == Part([(1, 2)], "b") and back.parts == [Part(["s"])]
    assert back.anything == {"k": [1]} and back.by_name == {"x": [1, 2]}


def test_an_int_stays_an_int_where_a_float_is_typed() -> None:
    # As the result held it: rendering it prints what it printed before.
    assert from_data(float, 3) == 3 and type(from_data(float, 3)) is int


@pytest.mark.parametrize(
    ("hint", "data", "message"),
    [
        (Shapes, {"rate": 1.0}, "result: Shapes's field maybe is missing"),
        (Part[int], {"rows": [1], "colour": 1}, "result: Part has no field colour"),
        (Part[int], {"rows": ["x"]}, "result.rows[0]: expected int, got str 'x'"),
        (Part[int], {"rows": [], "label": "c"}, "result.label: expected one of ('a', 'b')"),
        (tuple[int, int], [1], "result: 1 items where the tuple has 2"),
        (dict[int, str], [{"key": 1}], "result: expected an object, or a list of key"),
        (int | None, "x", "result: fits none of the union's types"),
    ],
)
def test_data_that_does_not_fit_its_type_says_where(hint: Any, data: Any, message: str) -> None:
    with pytest.raises(TypeError) as error:
        from_data(hint, data)
    assert message in str(error.value)
