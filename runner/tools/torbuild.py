"""The patched tor: pinned Debian source + ``tor-patches/series`` -> one cached build;
and the staged tor: the same + ``tor-patches/staged/series`` -> another.

A build directory is keyed by the Debian version and a hash of every patch
it applies, in order, name and content, so one build serves every variant of
every experiment, a changed patch makes a new build, and an unchanged series
is never built twice. The staged build applies the staged patches after the
series: a patch runs there, under a key of its own, before it joins the
series and changes the patched build's key (and so every patched run's
identity). A build is usable only once ``.complete`` exists in it.

    python -m runner tor build [--staged]   # fetch, verify, patch, configure, make
    python -m runner tor test [--staged]    # tor's unit tests in the build
    python -m runner tor path [--staged]    # the tor binary
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
from dataclasses import dataclass, replace
from pathlib import Path

from runner.console import TERMINAL
from runner.errors import PrerequisiteError
from runner.tools.buildlock import build_lock
from runner.tools.steps import logged_step

PATCH_DIR = Path(__file__).resolve().parents[2] / "tor-patches"
STAGED_DIR = "staged"  # under PATCH_DIR: the staged patches and their own series
CONFIGURE_FLAGS = ("--disable-asciidoc", "--disable-manpage", "--disable-html-manual")


@dataclass(frozen=True)
class TorSource:
    package: str
    debian_version: str
    upstream_version: str
    orig_sha256: str
    debian_diff_sha256: str
    patches: tuple[Path, ...]  # tor-patches/series
    # tor-patches/staged/series, applied after ``patches``; None: the patched build.
    staged: tuple[Path, ...] | None = None

    @property
    def applied(self) -> tuple[Path, ...]:
        """Every patch the build applies, in order."""
        return self.patches + (self.staged or ())

    @property
    def key(self) -> str:
        """The hash of the applied patches: a staged patch that joins the
        series with the same name and content leaves the staged key as it was."""
        digest = hashlib.sha256(self.debian_version.encode())
        for patch in self.applied:
            digest.update(b"\0" + patch.name.encode() + b"\0" + patch.read_bytes())
        return digest.hexdigest()[:12]

    @property
    def name(self) -> str:
        return "patched" if self.staged is None else "staged"

    @property
    def make_target(self) -> str:
        """The command that builds it."""
        return "make tor" if self.staged is None else "make tor-staged"

    def describe(self) -> str:
        """What it is, as a run's tool versions name it (the patched build's
        words unchanged: they are part of every patched run's identity)."""
        base = f"{self.debian_version} + series {replace(self, staged=None).key}"
        return base if self.staged is None else f"{base} + staged, key {self.key}"


def _read_series(series: Path) -> tuple[Path, ...]:
    """The patches ``series`` lists (relative to its folder), in order."""
    if not series.is_file():
        raise PrerequisiteError(f"{series}: missing (the list of patches to apply)")
    patches = []
    for number, line in enumerate(series.read_text().splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        patch = series.parent / name
        if not patch.is_file():
            raise PrerequisiteError(f"{series}: line {number}: no patch file {name!r}")
        patches.append(patch)
    return tuple(patches)


def _read_staged(patch_dir: Path, patches: tuple[Path, ...]) -> tuple[Path, ...]:
    """The staged series; a patch already in the series is refused (it
    joined it: its line in the staged series is to be removed)."""
    series = patch_dir / STAGED_DIR / "series"
    staged = _read_series(series)
    in_series = {p.name for p in patches}
    for patch in staged:
        if patch.name in in_series:
            raise PrerequisiteError(
                f"{series}: {patch.name} is in {patch_dir / 'series'} too: remove its line "
                "here (a patch that joined the series is no longer staged)"
            )
    return staged


def load_source(patch_dir: Path = PATCH_DIR, staged: bool = False) -> TorSource:
    """The pinned source and the series' patches; with ``staged``, the
    staged series' patches after them."""
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
    patches = _read_series(patch_dir / "series")
    try:
        return TorSource(
            env["TOR_PACKAGE"],
            env["TOR_DEBIAN_VERSION"],
            env["TOR_UPSTREAM_VERSION"],
            env["TOR_ORIG_SHA256"],
            env["TOR_DEBIAN_DIFF_SHA256"],
            patches,
            _read_staged(patch_dir, patches) if staged else None,
        )
    except KeyError as exc:
        raise PrerequisiteError(f"{source_env}: missing {exc.args[0]}") from None


def build_root() -> Path:
    default = Path.home() / ".cache" / "tornet-experiments" / "tor"
    return Path(os.environ.get("TORNET_TOR_BUILD_ROOT", default))


def build_dir(source: TorSource) -> Path:
    return build_root() / f"{source.upstream_version}-{source.key}"


def patched_tor(source: TorSource | None = None) -> Path:
    """The tor binary of ``source``'s build (the patched one by default);
    PrerequisiteError if it has not been built."""
    source = source or load_source()
    where = build_dir(source)
    if not (where / ".complete").is_file():
        raise PrerequisiteError(
            f"the {source.name} tor ({source.debian_version} + {len(source.applied)} patches) "
            f"is not built at {where}: run `{source.make_target}`"
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


def build(jobs: int, staged: bool = False) -> Path:
    """The patched (or ``staged``) tor's build directory, built unless
    complete; while another process builds it, wait for that build rather
    than delete it."""
    source = load_source(staged=staged)
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
    for patch in source.applied:
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
        **({"staged": [p.name for p in source.staged]} if source.staged is not None else {}),
        "build_s": round(time.monotonic() - started, 1),
    }
    (where / "build.json").write_text(json.dumps(info, indent=2) + "\n")
    (where / ".complete").write_text("")
    TERMINAL.out(f"tor build: done in {info['build_s']} s at {where}")
    return where


def run_tests(groups: list[str], staged: bool = False) -> int:
    tor = patched_tor(load_source(staged=staged))
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
    p = sub.add_parser("path", help="print the patched tor binary")
    for verb in (b, t, p):
        verb.add_argument(
            "--staged",
            action="store_true",
            help="the staged build: the series + tor-patches/staged/series",
        )


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` (as add_arguments parses them) ask."""
    try:
        if args.verb == "build":
            build(args.jobs, args.staged)
            return 0
        if args.verb == "test":
            return run_tests(args.groups, args.staged)
        TERMINAL.out(str(patched_tor(load_source(staged=args.staged))))
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
