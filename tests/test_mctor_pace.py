"""MCTor's redesign: each variant's simulated time from its own cycles,
paced cross traffic, claim M8's fair share and the cycles each run did."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from runner.analyses.stats import Estimate
from runner.analyses.workload_rounds import Round, cycles_completed
from runner.errors import SpecError
from runner.experiments import load_spec
from runner.experiments.mctor.fair_share import competing_flows, fair_share, share_checks
from runner.experiments.mctor.loss_gain import LossGain
from runner.network.backends import SHADOW
from runner.params import Where, check_params
from workloads.markov import PACKET_BYTES, paced_packet_model
from workloads.models import CROSS_PACKET_MODEL, Rounds, cross_traffic_graph

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _params(**given: object) -> dict[str, object]:
    body = {"phases": ["video: 4 x 1 MiB down over 2", "download: 2 x 1 MiB down"], **given}
    return check_params(body, Rounds.PARAMS, Where("s", "p"), "rounds")


def test_a_cycle_is_its_bytes_at_the_paced_rate_a_ramp_per_request_and_the_pauses() -> None:
    params = _params(rate="8 Mbit", ramp="1 s", pause="2 s", cycles=10)
    # video: 4 MiB at 1 MB/s, 2 requests in turn, a pause; download: 2 MiB, 1 request.
    expected = (4 * 2**20 / 1e6 + 2 + 2) + (2 * 2**20 / 1e6 + 1 + 2)
    assert Rounds.cycle_seconds(params, 1.0) == pytest.approx(expected)
    # Half the pace doubles the transfers' part only.
    slower = (8 * 2**20 / 1e6 + 4) + (4 * 2**20 / 1e6 + 3)
    assert Rounds.cycle_seconds(params, 0.5) == pytest.approx(slower)


def test_each_variant_simulates_its_own_cycles_with_slack() -> None:
    """The paces of a variant's levels multiply, and its traffic is slack x
    cycles x its expected cycle: a lossy or busy variant runs longer, none
    longer than duration.measure (iperf at 0.05% is the slowest)."""
    spec = load_spec(CONFIGS / "mctor-small.yaml")
    params = spec.workloads["phases"].params
    busy = spec.variant("iperf-n1-loss05")
    assert busy.pace == pytest.approx(0.9 * 0.22)
    expected = params["slack"] * params["cycles"] * Rounds.cycle_seconds(params, busy.pace)
    assert spec.measure_of("iperf-n1-loss05") == pytest.approx(expected, abs=1)
    base = spec.measure_of("base-n1-noloss")
    assert base < spec.measure_of("base-n1-loss05") < spec.measure_of("iperf-n1-loss05")
    assert max(spec.measure_of(v.name) for v in spec.variants) <= spec.duration.measure
    # The Shadow run stops when its own traffic ends, and its identity says so.
    assert SHADOW.measure(spec, "base-n1-noloss") == base
    assert SHADOW.measure(spec) == spec.duration.measure


def test_a_variant_whose_cycles_need_more_than_the_measurement_is_refused(
    tmp_path: Path,
) -> None:
    text = (CONFIGS / "mctor-small.yaml").read_text()
    bad = tmp_path / "short.yaml"
    bad.write_text(text.replace("  measure: 60 min\n", "  measure: 20 min\n", 1))
    with pytest.raises(SpecError) as error:
        load_spec(bad)
    assert "duration.measure" in str(error.value) and "busy-onelink5-noloss" in str(error.value)


def test_cycles_without_an_expected_rate_are_refused(tmp_path: Path) -> None:
    text = (CONFIGS / "mctor-small.yaml").read_text()
    bad = tmp_path / "norate.yaml"
    bad.write_text(text.replace("      rate: 28 Mbit", "      ramp2: 0", 1).replace("ramp2: 0", ""))
    with pytest.raises(SpecError) as error:
        load_spec(bad)
    assert "workloads.phases.params.rate" in str(error.value)


def test_a_paced_flow_sends_at_its_rate_in_bursts_tgen_pauses_after() -> None:
    graph = nx.read_graphml(__import__("io").StringIO(paced_packet_model(5e6)))
    delays = [d["param_low"] for _, _, d in graph.edges(data=True) if d["type"] == "emission"]
    gap = max(delays)
    assert gap > 10_000  # tgen pauses only after more than 10 ms
    rate = len(delays) * PACKET_BYTES * 8 / (gap / 1e6)
    assert rate == pytest.approx(5e6, rel=1e-6)
    assert sorted(delays)[:-1] == [0.0] * (len(delays) - 1)


def test_paced_cross_traffic_streams_name_the_model_and_send_nothing() -> None:
    graph = cross_traffic_graph(1, 20 * 2**20, "down", ("100.3.0.1:80",), 5e6)
    stream = graph.nodes["stream_cross_0"]
    assert stream["packetmodelpath"] == CROSS_PACKET_MODEL
    assert stream["sendsize"] == "0 bytes"
    greedy = cross_traffic_graph(1, 20 * 2**20, "down", ("100.3.0.1:80",))
    assert "packetmodelpath" not in greedy.nodes["stream_cross_0"]


def test_m8_fair_share() -> None:
    assert fair_share(1, 9) == 1
    assert fair_share(5, 1) == pytest.approx(1.0)  # alone on the link: no gain
    assert fair_share(5, 9) == pytest.approx(5 / (1 + 4 / 9))
    with pytest.raises(ValueError):
        fair_share(0, 3)


def test_m8_prediction_stands_beside_the_measured_throughput() -> None:
    """busy's 8 greedy flows make k = 9; iperf's paced flow and base's
    none make k = 1. The measured figure is the inverse of the change."""
    spec = load_spec(CONFIGS / "mctor-small.yaml")
    assert competing_flows(spec, spec.variant("busy-n5-uniform-noloss")) == 8
    assert competing_flows(spec, spec.variant("iperf-n5-uniform-noloss")) == 0
    assert competing_flows(spec, spec.variant("base-n5-uniform-noloss")) == 0
    gains = [
        LossGain(
            "busy-n5-uniform-noloss",
            "busy-n1-noloss",
            "download",
            "busy",
            "n5-uniform",
            0.0,
            Estimate(-0.5, -0.6, -0.4, 3),
        ),
        LossGain(
            "base-n5-uniform-noloss", "base-n1-noloss", "download", "base", "n5-uniform", 0.0,
            Estimate(-0.2, None, None, 1),
        ),
    ]  # fmt: skip
    busy, base = share_checks(spec, gains)
    assert (busy.connections, busy.flows) == (5, 9)
    assert busy.predicted == pytest.approx(5 / (1 + 4 / 9))
    assert busy.measured.mean == pytest.approx(2.0)
    assert (busy.measured.low, busy.measured.high) == pytest.approx((1 / 0.6, 1 / 0.4))
    assert (base.flows, base.predicted) == (1, pytest.approx(1.0))
    assert base.measured.low is None


def _round(variant: str, seed: int, host: str, phase: str, ok: bool = True) -> Round:
    return Round(variant, seed, host, phase, 0.0, 1, 1, 0 if ok else 1, 1.0 if ok else None, 1)


def test_a_run_completed_as_many_cycles_as_its_fewest_complete_rounds() -> None:
    rs = [_round("v", 1, "c1", "video") for _ in range(10)]
    rs += [_round("v", 1, "c1", "download") for _ in range(9)]
    rs += [_round("v", 1, "c1", "download", ok=False)]
    rs += [_round("v", 2, "c1", p) for p in ("video", "download") for _ in range(10)]
    assert cycles_completed(rs) == {("v", 1): 9, ("v", 2): 10}
