"""Consensus parameters measured on the network they run in.

``consensus_from: {perconnbwrate: {variant: unlimited, class: bulk, times:
0.5}}`` sets a variant's parameter, seed by seed, to ``times`` x the mean
per-client bandwidth (bytes/s; each client's payload over its transfers'
time, its mean over the seed's clients of that class) that ``variant``'s
clients of ``class`` got on the same seed. A limit set this way sits where
it means the same in every sampled network (Tortoise's limits between the
web and bulk rates), which an absolute limit cannot do across networks of
different speeds. The runner runs the referenced variant's seed first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where
from runner.spec.keys import keys_of, simple_values, yaml_key


@dataclass(frozen=True, kw_only=True)
class MeasuredParam:
    variant: str = yaml_key(required=True)  # the variant measured, on the same seed
    cls: str = yaml_key(name="class", required=True)  # its clients of this class
    # The parameter is this multiple of their mean bandwidth (bytes/s).
    times: float = yaml_key(Param("float", minimum=0.001, maximum=1000.0, required=True))

    def describe(self) -> str:
        return f"{self.times:g} x {self.variant}'s {self.cls} clients' mean bandwidth"


_KEYS = keys_of(MeasuredParam)[0]  # each one required


def parse_measured(
    value: Any, where: Where, client_classes: set[str], known_param: Any
) -> dict[str, MeasuredParam]:
    """``consensus_from:`` of a variant; ``known_param(name, where)`` raises
    for a parameter tor does not read."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(
            "expected a mapping of consensus parameter to {variant, class, times}, e.g. "
            "{perconnbwrate: {variant: unlimited, class: bulk, times: 0.5}}"
        )
    result = {}
    for param, body in value.items():
        w = where.child(str(param))
        known_param(str(param), w)
        if not isinstance(body, dict) or set(body) != set(_KEYS):
            raise w.error(f"expected exactly the keys {', '.join(_KEYS[:-1])} and {_KEYS[-1]}")
        if not isinstance(body["variant"], str):
            raise w.child("variant").error("expected a variant's name")
        cls = body["class"]
        if cls not in client_classes:
            known = ", ".join(sorted(client_classes))
            raise w.child("class").error(f"expected a client class ({known}), got {cls!r}")
        times = simple_values(MeasuredParam, body, w)["times"]
        result[str(param)] = MeasuredParam(
            variant=body["variant"], cls=str(cls), times=float(times)
        )
    return result


def check_references(variants: list[Any], where: Where) -> None:
    """Each ``consensus_from`` names a variant of the spec that is measured,
    not itself measured from another, and not also set as a number."""
    by_name = {v.name: v for v in variants}
    for v in variants:
        for param, measured in v.consensus_from.items():
            w = where.child(f"{v.name}.consensus_from.{param}")
            ref = by_name.get(measured.variant)
            if ref is None:
                raise w.child("variant").error(
                    f"expected one of the variants {sorted(by_name)}, got {measured.variant!r}"
                )
            if ref.consensus_from:
                raise w.child("variant").error(
                    f"{measured.variant} sets its own parameters from another variant: "
                    "measure from a variant whose parameters are given"
                )
            if param in v.consensus:
                raise w.error(f"{param} is also given under consensus: give it once")
