"""The consensus parameters tor and the project's patches know.

The list lives beside the patches (tor-patches/consensus-params.txt), so a
patch that reads a new parameter adds it there; a spec may name others only
under ``new_consensus_params``, so that a typo is never silently ignored.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
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


@dataclass(frozen=True)
class PatchValue:
    """A consensus value whose meaning only some tor builds' patches give."""

    builds: tuple[str, ...]  # the builds (model.TOR_BUILDS) that apply the patch
    patch: str
    otherwise: str  # what a build without the patch does with the value


# Values a staged patch adds to a parameter an applied patch already reads:
# a build without it reads the parameter and runs something else, silently,
# so a variant is refused at load instead. When the patch joins
# tor-patches/series, "patched" joins its builds.
PATCH_VALUES: dict[tuple[str, int], PatchValue] = {
    ("hop_window_marut", 3): PatchValue(
        builds=("staged",),
        patch="tor-patches/staged/0010-hop-window-marut-authors.patch",
        otherwise="0007 alone clamps 3 to 2 and runs the remote-only level",
    ),
}


def wrong_build(name: str, value: int, tor: str) -> str | None:
    """Why a variant of the build ``tor`` cannot set consensus ``name`` to
    ``value`` (PATCH_VALUES); None where it can."""
    needed = PATCH_VALUES.get((name, value))
    if needed is None or tor in needed.builds:
        return None
    expected = " or ".join(f"`tor: {build}`" for build in needed.builds)
    return (
        f"{name} {value} is read only by a tor with {needed.patch}: expected {expected} "
        f"(the variant has `tor: {tor}`, where {needed.otherwise})"
    )
