"""No function in runner/ is longer than 80 lines, nor in runner/spec/
longer than 60, counted as ast counts them: from its ``def`` line to its
last line (nested functions and methods count on their own too). A longer
one does several jobs: split it into functions whose names say what each
does.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

MAX_LINES = 80
# Folders held to a tighter limit: the spec's parsers are a check per key,
# each short enough to read at once.
FOLDER_LIMITS = {"runner/spec/": 60}
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


def limit(name: str) -> int:
    """The most lines the function ``path:name`` may have."""
    if name in KNOWN:
        return KNOWN[name]
    folders = [folder for folder in FOLDER_LIMITS if name.startswith(folder)]
    return FOLDER_LIMITS[max(folders, key=len)] if folders else MAX_LINES


def too_long(lengths: dict[str, int]) -> list[str]:
    """The functions over their limit (or over their known length)."""
    return [
        f"{name}: {length} lines"
        for name, length in sorted(lengths.items())
        if length > limit(name)
    ]


def test_no_function_in_the_runner_is_over_its_limit() -> None:
    assert too_long(function_lengths(ROOT / "runner")) == []


def test_the_check_holds_each_folder_to_its_limit(tmp_path: Path) -> None:
    def function(name: str, lines: int) -> str:
        return f"def {name}() -> None:\n" + "".join(f"    x = {i}\n" for i in range(lines - 1))

    spec_limit = FOLDER_LIMITS["runner/spec/"]
    for folder, most in (("runner/execute", MAX_LINES), ("runner/spec", spec_limit)):
        (tmp_path / folder).mkdir(parents=True)
        text = function("long", most + 1) + function("short", most)
        (tmp_path / folder / "run.py").write_text(text)
    lengths = function_lengths(tmp_path / "runner", tmp_path)
    assert lengths["runner/spec/run.py:long"] == spec_limit + 1
    assert too_long(lengths) == [
        f"runner/execute/run.py:long: {MAX_LINES + 1} lines",
        f"runner/spec/run.py:long: {spec_limit + 1} lines",
    ]
