"""The patched tor: pinned Debian source + ``tor-patches/series`` -> one cached build.

The build directory is keyed by the Debian version and a hash of the series
and every patch's content, so one build serves every variant of every
experiment, a changed patch makes a new build, and an unchanged series is
never built twice. A build is usable only once ``.complete`` exists in it.

    python -m runner tor build   # fetch, verify, patch, configure, make
    python -m runner tor test    # tor's unit tests in the build
    python -m runner tor path    # the patched tor binary
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from runner.console import TERMINAL
from runner.errors import PrerequisiteError
from runner.tools.buildlock import build_lock
from runner.tools.steps import logged_step

PATCH_DIR = Path(__file__).resolve().parents[2] / "tor-patches"
CONFIGURE_FLAGS = ("--disable-asciidoc", "--disable-manpage", "--disable-html-manual")


@dataclass(frozen=True)
class TorSource:
    package: str
    debian_version: str
    upstream_version: str
    orig_sha256: str
    debian_diff_sha256: str
    patches: tuple[Path, ...]

    @property
    def key(self) -> str:
        digest = hashlib.sha256(self.debian_version.encode())
        for patch in self.patches:
            digest.update(b"\0" + patch.name.encode() + b"\0" + patch.read_bytes())
        return digest.hexdigest()[:12]


def load_source(patch_dir: Path = PATCH_DIR) -> TorSource:
    env: dict[str, str] = {}
    source_env = patch_dir / "source.env"
    for number, line in enumerate(source_env.read_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise PrerequisiteError(f"{source_env}: line {number}: expected KEY=VALUE")
        env[key] = value
    patches = []
    series = patch_dir / "series"
    for number, line in enumerate(series.read_text().splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        patch = patch_dir / name
        if not patch.is_file():
            raise PrerequisiteError(f"{series}: line {number}: no patch file {name!r}")
        patches.append(patch)
    try:
        return TorSource(
            env["TOR_PACKAGE"],
            env["TOR_DEBIAN_VERSION"],
            env["TOR_UPSTREAM_VERSION"],
            env["TOR_ORIG_SHA256"],
            env["TOR_DEBIAN_DIFF_SHA256"],
            tuple(patches),
        )
    except KeyError as exc:
        raise PrerequisiteError(f"{source_env}: missing {exc.args[0]}") from None


def build_root() -> Path:
    default = Path.home() / ".cache" / "tornet-experiments" / "tor"
    return Path(os.environ.get("TORNET_TOR_BUILD_ROOT", default))


def build_dir(source: TorSource) -> Path:
    return build_root() / f"{source.upstream_version}-{source.key}"


def patched_tor(source: TorSource | None = None) -> Path:
    """The patched tor binary; PrerequisiteError if it has not been built."""
    source = source or load_source()
    where = build_dir(source)
    if not (where / ".complete").is_file():
        raise PrerequisiteError(
            f"the patched tor ({source.debian_version} + {len(source.patches)} patches) is "
            f"not built at {where}: run `make tor`"
        )
    return where / "build" / "src" / "app" / "tor"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _step(name: str, cmd: list[str], cwd: Path, log: Path, stdin: Path | None = None) -> None:
    logged_step("tor build", name, cmd, cwd, log, stdin=stdin)


def fetch_and_verify(source: TorSource, into: Path, log: Path) -> Path:
    """Download the source package, check the pinned sums, unpack; the tree."""
    _step(
        "download source package",
        ["apt-get", "source", "--download-only", f"{source.package}={source.debian_version}"],
        into,
        log,
    )
    orig = into / f"{source.package}_{source.upstream_version}.orig.tar.gz"
    diff = into / f"{source.package}_{source.debian_version}.diff.gz"
    for path, expected in ((orig, source.orig_sha256), (diff, source.debian_diff_sha256)):
        if not path.is_file():
            raise PrerequisiteError(f"tor build: {path.name} was not downloaded; see {log}")
        actual = _sha256(path)
        if actual != expected:
            raise PrerequisiteError(
                f"tor build: {path.name}: SHA-256 {actual} is not the pinned {expected}"
            )
    _step(
        "unpack",
        ["dpkg-source", "--no-check", "-x", f"{source.package}_{source.debian_version}.dsc", "src"],
        into,
        log,
    )
    return into / "src"


def build(jobs: int) -> Path:
    """The patched tor's build directory, built unless complete; while another
    process builds it, wait for that build rather than delete it."""
    source = load_source()
    where = build_dir(source)
    with build_lock("tor build", where):
        return _build(source, where, jobs)


def _build(source: TorSource, where: Path, jobs: int) -> Path:
    if (where / ".complete").is_file():
        TERMINAL.out(f"tor build: up to date at {where}")
        return where
    if where.exists():  # an interrupted build (the lock says none is running): start again
        shutil.rmtree(where)
    where.mkdir(parents=True)
    log = where / "build.log"
    TERMINAL.out(
        f"tor build: into {where}; a first build takes several minutes (the make step most "
        f"of them), each step's output goes to {log}"
    )
    started = time.monotonic()
    tree = fetch_and_verify(source, where, log)
    for patch in source.patches:
        _step(
            f"apply {patch.name}", ["patch", "-p1", "--forward", "--batch"], tree, log, stdin=patch
        )
    out = where / "build"
    out.mkdir()
    _step("configure", [str(tree / "configure"), *CONFIGURE_FLAGS], out, log)
    _step(f"make (several minutes; `tail -f {log}` to follow it)", ["make", f"-j{jobs}"], out, log)
    _step("make unit tests", ["make", f"-j{jobs}", "src/test/test", "src/test/test-slow"], out, log)
    info = {
        "debian_version": source.debian_version,
        "key": source.key,
        "patches": [p.name for p in source.patches],
        "build_s": round(time.monotonic() - started, 1),
    }
    (where / "build.json").write_text(json.dumps(info, indent=2) + "\n")
    (where / ".complete").write_text("")
    TERMINAL.out(f"tor build: done in {info['build_s']} s at {where}")
    return where


def run_tests(groups: list[str]) -> int:
    source = load_source()
    tor = patched_tor(source)
    tests = tor.parent.parent / "test"  # build/src/app/tor -> build/src/test
    code = 0
    for binary, args in ((tests / "test", groups), (tests / "test-slow", [])):
        TERMINAL.out(f"$ {binary.name} {' '.join(args)}")
        code |= subprocess.run([str(binary), *args]).returncode
    return code


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verbs (build, test, path) under ``parser``: this module's command
    line, and ``runner tor``."""
    sub = parser.add_subparsers(dest="verb", required=True)
    b = sub.add_parser("build", help="fetch, verify, patch, configure and make the patched tor")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    t = sub.add_parser("test", help="run tor's unit tests in the build")
    t.add_argument("groups", nargs="*", help="test groups, e.g. relay/.. (default: all)")
    sub.add_parser("path", help="print the patched tor binary")


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` (as add_arguments parses them) ask."""
    try:
        if args.verb == "build":
            build(args.jobs)
            return 0
        if args.verb == "test":
            return run_tests(args.groups)
        TERMINAL.out(str(patched_tor()))
        return 0
    except PrerequisiteError as exc:
        TERMINAL.err(f"error: {exc}")
        return 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="runner.tools.torbuild",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
