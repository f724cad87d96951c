"""bench/results.md: the machine a row was measured on, and a section's
table to append rows to."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def machine() -> str:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {memory:.0f} GiB, {platform.machine()}"


def add_section_rows(out: Path, rows: list[str], section: str, intro: str, header: str) -> None:
    """Append ``rows`` to the table of ``section`` (its heading line),
    making the section, with ``intro`` and ``header``, if needed."""
    text = out.read_text() if out.is_file() else "# Benchmarks\n"
    if section not in text:
        text = text.rstrip("\n") + f"\n\n{section}\n\n{intro}\n{header}"
    start = text.index(section)
    end = text.find("\n## ", start + len(section))
    end = len(text) if end < 0 else end + 1
    table = text[start:end].rstrip("\n") + "\n" + "".join(rows)
    out.write_text(text[:start] + table + ("\n" + text[end:] if end < len(text) else ""))


def code_commit() -> str:
    """The project's commit, marked when the working tree differs from it."""
    try:
        found = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.CalledProcessError):
        return "–"
    return found.stdout.strip()
