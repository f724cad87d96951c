"""Factorial designs: a matrix of factors expands into the plain variants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.cli import main
from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from tests.conftest import CI_SMALL, ROOT


@pytest.mark.parametrize(
    ("name", "scenarios", "count"), [("congestion-small", 3, 30), ("congestion", 7, 128)]
)
def test_the_congestion_matrices_cross_scenario_mechanism_and_loss(
    name: str, scenarios: int, count: int
) -> None:
    spec = load_spec(ROOT / "configs" / f"{name}.yaml")
    # The matrix's variants; plain variants beside them carry a factor of their own.
    matrix = [v for v in spec.variants if "scheduler" not in v.factors]
    assert len(matrix) == count
    by_levels = {
        (v.factors["scenario"], v.factors["mechanism"], v.factors["loss"]): v for v in matrix
    }
    assert len({s for s, _, _ in by_levels}) == scenarios
    for (scenario, mechanism, loss), variant in by_levels.items():
        assert variant.name == f"{scenario}-{mechanism}-{loss}"
        packet_loss = variant.topology.params["packet_loss"] if variant.topology else {}
        assert packet_loss == ({frozenset({"na", "eu"}): 0.0005} if loss == "loss05" else {})
    # The design's thresholds run in the tree and the single circuit, without
    # loss; the single circuit (the starvation check) only without loss.
    design = [key for key in by_levels if key[1].endswith("design")]
    assert {s for s, _, _ in design} == {"tree", "single"}
    assert {loss for _, _, loss in design} == {"noloss"}
    assert {loss for s, _, loss in by_levels if s == "single"} == {"noloss"}
    # congestion-small's 4-hop scenario holds the paper's three, without loss.
    hop4 = {(m, loss) for s, m, loss in by_levels if s == "hop4"}
    assert hop4 in (set(), {(m, "noloss") for m in ("fixed", "backtap", "maruthop")})
    # nstor's windows run in the tree without loss only.
    nstor = [key for key in by_levels if key[1].endswith("nstor")]
    if name == "congestion-small":
        assert sorted(nstor) == [
            ("tree", "backtapnstor", "noloss"),
            ("tree", "maruthopnstor", "noloss"),
        ]
    # The authors' Marut (the staged tor): congestion-small's tree without
    # loss, where B3 is asked; the paper's scenarios without loss at full size.
    authors = {(s, loss) for s, m, loss in by_levels if m == "marutauthors"}
    assert {loss for _, loss in authors} == {"noloss"}
    assert ({s for s, _ in authors} == {"tree"}) == (name == "congestion-small")
    assert all(v.tor == "staged" for k, v in by_levels.items() if k[1] == "marutauthors")
    assert all(v.tor == "patched" for k, v in by_levels.items() if k[1] != "marutauthors")
    # Tor's thresholds and N3 on the forms that run everywhere, the design's
    # beside them; every hop window variant logs its circuits.
    hop = {"cc_alg": 0, "hop_window": 1, "hop_window_circuit_log": 10}
    assert spec.variant("tree-backtap-loss05").consensus == dict(
        hop, hop_window_alpha=8, hop_window_beta=16
    )
    assert spec.variant("tree-backtapdesign-noloss").consensus == hop

    assert spec.variant("tree-maruthopdesign-noloss").consensus == dict(hop, hop_window_marut=1)
    assert spec.variant("tree-n23-noloss").consensus == {"cc_alg": 0, "n23": 1, "n23_n3": 500}
    assert spec.variant("single-n23design-noloss").consensus == {"cc_alg": 0, "n23": 1}
    if name == "congestion-small":
        # nstor's level: its thresholds, a 2-cell start without slow start,
        # its floor of 1, the base RTT never aged, and the cap at the
        # congested middle's bandwidth-delay product (7 Mbit/s x 90 ms in
        # 514-byte cells).
        shape = dict(
            hop,
            hop_window_alpha=3,
            hop_window_beta=6,
            hop_window_cwnd_init=2,
            hop_window_cwnd_min=1,
            hop_window_cwnd_max=int(7e6 / 8 * 0.090 / 514),
            hop_window_slow_start=0,
            hop_window_base_age=0,
        )
        assert spec.variant("tree-backtapnstor-noloss").consensus == shape
        assert spec.variant("tree-maruthopnstor-noloss").consensus == dict(
            shape, hop_window_marut=1
        )
        assert ("tree-backtapnstor-noloss", "tree-backtap-noloss") in spec.comparisons
        assert ("tree-maruthopnstor-noloss", "tree-maruthop-noloss") in spec.comparisons
    # Comparisons stay within a scenario and a loss level.
    for variant, reference in spec.comparisons:
        a, b = spec.variant(variant).factors, spec.variant(reference).factors
        assert (a["scenario"], a["loss"]) == (b["scenario"], b["loss"])
    assert ("tree-backtapdesign-noloss", "tree-backtap-noloss") in spec.comparisons
    # Each scenario keeps the classes it names and leaves every other out
    # (allbulk once kept two classes of a removed scenario beside its own).
    own = {"allbulk": {"allbulk"}, "tree": {"treeweb", "treebulk"}, "single": {"solo"}}
    classes = {group.name for group in spec.network.clients}
    for (scenario, _, _), variant in by_levels.items():
        kept = {c for c in classes if variant.clients.get(c) != 0}
        if scenario in own:
            assert kept == own[scenario], variant.name


def _spec_with(matrix: dict[str, Any], **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CI_SMALL.read_text())
    data.pop("variants")
    data.pop("hypotheses")
    data.pop("claims", None)  # the claims they tested
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


def test_a_list_of_levels_excludes_each_and_grids_make_a_union() -> None:
    listed = dict(MATRIX, exclude=[{"f": ["a", "b"], "g": "y"}])
    spec = parse_spec(_spec_with(listed), "m.yaml")
    assert [v.name for v in spec.variants] == ["a-x", "b-x"]
    # a with every g, and b with x only: in the product's order.
    union = dict(MATRIX, grids=[{"g": "x"}, {"f": "a"}])
    assert [v.name for v in parse_spec(_spec_with(union), "m.yaml").variants] == [
        "a-x",
        "a-y",
        "b-x",
    ]


def test_a_twin_is_its_variant_with_one_more_change_and_level() -> None:
    twin = {
        "of": [{"f": "b"}, {"f": "a", "g": "y"}],
        "name": "{name}-log",
        "factors": {"logging": "debug"},
        "torrc": {"client": ["Log debug stdout"]},
        "descriptions": {"b-x": "b, x, with debug logs"},
    }
    spec = parse_spec(_spec_with(dict(MATRIX, twins=[twin])), "m.yaml")
    names = [v.name for v in spec.variants]
    assert names == ["a-x", "a-y", "b-x", "b-y", "b-x-log", "b-y-log", "a-y-log"]
    base, logged = spec.variant("b-x"), spec.variant("b-x-log")
    assert logged.torrc["client"] == (*base.torrc["client"], "Log debug stdout")
    assert logged.consensus == base.consensus
    assert logged.factors == {"f": "b", "g": "x", "logging": "debug"}
    assert logged.description == "b, x, with debug logs"
    assert spec.variant("b-y-log").description == spec.variant("b-y").description


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (
            {"factors": {**MATRIX["factors"], "g": {"x": {"consensus": {"cc_alg": 2}}}}},
            "matrix.factors.g.x.consensus.cc_alg",
            "also set by matrix.factors.f.b",
        ),
        ({"name": "{f}"}, "matrix.name", "one placeholder for each factor"),
        ({"exclude": [{"f": "c"}]}, "matrix.exclude[0].f", "unknown level 'c' of factor 'f'"),
        ({"exclude": [{"f": ["a", "c"]}]}, "matrix.exclude[0].f", "unknown level 'c'"),
        ({"exclude": [{"h": "a"}]}, "matrix.exclude[0].h", "unknown factor"),
        ({"exclude": [{"f": []}]}, "matrix.exclude[0].f", "a non-empty list"),
        ({"grids": [{"g": "z"}]}, "matrix.grids[0].g", "unknown level 'z' of factor 'g'"),
        (
            {"twins": [{"of": {"f": "a"}, "name": "{name}-t", "factors": {"f": "c"}}]},
            "matrix.twins[0].factors",
            "expected a mapping of new factors",
        ),
        (
            {
                "twins": [
                    {
                        "of": {"f": "b"},
                        "name": "{name}-t",
                        "factors": {"h": "on"},
                        "consensus": {"cc_alg": 2},
                    }
                ]
            },
            "matrix.twins[0].consensus.cc_alg",
            "also set by matrix.twins[0].of",
        ),
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
    # The matrix's 29 and the 6 plain round-robin variants beside them.
    assert "matrix" not in data and len(data["variants"]) == 38
    again = parse_spec(data, "expanded.yaml")
    assert again.variants == load_spec(path).variants


def test_a_round_robin_variant_is_its_matrix_twin_with_the_scheduler_switched() -> None:
    """congestion-small's ``-rr`` variants differ from the matrix's variant
    of the same levels only by tor's circuit scheduler (tor-patches 0008)."""
    spec = load_spec(ROOT / "configs" / "congestion-small.yaml")
    twins = [v for v in spec.variants if v.factors.get("scheduler")]
    assert [v.name for v in twins] == [
        "tree-fixed-noloss-rr",
        "tree-backtap-noloss-rr",
        "tree-maruthop-noloss-rr",
        "hop4-fixed-noloss-rr",
        "hop4-backtap-noloss-rr",
        "hop4-maruthop-noloss-rr",
        "tree-backtapnstor-noloss-rr",
        "tree-marutauthors-noloss-rr",
    ]
    for variant in twins:
        twin = spec.variant(variant.name.removesuffix("-rr"))
        levels = {k: v for k, v in variant.factors.items() if k != "scheduler"}
        assert levels == twin.factors
        assert variant.torrc["all"] == (*twin.torrc["all"], "TestingCircuitMuxRoundRobin 1")
        assert {r: ls for r, ls in variant.torrc.items() if r != "all"} == {
            r: ls for r, ls in twin.torrc.items() if r != "all"
        }
        same = ("tor", "consensus", "clients", "topology", "consensus_from")
        assert all(getattr(variant, f) == getattr(twin, f) for f in same)
