from pathlib import Path

import networkx as nx
import pytest

from runner.params import Where, check_params
from workloads.models import Bulk, Endpoint, Perf, server_graph
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


def test_bulk_and_server() -> None:
    params = check_params({"size": "5 MiB"}, Bulk.PARAMS, Where("s", "p"), "bulk")
    bulk = Bulk.build(params, ENDPOINT)
    check_tgen_rules(bulk)
    assert bulk.has_edge("stream_bulk", "stream_bulk")
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
