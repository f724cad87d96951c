"""The tested versions of the simulation tools, each pinned by tag and commit.

Shadow, tgen and oniontrace are built from their upstream repositories into
a cache (``make tools``); tornettools, tgentools and oniontracetools are
installed into the project's venv. The URLs are the upstream ones only: a
user behind a mirror maps them with git's ``url.<base>.insteadOf``, which
Cargo follows too when ``net.git-fetch-with-cli`` is on (the build sets it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Build:
    """A program built from a git repository at a pinned commit."""

    name: str
    version: str
    url: str
    tag: str
    commit: str
    binary: str  # relative to the install prefix
    steps: tuple[tuple[str, tuple[str, ...]], ...]  # (name, argv); {prefix} {jobs} {src}
    min_rust: tuple[int, int] | None = None  # checked before cloning


@dataclass(frozen=True)
class PythonTool:
    """A Python package installed into the venv from a pinned commit."""

    name: str
    url: str
    commit: str
    subdirectory: str | None = None
    why: str = ""

    @property
    def requirement(self) -> str:
        spec = f"{self.name} @ git+{self.url}@{self.commit}"
        return spec + (f"#subdirectory={self.subdirectory}" if self.subdirectory else "")


# Shadow 3.3.0 does not build with a Rust older than 1.85.
SHADOW_MIN_RUST = (1, 85)

_CMAKE_STEPS = (
    (
        "configure",
        ("cmake", "-S", "{src}", "-B", "{src}/build", "-DCMAKE_INSTALL_PREFIX={prefix}"),
    ),
    ("make", ("cmake", "--build", "{src}/build", "-j", "{jobs}")),
    ("install", ("cmake", "--install", "{src}/build")),
)

BUILDS: dict[str, Build] = {
    "shadow": Build(
        "shadow",
        "3.3.0",
        "https://github.com/shadow/shadow",
        "v3.3.0",
        "5a05740bad995b6dbb90b8a16effecf59eceee09",
        "bin/shadow",
        (
            ("build", ("./setup", "build", "--jobs", "{jobs}", "--prefix", "{prefix}")),
            ("install", ("./setup", "install")),
        ),
        min_rust=SHADOW_MIN_RUST,
    ),
    "tgen": Build(
        "tgen",
        "1.1.2",
        "https://github.com/shadow/tgen",
        "v1.1.2",
        "816d68cd3d0ff7d0ec71e8bbbae24ecd6a636117",
        "bin/tgen",
        _CMAKE_STEPS,
    ),
    "oniontrace": Build(
        "oniontrace",
        "1.0.0",
        "https://github.com/shadow/oniontrace",
        "v1.0.0",
        "b953de8ed91df6e732e9d304d2710fce3882eacf",
        "bin/oniontrace",
        _CMAKE_STEPS,
    ),
}

PYTHON_TOOLS: tuple[PythonTool, ...] = (
    PythonTool(
        "tornettools",
        "https://github.com/shadow/tornettools",
        "18486911fac519d1cbb5a738eee113831fdbb2b1",
        why="main after 2.0.0: its plots call numpy with method=, which numpy 2 accepts",
    ),
    PythonTool(
        "tgentools",
        "https://github.com/shadow/tgen",
        "816d68cd3d0ff7d0ec71e8bbbae24ecd6a636117",
        "tools",
        why="the tgen binary's own tag",
    ),
    PythonTool(
        "oniontracetools",
        "https://github.com/shadow/oniontrace",
        "3696db43288c8a116e8a1cff42a9c698d1d4ab33",
        "tools",
        why="main (2023): v1.0.0's tools match file patterns against bare names, so "
        "`tornettools parse` finds no oniontrace files in a run directory",
    ),
)

# Named in tornettools' requirements.txt but not in its setup.py: `tornettools
# generate` and `stage` import it.
PYTHON_REQUIREMENTS: tuple[str, ...] = ("stem==1.8.2",)
