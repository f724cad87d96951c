"""Several regions, one node each, with a latency and loss for every pair.

Spec form (one-way latencies; a pair ``a-b`` also covers ``b-a``)::

    generator: multi_region
    params:
      regions: [na, eu]
      latency: {na-na: 10 ms, eu-eu: 8 ms, na-eu: 45 ms}
      packet_loss: {na-eu: 0.001}     # pairs not named have no loss
      jitter_fraction: 0.1            # each seed scales latencies by 1 +- U(0, 0.1)
      bandwidth: 10 Gbit

Every pair of regions, and every region with itself, needs a latency, so a
missing path is a spec error and not a silent disconnection.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import networkx as nx

from runner.params import Param, Where, check_params

PARAMS = {
    "regions": Param("list:str", required=True),
    "bandwidth": Param("bandwidth", default="10 Gbit", minimum=1000),
    "jitter_fraction": Param("float", default=0.0, minimum=0.0, maximum=0.5),
}
_LATENCY = Param("time", minimum=0.000001)
_LOSS = Param("float", minimum=0.0, maximum=1.0)


def _pairs(
    value: Any, where: Where, regions: tuple[str, ...], convert: Param
) -> dict[frozenset[str], Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error("expected a mapping of region pairs such as {na-eu: 45 ms}")
    pairs: dict[frozenset[str], Any] = {}
    for key, raw in value.items():
        parts = str(key).split("-")
        if len(parts) != 2 or any(p not in regions for p in parts):
            raise where.child(str(key)).error(
                f"expected a pair 'a-b' of regions from {list(regions)}"
            )
        pair = frozenset(parts)
        if pair in pairs:
            raise where.child(str(key)).error("this pair of regions is given twice")
        pairs[pair] = convert.convert(raw, where.child(str(key)))
    return pairs


def check(given: Any, where: Where) -> dict[str, Any]:
    """Validate the params of this generator (it has nested mappings)."""
    if not isinstance(given, dict):
        raise where.error("expected a mapping of parameters for 'multi_region'")
    flat = {k: v for k, v in given.items() if k not in ("latency", "packet_loss")}
    params = check_params(flat, PARAMS, where, "multi_region")
    regions: tuple[str, ...] = params["regions"]
    if len(set(regions)) != len(regions):
        raise where.child("regions").error("region names must be distinct")
    latency = _pairs(given.get("latency"), where.child("latency"), regions, _LATENCY)
    for a, b in itertools.combinations_with_replacement(regions, 2):
        if frozenset((a, b)) not in latency:
            raise where.child("latency").error(f"missing latency for the pair '{a}-{b}'")
    params["latency"] = latency
    params["packet_loss"] = _pairs(
        given.get("packet_loss"), where.child("packet_loss"), regions, _LOSS
    )
    return params


def regions(params: dict[str, Any]) -> tuple[str, ...]:
    return tuple(params["regions"])


def build(params: dict[str, Any], rng: random.Random) -> nx.Graph:
    graph = nx.Graph()
    names: tuple[str, ...] = params["regions"]
    for node, name in enumerate(names):
        graph.add_node(
            node,
            region=name,
            host_bandwidth_up=params["bandwidth"],
            host_bandwidth_down=params["bandwidth"],
        )
    jitter = params["jitter_fraction"]
    for (i, a), (j, b) in itertools.combinations_with_replacement(enumerate(names), 2):
        pair = frozenset((a, b))
        scale = 1.0 + rng.uniform(-jitter, jitter) if jitter else 1.0
        graph.add_edge(
            i,
            j,
            latency=params["latency"][pair] * scale,
            packet_loss=params["packet_loss"].get(pair, 0.0),
        )
    return graph
