"""The consensus parameters tor and the project's patches know.

The list lives beside the patches (tor-patches/consensus-params.txt), so a
patch that reads a new parameter adds it there; a spec may name others only
under ``new_consensus_params``, so that a typo is never silently ignored.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

KNOWN_PARAMS_FILE = Path(__file__).resolve().parents[2] / "tor-patches" / "consensus-params.txt"


@functools.cache
def known_consensus_params(path: Path = KNOWN_PARAMS_FILE) -> frozenset[str]:
    names = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return frozenset(name for name in names if name)


def unknown_param_message(name: str) -> str:
    known = known_consensus_params()
    close = difflib.get_close_matches(name, sorted(known), n=5, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return (
        f"unknown consensus parameter {name!r}: {hint}the known parameters are the "
        f"{len(known)} in tor-patches/consensus-params.txt (tor's and the patches'); "
        "a new one must also be listed under the spec's new_consensus_params"
    )
