"""The torrc options tor knows, so that a misspelled option in a variant's
``torrc:`` is refused at validate rather than by tor when the network is
generated: the options of the tor on PATH (``tor --list-torrc-options``,
cached per tor version under ~/.cache/tornet-experiments/), and those the
project's patches add (tor-patches/*.patch, and the staged ones,
tor-patches/staged/*.patch). Without a tor on PATH there
is nothing to check against, and no option is refused."""

from __future__ import annotations

import difflib
import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

PATCHES = Path(__file__).resolve().parents[2] / "tor-patches"
# An option a patch adds to tor's option table: V(Name, ...), VAR("Name", ...),
# V_IMMUTABLE(Name, ...) and the like.
_PATCH_OPTION = re.compile(r'^\+\s*V[A-Z_]*\(\s*"?([A-Za-z_][A-Za-z0-9_]*)"?\s*,', re.M)
_VERSION = re.compile(r"Tor version ([0-9][\w.-]*[0-9A-Za-z])")


@functools.cache
def patched_options(patches: Path = PATCHES) -> frozenset[str]:
    """The options the patches add (ConfluxNumLegs, MCTorConnections...),
    the staged ones' too: a ``tor: staged`` variant may set them."""
    found: set[str] = set()
    for patch in sorted([*patches.glob("*.patch"), *patches.glob("staged/*.patch")]):
        found.update(_PATCH_OPTION.findall(patch.read_text(errors="replace")))
    return frozenset(found)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tornet-experiments"


def _run(tor: str, flag: str) -> str | None:
    try:
        done = subprocess.run([tor, flag], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def tor_options(tor: str, cache: Path) -> frozenset[str] | None:
    """The options ``tor`` lists, read from ``cache`` where this version's
    list was kept before; None where tor does not say its version or list."""
    version = _VERSION.search(_run(tor, "--version") or "")
    if version is None:
        return None
    kept = cache / f"torrc-options-{version.group(1)}.txt"
    if kept.is_file():
        text: str | None = kept.read_text()
    else:
        text = _run(tor, "--list-torrc-options")
        if not text:
            return None
        try:  # renamed into place; an unwritable cache only costs the next run 20 ms
            cache.mkdir(parents=True, exist_ok=True)
            tmp = kept.with_name(f".{kept.name}.{os.getpid()}")
            tmp.write_text(text)
            tmp.replace(kept)
        except OSError:
            pass
    assert text is not None
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


@functools.cache
def known_torrc_options() -> frozenset[str] | None:
    """Every option a variant may set: the tor on PATH's and the patches';
    None (no check) without a tor on PATH."""
    tor = shutil.which("tor")
    stock = tor_options(tor, cache_dir()) if tor else None
    return None if stock is None else stock | patched_options()


def unknown_option(name: str, known: frozenset[str] | None) -> str | None:
    """Why ``name`` is not a torrc option (tor reads them in any case), the
    closest known one suggested; None where it is one or nothing is known."""
    if known is None:
        return None
    by_lower = {option.lower(): option for option in known}
    if name.lower() in by_lower:
        return None
    close = difflib.get_close_matches(name.lower(), sorted(by_lower), n=1, cutoff=0.6)
    hint = f"did you mean {by_lower[close[0]]}? " if close else ""
    return (
        f"unknown torrc option {name!r}: {hint}expected an option of the tor on PATH "
        "(tor --list-torrc-options) or one the patches in tor-patches/ add"
    )
