"""The patched-tor pipeline's bookkeeping (the build itself runs in `make tor`)."""

import contextlib
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.errors import PrerequisiteError
from runner.tools import torbuild
from runner.tools.steps import logged_step
from runner.tools.torbuild import PATCH_DIR, build_dir, load_source, patched_tor


def _copy(tmp_path: Path) -> Path:
    patch_dir = tmp_path / "tor-patches"
    shutil.copytree(PATCH_DIR, patch_dir)
    return patch_dir


def test_pinned_source_is_debians_tor_0_4_9_11() -> None:
    source = load_source()
    assert source.debian_version == "0.4.9.11-0+deb12u1"
    assert len(source.orig_sha256) == 64
    assert all(p.is_file() for p in source.patches)


def test_build_key_follows_the_series_content(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    before = load_source(patch_dir).key
    (patch_dir / "0099-example.patch").write_text("--- a/x\n+++ b/x\n")
    with (patch_dir / "series").open("a") as series:
        series.write("0099-example.patch\n")
    with_patch = load_source(patch_dir).key
    assert with_patch != before
    (patch_dir / "0099-example.patch").write_text("--- a/x\n+++ b/y\n")
    assert load_source(patch_dir).key not in (before, with_patch)


def test_the_staged_series_leaves_the_patched_key_as_it_is(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    patched = load_source(patch_dir).key
    assert patched == load_source().key
    staged = patch_dir / "staged"
    (staged / "0099-example.patch").write_text("--- a/x\n+++ b/x\n")
    with (staged / "series").open("a") as series:
        series.write("0099-example.patch\n")
    assert load_source(patch_dir).key == patched  # a staged patch more: the same
    shutil.rmtree(staged)
    assert load_source(patch_dir).key == patched  # no staged series at all: the same


def test_the_staged_key_follows_the_staged_patches(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    source = load_source(patch_dir, staged=True)
    assert source.staged is not None and len(source.staged) >= 1
    assert source.applied[: len(source.patches)] == source.patches
    before, patched = source.key, load_source(patch_dir).key
    assert before != patched
    assert build_dir(source) != build_dir(load_source(patch_dir))
    assert build_dir(source).parent == build_dir(load_source(patch_dir)).parent
    first = source.staged[0]
    first.write_bytes(first.read_bytes() + b"\n")
    assert load_source(patch_dir, staged=True).key not in (before, patched)
    assert load_source(patch_dir).key == patched


def test_a_staged_patch_that_joins_the_series_keeps_its_build(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    staged_key = load_source(patch_dir, staged=True).key
    staged = patch_dir / "staged"
    names = [n for n in (staged / "series").read_text().split() if n.endswith(".patch")]
    with (patch_dir / "series").open("a") as series:
        for name in names:
            shutil.copy(staged / name, patch_dir / name)
            series.write(f"\n{name}\n")
    # Still listed as staged too: refused, naming the line to remove.
    with pytest.raises(PrerequisiteError, match=rf"staged/series: {names[0]} is in .*series too"):
        load_source(patch_dir, staged=True)
    for name in names:
        (staged / name).unlink()
    (staged / "series").write_text("# nothing staged\n")
    assert load_source(patch_dir).key == staged_key
    assert load_source(patch_dir, staged=True).key == staged_key


def test_a_missing_staged_series_is_named(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    (patch_dir / "staged" / "series").unlink()
    with pytest.raises(PrerequisiteError, match=r"staged/series: missing"):
        load_source(patch_dir, staged=True)


def test_a_missing_patch_is_named(tmp_path: Path) -> None:
    patch_dir = _copy(tmp_path)
    with (patch_dir / "series").open("a") as series:
        series.write("0001-absent.patch\n")
    with pytest.raises(PrerequisiteError, match=r"series: line \d+: no patch file '0001-absent"):
        load_source(patch_dir)


def test_an_unbuilt_tor_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(tmp_path))
    source = load_source()
    assert build_dir(source).parent == tmp_path
    with pytest.raises(PrerequisiteError, match="make tor"):
        patched_tor(source)
    build_dir(source).mkdir()  # present but incomplete: still not usable
    with pytest.raises(PrerequisiteError, match="not built"):
        patched_tor(source)
    with pytest.raises(PrerequisiteError, match=r"the staged tor .* run `make tor-staged`"):
        patched_tor(load_source(staged=True))


def _fake_steps(monkeypatch: pytest.MonkeyPatch, release: Path, makes: Path) -> None:
    """A build whose fetch waits for ``release`` to exist and whose make
    writes the binary and counts itself in ``makes``: no download, no compile."""

    def fetch(source: object, into: Path, log: Path) -> Path:
        log.write_text("fetched\n")
        deadline = time.monotonic() + 30
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (into / "src").mkdir()
        return into / "src"

    def step(name: str, cmd: list[str], cwd: Path, log: Path, stdin: Path | None = None) -> None:
        with log.open("a") as out:
            out.write(f"{name}\n")
        if cmd[0] == "make" and len(cmd) == 2:
            binary = cwd / "src" / "app" / "tor"
            binary.parent.mkdir(parents=True)
            binary.write_text("")
            with makes.open("a") as counted:
                counted.write(f"{os.getpid()}\n")

    monkeypatch.setattr(torbuild, "fetch_and_verify", fetch)
    monkeypatch.setattr(torbuild, "_step", step)


def _build_into(console: Path) -> None:
    """A child process's build, its printed lines into ``console``."""
    with console.open("w") as out, contextlib.redirect_stdout(out):
        torbuild.build(1)


def _wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_second_build_waits_for_the_first_and_deletes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, release, makes = tmp_path / "cache", tmp_path / "release", tmp_path / "makes"
    monkeypatch.setenv("TORNET_TOR_BUILD_ROOT", str(root))
    _fake_steps(monkeypatch, release, makes)
    where = build_dir(load_source())
    fork = multiprocessing.get_context("fork")
    first = fork.Process(target=_build_into, args=(tmp_path / "first.txt",))
    first.start()
    _wait_for(lambda: (where / "build.log").is_file(), "the first build to start")
    second = fork.Process(target=_build_into, args=(tmp_path / "second.txt",))
    second.start()
    waiting = f"waiting for the build in progress in {where} (lock held by pid {first.pid})"
    said = tmp_path / "second.txt"
    _wait_for(lambda: said.is_file() and waiting in said.read_text(), "the second to wait")
    assert (where / "build.log").read_text() == "fetched\n"  # the first's work is untouched
    release.touch()
    first.join(30)
    second.join(30)
    assert (first.exitcode, second.exitcode) == (0, 0)
    assert makes.read_text().split() == [str(first.pid)]  # one build, by the first
    assert (where / ".complete").is_file()
    assert patched_tor().is_file()
    assert "up to date" in said.read_text()
    first_lines = (tmp_path / "first.txt").read_text()
    assert f"each step's output goes to {where / 'build.log'}" in first_lines


def test_a_build_whose_folder_is_deleted_says_so_without_a_traceback(tmp_path: Path) -> None:
    log = tmp_path / "gone" / "build.log"
    with pytest.raises(PrerequisiteError, match=r"make: .*build\.log \(was .*gone deleted"):
        logged_step("tor build", "make", ["true"], tmp_path, log)
