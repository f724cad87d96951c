"""Markov models for tgen's traffic action, in the form tgen 1.1 reads.

The published PrivCount models (runner.datasets: the stream model of
when a Tor client opens streams, the packet model of the packets within a
stream) are graphml in tgen's older form: the vertex id is the name, and an
emission has ``exp_lambda`` (exponential) or ``lognorm_mu`` and
``lognorm_sigma`` (lognormal). tgen 1.1 wants a ``name`` on each vertex and
``distribution`` and ``param_*`` on each emission: :func:`to_tgen_model`
rewrites them as tornettools does (its generate_tgen.py), and tgen runs the
models itself. Delays are in microseconds.
"""

from __future__ import annotations

import io
import math

import networkx as nx

_NAMES = {"$": "+"}  # a stream model's "new stream" is tgen's "+"


class MarkovModelError(ValueError):
    """A model file that does not read as a PrivCount tgen model."""


def _graph_text(graph: nx.DiGraph) -> str:
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue().decode()


def to_tgen_model(text: bytes, what: str) -> str:
    """The published model ``text`` (graphml) as tgen 1.1 graphml."""
    try:
        old = nx.read_graphml(io.BytesIO(text))
    except Exception as exc:  # networkx raises several types for bad XML
        raise MarkovModelError(f"{what}: not graphml ({exc})") from None
    new = nx.DiGraph()
    ids: dict[str, str] = {}
    for index, (node, data) in enumerate(old.nodes(data=True)):
        kind = data.get("type", "state" if node == "start" else None)
        if kind not in ("state", "observation"):
            raise MarkovModelError(f"{what}: vertex {node!r} has no type state or observation")
        ids[node] = f"{kind[0]}{index}"
        new.add_node(ids[node], type=kind, name=_NAMES.get(node, node))
    if sum(1 for _, d in new.nodes(data=True) if d["name"] == "start") != 1:
        raise MarkovModelError(f"{what}: expected one state called start")
    for a, b, data in old.edges(data=True):
        kind = data.get("type")
        weight = float(data.get("weight", 0.0))
        if kind == "transition":
            new.add_edge(ids[a], ids[b], type=kind, weight=weight)
        elif kind == "emission":
            new.add_edge(ids[a], ids[b], type=kind, weight=weight, **_delay(b, data))
        else:
            raise MarkovModelError(f"{what}: edge {a}->{b} has no type transition or emission")
    return _graph_text(new)


def _delay(observation: str, data: dict[str, object]) -> dict[str, object]:
    """An emission's delay distribution in tgen 1.1's attributes."""
    if observation == "F":
        return {"distribution": "uniform", "param_low": 0.0, "param_high": 0.0}
    rate = float(str(data.get("exp_lambda", 0.0)))
    if rate > 0:
        return {"distribution": "exponential", "param_rate": rate}
    return {
        "distribution": "lognormal",
        "param_location": float(str(data.get("lognorm_mu", 0.0))),
        "param_scale": float(str(data.get("lognorm_sigma", 0.0))),
    }


def flow_model(mean_interval_s: float) -> str:
    """A flow model that starts a new flow (a new circuit: each flow has SOCKS
    credentials of its own) after exponentially distributed pauses of mean
    ``mean_interval_s``, forever; tornettools' flow model."""
    graph = nx.DiGraph()
    graph.add_node("s0", type="state", name="start")
    graph.add_node("s1", type="state", name="generate")
    graph.add_node("o1", type="observation", name="+")
    graph.add_edge("s0", "s1", type="transition", weight=1.0)
    graph.add_edge("s1", "s1", type="transition", weight=1.0)
    rate = 1.0 / (mean_interval_s * 1e6)  # per microsecond
    graph.add_edge(
        "s1", "o1", type="emission", weight=1.0, distribution="exponential", param_rate=rate
    )
    return _graph_text(graph)


# tgen's packets in a Markov model carry this many payload bytes
# (TGEN_MMODEL_PACKET_DATA_SIZE), and a sender pauses only where the delay
# since its last packet exceeds 10 ms (TGEN_MMODEL_MICROS_AT_ONCE).
PACKET_BYTES = 1434
_MICROS_AT_ONCE = 10_000


def paced_packet_model(rate_bps: float) -> str:
    """A packet model in which the server sends at ``rate_bps``: bursts of
    packets back to back, each burst's last packet followed by a delay long
    enough (20 ms or more) for tgen to pause, the bursts spaced so that the
    mean is the rate. No end: the stream's recvsize ends it."""
    burst = max(10, math.ceil(rate_bps * 2 * _MICROS_AT_ONCE / 1e6 / (PACKET_BYTES * 8)))
    gap = burst * PACKET_BYTES * 8 / rate_bps * 1e6  # microseconds per burst
    graph = nx.DiGraph()
    graph.add_node("s0", type="state", name="start")
    graph.add_node("o1", type="observation", name="-")  # to the origin: the server sends
    for i in range(1, burst + 1):
        graph.add_node(f"s{i}", type="state", name=f"s{i}")
        graph.add_edge(f"s{i - 1}", f"s{i}", type="transition", weight=1.0)
        delay = gap if i == burst else 0.0
        graph.add_edge(
            f"s{i}",
            "o1",
            type="emission",
            weight=1.0,
            distribution="uniform",
            param_low=delay,
            param_high=delay,
        )
    graph.add_edge(f"s{burst}", "s1", type="transition", weight=1.0)
    return _graph_text(graph)
