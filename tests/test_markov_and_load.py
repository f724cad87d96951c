"""The markov workload (tgen's own Markov models, from the published
PrivCount models) and the load check, against logs of a real Shadow run."""

import gzip
import io
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import yaml

from runner.analyses.load import load_failures, run_loads
from runner.datasets import PACKET_MODEL, STREAM_MODEL, read_data
from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.layout import SHADOW_DATA
from runner.logs.bandwidth import parse_lines as parse_bandwidth
from runner.logs.run_logs import RunLogs
from runner.logs.tgen import parse_lines as parse_tgen
from runner.manifest import RunRecord
from runner.network.generate import cross_flows
from runner.network.plan import plan_network
from runner.network.schedule import host_processes
from runner.spec.model import ALL_RELAYS, Spec
from runner.tables.schema import RelayLoad, relay_load_rows
from tests.conftest import CI_SMALL, FIXTURES, needs_data
from workloads.markov import MarkovModelError, flow_model, to_tgen_model
from workloads.models import Endpoint, Markov, cross_traffic_graph
from workloads.tgen import check_tgen_rules

SHADOW_EPOCH = 946684800
needs_models = needs_data(STREAM_MODEL, PACKET_MODEL)


def _read(text: str) -> nx.DiGraph:
    return nx.read_graphml(io.StringIO(text))


@needs_models
@pytest.mark.parametrize("file", [STREAM_MODEL, PACKET_MODEL])
def test_published_models_convert_to_what_tgen_1_1_reads(file: object) -> None:
    source = read_data(file)  # type: ignore[arg-type]
    old = nx.read_graphml(io.BytesIO(source))
    new = _read(to_tgen_model(source, "model"))
    assert new.number_of_nodes() == old.number_of_nodes()
    assert new.number_of_edges() == old.number_of_edges()
    names = [d["name"] for _, d in new.nodes(data=True)]
    assert names.count("start") == 1
    observations = {d["name"] for _, d in new.nodes(data=True) if d["type"] == "observation"}
    assert "F" in observations and observations <= {"+", "-", "F"}
    for a, b, data in new.edges(data=True):
        assert data["type"] in ("transition", "emission")
        if data["type"] == "emission":
            assert data["distribution"] in ("exponential", "lognormal", "uniform")
            old_edge = old.edges[_old_id(old, new, a), _old_id(old, new, b)]
            if data["distribution"] == "exponential":
                assert data["param_rate"] == pytest.approx(old_edge["exp_lambda"])
            if data["distribution"] == "lognormal":
                assert data["param_location"] == pytest.approx(old_edge["lognorm_mu"])
                assert data["param_scale"] == pytest.approx(old_edge["lognorm_sigma"])


def _old_id(old: nx.DiGraph, new: nx.DiGraph, node: str) -> str:
    name = new.nodes[node]["name"]
    return "$" if name == "+" and "$" in old else name


def test_a_model_that_is_not_one_is_refused() -> None:
    with pytest.raises(MarkovModelError, match="not graphml"):
        to_tgen_model(b"<graphml", "broken.graphml")
    graph = nx.DiGraph()
    graph.add_node("s1", type="state")
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    with pytest.raises(MarkovModelError, match="one state called start"):
        to_tgen_model(buffer.getvalue(), "nostart.graphml")


def test_the_flow_model_draws_pauses_of_the_given_mean() -> None:
    graph = _read(flow_model(20.0))
    (emission,) = [d for _, _, d in graph.edges(data=True) if d["type"] == "emission"]
    assert emission["distribution"] == "exponential"
    assert 1 / emission["param_rate"] == pytest.approx(20e6)  # microseconds


def test_a_markov_client_graph_passes_tgen_rules_and_seeds_its_models() -> None:
    params = {"flow_interval": 60.0, "timeout": 600.0, "stallout": 300.0}
    endpoint = Endpoint("127.0.0.1:9050", ("100.3.0.1:80",), seed=4242)
    graph = Markov.build(params, endpoint)
    check_tgen_rules(graph)
    traffic = graph.nodes["traffic"]
    assert traffic["markovmodelseed"] == traffic["socksauthseed"] == "4242"
    assert traffic["streammodelpath"] == Markov.STREAM_MODEL
    assert graph.has_edge("traffic", "traffic")


def test_tgen_parses_a_markov_clients_streams() -> None:
    with gzip.open(FIXTURES / "tgen-markov-client.stdout.gz", "rt") as handle:
        lines = handle.readlines()
    transfers = list(parse_tgen(lines))
    finished = sum("[stream-success]" in ln or "[stream-error]" in ln for ln in lines)
    assert len(transfers) == finished > 20
    assert {t.vertex for t in transfers} == {"traffic"}
    assert len({t.bytes_received for t in transfers}) > 5


def _bw_lines() -> list[str]:
    with gzip.open(FIXTURES / "oniontrace-relay-bw.stdout.gz", "rt") as handle:
        return handle.readlines()


def test_bw_events_are_read_and_damaged_ones_counted() -> None:
    lines = _bw_lines()
    seconds = list(parse_bandwidth(lines))
    assert len(seconds) == sum("650 BW " in ln for ln in lines)
    assert seconds == sorted(seconds, key=lambda s: s.time)
    errors: list[int] = []
    damaged = [*lines[:5], "2000-01-01 00:00:01 9466 [x] Logger: 650 BW 12\n"]
    list(parse_bandwidth(damaged, lambda n, line, why: errors.append(n)))
    assert errors == [6]


def _load_run(tmp_path: Path, host: str, hosts: dict[str, Any]) -> RunLogs:
    """A run whose ``host`` logged the fixture's BW events, measured from
    300 s to 600 s."""
    run = tmp_path / "run"
    home = run / SHADOW_DATA / "hosts" / host
    home.mkdir(parents=True)
    (home / "oniontrace.1003.stdout").write_text("".join(_bw_lines()))
    manifest = {
        "variant": "v",
        "seed": 1,
        "clock_epoch": SHADOW_EPOCH,
        "duration": {"bootstrap_s": 300.0, "measure_s": 300.0},
        "hosts": hosts,
    }
    return RunLogs(run, RunRecord(manifest))


def _measured_seconds() -> list[Any]:
    return [
        s for s in parse_bandwidth(_bw_lines()) if SHADOW_EPOCH + 300 <= s.time < SHADOW_EPOCH + 600
    ]


def test_relay_load_is_the_busier_direction_over_the_link(tmp_path: Path) -> None:
    capacity = 671744  # bytes/s
    hosts = {
        "relay2exit": {"role": "exit", "bandwidth_up_bits": capacity * 8},
        "perfclient1exit": {"role": "client", "bandwidth_up_bits": 8000},
    }
    (row,) = list(relay_load_rows(_load_run(tmp_path, "relay2exit", hosts)))
    window = _measured_seconds()
    used = sorted(max(s.read, s.written) / capacity for s in window)
    assert row.seconds == len(window) == 300
    assert row.mean == pytest.approx(sum(used) / len(used), abs=1e-4)
    assert row.p90 == pytest.approx(used[270], abs=1e-4)
    assert row.capacity_bytes == capacity


def test_a_client_relay_reads_over_its_downlink_and_writes_over_its_uplink(
    tmp_path: Path,
) -> None:
    """A client relay's own downloads come in over its downlink: held
    against its uplink, a residential client relay would look several times
    busier than its link allows."""
    up, down = 100_000, 1_000_000  # bytes/s
    hosts = {
        "perfclient1exit": {
            "role": "client",
            "client_relay": True,
            "client_relay_as": "exit",
            "bandwidth_up_bits": up * 8,
            "bandwidth_down_bits": down * 8,
        },
    }
    (row,) = list(relay_load_rows(_load_run(tmp_path, "perfclient1exit", hosts)))
    window = _measured_seconds()
    used = [max(s.read / down, s.written / up) for s in window]
    assert row.role == "client-relay-exit"
    assert row.mean == pytest.approx(sum(used) / len(used), abs=1e-4)
    assert row.mean < sum(max(s.read, s.written) / up for s in window) / len(window)
    assert row.capacity_bytes == up


def _load(variant: str, seed: int, role: str, mean: float) -> RelayLoad:
    return RelayLoad(variant, seed, f"{role}{mean}", role, mean, mean)


def test_the_load_check_names_idle_and_saturated_runs() -> None:
    runs = run_loads(
        [
            _load("a", 1, "guard", 0.1),
            _load("a", 1, "guard", 0.2),
            _load("a", 1, "exit", 0.95),
            _load("a", 2, "guard", 0.6),
            _load("a", 2, "exit", 0.7),
        ]
    )
    guards = {r.seed: r for r in runs if r.role == "guard"}
    assert guards[1].mean == pytest.approx(0.15) and guards[1].relays == 2
    everything = [r for r in runs if r.role == ALL_RELAYS and r.seed == 1]
    assert everything[0].mean == pytest.approx((0.1 + 0.2 + 0.95) / 3)
    failures = [str(f) for f in load_failures(runs, {"guard": (0.5, 0.9), "exit": (0.5, 0.9)})]
    assert failures == [
        "a/seed-1: exit relays' mean utilisation 95% is outside the required 50%-90% (saturated)",
        "a/seed-1: guard relays' mean utilisation 15% is outside the required 50%-90% (idle)",
    ]
    # One busy hop among idle ones: the busiest relay of a role.
    assert guards[1].busiest == pytest.approx(0.2)
    failures = [str(f) for f in load_failures(runs, {"busiest guard": (0.5, 1.0)})]
    assert failures == [
        "a/seed-1: busiest guard relay's mean utilisation 20% is outside the required "
        "50%-100% (idle)"
    ]
    # Checked only under the variants named: a mechanism that throttles
    # traffic lowers the load by its own effect.
    throttled = run_loads([_load("b", 1, "guard", 0.1)])
    scoped = load_failures(runs + throttled, {"guard": (0.5, 0.9)}, ("a",))
    assert [str(f) for f in scoped] == [
        "a/seed-1: guard relays' mean utilisation 15% is outside the required 50%-90% (idle)"
    ]
    assert len(load_failures(runs + throttled, {"guard": (0.5, 0.9)})) == 2


def _cross_spec(cross: dict[str, object], **variant: object) -> Spec:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["cross_traffic"] = cross
    data["variants"]["conflux-on"].update(variant)
    return parse_spec(data, "test.yaml")


def test_cross_traffic_runs_on_the_relays_it_names() -> None:
    spec = _cross_spec(
        {"relays": ["middle"], "flows": 3, "size": "2 MiB", "direction": "both"}, cross_flows=0
    )
    plan = plan_network(spec, 1)
    off, on = spec.variant("conflux-on"), spec.variant("conflux-off")
    middles = plan.with_role("middle")
    assert [cross_flows(spec, on, h) for h in middles] == [3, 3]
    assert all(cross_flows(spec, on, h) == 0 for h in plan.with_role("exit", "guard"))
    assert all(cross_flows(spec, off, h) == 0 for h in middles)
    graph = cross_traffic_graph(3, 2 * 2**20, "both", ("100.3.0.1:80",))
    check_tgen_rules(graph)
    streams = sorted(n for n in graph if n.startswith("stream_cross_"))
    assert len(streams) == 3
    directions = [graph.nodes[s]["recvsize"] == "2097152 bytes" for s in streams]
    assert directions == [True, False, True]  # every other flow each way
    assert "socksproxy" not in graph.nodes["start"]  # not through Tor
    processes = host_processes(middles[0], 9051, None, "server.graphml", [(300.0, None)], "x")
    assert [(p.program, p.start) for p in processes][-1] == ("tgen", 300.0)


@pytest.mark.parametrize(
    ("cross", "variant", "key", "expected"),
    [
        ({"relays": ["client"], "flows": 1}, {}, "network.cross_traffic.relays[0]", "relay role"),
        ({"relays": ["middle"], "flows": 0}, {}, "network.cross_traffic.flows", "at least 1"),
        (
            {"relays": ["middle"], "flows": 1, "direction": "sideways"},
            {},
            "network.cross_traffic.direction",
            "down, up, both",
        ),
    ],
)
def test_cross_traffic_is_checked(
    cross: dict[str, object], variant: dict[str, object], key: str, expected: str
) -> None:
    with pytest.raises(SpecError) as err:
        _cross_spec(cross, **variant)
    assert err.value.key == key and expected in err.value.expected


def test_a_variant_cannot_change_cross_traffic_the_network_lacks() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["variants"]["conflux-on"]["cross_flows"] = 2
    with pytest.raises(SpecError) as err:
        parse_spec(data, "test.yaml")
    assert err.value.key == "variants.conflux-on.cross_flows"
