"""Damaged log lines: skipped, counted and reported, never fatal.

A process killed mid-write, a full disk or an interrupted copy leave lines
cut short or bytes that are not text. ``clean_lines`` hands a parser only
intact lines (a damaged one becomes an empty line, so line numbers stay
true) and records what it held back; ``parsed`` skips and records the lines
a parser cannot read. A log that is missing or empty is recorded too.

Damage *matters* when it may have changed the tables: a skipped line that
carried a record (a transfer's result, a circuit event), or a log that is
missing or empty. Junk elsewhere is only counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

EXAMPLES_PER_LOG = 3  # damaged lines quoted per log; the rest are counted
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # none of these in a text log


@dataclass
class LogDamage:
    """What was wrong with one log (``log`` is relative to the run directory)."""

    log: str
    markers: tuple[str, ...] = ()  # a line holding one of these carried a record
    skipped: int = 0
    lost: int = 0  # skipped lines that carried a record
    missing: bool = False
    empty: bool = False
    examples: list[str] = field(default_factory=list)

    def skip(self, number: int, line: str, why: str) -> None:
        self.skipped += 1
        if any(marker in line for marker in self.markers):
            self.lost += 1
        if len(self.examples) < EXAMPLES_PER_LOG:
            self.examples.append(f"line {number}: {why}: {line.strip()[:80]!r}")

    @property
    def damaged(self) -> bool:
        return bool(self.skipped or self.missing or self.empty)

    @property
    def matters(self) -> bool:
        return bool(self.lost or self.missing or self.empty)

    def summary(self) -> str:
        if self.missing:
            return f"{self.log}: missing"
        if self.empty:
            return f"{self.log}: empty"
        lost = f", {self.lost} of them records" if self.lost else ""
        lines = "line" if self.skipped == 1 else "lines"
        return f"{self.log}: {self.skipped} damaged {lines} skipped{lost}"


def clean_lines(path: Path, damage: LogDamage) -> Iterator[str]:
    """The lines of ``path`` as text; each damaged one is recorded and given
    as "" (a last line without its newline was cut short)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        damage.missing = True
        return
    with handle:
        number = 0
        for raw in handle:
            number += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                damage.skip(number, body.decode("utf-8", "replace"), "bytes that are not text")
                yield ""
                continue
            if _CONTROL.search(body):
                damage.skip(number, text, "control bytes")
                yield ""
            elif not raw.endswith(b"\n"):
                damage.skip(number, text, "cut short")
                yield ""
            else:
                yield text + "\n"
        if number == 0:
            damage.empty = True


def parsed(
    lines: Iterable[str],
    parse_line: Callable[[str], T | None],
    on_error: Callable[[int, str, str], None] | None = None,
) -> Iterator[T]:
    """Each record ``parse_line`` finds. A line it cannot read goes to
    ``on_error(number, line, why)``; without one it stops with an error
    naming the line."""
    for number, line in enumerate(lines, start=1):
        try:
            record = parse_line(line)
        except (ValueError, IndexError) as exc:
            if on_error is None:
                raise ValueError(f"line {number}: {exc}") from None
            on_error(number, line, str(exc))
            continue
        if record is not None:
            yield record
