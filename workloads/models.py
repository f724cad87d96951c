"""The traffic models: each turns spec parameters into a tgen action graph.

A model module has ``PARAMS`` and ``build(params, endpoint) -> nx.DiGraph``.
Clients reach servers through tor's SOCKS port; the server model listens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from runner.params import Param
from runner.units import format_size_for_tgen, format_time_for_tgen

# tgen's logs at "info" include the per-stream progress lines that
# tgentools' --complete mode and tornettools need.
CLIENT_LOGLEVEL = "info"
SERVER_LOGLEVEL = "message"


@dataclass(frozen=True)
class Endpoint:
    """Where a client's traffic goes: its SOCKS proxy and the server peers."""

    socks_proxy: str
    peers: tuple[str, ...]


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


class Bulk:
    """A bulk user: one size downloaded back to back, forever."""

    PARAMS = {
        "size": Param("size", default="5 MiB", minimum=1),
        **_COMMON,
    }

    @staticmethod
    def build(params: dict[str, Any], endpoint: Endpoint) -> nx.DiGraph:
        graph = nx.DiGraph()
        _start(graph, endpoint, params)
        graph.add_node(
            "stream_bulk",
            sendsize=format_size_for_tgen(params["request_size"]),
            recvsize=format_size_for_tgen(params["size"]),
        )
        graph.add_edge("start", "stream_bulk")
        graph.add_edge("stream_bulk", "stream_bulk")
        return graph


MODELS: dict[str, type[Perf] | type[Bulk]] = {"perf": Perf, "bulk": Bulk}


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
