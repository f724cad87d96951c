import random
import statistics
from pathlib import Path

import networkx as nx
import pytest

from runner.errors import SpecError
from runner.params import Where, check_params
from workloads.models import Bulk, Endpoint, Perf, Web, exponential_quantiles, server_graph
from workloads.tgen import (
    TgenGraphError,
    action_type,
    check_tgen_rules,
    read_graphml,
    write_graphml,
)

ENDPOINT = Endpoint("127.0.0.1:9050", ("100.3.0.1:80", "100.3.0.2:80"))


def _perf() -> nx.DiGraph:
    params = check_params(
        {"sizes": ["50 KiB", "1 MiB"], "pause": "20 s"}, Perf.PARAMS, Where("s", "p"), "perf"
    )
    return Perf.build(params, ENDPOINT)


def test_action_type_follows_tgen_substring_order() -> None:
    assert action_type("stream_0") == "stream"
    assert action_type("stream_send") == "end"  # 'end' is tested before 'stream'
    assert action_type("restart") == "start"
    assert action_type("walk") is None


def test_perf_cycles_through_sizes_with_pauses(tmp_path: Path) -> None:
    graph = _perf()
    check_tgen_rules(graph)
    assert list(nx.dfs_preorder_nodes(graph, "start")) == [
        "start",
        "stream_0",
        "pause_0",
        "stream_1",
        "pause_1",
    ]
    assert graph.has_edge("pause_1", "stream_0")
    assert graph.nodes["stream_1"]["recvsize"] == "1048576 bytes"
    assert graph.nodes["pause_0"]["time"] == "20 seconds"
    assert graph.nodes["start"]["peers"] == "100.3.0.1:80,100.3.0.2:80"
    write_graphml(graph, tmp_path / "perf.graphml")
    back = read_graphml(tmp_path / "perf.graphml")
    check_tgen_rules(back)  # everything is still a string after the round trip
    assert back.nodes["stream_0"]["recvsize"] == "51200 bytes"


def _weighted_targets(graph: nx.DiGraph, node: str) -> set[str]:
    return {b for _, b, d in graph.out_edges(node, data=True) if d.get("weight") == "1.0"}


def test_bulk_and_server() -> None:
    params = check_params({"sizes": ["1 MB", "2 MB", "3 MB"]}, Bulk.PARAMS, Where("s", "p"), "bulk")
    bulk = Bulk.build(params, ENDPOINT)
    check_tgen_rules(bulk)
    streams = {"stream_0", "stream_1", "stream_2"}
    # tgen takes one of a node's weighted edges: equal weights, a uniform size.
    assert _weighted_targets(bulk, "start") == streams
    for stream in streams:
        assert _weighted_targets(bulk, stream) == streams
    assert bulk.nodes["stream_2"]["recvsize"] == "3000000 bytes"
    server = server_graph(80)
    check_tgen_rules(server)
    assert server.nodes["start"]["serverport"] == "80"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda g: g.add_node("start2"), "exactly one start"),
        (
            lambda g: (
                g.add_edge("pause_1", "stream_send")
                or g.nodes["stream_send"].update(peers="100.3.0.1:80")
            ),
            "end action has no option 'peers'",
        ),
        (lambda g: g.add_edge("pause_1", "wander"), "knows no action"),
        (lambda g: g.nodes["stream_0"].update(recvsize=51200), "must be a string"),
        (lambda g: g.nodes["stream_0"].update(colour="red"), "has no option 'colour'"),
        (lambda g: g.add_edge("pause_0", "stream_1", weight=2.0), "weight must be a string"),
        (lambda g: g.add_node("pause_9", time="1 s"), "not reachable"),
    ],
)
def test_graphs_tgen_would_misread_are_refused(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    graph = _perf()
    mutate(graph)
    with pytest.raises(TgenGraphError, match=message):
        check_tgen_rules(graph)


def _web(**extra: object) -> dict[str, object]:
    given = {"sizes": ["106 KB", "992 KB"], **extra}
    return check_params(given, Web.PARAMS, Where("s", "p"), "web")


def test_web_pages_are_chosen_at_random_with_a_think_time_between() -> None:
    graph = Web.build(_web(), ENDPOINT)
    check_tgen_rules(graph)
    assert _weighted_targets(graph, "start") == {"stream_0", "stream_1"}
    assert _weighted_targets(graph, "pause_think") == {"stream_0", "stream_1"}
    assert graph.has_edge("stream_0", "pause_think") and graph.has_edge("stream_1", "pause_think")
    times = graph.nodes["pause_think"]["time"].split(",")
    assert len(times) == 20 and all(t.endswith("milliseconds") for t in times)
    seconds = [int(t.split()[0]) / 1000 for t in times]
    assert statistics.mean(seconds) == pytest.approx(11.0, abs=0.01)


def test_web_think_time_can_be_uniform_in_a_range() -> None:
    graph = Web.build(_web(think_range=["1 s", "20 s"]), ENDPOINT)
    check_tgen_rules(graph)
    times = graph.nodes["pause_think"]["time"].split(",")
    seconds = sorted(int(t.split()[0]) / 1000 for t in times)
    assert len(seconds) == 20
    assert 1.0 < seconds[0] < 1.5 and 19.5 < seconds[-1] < 20.0
    # Evenly spaced: a uniform's quantiles, not an exponential's.
    gaps = {round(b - a, 2) for a, b in zip(seconds, seconds[1:], strict=False)}
    assert gaps == {0.95}
    assert statistics.mean(seconds) == pytest.approx(10.5, abs=0.01)


def test_web_think_range_errors_name_the_key() -> None:
    with pytest.raises(SpecError, match=r"s: p\.think_range\[1\]: .*time"):
        _web(think_range=["1 s", "soon"])


def test_continuous_web_clients_browse_for_the_whole_run() -> None:
    params = _web(continuous=True)
    for seed in range(5):
        assert Web.sessions(params, random.Random(seed), 300.0, 390.0) == [(300.0, None)]


def test_exponential_quantiles_look_exponential() -> None:
    values = exponential_quantiles(11.0, 200)
    assert statistics.mean(values) == pytest.approx(11.0, abs=0.01)
    # An exponential's median is ln 2 times its mean; its spread equals its mean.
    assert statistics.median(values) == pytest.approx(11.0 * 0.693, rel=0.05)
    assert statistics.pstdev(values) == pytest.approx(11.0, rel=0.1)


def test_web_sessions_alternate_with_breaks_inside_the_window() -> None:
    params = _web(session="15 min", **{"break": ["9 min", "11 min"]})
    begin, end = 300.0, 300.0 + 4 * 3600
    phases = []
    for seed in range(50):
        sessions = Web.sessions(params, random.Random(seed), begin, end)
        assert sessions and sessions[0][0] >= begin and sessions[-1][0] < end
        for (_start, stop), (next_start, _) in zip(sessions, sessions[1:], strict=False):
            assert stop is not None
            assert 9 * 60 <= next_start - stop <= 11 * 60
        for start, stop in sessions[1:]:
            assert stop is None or stop - start == pytest.approx(15 * 60)
        assert sessions[-1][1] is None or sessions[-1][1] < end
        phases.append(sessions[0][0])
    # Clients start out of step: some mid-session, some after a break.
    assert any(p == begin for p in phases) and any(p > begin for p in phases)


def test_perf_and_bulk_run_for_the_whole_window() -> None:
    params = check_params({}, Bulk.PARAMS, Where("s", "p"), "bulk")
    assert Bulk.sessions(params, random.Random(1), 300.0, 900.0) == [(300.0, None)]
