import math

import pytest

from runner.compare import changes_against, completion_checks, summarize
from runner.stats import dkw_epsilon, mean_ci
from runner.tables import TransferRow


def _row(
    variant: str,
    seed: int,
    ttlb: float,
    host: str = "perfclient1exit",
    success: bool = True,
    size: int = 1_048_576,
) -> TransferRow:
    return TransferRow(
        variant,
        seed,
        host,
        "perf",
        True,
        size,
        300.0,
        0.2,
        ttlb if success else None,
        success,
        "" if success else "TIMEOUT",
    )


def test_mean_ci_is_a_t_interval() -> None:
    est = mean_ci([0.1, 0.2, 0.3])
    assert est.mean == pytest.approx(0.2)
    # t(0.975, 2) = 4.303; sd = 0.1; sem = 0.0577
    assert est.high - est.mean == pytest.approx(4.303 * 0.1 / math.sqrt(3), rel=1e-3)
    single = mean_ci([0.5])
    assert single.low is None and "no CI" in single.format(100, "%")


def test_changes_are_paired_by_seed() -> None:
    rows = []
    for seed, base in ((1, 1.0), (2, 2.0), (3, 4.0)):
        rows += [_row("base", seed, base)] * 3
        rows += [_row("fast", seed, base * 0.5)] * 3  # 50% faster on every network
    [change] = changes_against(rows, "base", "ttlb")
    assert change.variant == "fast"
    assert change.estimate.mean == pytest.approx(-0.5)
    # identical relative change on every seed: a zero-width interval
    assert change.estimate.low == pytest.approx(-0.5)
    assert change.estimate.high == pytest.approx(-0.5)


def test_summaries_count_failures_and_use_successes_for_times() -> None:
    rows = [_row("a", 1, t) for t in (1.0, 2.0, 3.0)] + [_row("a", 1, 0, success=False)]
    [summary] = summarize(rows, ["a"])
    assert (summary.completed, summary.failed) == (3, 1)
    assert summary.error_rate == pytest.approx(0.25)
    assert summary.ttlb_median == pytest.approx(2.0)
    assert summary.goodput_median == pytest.approx(1_048_576 * 8 / 2.0 / 1e6)


def test_completion_check_catches_silent_and_failing_clients() -> None:
    rows = [_row("a", 1, 1.0)] * 19 + [_row("a", 1, 0, success=False)]  # 95%
    rows += [_row("a", 1, 1.0, host="perfclient2exit")] * 9
    rows += [_row("a", 1, 0, host="perfclient2exit", success=False)]  # 90%
    clients = {
        ("a", 1): [
            ("perfclient1exit", "perf"),
            ("perfclient2exit", "perf"),
            ("perfclient3exit", "perf"),
        ]
    }
    checks = {c.host: c for c in completion_checks(rows, clients, 0.95)}
    assert checks["perfclient1exit"].ok
    assert not checks["perfclient2exit"].ok
    assert not checks["perfclient3exit"].ok and checks["perfclient3exit"].attempted == 0


def test_dkw_band_shrinks_with_n() -> None:
    assert dkw_epsilon(100) == pytest.approx(0.1358, abs=1e-3)
    assert dkw_epsilon(400) < dkw_epsilon(100)
