"""Log tor's control-port events as oniontrace does (for when it is absent).

    python -m runner.local.eventlog --port 29051 --events CIRC,CIRC_MINOR,STREAM,BW

Each asynchronous event becomes one line on stdout,
``<date> <time> <unix time> [message] [eventlog] Logger: 650 ...``, the form
the collector parses from oniontrace's logs.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import time


def _stamp() -> str:
    now = time.time()
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(now))} {now:.6f}"


def _connect(port: int, deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.local.eventlog")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--events", default="BW")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out = sys.stdout
    sock = _connect(args.port, time.monotonic() + 60)
    sock.settimeout(None)
    reader = sock.makefile("r", encoding="ascii", errors="replace", newline="\r\n")
    sock.sendall(b"AUTHENTICATE\r\n")
    sock.sendall(f"SETEVENTS {args.events.replace(',', ' ')}\r\n".encode())
    print(
        f"{_stamp()} [message] [eventlog] Logging events {args.events} from port {args.port}",
        file=out,
        flush=True,
    )
    for raw in reader:
        line = raw.rstrip("\r\n")
        if line.startswith("650 "):
            print(f"{_stamp()} [message] [eventlog] Logger: {line}", file=out, flush=True)
        elif line[:1] in ("4", "5"):
            print(f"{_stamp()} [critical] [eventlog] tor refused: {line}", file=out, flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
