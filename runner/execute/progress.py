"""A progress display for many runs at once.

On a terminal one status line is redrawn in place; elsewhere (CI, logs) a
line is printed when a run changes phase and every ``interval`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, interval: float = 30.0) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.stream = stream or sys.stderr  # looked up now: tests and callers may swap it
        self.interval = interval
        self.started = time.monotonic()
        self._phases: dict[str, tuple[str, float, int | None]] = {}
        # Runs finished: a worker's late event must not bring one back.
        self._finished: set[str] = set()
        self._lock = threading.Lock()
        self._tty = self.stream.isatty()
        self._last_print = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._tty:
            self.stream.write("\n")
        self._print(force=True)

    def phase(self, run: str, phase: str) -> None:
        with self._lock:
            if run in self._finished:
                return
            self._phases[run] = (phase, time.monotonic(), None)
        self._print(force=True)

    def percent(self, run: str, percent: int) -> None:
        with self._lock:
            if run in self._finished:
                return
            phase, since, _ = self._phases.get(run, ("simulate", time.monotonic(), None))
            self._phases[run] = (phase, since, percent)
        self._print()

    def finish(self, run: str, ok: bool, message: str = "") -> None:
        with self._lock:
            self._phases.pop(run, None)
            self._finished.add(run)
            self.done += 1
            self.failed += 0 if ok else 1
        word = "done" if ok else "FAILED"
        self._line(f"{run}: {word}{(': ' + message) if message else ''}", newline=True)
        self._print(force=True)

    def note(self, text: str) -> None:
        """A line of its own, such as a run being tried again."""
        self._line(text, newline=True)
        self._print(force=True)

    def _status(self) -> str:
        with self._lock:
            now = time.monotonic()
            running = ", ".join(
                f"{run} {phase}{f' {pct}%' if pct is not None else ''} ({_clock(now - since)})"
                for run, (phase, since, pct) in sorted(self._phases.items())
            )
            failed = f", {self.failed} failed" if self.failed else ""
            return (
                f"[{_clock(now - self.started)}] {self.done}/{self.total} runs finished{failed}"
                + (f"; running: {running}" if running else "")
            )

    def _line(self, text: str, newline: bool) -> None:
        with self._lock:
            if self._tty:
                self.stream.write("\r\033[K" + text + ("\n" if newline else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def _print(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._tty or force or now - self._last_print >= self.interval:
            self._last_print = now
            self._line(self._status(), newline=not self._tty)

    def _tick(self) -> None:
        while not self._stop.wait(1.0 if self._tty else self.interval):
            self._print(force=True)
