"""The names a run's tools give the project's tor builds (Tools.paths and
Tools.versions): the patched tor, and the staged one (the patched series +
tor-patches/staged/series). Debian's tor is ``tor``."""

from __future__ import annotations

PATCHED_TOR = "tor-patched"
STAGED_TOR = "tor-staged"
# A variant's ``tor:`` (spec.model.TOR_BUILDS) -> its build's tool name; stock is "tor".
TOOL_OF_BUILD = {"patched": PATCHED_TOR, "staged": STAGED_TOR}
# The command that builds each.
MAKE_OF_BUILD = {"patched": "make tor", "staged": "make tor-staged"}


def of_build(tool: str, build: str) -> bool:
    """Whether a tool versions' entry belongs to ``build``'s tor: its own
    version, or a library it is linked with apart ("openssl (tor-staged)")."""
    name = TOOL_OF_BUILD[build]
    return tool == name or tool.endswith(f" ({name})")
