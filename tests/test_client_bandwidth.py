"""Per-client bandwidth and the token-bucket checks, on small made-up tables."""

import pytest

from runner.analyses.client_bandwidth import ClientRow, group_means, per_client
from runner.experiments.tortoise.limits import RelayLimit, limit_checks
from runner.tables.schema import CircuitRow, TransferRow

KIB = 1024


def _t(host: str, size: int, ttlb: float, seed: int = 1, ok: bool = True) -> TransferRow:
    return TransferRow("v", seed, host, "web", True, size, 0.0, 0.1, ttlb, ok, "" if ok else "X")


def _circ(host: str, guard: str, streams: int = 1, seed: int = 1) -> CircuitRow:
    return CircuitRow("v", seed, host, "web", "1", "BUILT", 0.0, 0.2, "GENERAL", "", guard, streams)


def test_a_clients_bandwidth_is_its_bytes_over_its_transfer_time() -> None:
    clients = [ClientRow("v", 1, "a", "web", False), ClientRow("v", 1, "b", "bulk", True)]
    rows = [_t("a", 100 * KIB, 1.0), _t("a", 300 * KIB, 1.0), _t("a", 10**6, 1.0, ok=False)]
    rows += [_t("b", 500 * KIB, 2.0)]
    result = {b.host: b for b in per_client(rows, clients)}
    assert result["a"].kib_per_s == pytest.approx(200.0) and result["a"].transfers == 2
    assert result["b"].group == "client-relay" and result["b"].kib_per_s == pytest.approx(250.0)


def test_group_means_average_seed_means_with_an_interval() -> None:
    clients = [ClientRow("v", s, h, "web", False) for s in (1, 2, 3) for h in ("a", "b")]
    rows = [
        _t(h, int(kib * KIB), 1.0, seed=s)
        for s, kib in ((1, 100), (2, 200), (3, 300))
        for h in "ab"
    ]
    means = group_means(per_client(rows, clients), ["v"])
    web = means[("v", "web")]
    assert web.mean == pytest.approx(200.0) and web.n == 3
    assert web.low is not None and web.low < 200 < (web.high or 0)


def test_limit_checks_hold_clients_to_their_guards_bucket() -> None:
    limit = RelayLimit(100 * KIB, 100 * KIB)
    limits = {("v", 1, "g1"): limit}
    clients = [
        ClientRow("v", 1, "held", "web", False),
        ClientRow("v", 1, "free", "web", False),
        ClientRow("v", 1, "relay", "web", True),
        ClientRow("v", 1, "mixed", "web", False),
    ]
    circuits = [
        _circ("held", "g1"),
        _circ("held", "g2", streams=0),  # built, carried nothing: not its guard
        _circ("free", "g2"),
        _circ("relay", "g1"),
        _circ("mixed", "g1"),
        _circ("mixed", "g2"),
    ]
    rows = [
        _t("held", 1100 * KIB, 10.0),  # exactly rate x 10 s + burst: within
        _t("free", 3000 * KIB, 10.0),  # three times the limit
        _t("relay", 2000 * KIB, 10.0),
        _t("mixed", 9000 * KIB, 10.0),
    ]
    checks = {c.standing: c for c in limit_checks(rows, clients, circuits, limits, limit)}
    assert set(checks) == {"held", "free", "client-relay"}  # mixed is left out
    assert checks["held"].over == 0 and checks["held"].worst == pytest.approx(1.0)
    assert checks["free"].over == 1 and checks["free"].worst == pytest.approx(2.9)
    assert checks["client-relay"].over == 1
    # One byte more than the bucket allows is over.
    rows[0] = _t("held", 1100 * KIB + 1, 10.0)
    held = next(
        c for c in limit_checks(rows, clients, circuits, limits, limit) if c.standing == "held"
    )
    assert held.over == 1
