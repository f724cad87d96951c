"""A spec's YAML keys are declared on the dataclass fields they fill
(runner.spec.keys): the keys a mapping allows, in the order its errors list
them, and its simple values and their defaults come from there."""

from __future__ import annotations

import dataclasses

import pytest

from runner.errors import SpecError
from runner.params import Param, Where
from runner.spec import claims, hypotheses, keep_up, measured, model
from runner.spec.keys import keys_of, mapping_of, simple_values, yaml_key
from runner.units import parse_size

WHERE = Where("spec.yaml", "here")


def test_a_mapping_s_keys_come_from_its_fields_the_required_first() -> None:
    assert keys_of(model.Duration) == (("bootstrap", "measure"), ("local_measure",))
    assert keys_of(model.SeedRounds) == (
        ("max",),
        ("min", "step", "later", "first", "decide_from", "skew"),
    )
    # A field may be given under another name; fields of no key are left out.
    assert keys_of(model.CrossTraffic) == (("relays", "flows"), ("size", "direction"))
    assert keys_of(model.Workload) == (("model",), ("params",))
    assert keys_of(model.Spec, extra=(model.NEW_CONSENSUS_PARAMS,)) == (
        ("name", "seeds", "duration", "network", "workloads", "variants"),
        (
            "description",
            "baseline",
            "checks",
            "comparisons",
            "hypotheses",
            "claims",
            "new_consensus_params",
        ),
    )


def test_each_form_of_a_mapping_leaves_out_the_other_s_fields() -> None:
    ranged = keys_of(model.RelayGroup, leave_out=model.SAMPLED_ONLY)
    sampled = keys_of(model.RelayGroup, leave_out=model.RANGE_ONLY)
    assert ranged == (("count", "bandwidth"), ("regions", "bandwidth_of"))
    assert sampled == (("count", "sample"), ("regions", "countries", "bandwidth_scale"))
    link = keys_of(model.LinkClass, leave_out=model.MEASURED_LINK_ONLY)
    assert link == (("share", "bandwidth"), ("bandwidth_up",))
    measured_link = keys_of(model.LinkClass, leave_out=model.RANGE_LINK_ONLY)
    assert measured_link == (("share", "speeds", "countries"), ())


def test_an_unknown_key_is_named_with_the_keys_the_fields_allow() -> None:
    with pytest.raises(SpecError) as caught:
        mapping_of(model.ServerGroup, {"count": 1, "bandwidth": "1 Gbit", "colour": 3}, WHERE)
    assert caught.value.key == "here.colour"
    assert "expected one of: count, bandwidth, regions, port" in caught.value.expected
    with pytest.raises(SpecError) as caught:
        mapping_of(model.ServerGroup, {"count": 1}, WHERE)
    assert caught.value.key == "here.bandwidth"


def test_a_simple_field_s_param_checks_it_and_gives_its_default() -> None:
    body = {"relays": ["exit"], "flows": 2}
    assert simple_values(model.CrossTraffic, body, WHERE) == {"flows": 2, "size": 5 << 20}
    # The field's default is the param's, as the YAML's would be read.
    assert model.CrossTraffic(roles=("exit",), flows=1, direction="up").size == 5 << 20
    assert simple_values(
        model.Duration,
        {"bootstrap": "5 min", "measure": "10 min"},
        WHERE,
        defaults={"local_measure": "10 min"},
    ) == {
        "bootstrap": 300.0,
        "measure": 600.0,
        "local_measure": 600.0,
    }
    with pytest.raises(SpecError) as caught:
        simple_values(model.CrossTraffic, {"flows": 65}, WHERE)
    assert caught.value.key == "here.flows" and "at most 64" in caught.value.expected
    # Left out without a default: None; given as null: checked like any value.
    assert (
        simple_values(
            hypotheses.Hypothesis,
            {"name": "h", "metric": "ttlb", "expect": "increase", "smallest_change": "10%"},
            WHERE,
        )["size"]
        is None
    )
    with pytest.raises(SpecError):
        simple_values(model.Variant, {"opens_network": None}, WHERE)


def test_a_field_declares_its_key_once() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Transfer:
        size: int = yaml_key(Param("size", default="1 MiB", minimum=1))
        label: str = yaml_key(name="name", required=True)

    assert keys_of(Transfer) == (("name",), ("size",))
    assert Transfer(label="x").size == parse_size("1 MiB")


SPEC_DATACLASSES = (
    model.Topology,
    model.RelayGroup,
    model.LinkClass,
    model.ClientGroup,
    model.ServerGroup,
    model.CrossTraffic,
    model.Network,
    model.Workload,
    model.Variant,
    model.SeedRounds,
    model.Duration,
    model.Checks,
    model.Spec,
    hypotheses.Hypothesis,
    keep_up.KeepUp,
    claims.Claim,
    claims.ClaimsLedger,
    measured.MeasuredParam,
)


@pytest.mark.parametrize("cls", SPEC_DATACLASSES, ids=lambda cls: cls.__name__)
def test_the_spec_s_dataclasses_take_keywords_only(cls: type) -> None:
    assert all(f.kw_only for f in dataclasses.fields(cls))
    with pytest.raises(TypeError):
        cls("positional")
