"""tornet-experiments: Tor performance experiments under Shadow.

``runner.load("results/<experiment>")`` gives an experiment's tables,
answers and checks for a notebook (runner.results)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.results import Results


def load(path: str | Path) -> Results:
    """An experiment's collected results (runner.results.load)."""
    from runner.results import load as load_results

    return load_results(path)
