"""The local backend: a real tor network on loopback, with the built-in driver.

These need tor (from make setup) but not Shadow, so they run everywhere.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from runner.manifest import read_manifest
from tests.conftest import ROOT, needs_tor

pytestmark = needs_tor


def _spec(text: str, tmp_path: Path, measure: str) -> Path:
    data = yaml.safe_load(text)
    data["seeds"] = [1]
    data["variants"] = {"conflux-on": data["variants"]["conflux-on"]}
    data["baseline"] = "conflux-on"
    data["duration"]["local_measure"] = measure
    path = tmp_path / "ci-small.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _started_under(root: Path) -> list[int]:
    """Processes whose working directory lies under ``root``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(root)):
            pids.append(int(entry.name))
    return pids


def _runner(spec: Path, results: Path) -> subprocess.Popen[str]:
    # No tgen or oniontrace on PATH: the built-in driver and event logger run.
    env = os.environ | {"PATH": "/usr/sbin:/usr/bin:/bin"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "runner",
            "run",
            str(spec),
            "--results",
            str(results),
            "--backend",
            "local",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for_network(results: Path, at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(_started_under(results)) < at_least:
        assert time.monotonic() < deadline, "the network did not start"
        time.sleep(0.5)


def _assert_all_gone(results: Path) -> None:
    deadline = time.monotonic() + 15
    while _started_under(results):
        assert time.monotonic() < deadline, f"left behind: {_started_under(results)}"
        time.sleep(0.2)
    # the authority's ORPort is free again
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.100.0.1", 9001))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_killing_the_runner_leaves_no_process(
    ci_small_text: str, tmp_path: Path, how: signal.Signals
) -> None:
    spec = _spec(ci_small_text, tmp_path, "10 min")
    results = tmp_path / "results"
    runner = _runner(spec, results)
    try:
        # 1 authority + 6 relays + 4 clients (tor and event logger) + 1 server
        _wait_for_network(results, at_least=20)
        runner.send_signal(how)
        runner.wait(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
    _assert_all_gone(results)
    if how == signal.SIGTERM:
        assert runner.returncode == 130
        manifest = read_manifest(results / "ci-small-local" / "conflux-on" / "seed-1")
        assert manifest["status"] == "failed"


def test_a_local_run_completes_and_a_rerun_finishes_what_is_missing(
    ci_small_text: str, tmp_path: Path
) -> None:
    spec = _spec(ci_small_text, tmp_path, "15 s")
    results = tmp_path / "results"
    first = _runner(spec, results)
    _wait_for_network(results, at_least=20)
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=30)
    _assert_all_gone(results)

    second = _runner(spec, results)
    out, _ = second.communicate(timeout=240)
    assert second.returncode == 0, out
    run = results / "ci-small-local" / "conflux-on" / "seed-1"
    manifest = read_manifest(run)
    assert manifest["status"] == "complete"
    assert manifest["backend"] == "local"
    assert 0 < manifest["phases"]["bootstrap_s"] < 300
    logs = list((run / "shadow.data" / "hosts").glob("perfclient*/tgen.*.stdout"))
    assert len(logs) == 4
    assert all("[stream-success]" in log.read_text() for log in logs)
    _assert_all_gone(results)


def test_the_default_backend_is_local_without_shadow(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.backends import LOCAL
    from runner.run import default_backend

    monkeypatch.setenv("PATH", "/usr/sbin:/usr/bin:/bin")
    monkeypatch.delenv("TORNET_SHADOW", raising=False)
    assert default_backend() is LOCAL


def test_oniontrace_waits_for_tors_control_port() -> None:
    from runner.errors import RunError
    from runner.local.run import wait_for_port

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    calls: list[int] = []
    # Not listening yet: it keeps checking on the network, then gives up.
    with pytest.raises(RunError, match=f"control port {port} not listening"):
        wait_for_port(port, 0.3, lambda: calls.append(1))
    assert calls
    listener.listen()
    wait_for_port(port, 5.0, lambda: None)
    listener.close()
