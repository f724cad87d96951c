"""CDF bands come from seeds, never from pooled transfers."""

from __future__ import annotations

import numpy as np
import pytest

import runner.analyses  # noqa: F401  (before the report, in the order the runner imports them)
from runner.analyses.stats import client_ecdf
from runner.report.plots import LEVELS, seed_band, variant_colours


def _seeds(medians: list[float], transfers: int) -> dict[int, dict[str, list[float]]]:
    rng = np.random.default_rng(3)
    return {k: {"c1": list(m * rng.lognormal(0, 0.3, transfers))} for k, m in enumerate(medians, 1)}


def test_no_band_under_three_seeds() -> None:
    centre, low, high = seed_band(_seeds([5.0, 7.0], 200))
    assert len(centre) == len(LEVELS) and low is None and high is None


def test_the_band_reflects_the_seeds_not_the_transfers() -> None:
    few = seed_band(_seeds([4.0, 6.0, 9.0], 50))
    many = seed_band(_seeds([4.0, 6.0, 9.0], 5000))
    middle = len(LEVELS) // 2
    width_few = few[2][middle] - few[1][middle]  # type: ignore[index]
    width_many = many[2][middle] - many[1][middle]  # type: ignore[index]
    # A band from pooled transfers (DKW) would shrink tenfold with 100x the
    # transfers; one across seeds stays about as wide as the seeds differ.
    assert width_many > 0.7 * width_few
    assert width_many > 2.0  # the seeds' medians span 4 to 9 s
    calm = seed_band(_seeds([6.0, 6.1, 5.9], 5000))
    assert calm[2][middle] - calm[1][middle] < width_many / 5  # type: ignore[index]
    assert (many[1] > 0).all()  # log scale: never below zero


def test_every_client_weighs_the_same_in_a_seed_ecdf() -> None:
    xs, ys = client_ecdf({"fast": [1.0] * 10, "slow": [10.0, 10.0]})
    assert ys[9] == pytest.approx(0.5)  # the fast client's ten values carry half
    assert ys[10] == pytest.approx(0.75) and ys[-1] == pytest.approx(1.0)


def test_up_to_twenty_variants_get_a_colour_each() -> None:
    assert variant_colours(10) == [None] * 10  # matplotlib's own cycle has 10
    for count in (11, 15, 20):
        colours = variant_colours(count)
        assert len(colours) == count and len(set(colours)) == count
