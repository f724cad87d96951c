"""Shadow's GML: the checks Shadow applies to a graph, and the writer."""

from __future__ import annotations

import networkx as nx

from runner.units import format_bandwidth_for_shadow, format_latency_for_shadow


class TopologyError(ValueError):
    """A graph that Shadow would reject or that would strand a host."""


def check_shadow_rules(graph: nx.Graph) -> None:
    """Raise TopologyError unless ``graph`` is one Shadow accepts and can route.

    Shadow wants integer node ids, a connected graph, exactly one self-loop
    per node (paths from a node to itself use it), latency > 0 and loss in
    [0, 1] on every edge, and string bandwidths on nodes.
    """
    if graph.number_of_nodes() == 0:
        raise TopologyError("the graph has no nodes")
    if graph.is_directed():
        raise TopologyError("the graph must be undirected")
    if not nx.is_connected(graph):
        raise TopologyError("the graph is not connected")
    for node, data in graph.nodes(data=True):
        if not isinstance(node, int) or isinstance(node, bool):
            raise TopologyError(f"node id {node!r} is not an integer")
        if not graph.has_edge(node, node):
            raise TopologyError(f"node {node} has no self-loop")
        for key in ("host_bandwidth_up", "host_bandwidth_down"):
            if int(data.get(key, 0)) <= 0:
                raise TopologyError(f"node {node} has no positive {key}")
        if not data.get("region"):
            raise TopologyError(f"node {node} has no region")
    for a, b, data in graph.edges(data=True):
        if not float(data.get("latency", 0)) > 0:
            raise TopologyError(f"edge {a}-{b} has latency <= 0")
        loss = float(data.get("packet_loss", 0.0))
        if not 0.0 <= loss <= 1.0:
            raise TopologyError(f"edge {a}-{b} has packet_loss {loss} outside [0, 1]")


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def to_shadow_gml(graph: nx.Graph) -> str:
    """The GML text Shadow reads; checks the rules first."""
    check_shadow_rules(graph)
    lines = ["graph [", "  directed 0"]
    for node, data in sorted(graph.nodes(data=True)):
        down = format_bandwidth_for_shadow(data["host_bandwidth_down"])
        up = format_bandwidth_for_shadow(data["host_bandwidth_up"])
        lines += [
            "  node [",
            f"    id {node}",
            f"    label {_quote(str(data['region']))}",
            f"    host_bandwidth_down {_quote(down)}",
            f"    host_bandwidth_up {_quote(up)}",
            "  ]",
        ]
    for a, b, data in sorted(graph.edges(data=True), key=lambda e: (min(e[:2]), max(e[:2]))):
        lines += [
            "  edge [",
            f"    source {min(a, b)}",
            f"    target {max(a, b)}",
            f"    latency {_quote(format_latency_for_shadow(float(data['latency'])))}",
            f"    packet_loss {float(data.get('packet_loss', 0.0)):.6f}",
            "  ]",
        ]
    lines.append("]")
    return "\n".join(lines) + "\n"


def nodes_in_region(graph: nx.Graph, region: str) -> list[int]:
    """The node ids of ``region``, sorted."""
    return sorted(n for n, d in graph.nodes(data=True) if d.get("region") == region)
