"""No function in runner/ is longer than 80 lines, counted as ast counts
them: from its ``def`` line to its last line (nested functions and methods
count on their own too). A longer one does several jobs: split it into
functions whose names say what each does.

runner/spec/ is left out: it is left to the spec split, which splits its
long functions (``parse_spec``, ``_variants``, ``_network``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

MAX_LINES = 80
LEFT_TO_THE_SPEC_SPLIT = "runner/spec/"
# Functions over the limit in folders another change is editing, with the
# length they may not grow past; each is removed from here once split.
KNOWN: dict[str, int] = {}


def function_lengths(folder: Path, base: Path = ROOT) -> dict[str, int]:
    """Every function under ``folder`` as ``path:name`` (the path from
    ``base``), with its length in lines (the longest of a name's)."""
    found: dict[str, int] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                name = f"{path.relative_to(base).as_posix()}:{node.name}"
                length = node.end_lineno - node.lineno + 1
                found[name] = max(length, found.get(name, 0))
    return found


def too_long(lengths: dict[str, int]) -> list[str]:
    """The functions over the limit (or over their known length), outside runner/spec/."""
    return [
        f"{name}: {length} lines"
        for name, length in sorted(lengths.items())
        if not name.startswith(LEFT_TO_THE_SPEC_SPLIT) and length > KNOWN.get(name, MAX_LINES)
    ]


def test_no_function_in_the_runner_is_over_80_lines() -> None:
    assert too_long(function_lengths(ROOT / "runner")) == []


def test_the_check_finds_a_long_function_but_none_in_the_spec(tmp_path: Path) -> None:
    def function(name: str, lines: int) -> str:
        return f"def {name}() -> None:\n" + "".join(f"    x = {i}\n" for i in range(lines - 1))

    for folder in ("runner/execute", "runner/spec"):
        (tmp_path / folder).mkdir(parents=True)
        text = function("long", MAX_LINES + 1) + function("short", MAX_LINES)
        (tmp_path / folder / "run.py").write_text(text)
    lengths = function_lengths(tmp_path / "runner", tmp_path)
    assert lengths["runner/spec/run.py:long"] == MAX_LINES + 1
    assert too_long(lengths) == [f"runner/execute/run.py:long: {MAX_LINES + 1} lines"]
