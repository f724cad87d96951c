"""`make tools`' bookkeeping against a fake upstream: small git repositories
under tmp_path, reached from https://example.invalid/ through git's
url.<base>.insteadOf (as a mirror would be), and a tools cache under
tmp_path. Neither the network nor the real tools are needed."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from runner.errors import PrerequisiteError
from runner.tools import toolbuild, upstream
from runner.tools.prereqs import find
from runner.tools.toolbuild import COMPLETE, build_one, cached_binary, check_rust, tool_dir
from runner.tools.upstream import Build, PythonTool

FAKE = "https://example.invalid/"
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"

# Installs a tgen that reports its version, and counts its runs in the file
# named by its second argument (outside the cache).
BUILD_SH = """#!/bin/sh
set -e
echo built >> "$2"
mkdir -p "$1/bin"
printf '#!/bin/sh\\necho "TGen v1.1.2"\\n' > "$1/bin/tgen"
chmod +x "$1/bin/tgen"
"""


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


class Upstream:
    """One fake upstream repository, ``<FAKE>tgen``, with a build script."""

    def __init__(self, base: Path, counter: Path) -> None:
        self.repo = base / "tgen"
        self.repo.mkdir(parents=True)
        self.counter = counter
        _git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "build.sh").write_text(BUILD_SH)
        (self.repo / "fail.sh").write_text("echo 'compiler exploded'\nexit 2\n")
        self.first = self.commit("first")
        _git(self.repo, "tag", "v1.1.2")

    def commit(self, message: str) -> str:
        (self.repo / "NEWS").write_text(message + "\n")
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-q", "-m", message)
        return _git(self.repo, "rev-parse", "HEAD")

    def build(self, commit: str | None = None, *, fail: bool = False, url: str = "") -> Build:
        argv = ("sh", "fail.sh") if fail else ("sh", "build.sh", "{prefix}", str(self.counter))
        return Build(
            "tgen",
            "1.1.2",
            url or f"{FAKE}tgen",
            "v1.1.2",
            commit or self.first,
            "bin/tgen",
            (("compile", argv),),
        )

    def runs(self) -> int:
        return len(self.counter.read_text().splitlines()) if self.counter.exists() else 0


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Upstream:
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "test")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "test@example.invalid")
    base = tmp_path / "upstream"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{base}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", FAKE)
    monkeypatch.setenv("TORNET_TOOLS_ROOT", str(tmp_path / "tools"))
    return Upstream(base, tmp_path / "runs.txt")


def test_a_build_lands_in_the_cache_and_is_not_repeated(
    fake: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build = fake.build()
    binary = build_one(build, jobs=1)
    assert binary == tmp_path / "tools" / "tgen-1.1.2" / "install" / "bin" / "tgen"
    assert (tool_dir(build) / COMPLETE).read_text().strip() == fake.first
    assert cached_binary(build) == binary
    assert build_one(build, jobs=1) == binary
    assert fake.runs() == 1
    assert "tgen 1.1.2: up to date at" in capsys.readouterr().out


def test_a_new_pin_builds_again(fake: Upstream) -> None:
    build_one(fake.build(), jobs=1)
    second = fake.commit("second")
    _git(fake.repo, "tag", "-f", "v1.1.2", second)  # a new release, pinned below
    moved = fake.build(second)
    assert cached_binary(moved) is None  # the cache holds another commit
    build_one(moved, jobs=1)
    assert fake.runs() == 2
    assert (tool_dir(moved) / COMPLETE).read_text().strip() == second


def test_a_moved_tag_is_refused_and_nothing_is_marked_complete(fake: Upstream) -> None:
    other = fake.commit("not what was tested")
    _git(fake.repo, "tag", "-f", "v1.1.2", other)
    build = fake.build()  # still pinned to the first commit
    with pytest.raises(PrerequisiteError, match="refusing to build a moved tag") as err:
        build_one(build, jobs=1)
    assert other in str(err.value) and fake.first in str(err.value)
    assert f"{FAKE}tgen" in str(err.value)
    assert not (tool_dir(build) / COMPLETE).exists()
    assert cached_binary(build) is None
    assert fake.runs() == 0


def test_an_unreachable_source_names_the_url_and_the_step(fake: Upstream) -> None:
    build = fake.build(url=f"{FAKE}absent")
    with pytest.raises(PrerequisiteError) as err:
        build_one(build, jobs=1)
    message = str(err.value)
    assert message.startswith(f"tgen: clone {FAKE}absent failed")
    assert "insteadOf" in message  # how to use a mirror
    assert not (tool_dir(build) / COMPLETE).exists()


def test_a_failed_build_names_the_step_and_its_log(fake: Upstream) -> None:
    build = fake.build(fail=True)
    log = tool_dir(build) / "build.log"
    with pytest.raises(PrerequisiteError) as err:
        build_one(build, jobs=1)
    message = str(err.value)
    assert message.startswith("tgen: compile failed (exit 2)")
    assert str(log) in message and "compiler exploded" in message
    assert "compiler exploded" in log.read_text()
    assert cached_binary(build) is None


def test_an_interrupted_build_starts_again(fake: Upstream) -> None:
    build = fake.build()
    where = tool_dir(build)
    (where / "src").mkdir(parents=True)  # left by a build that never finished
    (where / "src" / "half-built").write_text("")
    build_one(build, jobs=1)
    assert not (where / "src" / "half-built").exists()
    assert fake.runs() == 1


def test_prereqs_find_the_cached_build_first_and_the_env_var_before_it(
    fake: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = fake.build()
    monkeypatch.setitem(upstream.BUILDS, "tgen", build)
    monkeypatch.delenv("TORNET_TGEN", raising=False)
    binary = build_one(build, jobs=1)
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    found = find("tgen")
    assert (found.ok, found.path, found.version) == (True, str(binary), "1.1.2")

    mine = tmp_path / "my-tgen"
    mine.write_text('#!/bin/sh\necho "TGen v1.1.9"\n')
    mine.chmod(0o755)
    monkeypatch.setenv("TORNET_TGEN", str(mine))
    assert (find("tgen").path, find("tgen").version) == (str(mine), "1.1.9")
    monkeypatch.setenv("TORNET_TGEN", str(tmp_path / "absent"))
    assert "TORNET_TGEN=" in str(find("tgen").problem)  # no fallback to the cache


def test_a_missing_tool_names_make_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORNET_TOOLS_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    for name in ("shadow", "tgen", "oniontrace"):
        monkeypatch.delenv(f"TORNET_{name.upper()}", raising=False)
        found = find(name)
        assert found.path is None
        assert f"not found in {tmp_path} or on PATH; run `make tools`" in str(found.problem)
    assert "Shadow 3.3.0" in str(find("shadow").problem)


def _fake_rustc(tmp_path: Path, version: str) -> str:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    rustc = bin_dir / "rustc"
    rustc.write_text(f'#!/bin/sh\necho "rustc {version} (4b91a6ea7 2022-08-08)"\n')
    rustc.chmod(0o755)
    return f"{bin_dir}:{SYSTEM_PATH}"


def test_an_old_rust_says_to_use_rustup(tmp_path: Path) -> None:
    path = _fake_rustc(tmp_path, "1.63.0")
    with pytest.raises(PrerequisiteError, match=r"needs Rust 1\.85 or later, and rustc is 1\.63"):
        check_rust("shadow", (1, 85), {"PATH": path})
    with pytest.raises(PrerequisiteError, match="rustup"):
        check_rust("shadow", (1, 85), {"PATH": path})
    check_rust("shadow", (1, 63), {"PATH": path})  # new enough: no error


def test_no_rustc_says_to_use_rustup(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PrerequisiteError, match="finds no rustc.*rustup"):
        check_rust("shadow", (1, 85), {"PATH": str(tmp_path / "empty")})


def test_a_build_needing_a_newer_rust_stops_before_cloning(
    fake: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{_fake_rustc(tmp_path, '1.63.0')}:{os.environ['PATH']}")
    build = dataclasses.replace(fake.build(), min_rust=(1, 85))
    with pytest.raises(PrerequisiteError, match="rustup"):
        build_one(build, jobs=1)
    assert not (tool_dir(build) / "src").exists()
    assert cached_binary(build) is None


def test_shadow_is_pinned_with_its_rust_minimum() -> None:
    shadow = upstream.BUILDS["shadow"]
    assert shadow.min_rust == upstream.SHADOW_MIN_RUST == (1, 85)
    assert all(b.url.startswith("https://github.com/shadow/") for b in upstream.BUILDS.values())
    assert all(len(b.commit) == 40 for b in upstream.BUILDS.values())


def test_python_tools_installed_from_their_commit_are_left_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = PythonTool("sometool", "https://example.invalid/sometool", "a" * 40, "tools")
    assert tool.requirement == f"sometool @ git+https://example.invalid/sometool@{'a' * 40}" + (
        "#subdirectory=tools"
    )
    monkeypatch.setattr(toolbuild, "installed_commit", lambda name: "a" * 40)
    monkeypatch.setattr(toolbuild, "_installed_version", lambda name: "1.0")

    def no_pip(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip ran")

    monkeypatch.setattr(toolbuild.subprocess, "run", no_pip)
    toolbuild.install_python_tools((tool,), ("dep==1.0",))
    assert "sometool: up to date" in capsys.readouterr().out
