"""Intervals that respect their quantities: a change never passes -100%, a
level never goes below zero; checked on the statistics and on the reports of
every committed results fixture."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from runner.analyses.stats import (
    ClientQuantile,
    bootstrap_change_ci,
    client_quantile,
    level_ci,
    ratio_change_ci,
    resample_values,
)
from tests.conftest import fixture_report

# "mean [low, high]" as Estimate.format writes it, with or without a sign and a %.
INTERVAL = re.compile(
    r"(?<![\w.])([+-]?)(\d+(?:\.\d+)?)(%?)\S* \[([+-]?\d+(?:\.\d+)?)%?, ([+-]?\d+(?:\.\d+)?)%?\]"
)
RESULT_FIXTURES = ("tortoise-small", "mctor-small", "congestion-small")


def test_a_change_is_a_geometric_mean_ratio_with_a_log_scale_interval() -> None:
    est = ratio_change_ci([0.5, 2.0])
    assert est.mean == pytest.approx(0.0)
    half = 12.706 * math.log(2) * math.sqrt(2) / math.sqrt(2)  # t(1) x sd / sqrt(n)
    assert est.low == pytest.approx(math.expm1(-half), rel=1e-3)
    assert est.high == pytest.approx(math.expm1(half), rel=1e-3)


def test_no_change_interval_passes_minus_100_percent() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        ratios = list(rng.lognormal(0, 2, size=rng.integers(2, 6)))
        est = ratio_change_ci(ratios)
        assert est.low is not None and est.low > -1.0 and est.high is not None
        assert est.low <= est.mean <= est.high


def test_levels_are_cut_at_zero_and_printed_without_a_sign() -> None:
    est = level_ci([10.0, 3900.0])  # the t interval alone goes far below zero
    assert est.low == 0.0 and est.high is not None and est.high > 3900
    assert est.format(1, "", 1).startswith("1,955 [0.0, ")
    share = level_ci([0.1, 0.9], ceiling=1.0)
    assert share.low == 0.0 and share.high == 1.0


def test_the_bootstrap_agrees_with_the_t_interval_on_well_behaved_data() -> None:
    rng = np.random.default_rng(2)
    seeds = []
    for _ in range(6):
        reference = rng.lognormal(0, 0.3, 200)
        seeds.append((list(reference * 0.5 * rng.lognormal(0, 0.05)), list(reference)))
    boot = bootstrap_change_ci(seeds, 0.5)
    t = ratio_change_ci([np.median(v) / np.median(r) for v, r in seeds])
    assert boot.n == 6 and boot.low is not None and boot.high is not None
    assert boot.low < -0.5 < boot.high
    assert t.low is not None and t.high is not None
    assert boot.low > -0.6 and boot.high < -0.4 and t.low > -0.6 and t.high < -0.4
    again = bootstrap_change_ci(seeds, 0.5)
    assert (again.low, again.high) == (boot.low, boot.high)  # reproducible


def test_client_quantile_draws_follow_the_resampling_they_stand_for() -> None:
    rng = np.random.default_rng(5)
    by_client = {f"c{i}": list(rng.lognormal(i * 0.2, 0.5, 3 + 4 * i)) for i in range(7)}
    stat = ClientQuantile(0.9)
    assert stat(by_client) == client_quantile(by_client, 0.9)
    batch = stat.draws(by_client, np.random.default_rng(1), 4000)
    one_by_one = np.array(
        [stat(resample_values(by_client, np.random.default_rng(k))) for k in range(4000)]
    )
    assert batch.shape == (4000,)
    assert scipy_stats.ks_2samp(batch, one_by_one).pvalue > 0.05  # one distribution
    assert abs(batch.mean() - one_by_one.mean()) < 4 * one_by_one.std() / np.sqrt(2000)
    lowest = min(min(v) for v in by_client.values())
    highest = max(max(v) for v in by_client.values())
    assert lowest <= batch.min() and batch.max() <= highest
    constant = ClientQuantile(0.5).draws({"a": [2.0] * 5, "b": [2.0]}, np.random.default_rng(0), 9)
    assert list(constant) == [2.0] * 9


@pytest.mark.parametrize("name", RESULT_FIXTURES)
def test_no_interval_in_a_fixture_report_leaves_its_quantity(name: str, tmp_path: Path) -> None:
    intervals = INTERVAL.findall(fixture_report(name, tmp_path).read_text())
    levels = [i for i in intervals if not i[0] and not i[2]]
    assert levels, f"{name}: no level's interval found in the report"
    for sign, _mean, percent, low, high in intervals:
        if percent:  # a relative change
            assert float(low) >= -100.0, f"{name}: a change below -100%: {low}"
        elif not sign:  # a level
            assert float(low) >= 0.0, f"{name}: a level below zero: {low}"
        assert float(low) <= float(high)


def test_numbers_are_printed_as_a_reader_takes_them() -> None:
    from runner.analyses.stats import Estimate

    # No "-0.0", no -100% that the bound does not reach, no decimals on huge bounds.
    change = Estimate(-0.0003, -0.99996, 12134.885, 3)
    assert change.format(100, "%") == "0.0% [-99.996, +1,213,488]"
    assert Estimate(-0.2012, -0.5, 0.1, 3).format(100, "%") == "-20.1% [-50.0, +10.0]"
