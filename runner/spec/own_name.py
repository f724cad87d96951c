"""A spec's ``name:`` is its own among the specs beside it.

The results folder comes from ``name:``, not from the file's name, so a
copy of configs/ci-small.yaml saved as configs/my.yaml that keeps
``name: ci-small`` would read (and, once run, replace) ci-small's runs.
Such a copy is refused, naming the spec that owns the name.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.errors import SpecError

# A top-level ``name:`` line; enough to tell which name a sibling spec takes
# without parsing it (a refused spec must cost little).
_NAME_LINE = re.compile(r"""^name:\s*["']?([^"'\s#]+)""", re.MULTILINE)


def declared_name(path: Path) -> str | None:
    """The top-level ``name:`` a spec file declares, or None where it has none."""
    try:
        match = _NAME_LINE.search(path.read_text(errors="replace"))
    except OSError:
        return None
    return match.group(1) if match else None


def check_own_name(path: Path, name: str) -> None:
    """SpecError (file, ``name``, the other spec) where another spec in
    ``path``'s folder declares ``name``; a spec whose file is ``<name>.yaml``
    owns its name (the copy is the one refused)."""
    if path.stem == name:
        return
    here = path.resolve()
    for other in sorted(path.parent.glob("*.y*ml")):
        if other.resolve() == here or declared_name(other) != name:
            continue
        raise SpecError(
            str(path),
            "name",
            f"expected a name of its own: {other} is the spec named {name!r}, and the results "
            f"folder comes from `name:` (results/{name}/), not from the file's name, so this "
            f"spec would read and replace {other.name}'s runs; give it another name "
            f"(e.g. name: {path.stem})",
        )
