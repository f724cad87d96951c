"""Run the project's tgen models without tgen, through tor's SOCKS port.

    python -m runner.execute.local.driver CLIENT_GRAPH --name perfclient1exit
    python -m runner.execute.local.driver SERVER_GRAPH --name server1exit --bind 127.103.0.1

It walks the same graphml files tgen would (the start, stream, pause and end
actions, with the attributes this project generates) and logs each finished
transfer as a tgen ``[stream-success]``/``[stream-error]`` line with the same
fields, so the collector reads its logs unchanged. Client and server speak a
small protocol of their own (a header line with the sizes), so a driver
client needs a driver server, as a tgen client needs a tgen server.
"""

from __future__ import annotations

import argparse
import random
import signal
import socket
import socketserver
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from runner.units import parse_size, parse_time
from workloads.tgen import action_type, read_graphml

CHUNK = 64 * 1024


def _stamp(now: float) -> str:
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(now))} {now:.6f}"


def _log(level: str, text: str) -> None:
    print(f"{_stamp(time.time())} [{level}] [driver] {text}", flush=True)


class StreamError(Exception):
    def __init__(self, code: str, transport_error: str = "NONE") -> None:
        super().__init__(code)
        self.code = code
        self.transport_error = transport_error


@dataclass
class Stream:
    number: int
    vertex: str
    proxy: tuple[str, int]
    peer: tuple[str, int]
    sendsize: int
    recvsize: int
    timeout: float
    stallout: float
    created: float = field(default_factory=time.time)
    marks: dict[str, float] = field(default_factory=dict)
    received: int = 0
    sent: int = 0
    local: str = "?"

    def mark(self, key: str) -> None:
        self.marks[key] = time.time()

    def usecs(self, key: str) -> int:
        return int(round((self.marks[key] - self.created) * 1e6)) if key in self.marks else -1


def _recv_exact(sock: socket.socket, n: int, stream: Stream) -> bytes:
    data = b""
    while len(data) < n:
        chunk = _recv(sock, n - len(data), stream)
        data += chunk
    return data


def _recv(sock: socket.socket, n: int, stream: Stream) -> bytes:
    if time.time() - stream.created > stream.timeout > 0:
        raise StreamError("TIMEOUT")
    try:
        chunk = sock.recv(n)
    except TimeoutError:
        raise StreamError("STALLOUT") from None
    if not chunk:
        raise StreamError("READ", "CLOSED")
    return chunk


def run_stream(stream: Stream) -> None:
    """One transfer through a SOCKS5 proxy; raises StreamError on failure."""
    try:
        sock = socket.create_connection(stream.proxy, timeout=stream.stallout or None)
    except OSError:
        raise StreamError("PROXY", "CONNECT") from None
    with sock:
        stream.local = "{}:{}".format(*sock.getsockname()[:2])
        stream.mark("usecs-to-socket-connect")
        sock.sendall(b"\x05\x01\x00")
        if _recv_exact(sock, 2, stream) != b"\x05\x00":
            raise StreamError("PROXY", "AUTH")
        stream.mark("usecs-to-proxy-init")
        request = b"\x05\x01\x00\x01" + socket.inet_aton(stream.peer[0])
        sock.sendall(request + struct.pack(">H", stream.peer[1]))
        stream.mark("usecs-to-proxy-request")
        reply = _recv_exact(sock, 10, stream)
        if reply[1] != 0:
            raise StreamError("PROXY", f"SOCKS{reply[1]}")
        stream.mark("usecs-to-proxy-response")
        sock.sendall(f"TORNET {stream.sendsize} {stream.recvsize}\n".encode())
        stream.mark("usecs-to-command")
        payload = b"\0" * CHUNK
        while stream.sent < stream.sendsize:
            n = min(CHUNK, stream.sendsize - stream.sent)
            sock.sendall(payload[:n])
            stream.sent += n
        stream.mark("usecs-to-last-byte-send")
        while stream.received < stream.recvsize:
            chunk = _recv(sock, min(CHUNK, stream.recvsize - stream.received), stream)
            if stream.received == 0:
                stream.mark("usecs-to-response")
                stream.mark("usecs-to-first-byte-recv")
            stream.received += len(chunk)
        stream.mark("usecs-to-last-byte-recv")


def log_stream(stream: Stream, name: str, error: StreamError | None) -> None:
    now = time.time()
    state = "SUCCESS" if error is None else "ERROR"
    code = "NONE" if error is None else error.code
    terr = "NONE" if error is None else error.transport_error
    progress = 100.0 * stream.received / stream.recvsize if stream.recvsize else 100.0
    keys = [
        "usecs-to-socket-connect",
        "usecs-to-proxy-init",
        "usecs-to-proxy-request",
        "usecs-to-proxy-response",
        "usecs-to-command",
        "usecs-to-response",
        "usecs-to-first-byte-recv",
        "usecs-to-last-byte-recv",
        "usecs-to-last-byte-send",
    ]
    times = ",".join(f"{k}={stream.usecs(k)}" for k in keys)
    line = (
        f"[stream-{'success' if error is None else 'error'}] "
        f"transport [fd=0,local={stream.local},proxy={stream.proxy[0]}:{stream.proxy[1]},"
        f"remote={stream.peer[0]}:{stream.peer[1]},state={state},error={terr}] "
        f"stream [id={stream.number},vertexid={stream.vertex},name={name},"
        f"sendsize={stream.sendsize},recvsize={stream.recvsize},error={code}] "
        f"bytes [payload-bytes-recv={stream.received},payload-bytes-send={stream.sent},"
        f"payload-progress-recv={progress:.2f}%] "
        f"times [created-ts={int(stream.created * 1e6)},{times},now-ts={int(now * 1e6)}]"
    )
    print(f"{_stamp(now)} [message] [driver] {line}", flush=True)


def _peer(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def _next(graph: nx.DiGraph, node: str, rng: random.Random) -> str | None:
    successors = list(graph.successors(node))
    weighted = [s for s in successors if "weight" in graph.edges[node, s]]
    if weighted:
        weights = [float(graph.edges[node, s]["weight"]) for s in weighted]
        return str(rng.choices(weighted, weights)[0])
    if len(successors) > 1:
        raise ValueError(f"{node}: parallel branches are not supported by the built-in driver")
    return str(successors[0]) if successors else None


def run_client(graph: nx.DiGraph, name: str, rng: random.Random) -> None:
    start: dict[str, Any] = dict(graph.nodes["start"])
    began = time.time()
    if "time" in start:
        time.sleep(parse_time(start["time"]))
    count = 0
    node: str | None = "start"
    while node is not None:
        node = _next(graph, node, rng)
        if node is None:
            break
        attrs = start | dict(graph.nodes[node])
        kind = action_type(node)
        if kind == "stream":
            stream = Stream(
                number=count,
                vertex=node,
                proxy=_peer(attrs["socksproxy"]),
                peer=_peer(rng.choice(attrs["peers"].split(","))),
                sendsize=parse_size(attrs.get("sendsize", "0")),
                recvsize=parse_size(attrs.get("recvsize", "0")),
                timeout=parse_time(attrs.get("timeout", "0")),
                stallout=parse_time(attrs.get("stallout", "30")),
            )
            try:
                run_stream(stream)
                log_stream(stream, name, None)
            except StreamError as exc:
                log_stream(stream, name, exc)
            count += 1
        elif kind == "pause":
            times = [parse_time(t) for t in graph.nodes[node]["time"].split(",")]
            time.sleep(rng.choice(times))
        elif kind == "end":
            end = graph.nodes[node]
            if ("count" in end and count >= int(end["count"])) or (
                "time" in end and time.time() - began >= parse_time(end["time"])
            ):
                return


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        header = b""
        while not header.endswith(b"\n") and len(header) < 128:
            chunk = sock.recv(1)
            if not chunk:
                return
            header += chunk
        parts = header.decode(errors="replace").split()
        if len(parts) != 3 or parts[0] != "TORNET":
            return
        sendsize, recvsize = int(parts[1]), int(parts[2])
        remaining = sendsize
        while remaining > 0:
            chunk = sock.recv(min(CHUNK, remaining))
            if not chunk:
                return
            remaining -= len(chunk)
        payload = b"\1" * CHUNK
        sent = 0
        while sent < recvsize:
            n = min(CHUNK, recvsize - sent)
            sock.sendall(payload[:n])
            sent += n


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def run_server(graph: nx.DiGraph, bind: str) -> None:
    port = int(graph.nodes["start"]["serverport"])
    with _Server((bind, port), _Handler) as server:
        _log("message", f"serving on {bind}:{port}")
        server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.execute.local.driver")
    parser.add_argument("graph", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--bind", default="127.0.0.1", help="a server's listening address")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    graph = read_graphml(args.graph)
    _log("message", f"driver for {args.name} walking {args.graph}")
    if "serverport" in graph.nodes["start"]:
        run_server(graph, args.bind)
    else:
        run_client(graph, args.name, random.Random(args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
