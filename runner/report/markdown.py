"""Markdown pieces the reports share."""

from __future__ import annotations


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table, as lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
