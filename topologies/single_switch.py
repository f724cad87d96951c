"""One switch: every host hangs off a single node, all paths share one latency.

The smallest honest network: no path diversity, so differences between
variants come from tor itself and the hosts' own bandwidth limits.
"""

from __future__ import annotations

import random
from typing import Any

import networkx as nx

from runner.params import Param

PARAMS = {
    "latency": Param("time", default="10 ms", minimum=0.000001, help="one-way latency"),
    "packet_loss": Param("float", default=0.0, minimum=0.0, maximum=1.0),
    "bandwidth": Param("bandwidth", default="1 Gbit", minimum=1000),
}

REGION = "switch"


def regions(params: dict[str, Any]) -> tuple[str, ...]:
    return (REGION,)


def build(params: dict[str, Any], rng: random.Random) -> nx.Graph:
    graph = nx.Graph()
    graph.add_node(
        0,
        region=REGION,
        host_bandwidth_up=params["bandwidth"],
        host_bandwidth_down=params["bandwidth"],
    )
    graph.add_edge(0, 0, latency=params["latency"], packet_loss=params["packet_loss"])
    return graph
