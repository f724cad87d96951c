"""What variants change in a seed's network, and the limits relays record."""

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.network.backends import backend_named
from runner.network.identity import spec_parts
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


def test_a_class_only_one_variant_adds_leaves_the_others_runs_as_they_were() -> None:
    """A class the network has none of (count 0) places nothing and is no
    part of a run's identity; a variant that adds its clients gets them
    drawn apart, the seed's network otherwise unchanged (MCTor's second
    user on the path, added after runs of the other variants)."""
    before = _spec({"base": {}})
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["clients"]["perf"]["count"] = 50
    data["network"]["clients"]["peer"] = {"count": 0, "workload": "perf", "bandwidth": "100 Mbit"}
    data["variants"] = {"base": {}, "fair": {"add_clients": {"peer": 2}}}
    data["baseline"] = "base"
    for key in ("comparisons", "hypotheses", "claims"):
        data.pop(key, None)
    after = parse_spec(data, "mixing.yaml")
    shadow = backend_named("shadow")
    assert spec_parts(after, after.variant("base"), 1, shadow) == spec_parts(
        before, before.variant("base"), 1, shadow
    )
    base = variant_plan(after, after.variant("base"), 1)
    assert base.hosts == variant_plan(before, before.variant("base"), 1).hosts
    fair = variant_plan(after, after.variant("fair"), 1)
    added = [h for h in fair.hosts if h.cls == "peer"]
    assert len(added) == 2 and all(h.measured and h.role == "client" for h in added)
    assert [h for h in fair.hosts if h.cls != "peer"] == list(base.hosts)
    assert len({h.ip for h in fair.hosts}) == len(fair.hosts)
    data["variants"]["fair"] = {"add_clients": {"nobody": 1}}
    with pytest.raises(SpecError, match="nobody") as caught:
        parse_spec(data, "mixing.yaml")
    assert caught.value.key == "variants.fair.add_clients.nobody"


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
