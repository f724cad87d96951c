"""Which backend an experiment works on, and so where its results live."""

from __future__ import annotations

from pathlib import Path

from runner.errors import SpecError
from runner.network.backends import BACKENDS

# In the order the command line and its messages list them.
BACKEND_NAMES = tuple(sorted(BACKENDS))


def backend_name(
    name: str, results: Path, asked: str | None, reading: bool, spec_path: str | Path
) -> str:
    """The backend experiment ``name`` works on: the one asked for; when
    ``reading`` runs already made, the one their manifests name (whatever
    this machine has installed); else Shadow when it is installed."""
    if asked:
        return asked
    if reading:
        from runner.manifest import backends_with_runs

        found = backends_with_runs(
            {b: results / BACKENDS[b].experiment_name(name) for b in BACKEND_NAMES}
        )
        if len(found) > 1:
            raise SpecError(
                str(spec_path),
                "(backend)",
                f"runs of this experiment exist for both backends ({', '.join(found)}): "
                "say which with --backend",
            )
        if found:
            return found[0]
    from runner.tools.prereqs import default_backend

    return default_backend().name


def experiment_dir(name: str, results: Path, backend: str) -> Path:
    """Runs of each backend land apart: results/<exp>/ and results/<exp>-local/."""
    return results / BACKENDS[backend].experiment_name(name)
