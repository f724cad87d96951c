import re

import yaml

from runner.experiments import load_spec, parse_spec
from runner.network.plan import plan_network
from tests.conftest import CI_SMALL


def test_names_follow_tornettools_and_counts_match_the_spec() -> None:
    plan = plan_network(load_spec(CI_SMALL), 1)
    names = [h.name for h in plan.hosts]
    assert names[0] == "4uthority1"
    relays = [n for n in names if n.startswith("relay")]
    assert relays == [
        "relay1exit",
        "relay2exit",
        "relay3guard",
        "relay4guard",
        "relay5middle",
        "relay6middle",
    ]
    assert [n for n in names if n.startswith("perfclient")] == [
        f"perfclient{i}exit" for i in range(1, 5)
    ]
    assert "server1exit" in names
    assert all(re.fullmatch(r"[A-Za-z0-9]{1,19}", n) for n in relays)  # tor nicknames
    assert len({h.ip for h in plan.hosts}) == len(plan.hosts)


def test_a_seed_names_one_network() -> None:
    spec = load_spec(CI_SMALL)
    a, b, c = plan_network(spec, 1), plan_network(spec, 1), plan_network(spec, 2)
    bandwidths = lambda p: [h.bandwidth_up for h in p.hosts if h.is_relay]  # noqa: E731
    assert bandwidths(a) == bandwidths(b)
    assert bandwidths(a) != bandwidths(c)
    for host in a.hosts:
        if host.role in ("exit", "guard"):
            assert 40_000_000 <= host.bandwidth_up <= 100_000_000


def test_link_classes_come_in_their_shares_with_speeds_in_their_ranges() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["clients"]["perf"] = {
        "count": 20,
        "workload": "perf",
        "links": {
            "residential": {
                "share": 0.9,
                "bandwidth": ["4 Mbit", "60 Mbit"],
                "bandwidth_up": ["1 Mbit", "10 Mbit"],
            },
            "institutional": {"share": 0.1, "bandwidth": ["20 Mbit", "200 Mbit"]},
        },
    }
    spec = parse_spec(data, "links.yaml")
    clients = plan_network(spec, 1).with_role("client")
    by_link = {
        name: [c for c in clients if c.link == name] for name in ("residential", "institutional")
    }
    assert [len(v) for v in by_link.values()] == [18, 2]
    for c in by_link["residential"]:
        assert 4_000_000 <= c.bandwidth_down <= 60_000_000
        assert 1_000_000 <= c.bandwidth_up <= 10_000_000 and c.bandwidth_up < c.bandwidth_down
    for c in by_link["institutional"]:
        assert c.bandwidth_up == c.bandwidth_down and 20_000_000 <= c.bandwidth_down <= 200_000_000
    assert len({c.bandwidth_down for c in clients}) == 20  # drawn per client
    # Relays are where they were without links: links have a stream of their own.
    base = plan_network(load_spec(CI_SMALL), 1)
    relays = lambda p: [(h.name, h.bandwidth_up, h.node_id) for h in p.hosts if h.is_relay]  # noqa: E731
    assert relays(plan_network(spec, 1)) == relays(base)


def test_a_relay_given_its_own_bandwidth_has_it_in_every_seed_and_moves_no_other_host() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["relays"]["middle"]["bandwidth_of"] = {"relay6middle": "7 Mbit"}
    fixed = parse_spec(data, "fixed.yaml")
    base = load_spec(CI_SMALL)
    hosts = lambda p: [(h.name, h.bandwidth_up, h.node_id) for h in p.hosts]  # noqa: E731
    drawn = set()
    for seed in range(1, 6):
        plan, before = plan_network(fixed, seed), plan_network(base, seed)
        assert plan.host("relay6middle").bandwidth_up == 7_000_000
        assert plan.host("relay6middle").bandwidth_down == 7_000_000
        drawn.add(before.host("relay6middle").bandwidth_up)
        # Every other host as the seed drew it without the key.
        assert [h for h in hosts(plan) if h[0] != "relay6middle"] == [
            h for h in hosts(before) if h[0] != "relay6middle"
        ]
    assert len(drawn) == 5  # without the key, a rate per seed


def test_the_congestion_trees_middle_has_one_rate_in_every_seed() -> None:
    """The relay the tree pins (MiddleNodes) is the one whose rate the
    config fixes, so that a seed changes the network, not the congestion."""
    for name in ("congestion-small", "congestion"):
        spec = load_spec(CI_SMALL.parent / f"{name}.yaml")
        tree = next(v for v in spec.variants if v.factors.get("scenario") == "tree")
        pinned = {
            line.split()[1] for line in tree.torrc["client"] if line.startswith("MiddleNodes ")
        }
        (middle,) = pinned
        rates = {plan_network(spec, seed).host(middle).bandwidth_up for seed in (1, 2, 3)}
        assert len(rates) == 1, name
        (group,) = [g for g in spec.network.relays if g.role == "middle"]
        assert middle in group.bandwidth_of
        low, high = group.bandwidth
        assert low < rates.pop() < high  # within the other middles' range
