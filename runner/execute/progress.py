"""A progress display for many runs at once.

On a terminal one status line is redrawn in place; elsewhere (CI, logs) a
line is printed when a run changes phase, and every ``interval`` seconds
where a Shadow percentage has changed since the last line. The last run's
end prints no status: the caller ends with one line for every run
(``outcome_line``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TextIO

# A running run: its phase, when that phase began, and Shadow's percentage.
RunningStep = tuple[str, float, int | None]
# What a status line says apart from its clocks: finished, failed, and
# each running run's phase and percentage.
State = tuple[int, int, tuple[tuple[str, str, int | None], ...]]


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def status_line(
    elapsed: float,
    done: int,
    total: int,
    failed: int,
    phases: Mapping[str, RunningStep],
    now: float,
) -> str:
    """``[1m05s] 1/4 runs finished; running: a/seed-1 simulate 45% (1m00s), ...``"""
    running = ", ".join(
        f"{run} {phase}{f' {pct}%' if pct is not None else ''} ({_clock(now - since)})"
        for run, (phase, since, pct) in sorted(phases.items())
    )
    failures = f", {failed} failed" if failed else ""
    return f"[{_clock(elapsed)}] {done}/{total} runs finished{failures}" + (
        f"; running: {running}" if running else ""
    )


def state_of(done: int, failed: int, phases: Mapping[str, RunningStep]) -> State:
    """What a status line says, without its clocks: two lines of one state
    differ only in the time."""
    return done, failed, tuple((run, p[0], p[2]) for run, p in sorted(phases.items()))


def outcome_line(statuses: Sequence[str], elapsed: float) -> str:
    """The one line that ends a run stage, from every run's status
    (complete, failed, or skipped: complete already) and the stage's time."""
    total = len(statuses)
    skipped = sum(s == "skipped" for s in statuses)
    failed = sum(s == "failed" for s in statuses)
    if total and skipped == total:
        return f"{total} of {total} runs already complete: nothing to run"
    line = f"{total - failed}/{total} runs complete"
    if failed:
        line += f", {failed} failed"
    line += f": {total - skipped} ran in {_clock(elapsed)}"
    if skipped:
        line += f", {skipped} were already complete"
    return line


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, interval: float = 30.0) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.stream = stream or sys.stderr  # looked up now: tests and callers may swap it
        self.interval = interval
        self.started = time.monotonic()
        self._phases: dict[str, RunningStep] = {}
        # Runs finished: a worker's late event must not bring one back.
        self._finished: set[str] = set()
        self._lock = threading.Lock()
        self._tty = self.stream.isatty()
        self._last_print = 0.0
        self._last_state: State | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._tty:
            # The status redrawn in place goes: the caller's last line follows.
            self.stream.write("\r\033[K")
            self.stream.flush()

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

    def _state(self) -> State:
        with self._lock:
            return state_of(self.done, self.failed, self._phases)

    def _status(self) -> str:
        with self._lock:
            now = time.monotonic()
            return status_line(
                now - self.started, self.done, self.total, self.failed, self._phases, now
            )

    def _line(self, text: str, newline: bool) -> None:
        with self._lock:
            if self._tty:
                self.stream.write("\r\033[K" + text + ("\n" if newline else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def _print(self, force: bool = False, due: bool = False) -> None:
        """The status line: redrawn in place on a terminal; elsewhere when
        ``force``d (a run's phase changed) or, at the clock's tick (``due``)
        or ``interval`` after the last, when what it says changed (a Shadow
        percentage). None once every run has finished."""
        if self.done >= self.total:
            return
        now = time.monotonic()
        state = self._state()
        due = due or now - self._last_print >= self.interval
        if self._tty or force or (due and state != self._last_state):
            self._last_print = now
            self._last_state = state
            self._line(self._status(), newline=not self._tty)

    def _tick(self) -> None:
        while not self._stop.wait(1.0 if self._tty else self.interval):
            self._print(due=True)
