"""Markdown pieces the reports share."""

from __future__ import annotations

import math


def seconds(value: float) -> str:
    """Seconds to the millisecond, or n/a."""
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table, as lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
