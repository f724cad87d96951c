"""checks.keep_up: a variant against the same seed's run of its reference
(busiest relay within some points, a class's bandwidth a share of the
reference's); the spec's matrix form; the check on the collected tables of
congestion-small's real run."""

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.analyses.inputs import Inputs
from runner.analyses.keep_up import keep_up_result
from runner.analyses.load import run_loads
from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.layout import Layout
from runner.report.keep_up import keep_up_section
from runner.spec.model import ALL_RELAYS, Spec
from runner.tables.schema import CLIENTS, RELAY_LOAD, ClientRow, RelayLoad, TransferRow
from tests.conftest import FIXTURES, gunzip_fixture
from tests.specs import ci_small_data

CONGESTION = FIXTURES / "congestion-small"


def congestion_spec(keep_up: Any) -> Spec:
    data = yaml.safe_load((CONGESTION / "spec.yaml").read_text())
    data["checks"]["keep_up"] = keep_up
    return parse_spec(data, "spec.yaml")


def test_a_factor_item_holds_every_level_against_the_reference_within_its_scenario() -> None:
    spec = congestion_spec(
        [{"factor": "mechanism", "reference": "fixed", "metric": "busiest_relay", "within": "10%"}]
    )
    items = spec.checks.keep_up
    pairs = {(i.variant, i.reference) for i in items}
    scenarios = {v.factors["scenario"] for v in spec.variants}
    mechanisms = {v.factors["mechanism"] for v in spec.variants} - {"fixed"}
    assert len(items) == len(scenarios) * len(mechanisms)
    assert ("tree-backtap", "tree-fixed") in pairs
    assert all(i.reference.rsplit("-", 1)[1] == "fixed" for i in items)
    assert all(i.variant.split("-")[0] == i.reference.split("-")[0] for i in items)
    assert {i.within for i in items} == {0.1}


def test_where_keeps_the_chosen_levels_only() -> None:
    spec = congestion_spec(
        [
            {
                "factor": "mechanism",
                "reference": "fixed",
                "where": {"scenario": ["allbulk", "tree"]},
                "metric": "client_bandwidth",
                "class": "allbulk",
                "at_least": "90%",
            }
        ]
    )
    assert {i.variant.split("-")[0] for i in spec.checks.keep_up} == {"allbulk", "tree"}
    assert {(i.group, i.at_least) for i in spec.checks.keep_up} == {("allbulk", 0.9)}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"factor": "nope", "reference": "fixed"}, "expected a factor of the matrix"),
        ({"factor": "mechanism", "reference": "none"}, "no variant has mechanism 'none'"),
        (
            {"factor": "mechanism", "reference": "fixed", "where": {"size": "x"}},
            "checks.keep_up[0].where.size: expected a factor of the matrix",
        ),
        (
            {"factor": "mechanism", "reference": "fixed", "metric": "speed", "within": "1%"},
            "expected one of ['busiest_relay', 'client_bandwidth']",
        ),
        (
            {"factor": "mechanism", "reference": "fixed", "metric": "busiest_relay"},
            "busiest_relay takes `within`",
        ),
        (
            {
                "factor": "mechanism",
                "reference": "fixed",
                "metric": "client_bandwidth",
                "class": "nobody",
                "at_least": "90%",
            },
            "expected a measured client class",
        ),
        (
            {"variant": "hop3-fixed", "reference": "hop3-fixed", "metric": "busiest_relay"},
            "expected a variant other than `variant`",
        ),
    ],
)
def test_bad_items_name_the_key(item: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as error:
        congestion_spec([item])
    assert message in str(error.value)
    assert "spec.yaml" in str(error.value)


# Synthetic runs: a variant "slow" against "ref" on seeds 1 and 2.


def _spec(keep_up: list[dict[str, Any]]) -> Spec:
    data = ci_small_data()
    data["variants"] = {
        "ref": {"description": "reference", "tor": "stock"},
        "slow": {"description": "starves", "tor": "stock"},
    }
    data["baseline"] = "ref"
    data.pop("hypotheses", None)
    data.pop("claims", None)  # the claims they tested
    data.pop("comparisons", None)
    data["checks"] = {"min_completion": 0.5, "keep_up": keep_up}
    return parse_spec(data, "keep-up.yaml")


def _load(variant: str, seed: int, busiest: float) -> list[RelayLoad]:
    return [
        RelayLoad(variant, seed, "relay1exit", "exit", busiest, busiest),
        RelayLoad(variant, seed, "relay2guard", "guard", busiest / 2, busiest / 2),
    ]


def _transfer(variant: str, seed: int, host: str, seconds: float) -> TransferRow:
    return TransferRow(variant, seed, host, "perf", True, 1024 * 1024, 0.0, 1.0, seconds, True, "")


def _inputs(
    tmp_path: Path,
    spec: Spec,
    transfers: list[TransferRow],
    slow: tuple[float, float] = (0.30, 0.75),
) -> Inputs:
    """ref's busiest relay 80% busy on both seeds, slow's by default 30%
    on seed 1 (50 points below: starved) and 75% on seed 2 (5 below)."""
    layout = Layout(tmp_path, spec.name)
    layout.experiment_dir.mkdir(parents=True)
    loads = [
        *_load("ref", 1, 0.80),
        *_load("slow", 1, slow[0]),
        *_load("ref", 2, 0.80),
        *_load("slow", 2, slow[1]),
    ]
    RELAY_LOAD.write(layout.experiment_dir, loads)
    clients = [
        ClientRow(v, s, h, "perf", False, True)
        for v in ("ref", "slow")
        for s in (1, 2)
        for h in ("bulk1", "bulk2")
    ]
    CLIENTS.write(layout.experiment_dir, clients)
    measured = {(c.variant, c.seed): [("bulk1", "perf"), ("bulk2", "perf")] for c in clients}
    return Inputs(spec, layout, transfers, [], measured)


def test_busiest_relay_fails_the_run_more_points_below_the_reference(tmp_path: Path) -> None:
    spec = _spec(
        [{"variant": "slow", "reference": "ref", "metric": "busiest_relay", "within": "10%"}]
    )
    result = keep_up_result(_inputs(tmp_path, spec, []))
    assert [(r.seed, r.value, r.reference_value, r.passed) for r in result.runs] == [
        (1, 0.30, 0.80, False),
        (2, 0.75, 0.80, True),
    ]
    assert len(result.failures) == 1
    assert str(result.failures[0]).startswith(
        "slow/seed-1: does not keep up with ref (30% against 80%"
    )
    section = keep_up_section(result, _inputs(tmp_path / "again", spec, []), tmp_path)
    text = "\n".join(section.lines)
    assert "| slow | ref | busiest relay | 1: 30% vs 80%; 2: 75% vs 80% | 1 of 2 |" in text


def _busiest(judge: str) -> Spec:
    item = {"variant": "slow", "reference": "ref", "metric": "busiest_relay", "within": "10%"}
    return _spec([{**item, "judge": judge}])


def test_judged_on_the_means_one_seed_short_does_not_fail_the_design(tmp_path: Path) -> None:
    # Seed 1 15 points below, seed 2 5 above: the means are 75% against 80%.
    each = keep_up_result(_inputs(tmp_path / "each", _busiest("each"), [], (0.65, 0.85)))
    assert [f.run for f in each.failures] == [("slow", 1)]
    assert each.means == []
    mean = keep_up_result(_inputs(tmp_path / "mean", _busiest("mean"), [], (0.65, 0.85)))
    assert mean.failures == []
    assert [(m.seeds, m.passed) for m in mean.means] == [(2, True)]
    assert mean.means[0].value == pytest.approx(0.75)
    section = keep_up_section(mean, _inputs(tmp_path / "again", _busiest("mean"), []), tmp_path)
    text = "\n".join(section.lines)
    assert "| 1 of 2; means 75% vs 80%: keeps up |" in text
    assert "on the means over the seeds" in section.checks[0]


def test_judged_on_the_means_a_starved_design_fails_as_a_whole(tmp_path: Path) -> None:
    # Seed 1 50 points below, seed 2 5: the means are 52% against 80%.
    result = keep_up_result(_inputs(tmp_path, _busiest("mean"), []))
    assert len(result.failures) == 1
    assert str(result.failures[0]).startswith(
        "slow: does not keep up with ref over 2 seeds (mean 52% against 80%"
    )
    assert not result.means[0].passed


def test_a_judge_other_than_each_or_mean_names_the_key() -> None:
    with pytest.raises(SpecError, match=r"keep_up\[0\]\.judge: expected one of"):
        _busiest("median")


def test_client_bandwidth_counts_a_client_that_completed_nothing_as_zero(tmp_path: Path) -> None:
    spec = _spec(
        [
            {
                "variant": "slow",
                "reference": "ref",
                "metric": "client_bandwidth",
                "class": "perf",
                "at_least": "90%",
            }
        ]
    )
    transfers = [
        _transfer("ref", seed, host, 1.0) for seed in (1, 2) for host in ("bulk1", "bulk2")
    ]
    # Seed 1: both slow clients at 95% of the reference; seed 2: one
    # completed nothing, so the class's median is half the other's 1024.
    transfers += [_transfer("slow", 1, host, 1 / 0.95) for host in ("bulk1", "bulk2")]
    transfers += [_transfer("slow", 2, "bulk1", 1.0)]
    result = keep_up_result(_inputs(tmp_path, spec, transfers))
    by_seed = {r.seed: r for r in result.runs}
    assert by_seed[1].passed and by_seed[1].value == pytest.approx(0.95 * 1024)
    assert not by_seed[2].passed and by_seed[2].value == pytest.approx(512)
    assert [f.run for f in result.failures] == [("slow", 2)]


def test_a_missing_run_is_listed_not_failed(tmp_path: Path) -> None:
    spec = _spec(
        [{"variant": "slow", "reference": "ref", "metric": "busiest_relay", "within": "10%"}]
    )
    inp = _inputs(tmp_path, spec, [])
    RELAY_LOAD.write(inp.layout.experiment_dir, [*_load("ref", 1, 0.8), *_load("ref", 2, 0.8)])
    result = keep_up_result(inp)
    assert result.runs == [] and result.failures == []
    assert result.missing == ["slow/seed-1 against ref", "slow/seed-2 against ref"]


def test_a_seed_a_variant_does_not_run_at_by_design_is_not_missing(tmp_path: Path) -> None:
    spec = _spec(
        [{"variant": "slow", "reference": "ref", "metric": "busiest_relay", "within": "10%"}]
    )
    # Later seed rounds ran only the reference (as for another hypothesis).
    spec = replace(spec, seeds=(1, 2, 3), variant_seeds={"slow": (1, 2)})
    inp = _inputs(tmp_path, spec, [])
    loads = RELAY_LOAD.read_from(inp.layout) + _load("ref", 3, 0.8)
    RELAY_LOAD.write(inp.layout.experiment_dir, loads)
    inp = replace(inp, measured_clients={**inp.measured_clients, ("ref", 3): [("bulk1", "perf")]})
    result = keep_up_result(inp)
    assert [r.seed for r in result.runs] == [1, 2] and result.missing == []


def test_on_a_real_run_the_failures_are_the_runs_below_the_bar(tmp_path: Path) -> None:
    """congestion-small's collected relay load (Shadow, patched tor): the
    check names exactly the runs whose busiest relay sits more than 10
    points below the fixed window's on the same seed and scenario."""
    spec = congestion_spec(
        [{"factor": "mechanism", "reference": "fixed", "metric": "busiest_relay", "within": "10%"}]
    )
    layout = Layout(tmp_path, "congestion-small")
    layout.experiment_dir.mkdir()
    gunzip_fixture(CONGESTION / "relay_load.csv.gz", layout.experiment_dir)
    loads = RELAY_LOAD.read_from(layout)
    CLIENTS.write(layout.experiment_dir, [])
    runs = {(v.name, seed) for v in spec.variants for seed in spec.seeds}
    result = keep_up_result(Inputs(spec, layout, [], [], {run: [] for run in runs}))
    busiest = {(r.variant, r.seed): r.busiest for r in run_loads(loads) if r.role == ALL_RELAYS}
    expected = {
        (i.variant, seed)
        for i in spec.checks.keep_up
        for seed in spec.seeds
        if busiest[(i.variant, seed)] < busiest[(i.reference, seed)] - 0.1
    }
    assert {f.run for f in result.failures} == expected
    assert len(result.runs) == len(spec.checks.keep_up) * len(spec.seeds)
