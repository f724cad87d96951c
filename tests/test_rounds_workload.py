"""The rounds workload (MCTor's phases) and variants that leave clients out."""

from pathlib import Path

import networkx as nx
import pytest

from runner.errors import SpecError
from runner.experiments import load_spec
from runner.network.mixing import variant_plan
from runner.network.schedule import Process
from runner.network.shadow_config import shadow_process
from runner.params import Where, check_params
from runner.phases import Phase, parse_phase
from workloads.models import CYCLES_END, Endpoint, Rounds, phase_of_vertex, phase_vertex
from workloads.tgen import action_type, check_tgen_rules

ENDPOINT = Endpoint("127.0.0.1:9050", ("100.3.0.1:80",))
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_phase_is_parsed_with_units() -> None:
    assert parse_phase("video: 16 x 128 KiB down") == Phase("video", 16, 131072, "down")
    assert parse_phase("upload:6x2 MiB up") == Phase("upload", 6, 2 * 1048576, "up")


@pytest.mark.parametrize(
    "text",
    [
        "video 16 x 128 KiB down",
        "video: 0 x 1 KiB down",
        "video: 2 x 1 KiB sideways",
        "Up: 1 x 1 KiB up",
        5,
    ],
)
def test_bad_phase_is_refused_with_the_expected_form(text: object) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_phase(text)


def test_bad_phase_in_a_spec_names_the_key() -> None:
    with pytest.raises(SpecError) as error:
        check_params(
            {"phases": ["video: 2 x 1 KiB down", "oops"]},
            Rounds.PARAMS,
            Where("spec.yaml", "runner.phases.params"),
            "rounds",
        )
    assert "runner.phases.params.phases[1]: expected" in str(error.value)


def _rounds_graph() -> nx.DiGraph:
    params = check_params(
        {"phases": ["video: 3 x 128 KiB down", "upload: 2 x 1 MiB up"], "pause": "5 s"},
        Rounds.PARAMS,
        Where("s", "p"),
        "rounds",
    )
    return Rounds.build(params, ENDPOINT)


def test_rounds_start_a_phase_together_and_wait_for_all_of_it() -> None:
    graph = _rounds_graph()
    check_tgen_rules(graph)
    video = [phase_vertex(0, i) for i in range(3)]
    upload = [phase_vertex(1, i) for i in range(2)]
    assert sorted(graph.successors("start")) == video
    # Each stream of a phase leads to one barrier: a pause without a time.
    barriers = {s for v in video for s in graph.successors(v)}
    assert len(barriers) == 1
    barrier = barriers.pop()
    assert action_type(barrier) == "pause" and "time" not in graph.nodes[barrier]
    (pause,) = graph.successors(barrier)
    assert graph.nodes[pause]["time"] == "5 seconds"
    assert sorted(graph.successors(pause)) == upload
    # Downloads receive the phase's size; uploads send it.
    assert graph.nodes[video[0]]["recvsize"] == "131072 bytes"
    assert graph.nodes[video[0]]["sendsize"] == "1000 bytes"
    assert graph.nodes[upload[0]]["sendsize"] == "1048576 bytes"
    assert graph.nodes[upload[0]]["recvsize"] == "1000 bytes"
    # After the last phase the rounds begin again.
    (last_barrier,) = {s for v in upload for s in graph.successors(v)}
    (last_pause,) = graph.successors(last_barrier)
    assert sorted(graph.successors(last_pause)) == video


def _graph(params: dict[str, object]) -> nx.DiGraph:
    checked = check_params(params, Rounds.PARAMS, Where("s", "p"), "rounds")
    graph = Rounds.build(checked, ENDPOINT)
    check_tgen_rules(graph)
    return graph


def test_a_client_ends_after_its_cycles() -> None:
    """After the last phase an end action counts every stream of the
    cycles: 10 cycles of 3 + 2 streams end after 50 streams; until then the
    walk goes on to the first phase."""
    graph = _graph({"phases": ["video: 3 x 1 KiB down", "upload: 2 x 1 KiB up"], "cycles": 10})
    assert action_type(CYCLES_END) == "end"
    assert graph.nodes[CYCLES_END] == {"count": "50"}
    assert list(graph.predecessors(CYCLES_END)) == ["pause_1"]
    assert sorted(graph.successors(CYCLES_END)) == [phase_vertex(0, i) for i in range(3)]
    assert Rounds.ends(
        check_params(
            {"phases": ["v: 1 x 1 KiB down"], "cycles": 10},
            Rounds.PARAMS,
            Where("s", "p"),
            "rounds",
        )
    )
    forever = _graph({"phases": ["video: 3 x 1 KiB down"]})
    assert CYCLES_END not in forever
    assert not Rounds.ends({"cycles": 0})


def test_a_phase_over_a_few_connections_runs_each_ones_requests_in_turn() -> None:
    """7 requests over 3 connections: 0, 1 and 2 start the phase; 3 follows
    0, 4 follows 1...; each connection's last request leads to the barrier."""
    graph = _graph({"phases": ["video: 7 x 1 MiB down over 3", "upload: 1 x 1 KiB up"]})
    assert sorted(graph.successors("start")) == [phase_vertex(0, i) for i in range(3)]
    for k in range(3, 7):
        assert list(graph.predecessors(phase_vertex(0, k))) == [phase_vertex(0, k - 3)]
    assert sorted(graph.predecessors("pause_barrier_0")) == [phase_vertex(0, k) for k in (4, 5, 6)]
    # The lanes share the requests: the first takes the one left over.
    phase = parse_phase("video: 7 x 1 MiB down over 3")
    assert [phase.lane_requests(lane) for lane in range(3)] == [3, 2, 2]
    assert phase.lanes == 3 and parse_phase("v: 4 x 1 KiB down").lanes == 4


@pytest.mark.parametrize(
    "text",
    ["video: 4 x 1 MiB up over 2", "video: 4 x 1 MiB down over 5", "video: 4 x 1 MiB down over 0"],
)
def test_a_phase_over_connections_is_a_download_with_at_most_one_per_stream(text: str) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_phase(text)


def test_a_client_that_ends_is_expected_to_exit_well_under_shadow() -> None:
    """Shadow checks each process's final state: a client that stops after
    its cycles must have exited with status 0, not still be running."""
    ends = shadow_process(Process("tgen", ("client.graphml",), 300, None, True), {"tgen": "tgen"})
    runs = shadow_process(Process("tgen", ("client.graphml",), 300), {"tgen": "tgen"})
    assert ends["expected_final_state"] == {"exited": 0}
    assert runs["expected_final_state"] == "running"


def test_phase_of_vertex_reads_client_and_server_names() -> None:
    assert phase_of_vertex(phase_vertex(2, 7)) == 2
    assert phase_of_vertex("passive-stream:" + phase_vertex(1, 0)) == 1
    assert phase_of_vertex("stream_0") is None
    assert phase_of_vertex("stream_px_1") is None


USER = "    user:  {count: 1, workload: phases, bandwidth: 1 Gbit, regions: [nyc]}\n"


def _with_peer(tmp_path: Path, cap: str = "second") -> Path:
    """mctor-small with a second user, ``second`` (mctor-small's own
    ``peer`` class is the fair scenario's), that the base scenario leaves
    out (a cap naming ``cap``)."""
    text = (CONFIGS / "mctor-small.yaml").read_text()
    assert USER in text
    text = text.replace(USER, USER + USER.replace("user: ", "second: "))
    text = text.replace(
        "        description: one user\n",
        f"        description: one user\n        clients: {{{cap}: 0}}\n",
    )
    path = tmp_path / "mctor-peer.yaml"
    path.write_text(text)
    return path


def test_variant_client_caps_leave_clients_out_and_keep_the_rest(tmp_path: Path) -> None:
    spec = load_spec(_with_peer(tmp_path))
    variants = {v.name: v for v in spec.variants}
    base = variant_plan(spec, variants["base-n5-uniform-noloss"], 1)
    busy = variant_plan(spec, variants["busy-n5-uniform-noloss"], 1)

    def clients(plan: object) -> dict[str, str]:
        return {h.name: h.cls for h in plan.hosts if h.role == "client"}  # type: ignore[attr-defined]

    assert sorted(clients(base).values()) == ["user"]
    assert sorted(clients(busy).values()) == ["second", "user"]
    # The hosts a variant keeps are the same hosts, placed the same way.
    others = {h.name: h for h in busy.hosts if h.cls != "second"}
    assert {h.name: h for h in base.hosts} == others
    # The busy scenario's competition is cross traffic on the middle's host.
    assert variants["busy-n5-uniform-noloss"].cross_flows is None
    assert variants["base-n5-uniform-noloss"].cross_flows == 0


def test_variant_client_caps_name_known_classes(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as error:
        load_spec(_with_peer(tmp_path, cap="pear"))
    assert "variants.base-n1-noloss.clients.pear" in str(error.value)
    assert "unknown client class" in str(error.value)
