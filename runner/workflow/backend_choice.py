"""Which backend an experiment works on, and so where its results live."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.network.backends import BACKENDS

# In the order the command line and its messages list them.
BACKEND_NAMES = tuple(sorted(BACKENDS))


def backend_name(
    name: str,
    results: Path,
    asked: str | None,
    reading: bool,
    say: Callable[[str], None] | None = None,
) -> str:
    """The backend experiment ``name`` works on: the one asked for; when
    ``reading`` runs already made, the one their manifests name (whatever
    this machine has installed); else, and where runs of both exist, the
    one `make experiment` would run here: Shadow when it is installed, else
    local. ``say`` hears which was chosen where runs of both exist."""
    if asked:
        return asked
    from runner.tools.prereqs import default_backend

    if not reading:
        return default_backend().name
    from runner.manifest import backends_with_runs

    found = backends_with_runs({b: experiment_dir(name, results, b) for b in BACKEND_NAMES})
    if len(found) == 1:
        return found[0]
    chosen = default_backend().name
    if found and say is not None:
        other = next(b for b in found if b != chosen)
        say(
            f"runs of {name} exist for both backends ({', '.join(found)}): reading the "
            f"{chosen} runs in {experiment_dir(name, results, chosen)}, the backend `make "
            f"experiment` runs here (--backend {other} reads the others)"
        )
    return chosen


def experiment_dir(name: str, results: Path, backend: str) -> Path:
    """Runs of each backend land apart: results/<exp>/ and results/<exp>-local/."""
    return results / BACKENDS[backend].experiment_name(name)
