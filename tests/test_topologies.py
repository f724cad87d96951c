import random

import networkx as nx
import pytest

from runner.params import Where
from topologies import multi_region, single_switch
from topologies.gml import TopologyError, check_shadow_rules, to_shadow_gml

WHERE = Where("spec.yaml", "network.topology.params")


def _multi() -> nx.Graph:
    params = multi_region.check(
        {
            "regions": ["na", "eu", "as"],
            "latency": {
                "na-na": "10 ms",
                "eu-eu": "8 ms",
                "as-as": "12 ms",
                "na-eu": "40 ms",
                "na-as": "90 ms",
                "eu-as": "80 ms",
            },
            "packet_loss": {"na-as": 0.01},
            "jitter_fraction": 0.1,
        },
        WHERE,
    )
    return multi_region.build(params, random.Random(3))


def test_multi_region_graph_follows_shadow_rules_and_round_trips_gml() -> None:
    graph = _multi()
    check_shadow_rules(graph)
    parsed = nx.parse_gml(to_shadow_gml(graph), label="id")
    assert sorted(parsed.nodes) == [0, 1, 2]
    assert parsed.nodes[0]["host_bandwidth_down"] == "10000000 kilobit"
    # one self-loop per node plus one edge per pair
    assert parsed.number_of_edges() == 6
    latency_us = {
        tuple(sorted((a, b))): int(d["latency"].split()[0]) for a, b, d in parsed.edges(data=True)
    }
    assert 81_000 <= latency_us[(0, 2)] <= 99_000  # 90 ms +-10% jitter
    losses = {tuple(sorted((a, b))): d["packet_loss"] for a, b, d in parsed.edges(data=True)}
    assert losses[(0, 2)] == pytest.approx(0.01)
    assert losses[(0, 1)] == 0.0


def test_jitter_depends_on_the_seed_only() -> None:
    a, b = _multi(), _multi()
    assert [d["latency"] for *_, d in a.edges(data=True)] == [
        d["latency"] for *_, d in b.edges(data=True)
    ]


def test_single_switch() -> None:
    params = {"latency": 0.02, "packet_loss": 0.0, "bandwidth": 10**9}
    graph = single_switch.build(params, random.Random(1))
    check_shadow_rules(graph)
    assert 'latency "20000 us"' in to_shadow_gml(graph)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda g: g.remove_edge(1, 1), "no self-loop"),
        (lambda g: g.remove_edges_from([(0, 1), (1, 2)]), "not connected"),
        (lambda g: g.edges[0, 1].update(latency=0), "latency <= 0"),
        (lambda g: g.edges[0, 1].update(packet_loss=1.5), "outside"),
        (lambda g: g.nodes[0].update(host_bandwidth_up=0), "host_bandwidth_up"),
    ],
)
def test_rule_violations_are_caught(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    graph = _multi()
    mutate(graph)
    with pytest.raises(TopologyError, match=message):
        check_shadow_rules(graph)
