"""No two module or package names under runner/ differ by one letter
(``experiment`` beside ``experiments``, ``run`` beside ``runs``): a name
one keystroke from another is read, imported and grepped as the other.
The same name in two places (each stage's ``runs``) is fine: it is the
same thing seen by two stages."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT


def names(root: Path) -> set[str]:
    """Every module's and package's own name under ``root``."""
    found = set()
    for path in root.rglob("*"):
        if path.is_dir() and (path / "__init__.py").is_file():
            found.add(path.name)
        elif path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            found.add(path.stem)
    return found


def one_letter_apart(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped or changed."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def close_pairs(found: set[str]) -> list[tuple[str, str]]:
    ordered = sorted(found)
    return [
        (a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if one_letter_apart(a, b)
    ]


def test_no_two_names_in_the_runner_differ_by_one_letter() -> None:
    assert close_pairs(names(ROOT / "runner")) == []


def test_the_check_finds_a_letter_added_dropped_or_changed() -> None:
    assert close_pairs({"experiment", "experiments", "cpu", "cpus", "legs", "logs", "same"}) == [
        ("cpu", "cpus"),
        ("experiment", "experiments"),
        ("legs", "logs"),
    ]
    assert not one_letter_apart("runs", "runs") and not one_letter_apart("run", "rung_s")
