"""The traffic models: each turns spec parameters into a tgen action graph.

A model has ``PARAMS``, ``build(params, endpoint) -> nx.DiGraph`` and
``sessions(params, rng, begin, end)``: when a client runs the graph, as
(start, stop) pairs in seconds (stop None: until the end). Clients reach
servers through tor's SOCKS port; the server model listens.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import cache
from typing import Any

import networkx as nx

from runner.datasets import PACKET_MODEL, STREAM_MODEL, read_data
from runner.params import Param
from runner.phases import Phase
from runner.units import format_size_for_tgen, format_time_for_tgen
from workloads.markov import flow_model, paced_packet_model, to_tgen_model

# tgen's logs at "info" include the per-stream progress lines that
# tgentools' --complete mode and tornettools need.
CLIENT_LOGLEVEL = "info"
SERVER_LOGLEVEL = "message"


@dataclass(frozen=True)
class Endpoint:
    """Where a client's traffic goes: its SOCKS proxy and the server peers;
    ``seed`` seeds what tgen itself draws at random (Markov models), the
    same for a host in every variant of a seed."""

    socks_proxy: str
    peers: tuple[str, ...]
    seed: int = 1


def _start(graph: nx.DiGraph, endpoint: Endpoint, params: dict[str, Any]) -> None:
    graph.add_node(
        "start",
        socksproxy=endpoint.socks_proxy,
        peers=",".join(endpoint.peers),
        loglevel=CLIENT_LOGLEVEL,
        timeout=format_time_for_tgen(params["timeout"]),
        stallout=format_time_for_tgen(params["stallout"]),
    )


_COMMON = {
    "timeout": Param("time", default="120 s", minimum=1, help="give up on a transfer after"),
    "stallout": Param("time", default="30 s", minimum=1, help="give up when idle for"),
    "request_size": Param("size", default="1000 bytes", minimum=0),
}


Session = tuple[float, float | None]


def _always(params: dict[str, Any], rng: random.Random, begin: float, end: float) -> list[Session]:
    return [(begin, None)]


def _choose_size(graph: nx.DiGraph, source: str, sizes: tuple[int, ...], request: int) -> None:
    """Edges from ``source`` to one stream per size, equally weighted: tgen
    follows one weighted edge, chosen at random, each time."""
    for index, size in enumerate(sizes):
        stream = f"stream_{index}"
        if stream not in graph:
            graph.add_node(
                stream,
                sendsize=format_size_for_tgen(request),
                recvsize=format_size_for_tgen(size),
            )
        graph.add_edge(source, stream, weight="1.0")


def exponential_quantiles(mean: float, count: int) -> list[float]:
    """``count`` equally likely values standing for an exponential
    distribution of ``mean``: its quantiles at the middle of each of
    ``count`` equal slices, rescaled so their mean is exactly ``mean``."""
    values = [-math.log(1 - (i + 0.5) / count) for i in range(count)]
    scale = mean * count / sum(values)
    return [round(v * scale, 3) for v in values]


def uniform_quantiles(low: float, high: float, count: int) -> list[float]:
    """``count`` equally likely values standing for a uniform distribution on
    [``low``, ``high``]: its quantiles at the middle of ``count`` equal slices."""
    return [round(low + (high - low) * (i + 0.5) / count, 3) for i in range(count)]


class Perf:
    """onionperf-style measurement: each size in turn, a fixed pause after each."""

    PARAMS = {
        "sizes": Param("list:size", required=True, minimum=1),
        "pause": Param("time", default="60 s", minimum=0.001),
        **_COMMON,
    }

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        sizes: tuple[int, ...] = params["sizes"]
        previous = "start"
        for index, size in enumerate(sizes):
            stream, pause = f"stream_{index}", f"pause_{index}"
            graph.add_node(
                stream,
                sendsize=format_size_for_tgen(params["request_size"]),
                recvsize=format_size_for_tgen(size),
            )
            graph.add_node(pause, time=format_time_for_tgen(params["pause"]))
            graph.add_edge(previous, stream)
            graph.add_edge(stream, pause)
            previous = pause
        graph.add_edge(previous, "stream_0")
        return graph

    sessions = staticmethod(_always)


class Bulk:
    """A bulk user: downloads back to back, forever, each of a size chosen
    at random among ``sizes``."""

    PARAMS = {
        "sizes": Param("list:size", default=["5 MiB"], minimum=1),
        **_COMMON,
    }

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        sizes: tuple[int, ...] = params["sizes"]
        _choose_size(graph, "start", sizes, params["request_size"])
        for index in range(len(sizes)):
            _choose_size(graph, f"stream_{index}", sizes, params["request_size"])
        return graph

    sessions = staticmethod(_always)


class Web:
    """A web user: browsing sessions of fixed length separated by breaks.

    In a session, the user fetches pages of a size chosen at random among
    ``sizes``, thinking between pages for an exponentially distributed time
    of mean ``think``, or, with ``think_range: [low, high]``, a time uniform
    in that range (tgen picks among ``think_values`` equally likely
    quantiles). Each session is one tgen process, stopped when the session
    ends: a page still loading then is abandoned, as a user closing the
    browser would. ``continuous: true`` runs one session for the whole run.
    """

    PARAMS = {
        "sizes": Param("list:size", required=True, minimum=1),
        "think": Param("time", default="11 s", minimum=0.001, help="mean think time"),
        "think_range": Param(
            "list:time", minimum=0.001, help="[low, high]: uniform think time instead"
        ),
        "think_values": Param("int", default=20, minimum=1, maximum=200),
        "continuous": Param("bool", default=False, help="browse for the whole run"),
        "session": Param("time", default="15 min", minimum=1),
        "break": Param("list:time", default=["9 min", "11 min"], minimum=0),
        **_COMMON,
    }

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        sizes: tuple[int, ...] = params["sizes"]
        times = _think_times(params)
        graph.add_node("pause_think", time=",".join(format_time_for_tgen(t) for t in times))
        _choose_size(graph, "start", sizes, params["request_size"])
        _choose_size(graph, "pause_think", sizes, params["request_size"])
        for index in range(len(sizes)):
            graph.add_edge(f"stream_{index}", "pause_think")
        return graph

    @staticmethod
    def sessions(
        params: dict[str, Any], rng: random.Random, begin: float, end: float
    ) -> list[Session]:
        """Sessions from ``begin`` to ``end``, the first at a random point of
        the session-break cycle so clients are not in step."""
        if params["continuous"]:
            return [(begin, None)]
        session: float = params["session"]
        low, high = _low_high(params["break"])
        cycle = session + (low + high) / 2
        phase = rng.uniform(0, cycle)
        result: list[Session] = []
        if phase < session:
            start, stop = begin, begin + session - phase
        else:
            start = begin + cycle - phase
            stop = start + session
        while start < end:
            result.append((start, stop if stop < end else None))
            start = stop + rng.uniform(low, high)
            stop = start + session
        return result


class Rounds:
    """Rounds of parallel streams: each phase starts its streams together
    and waits for all of them (a tgen barrier), then pauses; the phases come
    in turn, forever, or for ``cycles`` turns of every phase, after which
    the client ends (a tgen end action counting its streams). A page of
    many objects, a file uploaded over several connections and several
    downloads at once are phases; a phase ``over`` a few connections runs
    each connection's streams one after another (a video's range requests).
    A download stream sends ``request_size`` and receives the phase's size;
    an upload stream sends the phase's size and receives ``request_size``."""

    PARAMS = {
        "phases": Param("list:phase", required=True),
        "pause": Param("time", default="10 s", minimum=0.001, help="after each phase"),
        "cycles": Param(
            "int",
            default=0,
            minimum=0,
            help="turns of every phase, then the client ends (0: no end)",
        ),
        # What a cycle is expected to take, which sizes a run's simulated
        # time when clients end after their cycles (cycle_seconds).
        "rate": Param("bandwidth", minimum=8000, help="a round's expected throughput at pace 1"),
        "ramp": Param("time", default="1 s", minimum=0, help="per request in turn, before speed"),
        "slack": Param("float", default=1.5, minimum=1.0, maximum=10.0, help="time over expected"),
        **_COMMON,
    }

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        phases: tuple[Phase, ...] = params["phases"]
        previous = "start"
        for index, phase in enumerate(phases):
            previous = _add_phase(graph, index, phase, previous, params)
        if params["cycles"]:
            streams = sum(p.streams for p in phases)
            graph.add_node(CYCLES_END, count=str(params["cycles"] * streams))
            graph.add_edge(previous, CYCLES_END)
            previous = CYCLES_END
        for lane in range(phases[0].lanes):
            graph.add_edge(previous, phase_vertex(0, lane))
        return graph

    @staticmethod
    def ends(params: dict[str, Any]) -> bool:
        """Whether a client ends on its own (after its cycles)."""
        return bool(params["cycles"])

    @staticmethod
    def cycle_seconds(params: dict[str, Any], pace: float) -> float:
        """A cycle's expected seconds where rounds run at ``pace`` times
        ``rate``: each phase's bytes at that rate, a ``ramp`` for each
        request a connection makes in turn, and the pause."""
        rate = params["rate"] * pace / 8  # bytes per second
        return float(
            sum(
                p.streams * p.size / rate + p.lane_requests(0) * params["ramp"] + params["pause"]
                for p in params["phases"]
            )
        )

    sessions = staticmethod(_always)


# The end action after the last phase: tgen checks it each time a cycle
# completes and ends once every stream of ``cycles`` cycles has completed.
CYCLES_END = "end_cycles"


def _add_phase(
    graph: nx.DiGraph, index: int, phase: Phase, previous: str, params: dict[str, Any]
) -> str:
    """A phase's streams after ``previous``, lane by lane (stream k runs on
    lane k mod lanes, after stream k - lanes), then its barrier and pause;
    returns the pause."""
    request = format_size_for_tgen(params["request_size"])
    size = format_size_for_tgen(phase.size)
    send, recv = (request, size) if phase.direction == "down" else (size, request)
    barrier, pause = f"pause_barrier_{index}", f"pause_{index}"
    graph.add_node(barrier)  # no time: waits for every incoming edge
    graph.add_node(pause, time=format_time_for_tgen(params["pause"]))
    for k in range(phase.streams):
        stream = phase_vertex(index, k)
        graph.add_node(stream, sendsize=send, recvsize=recv)
        graph.add_edge(
            previous if k < phase.lanes else phase_vertex(index, k - phase.lanes), stream
        )
        if k + phase.lanes >= phase.streams:  # the lane's last stream
            graph.add_edge(stream, barrier)
    graph.add_edge(barrier, pause)
    return pause


def phase_vertex(phase: int, stream: int) -> str:
    """The tgen vertex of a phase's stream; collected tables keep it."""
    return f"stream_p{phase}_{stream}"


def phase_of_vertex(vertex: str) -> int | None:
    """The phase index of a vertex that phase_vertex named, else None."""
    found = phase_stream_of_vertex(vertex)
    return None if found is None else found[0]


def phase_stream_of_vertex(vertex: str) -> tuple[int, int] | None:
    """(phase index, stream number) of a vertex that phase_vertex named, else None."""
    name = vertex.rpartition(":")[2]  # servers log "passive-stream:<vertex>"
    if not name.startswith("stream_p"):
        return None
    index, _, stream = name.removeprefix("stream_p").partition("_")
    return (int(index), int(stream)) if index.isdigit() and stream.isdigit() else None


def _think_times(params: dict[str, Any]) -> list[float]:
    """The web model's equally likely think times, in seconds."""
    think_range: tuple[float, ...] | None = params["think_range"]
    if think_range is None:
        return exponential_quantiles(params["think"], params["think_values"])
    low, high = _low_high(think_range)
    return uniform_quantiles(low, high, params["think_values"])


def _low_high(value: tuple[float, ...]) -> tuple[float, float]:
    """A [low, high] range (a break or a think time) from one or two values."""
    return (value[0], value[0]) if len(value) == 1 else (min(value), max(value))


class Markov:
    """Background traffic as tornettools' clients make it: tgen's traffic
    action runs the PrivCount stream and packet models learned on the live
    Tor network (runner.datasets; tgen draws from them itself), with
    a new flow, on a circuit of its own, after exponentially distributed
    pauses of mean ``flow_interval``. One tgen process stands for one user;
    more users are more clients."""

    PARAMS = {
        "flow_interval": Param(
            "time", default="60 s", minimum=0.001, help="mean time between flows"
        ),
        "timeout": Param("time", default="10 min", minimum=1, help="give up on a stream after"),
        "stallout": Param("time", default="5 min", minimum=1, help="give up when idle for"),
    }
    FLOW_MODEL = "tgen.flow.model.graphml"
    STREAM_MODEL = "tgen.stream.model.graphml"
    PACKET_MODEL = "tgen.packet.model.graphml"

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        graph.add_node(
            "traffic",
            flowmodelpath=Markov.FLOW_MODEL,
            streammodelpath=Markov.STREAM_MODEL,
            packetmodelpath=Markov.PACKET_MODEL,
            # Servers read the packet model from their own copy.
            packetmodelmode="path",
            markovmodelseed=str(endpoint.seed),
            socksauthseed=str(endpoint.seed),
        )
        graph.add_edge("start", "traffic")
        graph.add_edge("traffic", "traffic")
        return graph

    @staticmethod
    def files(params: dict[str, Any]) -> dict[str, str]:
        """The model files a client (and every server) needs beside its graph."""
        stream, packet = _published_models()
        return {
            Markov.FLOW_MODEL: flow_model(params["flow_interval"]),
            Markov.STREAM_MODEL: stream,
            Markov.PACKET_MODEL: packet,
        }

    sessions = staticmethod(_always)


@cache
def _published_models() -> tuple[str, str]:
    """The PrivCount stream and packet models in tgen 1.1's form, converted
    once however many hosts run them."""
    return (
        to_tgen_model(read_data(STREAM_MODEL), STREAM_MODEL.name),
        to_tgen_model(read_data(PACKET_MODEL), PACKET_MODEL.name),
    )


MODELS: dict[str, type[Perf] | type[Bulk] | type[Web] | type[Rounds] | type[Markov]] = {
    "perf": Perf,
    "bulk": Bulk,
    "web": Web,
    "rounds": Rounds,
    "markov": Markov,
}


CROSS_LOGLEVEL = "message"  # cross traffic is load, not measured


# The packet model of paced cross-traffic flows, beside the relay host's
# graph and in every server's directory (servers read it by this path).
CROSS_PACKET_MODEL = "cross.packet.model.graphml"


def cross_traffic_graph(
    flows: int, size: int, direction: str, peers: tuple[str, ...], rate: float | None = None
) -> nx.DiGraph:
    """A relay host's competing flows: ``flows`` TCP transfers of ``size``,
    each restarted as soon as it ends, straight to the servers (no SOCKS
    proxy). ``direction`` down: the servers send; up: the relay host sends;
    both: every other flow each way. With ``rate`` (bits per second, down
    only) each flow is paced to it by CROSS_PACKET_MODEL (as an iperf flow
    at a set rate) instead of taking what TCP gives it."""
    graph = nx.DiGraph()
    graph.add_node(
        "start",
        peers=",".join(peers),
        loglevel=CROSS_LOGLEVEL,
        timeout="0 seconds",
        stallout=format_time_for_tgen(60.0),
    )
    request = format_size_for_tgen(1000)
    for index in range(flows):
        down = direction == "down" or (direction == "both" and index % 2 == 0)
        stream, pause = f"stream_cross_{index}", f"pause_cross_{index}"
        send, recv = (
            (request, format_size_for_tgen(size)) if down else (format_size_for_tgen(size), request)
        )
        paced = {}
        if rate is not None:
            # The model has the server send, the client nothing.
            send = format_size_for_tgen(0)
            paced = {"packetmodelpath": CROSS_PACKET_MODEL, "packetmodelmode": "path"}
        graph.add_node(stream, sendsize=send, recvsize=recv, **paced)
        graph.add_node(pause, time=format_time_for_tgen(0.001))
        graph.add_edge("start", stream)
        graph.add_edge(stream, pause)
        graph.add_edge(pause, stream)
    return graph


def cross_traffic_files(rate: float | None) -> dict[str, str]:
    """The files paced cross traffic needs beside its graph (none when greedy)."""
    return {} if rate is None else {CROSS_PACKET_MODEL: paced_packet_model(rate)}


def server_graph(port: int) -> nx.DiGraph:
    """The tgen server: listens on ``port`` and serves whatever clients ask."""
    graph = nx.DiGraph()
    graph.add_node(
        "start",
        serverport=str(port),
        loglevel=SERVER_LOGLEVEL,
        stallout="0 seconds",
        timeout="0 seconds",
    )
    return graph
