"""The local backend: a real tor network on loopback, with the built-in driver.

These need tor (from make setup) but not Shadow, so they run everywhere. The
ones that start a network are simulations (make test-sim).
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.execute.local.netns import CONNECTIONS
from runner.experiments import load_spec
from runner.network.backends import LOCAL, namespace_refused
from tests.conftest import ROOT, needs_tor, read_manifest
from tests.specs import ci_small_data, one_variant, write_spec

pytestmark = [needs_tor, pytest.mark.slow]


def _spec(text: str, tmp_path: Path, measure: str) -> Path:
    data = one_variant(ci_small_data(text))
    data["duration"]["local_measure"] = measure
    return write_spec(data, tmp_path)


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


def _established_from(address: str) -> list[str]:
    """Remote ends (ip:port) of this machine's established TCP connections
    whose local end is ``address`` (from /proc/net/tcp)."""

    def _ip(hex_ip: str) -> str:
        return socket.inet_ntoa(bytes.fromhex(hex_ip)[::-1])

    remotes = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if state == "01" and _ip(local.split(":")[0]) == address:
            ip, port = remote.split(":")
            remotes.append(f"{_ip(ip)}:{int(port, 16)}")
    return remotes


def _runner(spec: Path, results: Path, network: str = "") -> subprocess.Popen[str]:
    # No tgen or oniontrace on PATH: the built-in driver and event logger run.
    env = os.environ | {"PATH": "/usr/sbin:/usr/bin:/bin", "TORNET_LOCAL_NETWORK": network}
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
@pytest.mark.simulation("ci-small's conflux-on as a local tor network, killed once it is up")
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
        signalled = time.monotonic()
        runner.wait(timeout=30)
        stopped_after = time.monotonic() - signalled
    finally:
        if runner.poll() is None:
            runner.kill()
    _assert_all_gone(results)
    if how == signal.SIGTERM:
        assert runner.returncode == 130
        assert stopped_after < 5
        manifest = read_manifest(results / "ci-small-local" / "conflux-on" / "seed-1")
        assert manifest["status"] == "failed"


@pytest.mark.simulation(
    "ci-small's conflux-on as a local tor network: stopped once it is up, then run again to "
    "the end (15 s of traffic)"
)
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
    # The measured period the tables read is the real one: traffic began
    # after the clients bootstrapped, and lasted local_measure.
    assert manifest["duration"]["measure_s"] == 15
    assert manifest["phases"]["bootstrap_s"] < manifest["duration"]["bootstrap_s"] < 300
    logs = list((run / "shadow.data" / "hosts").glob("perfclient*/tgen.*.stdout"))
    assert len(logs) == 4
    assert all("[stream-success]" in log.read_text() for log in logs)
    # Real processes: every relay's tor has its CPU time over the measured
    # period, and together they used some while the clients downloaded (one
    # that carried no circuit for 15 s may show less than a clock tick).
    relays = [h for h, info in manifest["hosts"].items() if info["role"] in ("exit", "guard")]
    assert relays and all(manifest["cpu_s"][h]["tor"] >= 0 for h in relays)
    assert sum(manifest["cpu_s"][h]["tor"] for h in relays) > 0
    _assert_all_gone(results)
    if namespace_refused():
        assert manifest["local_network"] == "loopback"
        return
    # In a namespace of its own every host reaches relays from its own
    # address: connections to ORPorts come from each client's address.
    assert manifest["local_network"] == "namespace"
    connections = [ln.split()[-2:] for ln in (run / CONNECTIONS).read_text().splitlines()]
    client_ips = {info["ip"] for info in manifest["hosts"].values() if info["role"] == "client"}
    to_relays_from = {
        local.rsplit(":", 1)[0] for local, peer in connections if peer.endswith(":9001")
    }
    assert client_ips <= to_relays_from
    assert "127.0.0.1" not in to_relays_from


def test_the_default_backend_is_local_without_shadow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from runner.tools.prereqs import default_backend

    monkeypatch.setenv("PATH", "/usr/sbin:/usr/bin:/bin")
    monkeypatch.delenv("TORNET_SHADOW", raising=False)
    monkeypatch.setenv("TORNET_TOOLS_ROOT", str(tmp_path))  # no make tools cache either
    assert default_backend() is LOCAL


def test_oniontrace_waits_for_tors_control_port() -> None:
    from runner.errors import RunError
    from runner.execute.local.processes import wait_for_port

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


def test_clients_wait_for_a_consensus_listing_every_relay(tmp_path: Path) -> None:
    from runner.errors import RunError
    from runner.execute.local.processes import wait_for_consensus

    authority = tmp_path / "4uthority1"
    authority.mkdir()
    router = "r relay{n} AAAA BBBB 2026-01-01 00:00:00 10.0.0.{n} 9001 0\ns Fast Running Valid\n"
    # No consensus yet, then one that lists 2 of the 3: it keeps waiting.
    with pytest.raises(RunError, match=r"does not list all 3 relays .*4uthority1 lists 0"):
        wait_for_consensus([authority], 3, 0.2, lambda: None)
    (authority / "cached-consensus").write_text(
        "network-status-version 3\n" + router.format(n=1) * 2
    )
    calls: list[int] = []
    with pytest.raises(RunError, match="4uthority1 lists 2"):
        wait_for_consensus([authority], 3, 0.6, lambda: calls.append(1))
    assert calls  # it checks the network's processes while it waits
    (authority / "cached-consensus").write_text("".join(router.format(n=n) for n in (1, 2, 3)))
    wait_for_consensus([authority], 3, 5.0, lambda: None)


def _socks5_connect(proxy: tuple[str, int], host: str, port: int) -> int:
    """SOCKS5 CONNECT through ``proxy``; tor's reply code (0: connected)."""
    with socket.create_connection(proxy, timeout=150) as sock:
        sock.sendall(b"\x05\x01\x00")
        assert sock.recv(2) == b"\x05\x00"
        sock.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host) + port.to_bytes(2, "big"))
        return sock.recv(10)[1]


def _first_reply(port: int, *commands: bytes) -> list[str]:
    """tor's first reply line to each command on its control port."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        reader = sock.makefile("rb")
        replies = []
        for command in commands:
            sock.sendall(command + b"\r\n")
            replies.append(reader.readline().decode().strip())
            if replies[-1][:1] in ("4", "5"):
                break
        return replies


def _ports(home: Path) -> tuple[tuple[str, int], int]:
    """A client's SOCKS address and control port, from its torrc."""
    torrc = (home / "torrc").read_text().splitlines()
    socks = next(ln for ln in torrc if ln.startswith("SocksPort ")).split()[1]
    host, port = socks.rsplit(":", 1)
    control = int(next(ln for ln in torrc if ln.startswith("ControlPort")).split(":")[1])
    return (host, int(port)), control


def _text(home: Path, program: str) -> str:
    return "".join(p.read_text() for p in home.glob(f"{program}.*.stdout"))


@pytest.mark.simulation(
    "ci-small's conflux-on as a local tor network on the shared loopback, probed through a "
    "client's SOCKS port"
)
def test_a_local_network_stays_on_the_machine(ci_small_text: str, tmp_path: Path) -> None:
    """Exits reach only the network's servers; control ports need the cookie."""
    spec = _spec(ci_small_text, tmp_path, "10 min")
    results = tmp_path / "results"
    run = results / "ci-small-local" / "conflux-on" / "seed-1"
    # On the shared loopback, where other addresses of this machine answer.
    runner = _runner(spec, results, "loopback")
    try:
        hosts = run / "shadow.data" / "hosts"
        deadline = time.monotonic() + 240
        # Traffic starts once every client bootstrapped: then the network is up.
        while not list(hosts.glob("perfclient*/tgen.*.stdout")):
            assert runner.poll() is None, runner.communicate()[0]
            assert time.monotonic() < deadline, "the network did not bootstrap"
            time.sleep(1)

        port = LOCAL.server_port(load_spec(spec).network.servers.port)
        policy = (run / "conf" / "tor.exit.torrc").read_text().splitlines()
        assert policy[:3] == [
            "ExitPolicyRejectLocalInterfaces 1",
            f"ExitPolicy accept 127.103.0.1:{port}",
            "ExitPolicy reject private:*",
        ]
        assert policy[-1] == 'ExitPolicy "reject *:*"'
        exit_torrc = (hosts / "relay1exit" / "torrc").read_text()
        assert "OutboundBindAddressExit 127.101.0.1" in exit_torrc
        assert "CookieAuthentication 1" in (run / "conf" / "tor.common.torrc").read_text()

        client = hosts / "perfclient1exit"
        proxy, control = _ports(client)
        # tor binds no connection to a loopback address: the client reaches
        # its guard from 127.0.0.1, as every local host does, so relays
        # cannot tell local clients apart by address (docs/backends.md).
        assert not [r for r in _established_from("127.102.0.1") if r.endswith(":9001")]
        assert any(r.endswith(":9001") for r in _established_from("127.0.0.1"))
        # Control ports: nothing without the cookie, oniontrace's password included.
        assert _first_reply(control, b"GETINFO version")[0].startswith("514")
        assert _first_reply(control, b'AUTHENTICATE "password"')[0].startswith("515")
        cookie = (client / "control_auth_cookie").read_bytes().hex().encode()
        replies = _first_reply(control, b"AUTHENTICATE " + cookie, b"GETINFO version")
        assert replies[0] == "250 OK" and replies[1].startswith("250-version=")

        # A loopback address outside the network, listening on the server's
        # port: the client asks an exit, the exit refuses, nothing connects.
        outside = socket.socket()
        outside.bind(("127.0.0.2", port))
        outside.listen()
        outside.settimeout(0.5)
        assert _socks5_connect(proxy, "127.0.0.2", port) != 0
        with pytest.raises(TimeoutError):
            outside.accept()
        outside.close()
        events = [
            ln for ln in _text(client, "oniontrace").splitlines() if f"127.0.0.2:{port}" in ln
        ]
        assert any("REMOTE_REASON=EXITPOLICY" in ln for ln in events), events
        # The network's own server, through the same client, is reachable.
        assert _socks5_connect(proxy, "127.103.0.1", port) == 0
        assert "[stream-success]" in _text(client, "tgen")
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=60)
    _assert_all_gone(results)


def test_a_run_waiting_for_the_machine_says_for_whom_and_stops_at_once(
    ci_small_text: str, tmp_path: Path
) -> None:
    import fcntl
    import tempfile

    spec = _spec(ci_small_text, tmp_path, "15 s")
    results = tmp_path / "results"
    # Another runner holds the machine's shared-loopback slot.
    slot = Path(tempfile.gettempdir()) / "tornet-local-network.lock"
    with slot.open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.truncate(0)
        held.write("pid 4242: python -m runner run configs/other.yaml\n")
        held.flush()
        runner = _runner(spec, results, network="loopback")
        try:
            assert runner.stdout is not None
            seen = []
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                line = runner.stdout.readline()
                seen.append(line)
                if "wait for pid 4242: python -m runner run configs/other.yaml" in line:
                    break
            else:
                pytest.fail("no word of what the run waits for:\n" + "".join(seen))
            runner.send_signal(signal.SIGTERM)
            started = time.monotonic()
            runner.wait(timeout=30)
            assert time.monotonic() - started < 5
        finally:
            if runner.poll() is None:
                runner.kill()
        assert runner.returncode == 130
        assert _started_under(results) == []
        manifest = read_manifest(results / "ci-small-local" / "conflux-on" / "seed-1")
        assert manifest["status"] == "failed" and "interrupted while waiting" in manifest["error"]
