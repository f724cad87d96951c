"""Log tor's control-port events as oniontrace does (for when it is absent).

    python -m runner.execute.local.eventlog --port 29051 --cookie control_auth_cookie \
        --events CIRC,CIRC_MINOR,STREAM,BW

Each asynchronous event becomes one line on stdout,
``<date> <time> <unix time> [message] [eventlog] Logger: 650 ...``, the form
the collector parses from oniontrace's logs. It authenticates with tor's
control cookie: local tors take no controller that cannot read it (oniontrace
only sends a fixed password, so it is not used on the local backend).
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import time
from pathlib import Path


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


def _cookie(path: Path, deadline: float) -> bytes:
    """tor writes its cookie as it opens the control port; wait for all 32 bytes."""
    while True:
        try:
            data = path.read_bytes()
            if len(data) == 32:
                return data
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"eventlog: no control cookie at {path}")
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.execute.local.eventlog")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cookie", type=Path, required=True, help="tor's control_auth_cookie")
    parser.add_argument("--events", default="BW")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out = sys.stdout
    deadline = time.monotonic() + 60
    sock = _connect(args.port, deadline)
    cookie = _cookie(args.cookie, deadline)
    sock.settimeout(None)
    reader = sock.makefile("r", encoding="ascii", errors="replace", newline="\r\n")
    sock.sendall(b"AUTHENTICATE " + cookie.hex().encode() + b"\r\n")
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
