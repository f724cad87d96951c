"""Find the external programs the runner needs and read their versions.

Each program is looked up in an environment variable first (for example
``TORNET_SHADOW=/path/to/shadow``), then, for Shadow, tgen and oniontrace,
in the cache ``make tools`` builds into (runner.tools.toolbuild), then on
PATH. When one is missing, the message names the one command that provides it.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.errors import PrerequisiteError
from runner.network.backends import BACKENDS, LOCAL, SHADOW, Backend
from runner.network.tor_builds import MAKE_OF_BUILD, TOOL_OF_BUILD
from runner.tools import torbuild, upstream
from runner.tools.toolbuild import cached_binary, tools_root

MAKE_SETUP = "run `make setup` (installs the Debian package '{package}')"


def _make_tools(name: str, label: str, how_long: str) -> str:
    build = upstream.BUILDS[name]
    rust = f"; needs Rust {'.'.join(map(str, build.min_rust))} or later" if build.min_rust else ""
    return f"run `make tools` (builds the tested {label} {build.version}, {how_long}{rust})"


@dataclass(frozen=True)
class Program:
    name: str
    env: str
    version_args: tuple[str, ...]
    version_pattern: str
    supported: str  # shown to users
    where: str
    minimum: tuple[int, ...] = ()


PROGRAMS = {
    "tor": Program(
        "tor",
        "TORNET_TOR",
        ("--version",),
        r"Tor version (\d+\.\d+\.\d+\.\d+)",
        "0.4.8 or later",
        MAKE_SETUP.format(package="tor"),
        (0, 4, 8),
    ),
    "tor-gencert": Program(
        "tor-gencert",
        "TORNET_TOR_GENCERT",
        (),
        r"",
        "any",
        MAKE_SETUP.format(package="tor"),
    ),
    "faketime": Program(
        "faketime",
        "TORNET_FAKETIME",
        ("--version",),
        r"Version (\d+\.\d+(?:\.\d+)?)",
        "any",
        MAKE_SETUP.format(package="faketime"),
    ),
    "shadow": Program(
        "shadow",
        "TORNET_SHADOW",
        ("--version",),
        r"Shadow v?(\d+\.\d+\.\d+)",
        "3.x",
        _make_tools("shadow", "Shadow", "about 15 minutes on 2 cores"),
        (3, 0, 0),
    ),
    "tgen": Program(
        "tgen",
        "TORNET_TGEN",
        (),
        r"TGen v(\d+\.\d+\.\d+)",
        "1.1.x",
        _make_tools("tgen", "tgen", "about a minute"),
        (1, 1, 0),
    ),
    "oniontrace": Program(
        "oniontrace",
        "TORNET_ONIONTRACE",
        (),
        r"OnionTrace v(\d+\.\d+\.\d+)",
        "1.0.x",
        _make_tools("oniontrace", "oniontrace", "about a minute"),
        (1, 0, 0),
    ),
}

SIMULATION_PROGRAMS = ("shadow", "tgen", "oniontrace")
GENERATION_PROGRAMS = ("tor", "tor-gencert", "faketime")


@dataclass(frozen=True)
class Found:
    name: str
    path: str | None
    version: str | None
    problem: str | None  # None when usable

    @property
    def ok(self) -> bool:
        return self.problem is None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def locate(name: str) -> tuple[str | None, str]:
    """Where ``name`` is: its environment variable when set, else the ``make tools``
    cache (Shadow, tgen, oniontrace), else PATH; and where that search looked."""
    program = PROGRAMS[name]
    override = os.environ.get(program.env)
    if override:
        return override, f"{program.env}={override}"
    build = upstream.BUILDS.get(name)
    cached = cached_binary(build) if build is not None else None
    if cached is not None:
        return str(cached), "the make tools cache"
    looked = f"in {tools_root()} or on PATH" if build is not None else "on PATH"
    return shutil.which(name), looked


def find(name: str) -> Found:
    """Locate ``name`` and read its version; never raises."""
    program = PROGRAMS[name]
    path, looked = locate(name)
    if not path or not os.access(path, os.X_OK):
        where = f"at {looked}" if looked.startswith(program.env) else looked
        return Found(name, None, None, f"not found {where}; {program.where}")
    path = os.path.abspath(path)
    if not program.version_pattern:
        return Found(name, path, None, None)
    try:
        proc = subprocess.run(
            [path, *program.version_args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Found(name, path, None, f"could not run {path}: {exc}")
    match = re.search(program.version_pattern, proc.stdout + proc.stderr)
    if not match:
        return Found(name, path, None, f"{path} did not report a version")
    version = match.group(1)
    if program.minimum and _version_tuple(version)[: len(program.minimum)] < program.minimum:
        return Found(
            name, path, version, f"version {version} is too old (need {program.supported})"
        )
    return Found(name, path, version, None)


def default_backend() -> Backend:
    """The backend a command uses unless told which (the one place that
    chooses it): Shadow when it is installed, otherwise real processes on
    this machine."""
    return SHADOW if find("shadow").ok else LOCAL


def tor_libraries(path: str) -> dict[str, str]:
    """The libraries the tor at ``path`` runs with, as ``tor --library-versions``
    reports them (its Runtime column), keyed by lower-case name: openssl,
    libevent, zlib, liblzma, libzstd, glibc. A run's random numbers and timing
    go through them, so the same run with another OpenSSL gives other results.
    Empty when that tor cannot say."""
    try:
        proc = subprocess.run(
            [path, "--library-versions"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    libraries: dict[str, str] = {}
    table = proc.stdout.split("Library versions", 1)[1:]
    for line in table[0].splitlines()[1:] if table else []:
        # name, compiled, runtime; the columns are padded with tabs and spaces
        columns = re.split(r"\t+\s*|\s{2,}", line.strip())
        if len(columns) == 3 and columns[2]:
            libraries[columns[0].lower()] = columns[2]
    return libraries


def require(names: tuple[str, ...]) -> dict[str, Found]:
    """All of ``names``, or PrerequisiteError listing every missing one."""
    found = {name: find(name) for name in names}
    missing = [f"  {f.name}: {f.problem}" for f in found.values() if not f.ok]
    if missing:
        raise PrerequisiteError("missing prerequisites:\n" + "\n".join(missing))
    return found


def find_tornettools() -> Found:
    """tornettools (optional: it reads run directories), in this interpreter's
    bin directory (the venv ``make tools`` installs it into), else on PATH."""
    beside = Path(sys.executable).parent / "tornettools"
    if beside.is_file() and os.access(beside, os.X_OK):
        try:
            version: str | None = importlib.metadata.version("tornettools")
        except importlib.metadata.PackageNotFoundError:
            version = None
        return Found("tornettools", str(beside), version, None)
    path = shutil.which("tornettools")
    if path:
        return Found("tornettools", os.path.abspath(path), None, None)
    return Found(
        "tornettools",
        None,
        None,
        f"not in {beside.parent} or on PATH; run `make tools` (installs it with tgentools "
        "and oniontracetools into the venv)",
    )


@dataclass(frozen=True)
class Report:
    """What ``runner check`` prints, and which backends can run here."""

    text: str
    backends: tuple[str, ...]  # those whose programs are all here (Backend.programs)


def _line(f: Found, optional: bool = False) -> str:
    status = (
        "ok" if f.ok else "optional" if optional else "MISSING" if f.path is None else "UNUSABLE"
    )
    detail = f"{f.path} ({f.version or 'version n/a'})" if f.ok else f.problem
    return f"{f.name:12} {status:9} {detail}"


def _remedy(missing: list[Found]) -> str:
    """The one thing to do about ``missing``: the command when all share one."""
    wheres = {PROGRAMS[f.name].where.split(" (")[0] for f in missing}
    if all(f.path is None for f in missing) and len(wheres) == 1:
        return wheres.pop()
    return f"see {', '.join(f.name for f in missing)} above"


def tor_build_lines(build: str, needed_by: Sequence[str]) -> list[str]:
    """Whether the ``build`` tor ("patched": ``make tor``; "staged": ``make
    tor-staged``; runner.tools.torbuild) is built where runs look for it,
    the command that builds it, and the configs ``needed_by`` whose variants
    run it (``tor: <build>``)."""
    name, make = TOOL_OF_BUILD[build], MAKE_OF_BUILD[build]
    configs = ", ".join(needed_by) if needed_by else "none"
    needed = f"{'':12} {'':9} needed by the configs with `tor: {build}` variants: {configs}"
    try:
        source = torbuild.load_source(staged=build == "staged")
    except PrerequisiteError as exc:  # the pinned source or a series is broken
        return [f"{name:12} {'UNUSABLE':9} {exc}", needed]
    label = f"tor {source.debian_version} + the {len(source.patches)} patches of tor-patches"
    if source.staged is not None:
        label += f" and the {len(source.staged)} of tor-patches/staged"
    try:
        tor = torbuild.patched_tor(source)
    except PrerequisiteError:
        return [
            f"{name:12} {'not built':9} not at {torbuild.build_dir(source)}; run "
            f"`{make}` (builds {label} once, into a cache; TORNET_TOR_BUILD_ROOT moves it)",
            needed,
        ]
    if not os.access(tor, os.X_OK):
        return [
            f"{name:12} {'UNUSABLE':9} the build is marked complete but {tor} is "
            f"missing; run `{make}` after removing {torbuild.build_dir(source)}",
            needed,
        ]
    return [f"{name:12} {'ok':9} {tor} ({label})", needed]


def report(needed_by: Mapping[str, Sequence[str]] | None = None) -> Report:
    """A table of every program for ``runner check``, the patched and the
    staged tor with the configs that need each (``needed_by``, by build),
    and the backends that can run."""
    found = {name: find(name) for name in (*GENERATION_PROGRAMS, *SIMULATION_PROGRAMS)}
    lines = [_line(f) for f in found.values()]
    lines.append(_line(find_tornettools(), optional=True))
    for build in TOOL_OF_BUILD:
        lines += tor_build_lines(build, (needed_by or {}).get(build, ()))
    no_local = [found[n] for n in GENERATION_PROGRAMS if not found[n].ok]
    no_shadow = [found[n] for n in SIMULATION_PROGRAMS if not found[n].ok]
    usable = tuple(b.name for b in BACKENDS.values() if all(found[n].ok for n in b.programs))
    if SHADOW.name in usable:
        backends = "shadow (the default), local"
    elif LOCAL.name in usable:
        backends = f"local (Shadow: {_remedy(no_shadow)})"
    else:
        backends = (
            f"none (local and Shadow need tor, tor-gencert and faketime: {_remedy(no_local)})"
        )
    lines += ["", f"backends: {backends}"]
    return Report("\n".join(lines), usable)
