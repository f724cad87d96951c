"""runner plan: the parts of the spread between seeds, the cost of a run,
and the designs it predicts."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from runner.planning.plan_load import (
    busiest_by_role,
    busiest_utilisation,
    class_demand,
    role_capacity,
)
from runner.planning.seed_plan import (
    Alternative,
    CostModel,
    PilotConditions,
    RunCost,
    Spread,
    cheapest,
    cost_model,
    predict,
    scaling,
    spread,
)
from runner.spec.model import Spec
from runner.tables.schema import RelayLoad, TransferRow
from tests.conftest import A_TENTH_FASTER

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
H = A_TENTH_FASTER


def _rows(
    seeds: int, clients: int, seed_sd: float, client_sd: float, transfer_sd: float
) -> list[TransferRow]:
    """Each (seed, client) draws a path; the variant halves every time, give
    or take how much this network suits it (``seed_sd``)."""
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(1, seeds + 1):
        suits = rng.normal(0, seed_sd)
        for c in range(clients):
            for variant, factor in (("old", 1.0), ("new", 0.5 * math.exp(suits))):
                path = rng.normal(0, client_sd)
                for t in rng.normal(0, transfer_sd, 10):
                    ttlb = 10 * factor * math.exp(path + t)
                    rows.append(
                        TransferRow(
                            variant, seed, f"c{c}", "perf", True, 1, 0.0, 0.1, ttlb, True, ""
                        )
                    )
    return rows


def test_the_spread_is_split_into_its_parts() -> None:
    # Clients differ a lot, networks not at all: the seeds' spread is the clients'.
    s = spread(H, _rows(8, 4, 0.0, 0.4, 0.05), [])
    assert s is not None and s.seeds == 8
    assert s.effect == pytest.approx(math.log(0.5), abs=0.15)
    assert s.clients is not None and s.transfers is not None
    assert s.clients > 5 * s.transfers
    assert s.between < s.clients
    # Networks differ, clients do not: the seeds' part dominates.
    t = spread(H, _rows(8, 4, 0.4, 0.0, 0.05), [])
    assert t is not None and t.clients is not None
    assert t.between > 5 * t.clients
    # One client a seed: its part cannot be told from the seeds'.
    one = spread(H, _rows(8, 1, 0.0, 0.4, 0.05), [])
    assert one is not None and one.clients is None and one.between > 0


def test_more_clients_help_only_the_parts_they_average() -> None:
    s = Spread("h", 8, -0.7, 0.2, 0.02, 0.08, 0.10)
    assert s.predicted(1, 1, 1) == pytest.approx(0.20)
    assert s.predicted(2, 1, 1) == pytest.approx(0.10 + 0.04 + 0.01)
    assert s.predicted(1, 1, 0.5) == pytest.approx(0.10 + 0.08 + 0.04)


def test_the_cost_of_a_run_is_fitted_on_the_pilot() -> None:
    runs = [RunCost("v", s, 60 + 2e-6 * b, 70 + 2e-6 * b, b) for s, b in enumerate((1e7, 3e7, 5e7))]
    model = cost_model(runs, 0.1)
    assert model is not None and model.fitted
    assert model.fixed_cpu_s == pytest.approx(60, rel=1e-6)
    assert model.run_cpu_s(2, 1, 1, 1) == pytest.approx(60 + 2 * 2e-6 * 3e7)
    # One run tells no slope: the split follows the host counts.
    single = cost_model(runs[:1], 0.25)
    assert single is not None and not single.fitted
    assert single.run_cpu_s(1, 1, 1, 1) == pytest.approx(runs[0].cpu_s)


def test_designs_that_load_the_network_are_flagged_and_not_chosen() -> None:
    spreads = {"h": Spread("h", 5, math.log(0.6), 0.30, 0.01, 0.25, 0.04)}
    cost = CostModel(60.0, 1e-6, 1e8, 1.1, 15, True)
    alternatives = (Alternative("as configured"), Alternative("4x", clients=4))
    found = predict(spreads, (H,), cost, 3, 0.6, {"middle": 0.2}, 1.0, alternatives)
    configured, more = found
    assert more.busiest == pytest.approx(0.8) and more.loads and not configured.loads
    assert more.fixed_seeds["h"] < configured.fixed_seeds["h"]  # fewer seeds, but loaded
    assert cheapest(found) is configured
    assert configured.rule_max >= configured.fixed_seeds["h"]
    assert configured.cpu_s_per_seed == pytest.approx(3 * (60 + 100))


def test_later_rounds_of_the_hypotheses_variants_cost_only_those_runs() -> None:
    from runner.planning.seed_plan import FIRST_ROUND

    spreads = {"h": Spread("h", 5, math.log(0.8), 0.30, 0.01, 0.25, 0.04)}
    cost = CostModel(60.0, 1e-6, 1e8, 1.1, 15, True)
    alternatives = (Alternative("as configured"),)
    (every,) = predict(spreads, (H,), cost, 30, 0.6, {"middle": 0.2}, 1.0, alternatives)
    (later,) = predict(
        spreads, (H,), cost, 30, 0.6, {"middle": 0.2}, 1.0, alternatives, later_variants=2
    )
    seeds = every.expected_seeds
    assert seeds > FIRST_ROUND and later.expected_seeds == seeds
    per_run = 60 + 100
    assert every.cpu_hours_expected == pytest.approx(per_run * 30 * seeds / 3600)
    # every variant at the first 5 seeds, then the hypothesis's 2
    assert later.cpu_hours_expected == pytest.approx(
        per_run * (30 * FIRST_ROUND + 2 * (seeds - FIRST_ROUND)) / 3600
    )
    assert later.wall_hours(2, 30, math.ceil(seeds)) < every.wall_hours(2, 30, math.ceil(seeds))


def test_the_busiest_relay_is_a_dedicated_one() -> None:
    # A client relay's figure counts its own user's downloads: 3.5 here.
    loads = [
        RelayLoad("v", 1, "relay1exit", "exit", 0.8, 0.9),
        RelayLoad("v", 1, "relay2middle", "middle", 0.3, 0.4),
        RelayLoad("v", 1, "clientrelay1", "client-relay-exit", 3.5, 4.0),
        RelayLoad("v", 2, "relay1exit", "exit", 0.6, 0.7),
        RelayLoad("v", 2, "clientrelay1", "client-relay-exit", 2.0, 2.5),
    ]
    assert busiest_utilisation(loads) == pytest.approx(0.7)
    assert busiest_utilisation(loads[2:3]) is None


def test_a_larger_design_is_loaded_as_its_clients_over_each_roles_capacity() -> None:
    loads = [
        RelayLoad("v", 1, "relay1exit", "exit", 0.8, 0.9),
        RelayLoad("v", 1, "relay2exit", "exit", 0.4, 0.5),
        RelayLoad("v", 1, "relay3middle", "middle", 0.3, 0.4),
        RelayLoad("v", 1, "clientrelay1", "client-relay-middle", 3.0, 3.5),
    ]
    busiest = busiest_by_role(loads)
    assert busiest == pytest.approx({"exit": 0.8, "middle": 0.3})
    spreads = {"h": Spread("h", 5, math.log(0.6), 0.30, 0.01, 0.25, 0.04)}
    # 20x the clients on 2x the relays: 8x the exits' load if only the
    # count grew, as loaded as the pilot if the exits' capacity grew 20x
    # (the middles', 10x, then carry 0.3 x 20 / 10).
    counted = Alternative("t", clients=20, relays=2)
    faster = Alternative("t", clients=20, relays=2, capacity=(("exit", 20.0), ("middle", 10.0)))
    as_is = (Alternative("as configured"),)
    (by_count,) = predict(spreads, (H,), None, 1, 0.6, busiest, 1.0, as_is, counted)
    (by_capacity,) = predict(spreads, (H,), None, 1, 0.6, busiest, 1.0, as_is, faster)
    assert by_count.busiest == pytest.approx(8.0)
    assert by_capacity.busiest == pytest.approx(0.8)
    # An alternative on top multiplies each role's capacity.
    assert Alternative("2x", relays=2).on(faster).capacity_of("exit") == pytest.approx(40.0)
    assert Alternative("2x", relays=2).on(faster).capacity_of("guard") == pytest.approx(4.0)


def _tortoise_small_and_full() -> tuple[Spec, Spec]:
    from runner.experiments import load_spec

    return load_spec(CONFIGS / "tortoise-small.yaml"), load_spec(CONFIGS / "tortoise.yaml")


def test_the_scaling_to_a_full_size_config_counts_its_relays_capacity() -> None:
    small, full = _tortoise_small_and_full()
    capacity = role_capacity(small)
    exits = next(g for g in small.network.relays if g.role == "exit")
    low, high = exits.bandwidth
    assert capacity["exit"] == pytest.approx(exits.count * (high - low) / math.log(high / low))
    factors = dict(scaling(small, full).capacity)
    assert factors["exit"] == pytest.approx(role_capacity(full)["exit"] / capacity["exit"])
    assert factors["exit"] > scaling(small, full).relays


def test_a_relay_with_a_bandwidth_of_its_own_counts_it_in_its_roles_capacity() -> None:
    from runner.experiments import load_spec

    small = load_spec(CONFIGS / "congestion-small.yaml")
    (middles,) = [g for g in small.network.relays if g.role == "middle"]
    assert middles.bandwidth_of == {"relay8middle": 7_000_000}
    low, high = middles.bandwidth
    drawn = (high - low) / math.log(high / low)
    assert role_capacity(small)["middle"] == pytest.approx(4 * drawn + 7_000_000)


def test_a_larger_design_offers_each_client_groups_traffic_times_its_growth() -> None:
    small, full = _tortoise_small_and_full()
    counts = {
        g.name: (g.count, f.count)
        for g in small.network.clients
        for f in full.network.clients
        if f.name == g.name
    }
    rows = [
        TransferRow("v", 1, "a", "bulk", True, 3_000_000, 0.0, 1.0, 2.0, True, ""),
        TransferRow("v", 1, "b", "web", True, 1_000_000, 0.0, 1.0, 2.0, True, ""),
        TransferRow("v", 1, "b", "web", True, 1_000_000, 0.0, None, None, False, "TIMEOUT"),
    ]
    (bulk_small, bulk_full), (web_small, web_full) = counts["bulk"], counts["web"]
    expected = (3 * bulk_full / bulk_small + web_full / web_small) / 4
    assert class_demand(small, full, rows) == pytest.approx(expected)
    assert class_demand(small, small, rows) == pytest.approx(1.0)
    assert class_demand(small, full, rows[2:]) is None


# The plan's words: what the pilot's cost figures were measured under.


def _cost_paragraphs(
    conditions: PilotConditions | None, fitted: bool = True, runs: int = 15
) -> list[str]:
    from runner.planning.seed_plan import Plan
    from runner.report.seed_plan import render

    cost = CostModel(60.0, 1e-6, 1e8, 1.04, runs, fitted)
    plan = Plan(
        (1, 2, 3, 4, 5),
        3,
        2,
        10,
        {},
        cost,
        None,
        {},
        [],
        (H,),
        "pilot",
        Alternative("pilot"),
        conditions,
    )
    text = "\n".join(render(plan, 2, 16))
    return text.split("## Cost\n\n", 1)[1].split("\n\n## ", 1)[0].split("\n\n")


def _nested(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth > 1:
            return True
    return False


def test_the_plan_says_how_many_runs_were_at_once_and_how_far_to_trust_the_cost() -> None:
    from runner.planning.seed_plan import pilot_conditions

    runs = [RunCost("v", s, 60 + 1e-6 * b, 63 + 1e-6 * b, b) for s, b in enumerate((5e7, 1e8))]
    placements = [{"node": "n1", "jobs": 2, "machine_cpus": 2, "threads": 1}] * 2
    model = CostModel(60.0, 1e-6, 1e8, 1.04, 2, False)
    conditions = pilot_conditions(placements, model, runs)
    assert (conditions.at_once, conditions.machine_cpus, conditions.machines) == ((2,), (2,), 1)
    assert conditions.farthest_off == pytest.approx(0.0)
    cost, contention, trust = _cost_paragraphs(conditions, fitted=False, runs=2)
    assert cost == (
        "A run costs 60 CPU seconds fixed, plus 100 for the 100 MB its measured clients "
        "moved: split by host counts, as the pilot's 2 runs are too few, or show no slope, "
        "to fit. Its wall time is 1.04 times its CPU time."
    )
    assert contention.startswith("The pilot ran up to 2 runs at once, on one machine of 2 CPUs.")
    assert "CPU time was measured with the others running beside it" in contention
    assert trust.startswith("How far to trust the figure: the pilot's 2 runs came within 0% of")
    assert not any(_nested(p) for p in (cost, contention, trust))


def test_a_pilot_that_did_not_record_its_runs_at_once_says_so() -> None:
    unknown = PilotConditions(1, (), (), 0, None)
    cost, contention, trust = _cost_paragraphs(unknown, fitted=False, runs=1)
    assert "moved: split by host counts, as one run is too few to fit. Its wall" in cost
    assert contention.startswith("The pilot's manifests do not record how many runs were at once")
    assert "one run shows nothing of how much runs vary" in trust
    # Runs on several machines, with more than one pool size.
    spread_out = PilotConditions(6, (2, 4), (8, 16), 3, 0.2)
    _, contention, trust = _cost_paragraphs(spread_out)
    assert contention.startswith(
        "The pilot ran up to 2 to 4 runs at once, on 3 machines of 8 to 16 CPUs."
    )
    assert "the pilot's 6 runs came within 20% of it" in trust


def test_the_spread_paragraph_reads_as_sentences() -> None:
    from runner.planning.seed_plan import Plan
    from runner.report.seed_plan import render

    plan = Plan((1, 2), 2, 1, 8, {}, None, None, {}, [], (H,), "pilot", Alternative("pilot"))
    text = "\n".join(render(plan, 2, 16))
    assert (
        "*clients*: between measured clients, n/a where a seed has only one measured client, "
        "whose part then stays in *seeds*;" in text
    )
    assert "with one a seed" not in text
    assert "The pilot's runs recorded no CPU time: no cost can be given." in text


def test_a_run_records_the_runs_at_once_beside_it() -> None:
    from runner.execute.placement import choose_placement
    from runner.execute.run_all import at_once

    # What run_one writes into the manifest's placement (jobs, machine_cpus).
    assert at_once(choose_placement(4, cpus=[0, 1])) == (2, 2)
    assert at_once(choose_placement(1, cpus=[0, 1, 2, 3])) == (1, 4)
