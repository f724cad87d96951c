"""A spec's ``variants:``: what each changes (its tor build, torrc lines,
consensus parameters, clients, topology...), checked against the network
and the experiments' expectations."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where
from runner.spec.consensus import known_consensus_params, unknown_param_message, wrong_build
from runner.spec.expect import ExpectKey, parse_expect
from runner.spec.keys import check_name, mapping_of, simple_values
from runner.spec.matrix import FACTORS
from runner.spec.measured import parse_measured
from runner.spec.model import TOR_BUILDS, TORRC_ROLES, Topology, Variant
from runner.spec.network import parse_topology
from runner.spec.torrc_options import known_torrc_options, unknown_option
from runner.units import short

_TORRC_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\s+\S.*)?$")
_CONSENSUS_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# A consensus parameter's values: tor's 32-bit signed integers.
_CONSENSUS_VALUE = Param("int", minimum=-(2**31), maximum=2**31 - 1)


@dataclass(frozen=True)
class _Known:
    """What a variant is checked against: the network's client classes, the
    consensus parameters the spec says are new, the keys of ``expect:``, and
    the network's topology with the parameters the spec gave it."""

    client_classes: set[str]
    new_params: frozenset[str]
    expect_keys: Sequence[ExpectKey]
    topology: tuple[Topology, Any] | None

    def check_param(self, key: str, where: Where) -> None:
        """Raise unless ``key`` is a consensus parameter tor reads (or a new one)."""
        if not _CONSENSUS_PARAM.match(key):
            raise where.error("expected a consensus parameter name")
        if key not in known_consensus_params() and key not in self.new_params:
            raise where.error(unknown_param_message(key))


def parse_variants(
    value: Any,
    where: Where,
    client_classes: set[str],
    new_params: frozenset[str] = frozenset(),
    expect_keys: Sequence[ExpectKey] = (),
    topology: tuple[Topology, Any] | None = None,
) -> tuple[Variant, ...]:
    """The variants; ``topology``: the network's, with the parameters the
    spec gave it, which a variant's ``topology:`` changes."""
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of variants (at least one)")
    known = _Known(client_classes, new_params, expect_keys, topology)
    return tuple(
        _variant(name, body, where.child(str(name)), known) for name, body in value.items()
    )


def parse_new_params(value: Any, where: Where) -> frozenset[str]:
    """Consensus parameters a spec uses that tor-patches/consensus-params.txt
    does not list yet (a patch in progress): said on purpose, not by a typo."""
    if value is None:
        return frozenset()
    names = Param("list:str").convert(value, where)
    for i, name in enumerate(names):
        if not _CONSENSUS_PARAM.match(name):
            raise where.child(i).error("expected a consensus parameter name")
    return frozenset(names)


def _variant(name: Any, value: Any, where: Where, known: _Known) -> Variant:
    check_name(name, where)
    body = mapping_of(Variant, value or {}, where)
    tor = body.get("tor", "stock")
    if tor not in TOR_BUILDS:
        raise where.child("tor").error(f"expected one of {', '.join(TOR_BUILDS)}, got {tor!r}")
    torrc = _torrc(body.get("torrc"), where.child("torrc"), known.client_classes)
    consensus = _consensus(body.get("consensus"), where.child("consensus"), known)
    _check_build(tor, consensus, where.child("consensus"))
    description = body.get("description", "")
    if not isinstance(description, str):
        raise where.child("description").error("expected a string")
    classes = known.client_classes
    return Variant(
        name=str(name),
        tor=tor,
        torrc=torrc,
        consensus=consensus,
        description=description.strip(),
        expect=parse_expect(body.get("expect"), where.child("expect"), known.expect_keys),
        fractions=_shares(body.get("fractions"), where.child("fractions"), set(torrc)),
        client_relays=_shares(body.get("client_relays"), where.child("client_relays"), classes),
        **simple_values(Variant, body, where),
        clients=_client_counts(body.get("clients"), where.child("clients"), classes, 0),
        add_clients=_client_counts(body.get("add_clients"), where.child("add_clients"), classes, 1),
        cross_flows=_cross_flows(body.get("cross_flows"), where.child("cross_flows")),
        factors=_factor_levels(body.get(FACTORS), where.child(FACTORS)),
        consensus_from=parse_measured(
            body.get("consensus_from"), where.child("consensus_from"), classes, known.check_param
        ),
        topology=_variant_topology(body.get("topology"), where.child("topology"), known.topology),
    )


def _torrc(value: Any, where: Where, client_classes: set[str]) -> dict[str, tuple[str, ...]]:
    """Role (or client class) -> the torrc lines its hosts get."""
    body = value or {}
    if not isinstance(body, dict):
        raise where.error("expected a mapping of role to a list of torrc lines")
    torrc: dict[str, tuple[str, ...]] = {}
    for role, lines in body.items():
        rw = where.child(str(role))
        if role not in TORRC_ROLES and role not in client_classes:
            known = ", ".join((*TORRC_ROLES, *sorted(client_classes)))
            raise rw.error(f"unknown role (expected one of: {known})")
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise rw.error("expected a list of torrc lines such as 'NumEntryGuards 1'")
        for i, line in enumerate(lines):
            _check_torrc_line(line, rw.child(i))
        torrc[str(role)] = tuple(line.strip() for line in lines)
    return torrc


def _check_torrc_line(line: str, where: Where) -> None:
    control = next((c for c in line if _is_control(c)), None)
    if control is not None:
        raise where.error(
            f"expected one torrc line without control characters, got "
            f"{short(line)} (U+{ord(control):04X})"
        )
    if not _TORRC_LINE.match(line.strip()):
        raise where.error(f"expected one torrc line 'Option value', got {short(line)}")
    option = line.split()[0]
    if option.lower() == "consensusparams":
        raise where.error("set consensus parameters under the variant's 'consensus' key")
    unknown = unknown_option(option, known_torrc_options())
    if unknown is not None:
        raise where.error(unknown)


def _is_control(char: str) -> bool:
    """A character that has no place in a torrc line (a tab separates words)."""
    return (ord(char) < 32 and char != "\t") or ord(char) == 127


def _consensus(value: Any, where: Where, known: _Known) -> dict[str, int]:
    """Consensus parameter -> the integer the variant sets it to."""
    body = value or {}
    if not isinstance(body, dict):
        raise where.error("expected a mapping of consensus parameter to integer")
    consensus: dict[str, int] = {}
    for key, raw in body.items():
        known.check_param(str(key), where.child(str(key)))
        consensus[str(key)] = _CONSENSUS_VALUE.convert(raw, where.child(str(key)))
    return consensus


def _check_build(tor: str, consensus: dict[str, int], where: Where) -> None:
    """Refuse a consensus value the variant's tor build does not have the patch for."""
    for key, value in consensus.items():
        if (why := wrong_build(key, value, tor)) is not None:
            raise where.child(key).error(why)


def _cross_flows(value: Any, where: Where) -> int | None:
    """The variant's cross-traffic flows per relay; None keeps the network's."""
    if value is None:
        return None
    flows: int = Param("int", minimum=0, maximum=64).convert(value, where)
    return flows


def _variant_topology(
    value: Any, where: Where, network: tuple[Topology, Any] | None
) -> Topology | None:
    """A variant's ``topology:``: parameters that replace the network's
    (``packet_loss`` as a factor), validated as the network's are."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value or network is None:
        raise where.error(
            "expected a mapping of topology parameters, e.g. {packet_loss: {a-b: 0.0001}}"
        )
    topology, given = network
    merged = {**(given or {}), **value}
    return parse_topology(
        {"generator": topology.generator, "params": merged}, where, params_where=where
    )


def _factor_levels(value: Any, where: Where) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise where.error("expected a mapping of factor to level, e.g. {scenario: tree}")
    return dict(value)


def _by_name(
    value: Any, where: Where, names: Collection[str], param: Param, what: tuple[str, str]
) -> dict[str, Any]:
    """A mapping of name (one of ``names``) to a ``param`` value; ``what``
    is (the mapping, a key) as error messages name them."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"expected a mapping of {what[0]}")
    result = {}
    for key, raw in value.items():
        if str(key) not in names:
            known = ", ".join(sorted(names)) or "none"
            raise where.child(str(key)).error(f"unknown {what[1]} (expected one of: {known})")
        result[str(key)] = param.convert(raw, where.child(str(key)))
    return result


def _shares(value: Any, where: Where, names: Collection[str]) -> dict[str, float]:
    """A mapping of name (one of ``names``) to a share in [0, 1]."""
    return _by_name(
        value,
        where,
        names,
        Param("float", minimum=0.0, maximum=1.0),
        ("name to a share between 0 and 1", "name"),
    )


def _client_counts(
    value: Any, where: Where, classes: Collection[str], least: int
) -> dict[str, int]:
    """A mapping of client class to a number of clients (at least ``least``):
    those a variant adds (``add_clients``, 1) or the most it keeps
    (``clients``, 0)."""
    return _by_name(
        value,
        where,
        classes,
        Param("int", minimum=least),
        ("client class to a number of clients", "client class"),
    )
