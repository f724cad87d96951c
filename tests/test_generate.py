"""Network generation with the real tor: keys, certificates, --verify-config."""

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from runner.errors import RunError
from runner.experiments import load_spec
from runner.layout import Layout, partial_path
from runner.network.generate import Tools, generate_run
from runner.tools.prereqs import find
from tests.conftest import CI_SMALL, needs_tor


def _tools() -> Tools:
    names = ("tor", "tor-gencert", "faketime")
    paths = {n: str(find(n).path) for n in names}
    # Simulation programs only appear in shadow.yaml; generation does not run them.
    paths.update(shadow="/nonexistent/shadow", tgen="/usr/bin/tgen", oniontrace="/usr/bin/ot")
    return Tools(paths, {n: find(n).version for n in names})


@needs_tor
def test_generated_run_is_a_complete_private_network(tmp_path: Path) -> None:
    spec = load_spec(CI_SMALL)
    variant = replace(spec.variant("conflux-on"), consensus={"cfx_enabled": 1, "cc_alg": 2})
    run = generate_run(spec, variant, 1, Layout(tmp_path, spec.name), _tools(), sys.argv)
    assert run == tmp_path / "ci-small" / "conflux-on" / "seed-1"
    assert not partial_path(run).exists()

    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "generated"
    assert manifest["spec"]["sha256"] == spec.sha256
    assert manifest["versions"]["tor"].startswith("0.4.")
    assert manifest["hosts"]["perfclient1exit"] == manifest["hosts"]["perfclient1exit"] | {
        "role": "client",
        "class": "perf",
        "variant": "conflux-on",
        "measured": True,
    }

    hosts = run / "shadow.data.template" / "hosts"
    authority = (hosts / "4uthority1" / "torrc-defaults").read_text()
    assert "tor.authority.torrc" in authority
    conf = run / "conf"
    assert "ConsensusParams cc_alg=2 cfx_enabled=1" in (conf / "tor.authority.torrc").read_text()
    # Under Shadow too every relay is Stable from the first vote: middles,
    # started last, never reach the median uptime otherwise; and every relay
    # Fast, a slow one too.
    assert "AuthDirVoteStableGuaranteeMinUptime 0" in (conf / "tor.authority.torrc").read_text()
    assert "AuthDirFastGuarantee 1 KBytes" in (conf / "tor.authority.torrc").read_text()
    common = (conf / "tor.common.torrc").read_text()
    fingerprint = (hosts / "4uthority1" / "fingerprint").read_text().split()[1]
    assert "DirAuthority 4uthority1 orport=9001 no-v2 v3ident=" in common
    assert common.split("\n")[0].endswith(fingerprint)
    assert "TestingTorNetwork 1" in common
    assert (hosts / "4uthority1" / "keys" / "authority_certificate").is_file()
    assert "ConfluxEnabled 1" in (hosts / "perfclient2exit" / "torrc").read_text()
    assert "ConfluxEnabled" not in (hosts / "relay1exit" / "torrc").read_text()
    v3bw = (hosts / "4uthority1" / "v3bw").read_text().splitlines()
    assert v3bw[0] == "946684801" and len(v3bw) == 1 + 7  # authority + 6 relays

    shadow = yaml.safe_load((run / "shadow.yaml").read_text())
    assert shadow["general"]["seed"] == 1
    assert shadow["general"]["stop_time"] == "900 s"
    client = shadow["hosts"]["perfclient1exit"]
    programs = [p["path"] for p in client["processes"]]
    assert programs == [_tools().paths[n] for n in ("tor", "oniontrace", "tgen")]
    assert client["processes"][2]["start_time"] == "300 s"
    assert client["processes"][2]["args"] == ["tgen.graphml"]
    assert (hosts / "perfclient1exit" / "tgen.graphml").is_file()
    assert (hosts / "server1exit" / "tgen-server.graphml").is_file()


@needs_tor
def test_variants_of_a_seed_share_relay_identities(tmp_path: Path) -> None:
    spec = load_spec(CI_SMALL)
    layout = Layout(tmp_path, spec.name)
    runs = [generate_run(spec, v, 2, layout, _tools(), []) for v in spec.variants]
    fps = [(r / "shadow.data.template/hosts/relay3guard/fingerprint").read_text() for r in runs]
    assert fps[0] == fps[1]


@needs_tor
def test_a_torrc_tor_rejects_fails_generation_and_leaves_nothing(tmp_path: Path) -> None:
    spec = load_spec(CI_SMALL)
    bad = replace(spec.variant("conflux-on"), torrc={"client": ("ConfluxEnabled banana",)})
    layout = Layout(tmp_path, spec.name)
    with pytest.raises(RunError, match="perfclient.*verify-config"):
        generate_run(spec, bad, 1, layout, _tools(), [])
    run = layout.run_dir("conflux-on", 1)
    assert not run.exists() and not partial_path(run).exists()


@needs_tor
def test_a_relative_results_directory_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = load_spec(CI_SMALL)
    run = generate_run(spec, spec.variants[0], 1, Layout(Path("results"), spec.name), _tools(), [])
    assert (run / "shadow.data.template/hosts/4uthority1/keys/authority_certificate").is_file()


@needs_tor
def test_local_generation_uses_loopback_addresses_and_todays_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.network.backends import LOCAL

    monkeypatch.setenv("TORNET_LOCAL_NETWORK", "loopback")
    spec = load_spec(CI_SMALL)
    run = generate_run(
        spec,
        spec.variant("conflux-on"),
        1,
        Layout(tmp_path, spec.name),
        _tools(),
        [],
        backend=LOCAL,
    )
    hosts = run / "shadow.data.template" / "hosts"
    assert (
        "DirAuthority 4uthority1 orport=9001 no-v2" in (run / "conf/tor.common.torrc").read_text()
    )
    assert " 127.100.0.1:8080 " in (run / "conf/tor.common.torrc").read_text()
    client = (hosts / "perfclient2exit" / "torrc").read_text()
    assert "SocksPort 127.102.0.2:9050" in client
    assert "ControlPort 127.0.0.1:29059" in client  # 29051 + its index (8)
    assert "V3AuthVotingInterval 20 seconds" in (run / "conf/tor.authority.torrc").read_text()
    assert "AuthDirVoteStableGuaranteeMinUptime 0" in (run / "conf/tor.authority.torrc").read_text()
    assert "100.3.0.1" not in (hosts / "perfclient2exit" / "tgen.graphml").read_text()
    assert "127.103.0.1:10080" in (hosts / "perfclient2exit" / "tgen.graphml").read_text()
    listing = json.loads((run / "processes.json").read_text())
    assert [p["program"] for p in listing["perfclient1exit"]] == ["tor", "oniontrace", "tgen"]
    assert not (run / "shadow.yaml").exists()
    assert json.loads((run / "manifest.json").read_text())["backend"] == "local"
    v3bw_time = int((hosts / "4uthority1" / "v3bw").read_text().split()[0])
    assert v3bw_time > 1_700_000_000  # today, not Shadow's year 2000
    # tor binds nothing to loopback: only exits' bindings (which keep them
    # on the machine) are written.
    assert "OutboundBindAddressExit 127.101.0.1" in (hosts / "relay1exit" / "torrc").read_text()
    assert "OutboundBindAddress " not in client
    assert json.loads((run / "manifest.json").read_text())["local_network"] == "loopback"


@needs_tor
def test_local_generation_in_a_namespace_binds_every_host_to_its_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.network.backends import LOCAL, namespace_refused

    if namespace_refused():
        pytest.skip(f"no network namespace here: {namespace_refused()}")
    monkeypatch.setenv("TORNET_LOCAL_NETWORK", "namespace")
    spec = load_spec(CI_SMALL)
    run = generate_run(
        spec,
        spec.variant("conflux-on"),
        1,
        Layout(tmp_path, spec.name),
        _tools(),
        [],
        backend=LOCAL,
    )
    hosts = run / "shadow.data.template" / "hosts"
    client = (hosts / "perfclient2exit" / "torrc").read_text()
    assert "SocksPort 10.102.0.2:9050" in client
    assert "OutboundBindAddress 10.102.0.2" in client
    exit_torrc = (hosts / "relay1exit" / "torrc").read_text()
    assert "ORPort 10.101.0.1:9001" in exit_torrc and "OutboundBindAddress 10.101.0.1" in exit_torrc
    assert "10.103.0.1:10080" in (hosts / "perfclient2exit" / "tgen.graphml").read_text()
    assert json.loads((run / "manifest.json").read_text())["local_network"] == "namespace"


def test_the_local_network_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.network.backends import local_address, local_network

    monkeypatch.setenv("TORNET_LOCAL_NETWORK", "bridge")
    with pytest.raises(ValueError, match="TORNET_LOCAL_NETWORK='bridge': expected"):
        local_network()
    monkeypatch.setenv("TORNET_LOCAL_NETWORK", "loopback")
    assert local_network() == "loopback"
    assert local_address("100.2.0.7", "loopback") == "127.102.0.7"
    assert local_address("100.2.0.7", "namespace") == "10.102.0.7"
