"""Build the pinned Shadow, tgen and oniontrace into a cache; install the Python tools.

Each program lands in ``<root>/<name>-<version>/`` (root: ``TORNET_TOOLS_ROOT``
or ``~/.cache/tornet-experiments/tools``), with ``src/`` (the checkout),
``install/`` (the prefix), ``build.log`` and ``.complete`` (the commit built).
A program whose ``.complete`` names its pinned commit is not built again; an
interrupted build starts again from nothing. The checkout's tag must resolve
to the pinned commit: a moved tag is refused.

    python -m runner tools build [NAME ...]   # default: all
    python -m runner tools python             # the Python tools, into this venv
    python -m runner tools path NAME          # the cached binary
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from runner.console import TERMINAL
from runner.errors import PrerequisiteError
from runner.tools.buildlock import build_lock
from runner.tools.steps import logged_step
from runner.tools.upstream import BUILDS, PYTHON_REQUIREMENTS, PYTHON_TOOLS, Build, PythonTool

COMPLETE = ".complete"
MIRROR_HINT = (
    "Where GitHub is out of reach, point git at a mirror: "
    "git config --global url.<mirror>.insteadOf https://github.com/"
)


def tools_root() -> Path:
    default = Path.home() / ".cache" / "tornet-experiments" / "tools"
    return Path(os.environ.get("TORNET_TOOLS_ROOT") or default)


def tool_dir(build: Build, root: Path | None = None) -> Path:
    return (root or tools_root()) / f"{build.name}-{build.version}"


def cached_binary(build: Build, root: Path | None = None) -> Path | None:
    """The built binary, or None unless a complete build of the pinned commit exists."""
    where = tool_dir(build, root)
    marker = where / COMPLETE
    if not marker.is_file() or marker.read_text().strip() != build.commit:
        return None
    binary = where / "install" / build.binary
    return binary if binary.is_file() else None


def _build_env() -> dict[str, str]:
    env = dict(os.environ)
    # Cargo fetches Shadow's git dependencies with git itself, so a user's
    # url.<base>.insteadOf applies to them as to the clone.
    env["CARGO_NET_GIT_FETCH_WITH_CLI"] = "true"
    cargo_bin = Path.home() / ".cargo" / "bin"  # where rustup puts its toolchain
    if cargo_bin.is_dir():
        env["PATH"] = f"{env.get('PATH', '')}:{cargo_bin}"
    return env


def _git_output(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, env=env)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def rust_version(env: dict[str, str]) -> tuple[int, int] | None:
    try:
        proc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, env=env)
    except OSError:
        return None
    match = re.search(r"rustc (\d+)\.(\d+)", proc.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else None


def check_rust(name: str, minimum: tuple[int, int], env: dict[str, str]) -> None:
    """PrerequisiteError, saying how to get a current Rust, unless rustc is ``minimum`` or later."""
    found = rust_version(env)
    need = ".".join(map(str, minimum))
    how = (
        "install a current toolchain with rustup (https://rustup.rs, then `rustup toolchain "
        "install stable`), which puts it in ~/.cargo/bin, then run `make tools` again"
    )
    if found is None:
        raise PrerequisiteError(f"{name}: needs Rust {need} or later and finds no rustc; {how}")
    if found < minimum:
        have = ".".join(map(str, found))
        raise PrerequisiteError(
            f"{name}: needs Rust {need} or later, and rustc is {have} (Debian 12's is too old); "
            f"{how}"
        )


def checkout(build: Build, where: Path, log: Path, env: dict[str, str]) -> Path:
    """Clone the upstream URL, check that the tag is the pinned commit, check it out."""
    src = where / "src"
    logged_step(
        build.name,
        f"clone {build.url}",
        ["git", "clone", "-q", build.url, str(src)],
        where,
        log,
        env=env,
        hint=MIRROR_HINT,
    )
    tagged = _git_output(["rev-parse", "--verify", "-q", f"{build.tag}^{{commit}}"], src, env)
    if tagged != build.commit:
        found = f"is {tagged}" if tagged else "does not exist"
        raise PrerequisiteError(
            f"{build.name}: tag {build.tag} at {build.url} {found}, not the pinned "
            f"{build.commit}; refusing to build a moved tag"
        )
    logged_step(
        build.name,
        f"check out {build.tag}",
        ["git", "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", build.commit],
        src,
        log,
        env=env,
    )
    return src


def build_one(build: Build, jobs: int, root: Path | None = None) -> Path:
    """Build ``build`` unless cached; its binary."""
    with build_lock(build.name, tool_dir(build, root)):
        return _build_one(build, jobs, root)


def _build_one(build: Build, jobs: int, root: Path | None) -> Path:
    binary = cached_binary(build, root)
    if binary is not None:
        TERMINAL.out(f"{build.name} {build.version}: up to date at {binary}")
        return binary
    where = tool_dir(build, root)
    if where.exists():  # an interrupted or older build: start again
        shutil.rmtree(where)
    where.mkdir(parents=True)
    log = where / "build.log"
    env = _build_env()
    if build.min_rust is not None:
        check_rust(build.name, build.min_rust, env)
    started = time.monotonic()
    src = checkout(build, where, log, env)
    prefix = where / "install"
    values = {"prefix": str(prefix), "jobs": str(jobs), "src": str(src)}
    for step, argv in build.steps:
        logged_step(build.name, step, [arg.format(**values) for arg in argv], src, log, env=env)
    binary = prefix / build.binary
    if not binary.is_file():
        raise PrerequisiteError(f"{build.name}: the build made no {build.binary}; see {log}")
    (where / COMPLETE).write_text(build.commit + "\n")
    TERMINAL.out(
        f"{build.name} {build.version}: built in {time.monotonic() - started:.0f} s at {binary}"
    )
    return binary


def installed_commit(name: str) -> str | None:
    """The commit pip recorded when it installed distribution ``name`` from git, if it did."""
    try:
        text = importlib.metadata.distribution(name).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except (ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) else None


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _pip_install(what: str, requirements: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", *requirements],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise PrerequisiteError(f"{what}: pip install {' '.join(requirements)} failed:\n{tail}")


def install_python_tools(
    tools: tuple[PythonTool, ...] = PYTHON_TOOLS,
    requirements: tuple[str, ...] = PYTHON_REQUIREMENTS,
) -> None:
    """pip-install the pinned Python tools into the running interpreter's environment,
    skipping those already installed from their pinned commit."""
    env = _build_env()
    for tool in tools:
        if installed_commit(tool.name) == tool.commit:
            TERMINAL.out(f"{tool.name}: up to date ({tool.commit[:12]})")
            continue
        TERMINAL.out(f"{tool.name}: install {tool.commit[:12]} ({tool.why})")
        _pip_install(tool.name, [tool.requirement], env)
    missing = [r for r in requirements if _installed_version(r.split("==")[0]) != r.split("==")[1]]
    if missing:
        TERMINAL.out(f"install {', '.join(missing)}")
        _pip_install("requirements", missing, env)
    where = Path(sys.executable).parent
    TERMINAL.out(
        f"{', '.join(t.name for t in tools)}: in {where} (`tornettools parse` runs the other "
        f"two from PATH: `. {where}/activate` first)"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verbs (build, python, path) under ``parser``: this module's
    command line, and ``runner tools``."""
    sub = parser.add_subparsers(dest="verb", required=True)
    b = sub.add_parser("build", help="build Shadow, tgen and oniontrace into the cache")
    b.add_argument("names", nargs="*", help=f"of {', '.join(BUILDS)} (default: all)")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    # An unknown name is a usage error, told as argparse tells one.
    b.set_defaults(usage_error=b.error)
    sub.add_parser("python", help="install tornettools, tgentools and oniontracetools here")
    p = sub.add_parser("path", help="print the cached binary of one")
    p.add_argument("name", choices=list(BUILDS))


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` (as add_arguments parses them) ask."""
    try:
        if args.verb == "build":
            unknown = sorted(set(args.names) - set(BUILDS))
            if unknown:
                args.usage_error(f"unknown tool {', '.join(unknown)}; known: {', '.join(BUILDS)}")
            for name in args.names or list(BUILDS):
                build_one(BUILDS[name], args.jobs)
            return 0
        if args.verb == "python":
            install_python_tools()
            return 0
        binary = cached_binary(BUILDS[args.name])
        if binary is None:
            raise PrerequisiteError(f"{args.name} is not built under {tools_root()}: make tools")
        TERMINAL.out(str(binary))
        return 0
    except PrerequisiteError as exc:
        TERMINAL.err(f"error: {exc}")
        return 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="runner.tools.toolbuild",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
