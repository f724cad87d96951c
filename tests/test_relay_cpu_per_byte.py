"""relay_cpu_per_byte, a hypothesis metric read from the relays of a run:
their tor CPU seconds (process_cpu, local backend) over the bytes they read
and wrote (relay_load), per run; the change variant over reference per
seed; a run without process CPU (Shadow) answered as needing the local
backend; and the spec keys that make no sense for it refused."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from runner.analyses.answers import (
    NO_CHANGE,
    SUPPORTED,
    UNDETERMINED,
    answer,
    answer_record,
    answers,
    observe,
)
from runner.analyses.relay_work import GB, RelayWork, per_run, relay_work, unmeasured
from runner.errors import SpecError
from runner.experiments import load_spec, parse_spec
from runner.layout import Layout
from runner.planning.seed_plan import Alternative, Plan, spread
from runner.report.answers import answer_rows
from runner.report.seed_plan import render
from runner.spec.claims import in_reading
from runner.spec.hypotheses import Hypothesis
from runner.tables.schema import PROCESS_CPU, RELAY_LOAD, ProcessCpu, RelayLoad
from tests.specs import ci_small_data

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (101, 102, 103)
# relay -> (role, CPU seconds without the limit, bytes read and written a second)
RELAYS = {
    "relay1exit": ("exit", 10.0, 1_000_000),
    "relay2guard": ("guard", 6.0, 500_000),
    "relay3middle": ("middle", 4.0, 250_000),
}
SECONDS = 180
# Under the limit the relays move 0.8 of the bytes with these shares of the
# CPU, per seed: CPU per byte 1.20, 1.22 and 1.21 times the unlimited run's.
LIMITED_CPU = {101: 0.96, 102: 0.976, 103: 0.968}
MOVED = 0.8
UNLIMITED_PER_GB = 20.0 / (2 * (1_000_000 + 500_000 + 250_000) * SECONDS) * GB

H = Hypothesis(
    name="the-limit-costs-relay-cpu-per-byte",
    variant="limit-low",
    reference="unlimited",
    metric="relay_cpu_per_byte",
    expect="increase",
    smallest_change=0.045,
    extension="a test's own question",
)


def _cpu_rows(cpu_share: dict[int, float], variant: str) -> list[ProcessCpu]:
    rows = []
    for seed in SEEDS:
        for relay, (role, cpu, _) in RELAYS.items():
            rows.append(ProcessCpu(variant, seed, relay, role, "tor", cpu * cpu_share[seed]))
        rows += [
            # Not a relay's tor: an authority, a client, a client that also
            # runs a relay, a relay's other program, a server.
            ProcessCpu(variant, seed, "4uthority1", "authority", "tor", 50.0),
            ProcessCpu(variant, seed, "perfclient1exit", "client", "tor", 50.0),
            ProcessCpu(variant, seed, "markovclient9", "client", "tor", 50.0),
            ProcessCpu(variant, seed, "relay1exit", "exit", "oniontrace", 50.0),
            ProcessCpu(variant, seed, "server1exit", "server", "tgen", 50.0),
            # A relay whose load is missing (a lost log): left out of both.
            ProcessCpu(variant, seed, "relay4middle", "middle", "tor", 50.0),
        ]
    return rows


def _load_rows(moved: float, variant: str) -> list[RelayLoad]:
    rows = []
    for seed in SEEDS:
        for relay, (role, _, per_second) in RELAYS.items():
            each = round(per_second * moved)
            rows.append(RelayLoad(variant, seed, relay, role, 0.5, 0.9, 10**7, SECONDS, each, each))
        # The client relay's load: its own traffic is in it.
        rows.append(
            RelayLoad(variant, seed, "markovclient9", "client-relay-exit", 0.5, 0.9, 10**6, 1, 1, 1)
        )
    return rows


def _tables(shares: dict[int, float] = LIMITED_CPU) -> tuple[list[ProcessCpu], list[RelayLoad]]:
    cpu = _cpu_rows(dict.fromkeys(SEEDS, 1.0), "unlimited") + _cpu_rows(shares, "limit-low")
    loads = _load_rows(1.0, "unlimited") + _load_rows(MOVED, "limit-low")
    return cpu, loads


def _work(shares: dict[int, float] = LIMITED_CPU) -> list[RelayWork]:
    return relay_work(*_tables(shares))


def test_a_runs_value_is_its_relays_tor_cpu_over_the_bytes_they_moved() -> None:
    work = _work()
    assert {w.relay for w in work} == set(RELAYS)  # relays' tor only, with a load
    assert len(work) == len(SEEDS) * 2 * len(RELAYS)
    values = per_run(work)
    assert values[("unlimited", 101)] == pytest.approx(UNLIMITED_PER_GB)
    assert values[("limit-low", 102)] == pytest.approx(UNLIMITED_PER_GB * 0.976 / MOVED)


def test_the_change_is_variant_over_reference_per_seed_with_a_verdict() -> None:
    work = _work()
    o = observe(H, [], [], work=work)
    assert o.missing is None
    assert o.change.ratios == pytest.approx([1.20, 1.22, 1.21])
    found = answer(H, [], [], work=work)
    assert found.estimate.n == 3
    assert found.estimate.mean == pytest.approx(math.exp(math.log(1.2 * 1.22 * 1.21) / 3) - 1)
    assert found.verdict == SUPPORTED
    # The same CPU per byte under the limit, within a percent: no change that matters.
    alike = {101: 0.8 * 0.99, 102: 0.8 * 1.01, 103: 0.8 * 1.0}
    assert answer(H, [], [], work=_work(alike)).verdict == NO_CHANGE


def test_a_run_without_process_cpu_leaves_its_seed_out() -> None:
    cpu, loads = _tables()
    cpu = [r for r in cpu if (r.variant, r.seed) != ("limit-low", 103)]  # a Shadow run
    assert observe(H, [], [], work=relay_work(cpu, loads)).change.ratios == pytest.approx(
        [1.20, 1.22]
    )


def test_shadow_runs_are_answered_as_needing_the_local_backend() -> None:
    _, loads = _tables()
    work = relay_work([], loads)  # Shadow: no process_cpu rows
    assert work == []
    found = answer(H, [], [], work=work)
    assert found.verdict == UNDETERMINED and found.estimate.n == 0
    assert found.held is not None
    assert "relay_cpu_per_byte" in found.held and "local backend" in found.held
    assert answer_record(found, None)["held"] == found.held
    _, rows = answer_rows([found])
    assert "needs the relays' process CPU" in rows[0][-1]
    # A hypothesis on clients is not held for the relays' CPU.
    on_clients = Hypothesis(
        name="c", variant="a", reference="b", metric="ttlb", expect="decrease", smallest_change=0.1
    )
    assert unmeasured(on_clients, []) is None


def test_the_plan_takes_the_seeds_spread_alone_and_says_what_is_missing() -> None:
    found = spread(H, [], [], [], _work())
    assert found is not None and found.seeds == 3
    assert found.transfers is None and found.clients is None  # relays, not clients
    assert found.effect == pytest.approx(math.log(1.2 * 1.22 * 1.21) / 3)
    assert spread(H, [], [], [], []) is None
    why = unmeasured(H, [])
    assert why is not None
    plan = Plan(
        (1, 2), 2, 1, 8, {}, None, None, {}, [], (H,), "pilot", Alternative("pilot"), None,
        {H.name: why},
    )  # fmt: skip
    assert why in "\n".join(render(plan, 2, 16))


def _write_tables(layout: Layout, cpu: list[ProcessCpu], loads: list[RelayLoad]) -> None:
    layout.experiment_dir.mkdir(parents=True, exist_ok=True)
    PROCESS_CPU.write(layout.experiment_dir, cpu)
    RELAY_LOAD.write(layout.experiment_dir, loads)


def test_the_configs_hypothesis_reads_the_collected_tables(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "configs" / "tortoise-cpu-local.yaml")
    local = Layout(tmp_path, "tortoise-cpu-local-local")
    _write_tables(local, *_tables())
    (found,) = answers(spec, local, [])
    assert found.hypothesis.metric == "relay_cpu_per_byte"
    assert found.estimate.n == 3 and found.verdict == SUPPORTED
    shadow = Layout(tmp_path, "tortoise-cpu-local")
    _write_tables(shadow, [], _tables()[1])
    (held,) = answers(spec, shadow, [])
    assert held.verdict == UNDETERMINED and held.held is not None
    assert "--backend local" in held.held


def _spec(**changes: Any) -> dict[str, Any]:
    data = ci_small_data()
    data.pop("claims")
    hypothesis = {
        "name": "h",
        "variant": "conflux-on",
        "reference": "conflux-off",
        "metric": "relay_cpu_per_byte",
        "expect": "increase",
        "smallest_change": "5%",
        "extension": "a test's own question",
    } | changes
    data["hypotheses"] = [{k: v for k, v in hypothesis.items() if v is not None}]
    return data


def test_the_spec_takes_the_metric() -> None:
    (h,) = parse_spec(_spec(), "x.yaml").hypotheses
    assert h.metric == "relay_cpu_per_byte" and h.cls is None
    assert h.describe() == (
        "conflux-on vs conflux-off: relay_cpu_per_byte (relays) should increase by at least 5%"
    )


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"class": "perf"}, "hypotheses[0].class", "reads a run's relays, not its clients"),
        ({"contrast": "others"}, "hypotheses[0].contrast", "reads a run's relays"),
        ({"same_clients": True}, "hypotheses[0].same_clients", "reads a run's relays"),
        ({"size": "5 MiB"}, "hypotheses[0].size", "a size applies to ttfb"),
        ({"sizes": ["5 MiB", "1 MiB"]}, "hypotheses[0].sizes", "a size applies to ttfb"),
        ({"quantile": 0.9}, "hypotheses[0].quantile", "a quantile applies to"),
        ({"phase": "download"}, "hypotheses[0].phase", "a phase applies to round_completion"),
        (
            {
                "extension": None,
                "claim": {"id": "T8", "figure": "f", "change": "+6.9%", "reading": "throughput"},
            },
            "hypotheses[0].claim.reading",
            "expected `reading: cpu`",
        ),
        (
            {
                "metric": "ttlb",
                "expect": "decrease",
                "extension": None,
                "claim": {"id": "T8", "figure": "f", "change": "+6.9%", "reading": "cpu"},
            },
            "hypotheses[0].claim.reading",
            "a CPU figure is read by relay_cpu_per_byte only",
        ),
    ],
)
def test_keys_that_make_no_sense_for_it_are_refused(
    changes: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(_spec(**changes), "x.yaml")
    assert caught.value.key == key and message in str(caught.value)


def test_a_cpu_figure_is_read_as_given() -> None:
    assert in_reading(0.069, "cpu", "relay_cpu_per_byte") == pytest.approx(0.069)
