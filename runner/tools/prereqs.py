"""Find the external programs the runner needs and read their versions.

Each program is looked up in an environment variable first (for example
``TORNET_SHADOW=/path/to/shadow``) and then on PATH. Shadow, tgen and
oniontrace are never installed by this project: when missing, the message
says where they come from.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from runner.errors import PrerequisiteError


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
        "install the Debian package 'tor' (make setup does)",
        (0, 4, 8),
    ),
    "tor-gencert": Program(
        "tor-gencert",
        "TORNET_TOR_GENCERT",
        (),
        r"",
        "any",
        "install the Debian package 'tor' (make setup does)",
    ),
    "faketime": Program(
        "faketime",
        "TORNET_FAKETIME",
        ("--version",),
        r"Version (\d+\.\d+(?:\.\d+)?)",
        "any",
        "install the Debian package 'faketime' (make setup does)",
    ),
    "shadow": Program(
        "shadow",
        "TORNET_SHADOW",
        ("--version",),
        r"Shadow v?(\d+\.\d+\.\d+)",
        "3.x",
        "build it from https://github.com/shadow/shadow (v3.3.0 is tested) and put "
        "its bin/ on PATH",
        (3, 0, 0),
    ),
    "tgen": Program(
        "tgen",
        "TORNET_TGEN",
        (),
        r"TGen v(\d+\.\d+\.\d+)",
        "1.1.x",
        "build it from https://github.com/shadow/tgen (v1.1.2 is tested) and put it on PATH",
        (1, 1, 0),
    ),
    "oniontrace": Program(
        "oniontrace",
        "TORNET_ONIONTRACE",
        (),
        r"OnionTrace v(\d+\.\d+\.\d+)",
        "1.0.x",
        "build it from https://github.com/shadow/oniontrace (v1.0.0 is tested) and put it on PATH",
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


def find(name: str) -> Found:
    """Locate ``name`` and read its version; never raises."""
    program = PROGRAMS[name]
    override = os.environ.get(program.env)
    path = override if override else shutil.which(name)
    if not path or not os.access(path, os.X_OK):
        where = f"{program.env}={override}" if override else "PATH"
        return Found(name, None, None, f"not found on {where}; {program.where}")
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


def require(names: tuple[str, ...]) -> dict[str, Found]:
    """All of ``names``, or PrerequisiteError listing every missing one."""
    found = {name: find(name) for name in names}
    missing = [f"  {f.name}: {f.problem}" for f in found.values() if not f.ok]
    if missing:
        raise PrerequisiteError("missing prerequisites:\n" + "\n".join(missing))
    return found


def report() -> tuple[str, bool]:
    """A table of every program for ``runner check``, and whether all are usable."""
    lines = []
    all_ok = True
    for name in (*GENERATION_PROGRAMS, *SIMULATION_PROGRAMS):
        f = find(name)
        all_ok &= f.ok
        status = "ok" if f.ok else "MISSING" if f.path is None else "UNUSABLE"
        detail = f"{f.path} ({f.version or 'version n/a'})" if f.ok else f.problem
        lines.append(f"{name:12} {status:9} {detail}")
    return "\n".join(lines), all_ok
