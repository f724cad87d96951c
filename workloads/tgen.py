"""tgen 1.1.x action graphs: the rules tgen applies, and the graphml writer.

tgen decides a vertex's action from its id by substring, in a fixed order
(start, end, pause, stream, flow, traffic), so an id such as ``stream_send``
is read as an *end* action. :func:`action_type` reproduces that order and
:func:`check_tgen_rules` refuses ids whose meaning would surprise.
"""

from __future__ import annotations

import io
from pathlib import Path

import networkx as nx

# tgen's own order of substring tests in tgen-graph.c.
_ACTION_ORDER = ("start", "end", "pause", "stream", "flow", "traffic")

_STREAM_OPTIONS = {
    "packetmodelpath",
    "packetmodelmode",
    "markovmodelseed",
    "peers",
    "socksproxy",
    "socksusername",
    "sockspassword",
    "socksauthseed",
    "sendsize",
    "recvsize",
    "timeout",
    "stallout",
}
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "start": {"serverport", "time", "heartbeat", "loglevel"} | _STREAM_OPTIONS,
    "stream": _STREAM_OPTIONS,
    "pause": {"time"},
    "end": {"time", "count", "sendsize", "recvsize"},
    # Markov traffic: flows from a flow model, streams from a stream model.
    "traffic": {"flowmodelpath", "streammodelpath"} | _STREAM_OPTIONS,
}


class TgenGraphError(ValueError):
    """An action graph tgen would reject or misread."""


def action_type(node_id: str) -> str | None:
    """The action tgen will take for a vertex called ``node_id``."""
    for action in _ACTION_ORDER:
        if action in node_id:
            return action
    return None


def check_tgen_rules(graph: nx.DiGraph) -> None:
    """Raise TgenGraphError unless tgen 1.1.x would run ``graph`` as meant."""
    if not isinstance(graph, nx.DiGraph):
        raise TgenGraphError("a tgen graph must be directed")
    starts = [n for n in graph if action_type(str(n)) == "start"]
    if len(starts) != 1:
        raise TgenGraphError(f"expected exactly one start action, found {len(starts)}")
    start = starts[0]
    for node, data in graph.nodes(data=True):
        kind = action_type(str(node))
        if kind is None:
            raise TgenGraphError(f"vertex {node!r}: tgen knows no action in this id")
        if kind not in ALLOWED_ATTRIBUTES:
            raise TgenGraphError(f"vertex {node!r}: action {kind!r} is not one this project uses")
        for key, value in data.items():
            if key not in ALLOWED_ATTRIBUTES[kind]:
                raise TgenGraphError(f"vertex {node!r}: {kind} action has no option {key!r}")
            if not isinstance(value, str):
                raise TgenGraphError(f"vertex {node!r}: option {key!r} must be a string")
        if kind == "stream":
            has_peers = "peers" in data or "peers" in graph.nodes[start]
            if not has_peers:
                raise TgenGraphError(f"vertex {node!r}: stream has no peers (here or on start)")
    is_server = "serverport" in graph.nodes[start]
    if not is_server and graph.out_degree(start) == 0:
        raise TgenGraphError("the start action leads nowhere")
    unreachable = set(graph) - nx.descendants(graph, start) - {start}
    if unreachable:
        raise TgenGraphError(f"vertices not reachable from start: {sorted(unreachable)}")
    for a, b, data in graph.edges(data=True):
        for key, value in data.items():
            if key != "weight":
                raise TgenGraphError(f"edge {a}->{b}: unknown attribute {key!r}")
            if not isinstance(value, str):
                raise TgenGraphError(f"edge {a}->{b}: weight must be a string")
            try:
                float(value)
            except ValueError:
                raise TgenGraphError(f"edge {a}->{b}: weight {value!r} is not a number") from None


def to_graphml(graph: nx.DiGraph) -> str:
    """The graphml text tgen reads; checks the rules first."""
    check_tgen_rules(graph)
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue().decode()


def write_graphml(graph: nx.DiGraph, path: Path) -> None:
    path.write_text(to_graphml(graph))


def read_graphml(path: Path) -> nx.DiGraph:
    """Read a tgen graph back (node ids and attributes as strings)."""
    graph = nx.read_graphml(path)
    if not isinstance(graph, nx.DiGraph):
        raise TgenGraphError(f"{path}: not a directed graph")
    return graph
