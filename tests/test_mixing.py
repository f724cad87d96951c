"""What variants change in a seed's network, and the limits relays record."""

import pytest
import yaml

from runner.experiments import parse_spec
from runner.network.limits import ClientLimit, relay_client_limit, tor_bytes
from runner.network.mixing import torrc_sections, variant_plan
from runner.network.plan import plan_network
from runner.network.torrc import Ports, defaults_includes, host_torrc
from runner.spec.model import Spec
from tests.conftest import CI_SMALL


def _spec(variants: dict[str, object]) -> Spec:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["clients"]["perf"]["count"] = 50
    data["variants"] = variants
    data["baseline"] = next(iter(variants))
    data.pop("comparisons", None)
    data.pop("hypotheses", None)
    data.pop("claims", None)  # the claims they tested
    return parse_spec(data, "mixing.yaml")


def test_client_relays_are_nested_across_shares_and_run_as_middles() -> None:
    spec = _spec(
        {
            "none": {},
            "low": {"client_relays": {"perf": 0.1}},
            "high": {"client_relays": {"perf": 0.2}},
        }
    )
    relays = {
        v.name: {h.name for h in variant_plan(spec, v, 1).hosts if h.client_relay}
        for v in spec.variants
    }
    assert (len(relays["none"]), len(relays["low"]), len(relays["high"])) == (0, 5, 10)
    assert relays["low"] < relays["high"]
    plan = variant_plan(spec, spec.variant("high"), 1)
    host = plan.host(sorted(relays["high"])[0])
    assert host.is_relay and host.role == "client"
    assert defaults_includes(host)[1:] == ["tor.relay.torrc", "tor.middle.torrc"]
    torrc = host_torrc(host, Ports(), spec.variant("high"))
    assert f"Nickname {host.name}" in torrc and "SocksPort 127.0.0.1:9050" in torrc
    # Its relay donates its uplink; its own downloads may use its downlink.
    assert f"RelayBandwidthRate {max(76800, host.bandwidth_up // 8)} bytes" in torrc
    assert f"BandwidthRate {max(76800, host.bandwidth_down // 8)} bytes" in torrc
    # Everything else is the seed's network unchanged.
    same = [(h.name, h.ip, h.bandwidth_up) for h in plan.hosts]
    base = [(h.name, h.ip, h.bandwidth_up) for h in plan_network(spec, 1).hosts]
    assert same == base


def test_a_fraction_gives_a_section_to_that_share_of_its_hosts() -> None:
    lines = ["PerConnBWRate 100 KBytes", "PerConnBWBurst 200 KBytes"]
    spec = _spec(
        {
            "all": {"torrc": {"relay": lines}},
            "half": {"torrc": {"relay": lines}, "fractions": {"relay": 0.5}},
        }
    )
    plan = variant_plan(spec, spec.variant("half"), 1)
    half = torrc_sections(spec, spec.variant("half"), plan)
    everyone = torrc_sections(spec, spec.variant("all"), plan)
    relays = [h.name for h in plan.hosts if h.is_relay and h.role != "authority"]
    assert all("relay" in everyone[n] for n in relays)
    assert sum("relay" in half[n] for n in relays) == 3  # of 6
    assert all("relay" not in half[h.name] for h in plan.with_role("client"))
    # The same relays on every run of the seed.
    assert half == torrc_sections(spec, spec.variant("half"), plan)


def test_growth_adds_clients_to_the_same_network() -> None:
    spec = _spec({"base": {}, "grown": {"extra_clients": 0.2}})
    base = variant_plan(spec, spec.variant("base"), 1)
    grown = variant_plan(spec, spec.variant("grown"), 1)
    assert len(grown.with_role("client")) == 60
    assert [h for h in grown.hosts if h.name in {b.name for b in base.hosts}] == list(base.hosts)
    assert len({h.ip for h in grown.hosts}) == len(grown.hosts)


def test_tor_bytes_follow_tors_units() -> None:
    assert tor_bytes("100 KBytes") == 102400
    assert tor_bytes("2 MB") == 2 * 1024 * 1024
    assert tor_bytes("512") == 512
    with pytest.raises(ValueError, match="tor byte count"):
        tor_bytes("100 KBps")


def test_relay_client_limit_prefers_torrc_over_the_consensus() -> None:
    consensus = {"perconnbwrate": 204800, "perconnbwburst": 409600}
    assert relay_client_limit([], consensus, 10**7) == ClientLimit(204800, 409600, False)
    torrc = ["PerConnBWRate 100 KBytes", "PerConnBWPerClient 1"]
    assert relay_client_limit(torrc, consensus, 10**7) == ClientLimit(102400, 409600, True)
    assert relay_client_limit([], {"perconnbwperclient": 1, "perconnbwrate": 1000}, 10**7) == (
        ClientLimit(1000, 10**7, True)
    )
    assert relay_client_limit([], {}, 10**7) is None
