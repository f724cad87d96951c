"""The plan's figures are the whole stopping rule's, over every hypothesis
at once (runner/planning/joint_plan.py), and it says how far a pilot's few
seeds tell the seeds needed."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from runner.analyses import answers
from runner.analyses.answers import Observed, first_step_alpha, holm
from runner.analyses.client_bandwidth import per_client
from runner.analyses.power import (
    Target,
    decisive_chance,
    decisive_probability,
    seeds_to_decisive,
    seeds_to_decisive_many,
)
from runner.analyses.sequential import ALPHA, SequentialDesign
from runner.analyses.stats import PairedChange, ratio_change_ci
from runner.planning.joint_plan import (
    REPS,
    Question,
    correlation,
    simulate_rule,
)
from runner.planning.seed_plan import (
    Alternative,
    Plan,
    Spread,
    hypothesis_correlation,
    make_plan,
    plan_questions,
    predict,
    rule_max_seeds,
    seeds_needed_interval,
)
from runner.planning.seed_rounds import all_answered
from runner.report.seed_plan import render
from runner.spec.claims import Claim
from runner.spec.hypotheses import Hypothesis
from runner.tables.schema import CLIENTS, RELAY_LOAD, TRANSFERS
from tests.conftest import A_TENTH_FASTER, fixture_results

DESIGN = SequentialDesign.from_rounds(5, 11, 2)  # conflux-small's seeds {min: 5, max: 11}


def _hypothesis(q: Question) -> Hypothesis:
    return Hypothesis(
        name=q.name,
        variant="new",
        reference="old",
        metric="ttlb",
        expect="decrease" if q.target.direction < 0 else "increase",
        smallest_change=q.target.smallest_change,
        claim=Claim(id=q.claim or "C1", figure="Table I") if q.confirmatory else None,
        extension="" if q.confirmatory else "the project's own question",
    )


# Three confirmatory hypotheses and an exploratory one: one soon decided
# (leaving the others a larger share by Holm's step-down), two near the
# edge, the exploratory one moving with one of them as conflux-small's
# after-first-byte change moves with its whole-download one. All four are
# decided about half the time by 11 seeds.
QUESTIONS = [
    Question("clear", math.log(0.6), 0.15, Target(-1, 0.10), True, "C1"),
    Question("edge", math.log(0.79), 0.12, Target(-1, 0.10), True, "C2"),
    Question("other", math.log(0.80), 0.12, Target(-1, 0.10), True, "C3"),
    Question("own", math.log(0.975), 0.045, Target(-1, 0.10), False),
]
CORRELATION = np.array(
    [
        [1.0, 0.3, 0.3, 0.0],
        [0.3, 1.0, 0.9, 0.2],
        [0.3, 0.9, 1.0, 0.2],
        [0.0, 0.2, 0.2, 1.0],
    ]
)


def _brute_force(experiments: int) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated experiment, whether its rounds decided every
    hypothesis and the seeds they ran: the report's own code path, round by
    round (answers.holm on Observed seeds at the design's look, stopped by
    seed_rounds.all_answered), on its own generator."""
    rng = np.random.default_rng(2024)
    hypotheses = [_hypothesis(q) for q in QUESTIONS]
    effect = np.array([q.effect for q in QUESTIONS])
    sd = np.array([q.sd for q in QUESTIONS])
    lower = np.linalg.cholesky(CORRELATION)
    decided = np.zeros(experiments, dtype=bool)
    seeds = np.full(experiments, DESIGN.looks[-1])
    for e in range(experiments):
        x = np.exp(
            effect + sd * (rng.standard_normal((DESIGN.looks[-1], len(QUESTIONS))) @ lower.T)
        )
        for look, n in enumerate(DESIGN.looks):
            observed = [
                Observed(
                    h,
                    PairedChange(ratio_change_ci(list(x[:n, j])), None, list(x[:n, j])),
                    look,
                    DESIGN,
                )
                for j, h in enumerate(hypotheses)
            ]
            if all_answered(holm(observed)):
                decided[e], seeds[e] = True, n
                break
    return decided, seeds


def test_the_joint_simulation_agrees_with_the_reports_own_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An undetermined answer's prediction of the seeds it needs changes no
    # verdict and takes long: left out of the brute force.
    monkeypatch.setattr(answers, "with_prediction", lambda a, o: a)
    experiments = 500
    decided, seeds = _brute_force(experiments)
    joint = simulate_rule(QUESTIONS, CORRELATION, DESIGN)
    p = float(decided.mean())
    # Binomial error of both estimates; four of them apart would be chance
    # once in 15,000.
    error = math.sqrt(p * (1 - p) * (1 / experiments + 1 / REPS))
    assert abs(joint.all_decided - p) < 4 * error, (joint, p)
    seeds_error = float(seeds.std()) * math.sqrt(1 / experiments + 1 / REPS)
    assert abs(joint.expected_seeds - seeds.mean()) < 4 * seeds_error, (joint, seeds.mean())
    # The comparison can tell: a simulation that left out how the
    # hypotheses move together, or Holm's step-down (every confirmatory one
    # at 5% / 3 throughout), would be off by more than the error.
    apart = simulate_rule(QUESTIONS, np.eye(len(QUESTIONS)), DESIGN)
    between = math.sqrt(2 * p * (1 - p) / REPS)  # two simulations' error
    assert abs(apart.all_decided - joint.all_decided) > 4 * between, (apart, joint)
    one_step = [replace(q, confirmatory=False) for q in QUESTIONS]
    no_step_down = simulate_rule(one_step[:3], CORRELATION[:3, :3], DESIGN, alpha=ALPHA / 3)
    assert no_step_down.all_decided < p - 4 * error, (no_step_down, p)


def test_the_correlation_is_halved_and_needs_three_common_seeds() -> None:
    moves = {1: 0.1, 2: -0.2, 3: 0.3, 4: 0.0, 5: -0.1}
    same = dict(moves)
    opposite = {s: -v for s, v in moves.items()}
    two_seeds = {1: 0.5, 2: 0.1}
    found = correlation([moves, same, opposite, two_seeds])
    assert found[0, 1] == pytest.approx(0.5) and found[0, 2] == pytest.approx(-0.5)
    assert found[0, 3] == 0 and found[3, 0] == 0  # two seeds in common: none assumed
    assert np.linalg.eigvalsh(found)[0] > 0


# The committed pilot: conflux-small's first round (5 seeds), planned.


@pytest.fixture(scope="module")
def pilot_plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    spec, layout = fixture_results("conflux-small-pilot", tmp_path_factory.mktemp("results"))
    transfers = TRANSFERS.read(layout.transfers_csv)
    bandwidths = per_client(transfers, CLIENTS.read_from(layout))
    return make_plan(spec, layout, transfers, bandwidths, RELAY_LOAD.read_from(layout))


def test_the_pilots_plan_says_what_its_rule_decides_all_together(pilot_plan: Plan) -> None:
    plan = pilot_plan
    configured = plan.predictions[0]
    assert configured.alternative.name == "as configured"
    assert configured.all_decided >= 0.8
    assert configured.confirmatory_decided >= configured.all_decided
    text = "\n".join(render(plan, 2, 16))
    assert (
        f"As configured, the rule with `max: {configured.rule_max}` decides every hypothesis "
        f"with {configured.all_decided:.0%} probability, and every confirmatory one with "
        f"{configured.confirmatory_decided:.0%}, and is expected to stop after "
        f"{configured.expected_seeds:.1f} seeds." in text
    )
    assert configured.seeds_interval is not None and configured.seeds_point is not None
    low, high = configured.seeds_interval
    assert low < high
    assert (
        f"a fixed-size design needs {configured.seeds_point} seeds to decide each hypothesis "
        "the rounds wait for with 80% probability at the pilot's figures" in text
    )
    assert f"it needs {low} to {high if high <= 1000 else '> 1000'} seeds (an 80% interval)" in text
    assert "80% probability each" not in text


def _alone(
    spreads: dict[str, Spread], hypotheses: tuple[Hypothesis, ...], relays: float
) -> list[tuple[int, float]]:
    """Each hypothesis's own rule (`max`, expected seeds): what the plan
    took before, the largest of them for every hypothesis."""
    return [
        rule_max_seeds(
            s.effect,
            s.predicted(1, relays, 1),
            Target(h.direction, h.smallest_change),
            alpha=first_step_alpha(h, hypotheses),
        )
        for h in hypotheses
        if (s := spreads.get(h.name)) is not None
    ]


def _binding_spreads() -> tuple[dict[str, Spread], tuple[Hypothesis, ...]]:
    """Four exploratory hypotheses with the same change and spread, their
    pilot seeds drawn independently: each alone needs about as many seeds."""
    rng = np.random.default_rng(3)
    hypotheses, spreads = [], {}
    for i in range(4):
        h = replace(A_TENTH_FASTER, name=f"h{i}", extension="x")
        logs = rng.normal(math.log(0.72), 0.25, 5)
        per_seed = tuple((seed, float(v)) for seed, v in enumerate(logs, start=1))
        spreads[h.name] = Spread(h.name, 5, math.log(0.72), 0.0625, None, None, 0.0625, per_seed)
        hypotheses.append(h)
    return spreads, tuple(hypotheses)


def test_where_hypotheses_bind_together_the_largest_one_alone_is_too_few() -> None:
    spreads, hypotheses = _binding_spreads()
    alone = _alone(spreads, hypotheses, relays=1)
    worst = max(most for most, _ in alone)
    assert sum(most >= worst - 6 for most, _ in alone) >= 3, alone
    configured = Alternative("as configured")
    (plan,) = predict(spreads, hypotheses, None, 3, 0.6, {}, 1.0, (configured,))
    _, corr = hypothesis_correlation(spreads, hypotheses)
    _, questions = plan_questions(spreads, hypotheses, configured)
    before = simulate_rule(questions, corr, SequentialDesign.from_rounds(5, worst, 2))
    assert before.all_decided < 0.75, before
    assert plan.simulated and plan.all_decided >= 0.8
    assert plan.rule_max > worst
    assert plan.expected_seeds > max(expected for _, expected in alone)


def _spread(seeds: int) -> Spread:
    return Spread("h", seeds, math.log(0.7), 0.04, None, None, 0.04)


def test_the_seeds_needed_interval_holds_the_point_and_widens_with_fewer_pilot_seeds() -> None:
    h = A_TENTH_FASTER
    configured = Alternative("as configured")
    widths = []
    for seeds in (4, 12):
        interval = seeds_needed_interval({"h": _spread(seeds)}, (h,), configured)
        assert interval is not None
        low, high = interval
        point = seeds_to_decisive(math.log(0.7), math.sqrt(0.04), Target(-1, 0.10))
        assert low <= point <= high, (seeds, interval, point)
        widths.append(high / low)
    assert widths[0] > 2 * widths[1], widths


def test_no_spread_no_interval() -> None:
    h = A_TENTH_FASTER
    assert seeds_needed_interval({}, (h,), Alternative("as configured")) is None


def test_the_closed_form_chance_agrees_with_the_simulated_one() -> None:
    # The interval's draws use it: the simulation would take seconds.
    cases = [
        (math.log(0.8), 0.3, 10, Target(-1, 0.10), 0.05),
        (math.log(0.8), 0.3, 40, Target(-1, 0.10), 0.05 / 3),
        (math.log(1.02), 0.1, 8, Target(-1, 0.10), 0.05),
        (math.log(1.3), 0.4, 20, Target(1, 0.10), 0.05),
        (math.log(1.05), 0.2, 30, Target(-1, 0.10), 0.05),
    ]
    for effect, sd, n, target, alpha in cases:
        simulated = decisive_probability(effect, sd, n, target, alpha)
        (closed,) = decisive_chance(
            np.array([effect]), np.array([sd]), np.array([n]), target, alpha
        )
        # 4000 simulated seeds' sets: about 0.8 points of noise at most
        assert closed == pytest.approx(simulated, abs=0.03), (effect, sd, n)
    effects = np.log([0.7, 0.8, 0.85, 1.2])
    sds = np.array([0.2, 0.3, 0.15, 0.3])
    many = seeds_to_decisive_many(effects, sds, Target(-1, 0.10))
    one_by_one = [
        seeds_to_decisive(e, s, Target(-1, 0.10)) for e, s in zip(effects, sds, strict=True)
    ]
    assert many == pytest.approx(one_by_one, rel=0.1, abs=2)
