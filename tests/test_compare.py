import math
from dataclasses import replace

import pytest

from runner.analyses.stats import mean_ci
from runner.analyses.transfers import (
    changes,
    completion_checks,
    completion_failure,
    summarize,
    transfers_per_size,
)
from runner.experiments.conflux.conflux_legs import conflux_leg_checks
from runner.tables.schema import CircuitRow, TransferRow


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
    [change] = changes(rows, [("fast", "base")], "ttlb")
    assert change.variant == "fast"
    assert change.estimate.mean == pytest.approx(-0.5)
    # identical relative change on every seed: a zero-width interval
    assert change.estimate.low == pytest.approx(-0.5)
    assert change.estimate.high == pytest.approx(-0.5)


def test_a_faster_first_byte_alone_shows_in_ttlb_not_after_it() -> None:
    # The variant's first byte comes 0.1 s sooner (a faster path); the rest
    # of the transfer takes as long.
    rows = []
    for seed in (1, 2, 3):
        rows += [_row("base", seed, 1.2)] * 3
        rows += [replace(_row("fast", seed, 1.1), ttfb=0.1)] * 3
    [ttlb] = changes(rows, [("fast", "base")], "ttlb")
    [after] = changes(rows, [("fast", "base")], "after_first_byte")
    assert ttlb.estimate.mean == pytest.approx(1.1 / 1.2 - 1)
    assert after.estimate.mean == pytest.approx(0.0, abs=1e-12)


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


def _leg(variant: str, host: str, circ: str, cfx: str) -> CircuitRow:
    return CircuitRow(variant, 1, host, "perf", circ, "BUILT", 10.0, 0.2, "CONFLUX_LINKED", cfx)


def test_leg_checks_demand_exactly_the_expected_legs() -> None:
    circuits = [
        _leg("m", "perfclient1exit", "1", "A"),
        _leg("m", "perfclient1exit", "2", "A"),
        _leg("m", "perfclient1exit", "3", "A"),
        _leg("m", "perfclient2exit", "1", "B"),
        _leg("m", "perfclient2exit", "2", "B"),
        _leg("off", "perfclient1exit", "5", "C"),
        _leg("off", "perfclient1exit", "6", "C"),
    ]
    clients = {(v, 1): [(f"perfclient{i}exit", "perf") for i in (1, 2, 3)] for v in ("m", "off")}
    checks = {
        (c.variant, c.host): c for c in conflux_leg_checks(circuits, clients, {"m": 3, "off": 0})
    }
    assert checks[("m", "perfclient1exit")].ok
    assert checks[("m", "perfclient1exit")].sets_by_legs == {3: 1}
    assert not checks[("m", "perfclient2exit")].ok  # a 2-leg set in a 3-leg variant
    assert not checks[("m", "perfclient3exit")].ok  # linked no set at all
    assert not checks[("off", "perfclient1exit")].ok  # conflux used where it must not be
    assert checks[("off", "perfclient2exit")].ok


def test_changes_follow_the_requested_pairs() -> None:
    rows = []
    for seed in (1, 2):
        rows += [_row("plain", seed, 4.0), _row("cfx", seed, 3.0), _row("cfxm", seed, 2.4)]
    result = {
        (c.variant, c.reference): c.estimate.mean
        for c in changes(rows, [("cfx", "plain"), ("cfxm", "plain"), ("cfxm", "cfx")], "ttlb")
    }
    assert result[("cfx", "plain")] == pytest.approx(-0.25)
    assert result[("cfxm", "plain")] == pytest.approx(-0.4)
    assert result[("cfxm", "cfx")] == pytest.approx(-0.2)


def test_transfers_per_size_counts_missing_sizes_as_zero() -> None:
    rows = [_row("a", 1, 1.0, size=400_000)] * 3
    counts = transfers_per_size(
        rows, {("a", 1): [("perfclient1exit", "perf")]}, {"perf": (400_000, 5_000_000)}
    )
    assert counts == {
        ("a", 1, "perfclient1exit", 400_000): 3,
        ("a", 1, "perfclient1exit", 5_000_000): 0,
    }


def test_a_client_that_finished_nothing_fails_at_any_threshold_and_says_so() -> None:
    rows = [_row("a", 1, 1.0)]
    clients = {("a", 1): [("perfclient1exit", "perf"), ("perfclient2exit", "perf")]}
    checks = {c.host: c for c in completion_checks(rows, clients, 0.0)}
    assert checks["perfclient1exit"].ok and not checks["perfclient2exit"].ok
    assert str(completion_failure(checks["perfclient2exit"], 0.0)) == (
        "a/seed-1 perfclient2exit: finished no transfer (none succeeded, none failed)"
    )
    failing = completion_checks([_row("a", 1, 0, success=False)], clients, 0.5)[0]
    failure = completion_failure(failing, 0.5)
    assert str(failure) == "a/seed-1 perfclient1exit: 0/1 transfers completed (< 50%)"
    assert (failure.run, failure.where, failure.check) == (
        ("a", 1),
        "perfclient1exit",
        "min-completion",
    )
