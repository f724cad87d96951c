"""The campaign's choice and its budget (runner/workflow/campaign.py),
with a fake executor whose runs report a CPU cost: no simulation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

import runner.experiments
from runner.analyses.answers import UNDETERMINED, Answer
from runner.analyses.stats import Estimate
from runner.console import Console
from runner.experiments import parse_spec
from runner.layout import Layout
from runner.manifest import read_run
from runner.network.backends import SHADOW
from runner.network.capacity import TooLarge
from runner.network.identity import run_identity
from runner.spec.model import Spec
from runner.spec.rule import rule_fingerprint
from runner.tables.collect import parsed_tables
from runner.tables.runs import RUNS, RunRow, run_row
from runner.tables.store import stored_runs, table_texts, write_stored
from runner.tables.store_import import import_runs
from runner.workflow import Experiment, RunOptions
from runner.workflow.campaign import (
    OpenClaim,
    Seeds,
    Step,
    choose_steps,
    chosen_claims,
    cpu_per_variant,
    open_claims,
    predicted_cpu,
    probe_step,
    run_steps,
    simulated_seconds,
    step_spec,
    unknown_claims,
    unrun_claims,
    with_references,
)
from runner.workflow.campaign_run import HOUR, campaign, next_free_seed
from runner.workflow.results import RunResult
from tests.conftest import (
    CI_SMALL,
    FIXTURE_VERSIONS,
    FIXTURES,
    fixture_results,
    fixture_spec,
    write_manifest,
)

TABLES = parsed_tables(runner.experiments.TABLES)


def claim(exp: str, name: str, have: int, need: int, *variants: str) -> OpenClaim:
    return OpenClaim(exp, name, have, need, variants)


def test_the_choice_favours_claims_near_a_verdict_per_cpu_hour() -> None:
    claims = {
        # one seed short, cheap: first
        "a": [claim("a", "A1", 4, 5, "new", "old")],
        # many seeds short and dearer
        "b": [claim("b", "B1", 2, 30, "x", "y")],
    }
    cpu = {"a": {"": 600.0, "new": 600.0, "old": 600.0}, "b": {"": 900.0}}
    steps = choose_steps(claims, cpu, {"a": Seeds((), 6), "b": Seeds((), 3)}, budget_s=HOUR)
    assert [s.experiment for s in steps][:1] == ["a"]
    assert steps[0].seed == 6 and steps[0].variants == ("new", "old")
    assert steps[0].cpu_s == 1200.0 and steps[0].claims == ("A1",)
    # A1 then needs no more seeds: the rest goes to b, a seed at a time.
    assert [s.seed for s in steps if s.experiment == "b"] == [3]
    assert sum(s.cpu_s for s in steps) <= HOUR


def test_a_design_in_rounds_draws_no_seed_for_a_futile_claim_or_past_its_max() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["seeds"] = {"min": 3, "max": 7, "decide_from": 3}
    spec = parse_spec(data, "x.yaml")
    (h,) = spec.hypotheses

    def answer(seeds: int, needed: int, futile: bool = False) -> Answer:
        est = Estimate(-0.2, -0.4, 0.05, seeds)
        return Answer(h, est, UNDETERMINED, seeds_needed=needed, futile=futile)

    # open, and asking for no more than the design's max
    (found,) = open_claims(spec, [answer(4, 5)])
    assert (found.seeds, found.seeds_needed, found.short) == (4, 5, 1)
    # Verdicts come at looks (3, 5, 7): a need of 6 waits for the look at 7.
    (found,) = open_claims(spec, [answer(4, 6)])
    assert (found.seeds_needed, found.short) == (7, 3)
    (found,) = open_claims(spec, [answer(5, 9)])  # before futility is known
    assert found.seeds_needed == 7
    # closed: the design cannot decide it, or it has had every seed
    assert open_claims(spec, [answer(4, 107, futile=True)]) == []
    assert open_claims(spec, [answer(7, 8)]) == []
    # A seed whose ratio is undefined (nothing done on either side) counts
    # towards the max: a claim with no estimate is not drawn seeds forever.
    variants = set(with_references(spec, h.variants))
    ran = {seed: set(variants) for seed in range(1, 6)}
    (found,) = open_claims(spec, [answer(0, 7)], ran)
    assert found.seeds == 0 and found.short == 2
    ran |= {6: set(variants), 7: set(variants)}
    assert open_claims(spec, [answer(0, 7)], ran) == []
    # A seed lacking one of its variants is not one it had.
    ran[7] = set(variants) - {h.variant}
    (found,) = open_claims(spec, [answer(0, 7)], ran)
    assert found.short == 1


def test_a_claim_needs_the_seeds_of_the_first_look_that_decides() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["seeds"] = {"min": 2, "max": 14, "step": 4, "decide_from": 7}
    spec = parse_spec(data, "x.yaml")  # looks at 2, 6, 10, 14; deciding from 10
    (claim,) = unrun_claims(spec)
    assert claim.seeds_needed == 10


def test_an_experiment_with_no_recorded_cpu_is_left_out() -> None:
    steps = choose_steps(
        {"a": [claim("a", "A1", 2, 9, "n", "o")]}, {"a": {}}, {"a": Seeds((), 3)}, HOUR
    )
    assert steps == []


def test_a_part_run_round_is_filled_in_order_before_a_new_seed() -> None:
    # Seeds 1-4 have n and o, 5 has n only, 6-7 nothing; m is new at every seed.
    present = {s: {"n", "o"} for s in range(1, 5)} | {5: {"n"}}
    seeds = Seeds(tuple(range(1, 8)), 8, present)
    claims = {
        "a": [
            claim("a", "new-m", 0, 3, "m", "n"),  # m runs nowhere yet
            claim("a", "o-vs-n", 4, 9, "o", "n"),
        ]
    }
    cpu = {"a": {"": 100.0, "m": 10.0, "n": 100.0, "o": 100.0}}
    steps = choose_steps(claims, cpu, {"a": seeds}, budget_s=1000.0)
    got = [(s.seed, s.variants, s.claims) for s in steps]
    assert got[:4] == [
        (1, ("m",), ("new-m",)),  # only the missing variant, at the design's first seed
        (2, ("m",), ("new-m",)),
        (3, ("m",), ("new-m",)),  # new-m has its 3 seeds: o-vs-n goes on alone
        (5, ("o",), ("o-vs-n",)),  # 4 has n and o: skipped
    ]
    assert got[4] == (6, ("n", "o"), ("o-vs-n",))
    assert sum(s.cpu_s for s in steps) <= 1000.0
    assert all(s.seed != 4 for s in steps)


def test_the_campaign_stops_before_the_budget_and_says_so() -> None:
    lines: list[str] = []
    console = Console(lines.append, lines.append)
    steps = [Step("a", s, ("n", "o"), 0.1 * HOUR, ("A1",)) for s in range(1, 11)]
    ran: list[int] = []

    def fake_run(step: Step) -> float:  # each run costs 10% more than predicted
        ran.append(step.seed)
        return step.cpu_s * 1.1

    result = run_steps(steps, fake_run, budget_s=0.5 * HOUR, console=console)
    assert ran == [1, 2, 3, 4]  # a fifth would reach 0.54 CPU-h
    assert result.spent_s <= 0.5 * HOUR
    assert result.spent_s >= 0.5 * HOUR * 0.85
    assert [s.seed for s in result.left_out] == list(range(5, 11))
    assert any(line.startswith("stop:") for line in lines)
    assert any("of 0.50 CPU-h spent" in line for line in lines)


def test_predicted_cpu_is_each_variants_mean_of_the_runs_that_recorded_it() -> None:
    runs = [
        RunRow("n", 1, "complete", cpu_s=100.0),
        RunRow("n", 2, "complete", cpu_s=300.0),
        RunRow("o", 1, "complete", cpu_s=50.0),
        RunRow("o", 2, "failed", cpu_s=999.0),
        RunRow("o", 3, "complete"),
    ]
    assert cpu_per_variant(runs) == pytest.approx({"n": 200.0, "o": 50.0, "": 150.0})


def test_a_variant_never_run_is_priced_by_its_own_simulated_time() -> None:
    """Variants that simulate their own time (cycles) cost in proportion:
    a never-run variant is priced at the runs' CPU per simulated second."""
    spec = fixture_spec("conflux-small-pilot")
    long = replace(spec, variant_measure={"plain": 600.0, "conflux": 1800.0})
    runs = [RunRow("plain", 1, "complete", cpu_s=90.0), RunRow("plain", 2, "complete", cpu_s=110.0)]
    cpu = predicted_cpu(long, runs)
    assert cpu["plain"] == pytest.approx(100.0)  # its own mean
    per_second = 200.0 / (2 * simulated_seconds(long, "plain"))
    assert cpu["conflux"] == pytest.approx(per_second * simulated_seconds(long, "conflux"))
    assert cpu["conflux"] > 2 * cpu["plain"]
    assert predicted_cpu(long, [RunRow("plain", 1, "failed", cpu_s=5.0)]) == {}


def test_a_design_with_no_run_is_probed_by_its_cheapest_variant_at_its_first_seed() -> None:
    spec = fixture_spec("conflux-small-pilot")
    claims = unrun_claims(spec)
    assert claims and all(c.seeds == 0 for c in claims)
    assert {c.hypothesis for c in claims} == {
        h.name for h in spec.hypotheses if h.claim is not None and not h.exploratory
    }
    slow = replace(spec, variant_measure={"plain": 900.0, "conflux": 300.0})
    step = probe_step(slow, claims, Seeds(slow.seeds, max(slow.seeds) + 1))
    assert step is not None and step.seed == min(slow.seeds) and step.cpu_s == 0.0
    cheapest = min(claims[0].variants, key=lambda v: simulated_seconds(slow, v))
    assert step.variants == (cheapest,)
    assert probe_step(spec, [], Seeds((), 1)) is None


def test_claims_asked_for_by_claim_id_or_hypothesis_name_are_the_only_ones_kept() -> None:
    spec = fixture_spec("conflux-small-pilot")
    claims = unrun_claims(spec)
    assert {c.hypothesis for c in chosen_claims(spec, claims, frozenset({"C2"}))} == {
        "confluxm-shortens-10mb-further"
    }
    by_name = chosen_claims(spec, claims, frozenset({"conflux-shortens-5mb"}))
    assert [c.hypothesis for c in by_name] == ["conflux-shortens-5mb"]
    assert chosen_claims(spec, claims, frozenset()) == claims
    assert chosen_claims(spec, claims, frozenset({"T1"})) == []
    assert unknown_claims([spec], frozenset({"C1", "T1", "conflux-shortens-5mb"})) == ["T1"]


def test_a_step_runs_its_variants_at_its_seed_alone() -> None:
    spec = fixture_spec("conflux-small-pilot")
    step = Step(spec.name, 40, ("conflux", "plain"), 1.0, ("C1",))
    runs = [(v.name, s) for v, s in step_spec(spec, step).runs()]
    assert runs == [("plain", 40), ("conflux", 40)] or sorted(runs) == [
        ("conflux", 40),
        ("plain", 40),
    ]


# The whole command, on a clone whose store holds the conflux-small pilot's
# runs, with a fake run step: each run it "makes" is a seed-1 run's rows at
# the new seed, recorded and stored as collect stores a run.
PILOT = "conflux-small-pilot"


def clone_with_store(tmp_path: Path) -> tuple[Spec, Layout]:
    spec, source = fixture_results(PILOT, tmp_path / "source")
    # Runs made under the rule the spec states (runner.spec.rule), as runs
    # now record it: their confirmatory verdicts are not post hoc.
    rows = [replace(r, rule=rule_fingerprint(spec)) for r in RUNS.read_from(source)]
    RUNS.write(source.experiment_dir, rows)
    clone = Layout(tmp_path / "clone", source.experiment)
    done = import_runs(source.root, {spec.name: spec}, clone.root, TABLES)
    assert not done.refused and len(done.added) == len(spec.runs())
    return spec, clone


def fake_run_and_store(
    made: list[tuple[str, int]], rows_from: Path | None = None
) -> Callable[[Experiment, Spec, RunOptions], RunResult]:
    """Runs that copy a stored seed-1 run's rows (from ``rows_from``, a
    store, or the experiment's own)."""

    def run_and_store(exp: Experiment, spec: Spec, options: RunOptions) -> RunResult:
        layout = exp.layout
        source = rows_from or layout.store_dir
        first = {s.row.variant: s for s in stored_runs(source) if s.row.seed == 1}
        for variant, seed in spec.runs():
            run_dir = layout.run_dir(variant.name, seed)
            run_dir.mkdir(parents=True)
            cpu = first[variant.name].row.cpu_s
            assert cpu is not None
            write_manifest(
                run_dir,
                {
                    "variant": variant.name,
                    "seed": seed,
                    "status": "complete",
                    "backend": "shadow",
                    "versions": FIXTURE_VERSIONS,
                    "identity": run_identity(spec, variant, seed, SHADOW, FIXTURE_VERSIONS),
                    "cpu_phases_s": {"generate": 0.0, "simulate": cpu * 1.05},
                    "spec": {"rule": rule_fingerprint(spec)},
                },
            )
            record = read_run(run_dir)
            rows = {
                t.name: [replace(r, seed=seed) for r in first[variant.name].rows(t)] for t in TABLES
            }
            texts = table_texts(TABLES, rows)
            write_stored(layout.store_dir, layout.experiment, record, run_row(record), texts)
            made.append((variant.name, seed))
        return RunResult(0, [], 0.0)

    return run_and_store


def faked_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Spec, Layout, list[tuple[str, int]], list[str]]:
    """A clone with the pilot's store whose runs are faked: the spec, its
    layout, the runs made and the console's lines."""
    spec, clone = clone_with_store(tmp_path)
    made: list[tuple[str, int]] = []
    monkeypatch.setattr(Experiment, "run_and_store", fake_run_and_store(made))
    return spec, clone, made, []


def test_the_campaign_command_runs_and_stores_seeds_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, clone, made, lines = faked_clone(tmp_path, monkeypatch)
    console = Console(lines.append, lines.append)
    spec_path = FIXTURES / PILOT / "spec.yaml"
    before = len(stored_runs(clone.store_dir))
    budget_h = 0.5

    result = campaign([spec_path], budget_h, clone.root, "shadow", RunOptions(), console)

    assert result.ran, lines
    assert result.spent_s <= budget_h * HOUR
    # Stopped within the cost of a step of the budget, and said why.
    assert budget_h * HOUR - result.spent_s < max(s.cpu_s for s in result.ran) * 1.05
    # The store grew by exactly the campaign's runs, at seeds past the spec's.
    assert len(stored_runs(clone.store_dir)) == before + len(made)
    assert made == [(v, s.seed) for s in result.ran for v in step_spec_variants(spec, s)]
    assert min(seed for _, seed in made) == max(spec.seeds) + 1
    assert any(line.startswith(f"{spec.name}: open: ") for line in lines)
    assert any(line.startswith("  1. conflux-small seed 6: ") for line in lines)
    assert any("CPU-h spent" in line for line in lines)

    # The stages after collect read the new seeds, and say so.
    later: list[str] = []
    again = Experiment.load(spec_path, clone.root, "shadow", console=Console(later.append))
    new_seeds = sorted({seed for _, seed in made})
    assert set(new_seeds) <= set(again.analysed_spec().seeds)
    assert f"{len(new_seeds)} stored seeds beyond the spec's" in "\n".join(later)
    # A later campaign resumes after them.
    assert next_free_seed(again.analysed_spec(), again.layout) == max(new_seeds) + 1


def step_spec_variants(spec: Spec, step: Step) -> list[str]:
    """The variants a step runs, in the order the spec runs them."""
    return [v.name for v, _ in step_spec(spec, step).runs()]


def test_a_campaign_on_a_design_with_no_run_probes_it_then_chooses_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, reference = clone_with_store(tmp_path / "reference")
    made: list[tuple[str, int]] = []
    monkeypatch.setattr(Experiment, "run_and_store", fake_run_and_store(made, reference.store_dir))
    lines: list[str] = []
    spec_path = FIXTURES / PILOT / "spec.yaml"
    empty = tmp_path / "fresh"
    budget_h = 0.3

    result = campaign(
        [spec_path], budget_h, empty, "shadow", RunOptions(), Console(lines.append, lines.append)
    )

    assert any(line.endswith("no runs yet: a probe run prices its seeds") for line in lines)
    probe = result.ran[0]
    assert len(probe.variants) == 1 and made[0] == (probe.variants[0], 1)
    # Then the design's own first seed is filled, priced by the probe.
    assert len(result.ran) > 1 and result.ran[1].seed == 1
    assert probe.variants[0] not in result.ran[1].variants
    assert result.spent_s <= budget_h * HOUR
    assert len(stored_runs(Layout(empty, spec.name).store_dir)) == len(made)


def test_an_experiment_too_large_for_this_machine_is_left_out_and_the_rest_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, clone, made, lines = faked_clone(tmp_path, monkeypatch)

    def too_large(exp: Experiment) -> None:
        raise TooLarge(f"{exp.written.name}: needs about 41 GiB a run")

    result = campaign(
        [FIXTURES / PILOT / "spec.yaml"],
        0.5,
        clone.root,
        "shadow",
        RunOptions(),
        Console(lines.append, lines.append),
        too_large,
    )
    assert result.code == 0 and result.ran == [] and made == []
    assert any(line.startswith(f"{spec.name}: left out: ") and "41 GiB" in line for line in lines)


def test_a_budget_too_small_for_any_step_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, clone, made, lines = faked_clone(tmp_path, monkeypatch)
    spec_path = FIXTURES / PILOT / "spec.yaml"
    result = campaign(
        [spec_path], 0.01, clone.root, "shadow", RunOptions(), Console(lines.append, lines.append)
    )
    assert result.ran == [] and made == []
    assert any(line.startswith("campaign: no step fits 0.01 CPU-h") for line in lines)


def test_a_campaign_for_one_claim_runs_only_the_variants_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, clone, made, lines = faked_clone(tmp_path, monkeypatch)
    spec_path = FIXTURES / PILOT / "spec.yaml"
    console = Console(lines.append, lines.append)
    result = campaign(
        [spec_path], 0.5, clone.root, "shadow", RunOptions(), console, None, frozenset({"C2"})
    )
    assert result.ran and made
    assert {v for v, _ in made} == {"confluxm", "conflux"}
    assert all(s.claims == ("confluxm-shortens-10mb-further",) for s in result.ran)

    lines.clear()
    none = campaign(
        [spec_path], 0.5, clone.root, "shadow", RunOptions(), console, None, frozenset({"T1"})
    )
    assert none.ran == []
    assert any(line == f"{spec.name}: no open confirmatory claim among T1" for line in lines)


def test_a_failed_run_is_run_again_and_a_complete_one_is_not(tmp_path: Path) -> None:
    from runner.workflow.campaign_run import variants_at_seeds

    spec = fixture_spec(PILOT)
    layout = Layout(tmp_path, spec.name)
    for status, seed in (("complete", 41), ("failed", 42), ("generated", 43)):
        run_dir = layout.run_dir("plain", seed)
        run_dir.mkdir(parents=True)
        write_manifest(run_dir, {"variant": "plain", "seed": seed, "status": status})
    present = variants_at_seeds(spec, layout)
    assert present.get(41) == {"plain"} and present.get(43) == {"plain"}  # done, under way
    assert 42 not in present  # a simulation that stopped: its seed is free again
