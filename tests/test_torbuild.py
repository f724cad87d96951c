"""The patched-tor pipeline's bookkeeping (the build itself runs in `make tor`)."""

import shutil
from pathlib import Path

import pytest

from runner.errors import PrerequisiteError
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
