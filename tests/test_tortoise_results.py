"""Tortoise's mechanism, checked on the collected tables of a real run.

The fixtures are `make experiment EXP=tortoise-small`'s tables (Shadow
3.3.0, tor 0.4.9.11 with tor-patches), gzipped, beside the spec they ran
(spec.yaml); circuits are cut to those
that carried client streams, the only ones the checks read.
"""

from pathlib import Path

import pytest

from runner.analyses.client_bandwidth import ClientBandwidth, group_means, per_client
from runner.experiments.tortoise.limits import (
    LimitCheck,
    RelayLimit,
    engagement_failures,
    limit_checks,
    relay_limits,
)
from runner.tables.schema import CIRCUITS, CLIENTS, RELAYS, TRANSFERS
from tests.conftest import FIXTURES, fixture_spec, gunzip_fixture

TABLES = FIXTURES / "tortoise-small"
LIMITED = [
    "limit-100",
    "limit-200",
    "limit-100-perconn",
    "relays-low",
    "relays-high",
    "relays-200",
    "growth-100",
    "growth-200",
]
REFERENCE = RelayLimit(102400, 102400)


def _table(name: str, tmp: Path) -> Path:
    return gunzip_fixture(TABLES / f"{name}.gz", tmp)


@pytest.fixture(scope="module")
def checks_and_bandwidths(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[LimitCheck], list[ClientBandwidth]]:
    tmp = tmp_path_factory.mktemp("tortoise")
    transfers = TRANSFERS.read(_table("transfers.csv", tmp))
    clients = CLIENTS.read(_table("clients.csv", tmp))
    circuits = CIRCUITS.read(_table("circuits.csv", tmp))
    limits = relay_limits(RELAYS.read(_table("relays.csv", tmp)))
    checks = limit_checks(transfers, clients, circuits, limits, REFERENCE)
    return checks, per_client(transfers, clients)


def _by(checks: list[LimitCheck], variant: str, standing: str) -> list[LimitCheck]:
    return [c for c in checks if c.variant == variant and c.standing == standing]


def test_the_fixtures_cover_every_variant_and_seed(
    checks_and_bandwidths: tuple[list[LimitCheck], list[ClientBandwidth]],
) -> None:
    spec = fixture_spec("tortoise-small")
    _, bandwidths = checks_and_bandwidths
    runs = {(b.variant, b.seed) for b in bandwidths}
    assert runs == {(v.name, s) for v in spec.variants for s in spec.seeds}


def test_no_limited_client_beats_its_guards_bucket(
    checks_and_bandwidths: tuple[list[LimitCheck], list[ClientBandwidth]],
) -> None:
    checks, _ = checks_and_bandwidths
    for variant in [*LIMITED, "half-100", "half-relays-100"]:
        held = _by(checks, variant, "held")
        assert held, f"{variant}: no client was held"
        assert sum(c.transfers for c in held) >= 100
        assert all(c.over == 0 and c.worst <= 1.0 for c in held), variant


def test_unlimited_clients_and_client_relays_do_exceed_the_limit(
    checks_and_bandwidths: tuple[list[LimitCheck], list[ClientBandwidth]],
) -> None:
    checks, _ = checks_and_bandwidths
    for variant in ("unlimited", "growth-unlimited", "relays-unlimited"):
        free = _by(checks, variant, "free")
        assert sum(c.over for c in free) > 0.3 * sum(c.transfers for c in free), variant
    for variant in ("relays-low", "relays-high", "relays-200"):
        relays = _by(checks, variant, "client-relay")
        assert relays and sum(c.over for c in relays) > 0, variant
        assert not _by(checks, variant, "free")  # everyone else is held


def test_with_half_the_relays_limiting_only_their_clients_are_held(
    checks_and_bandwidths: tuple[list[LimitCheck], list[ClientBandwidth]],
) -> None:
    checks, _ = checks_and_bandwidths
    held, free = _by(checks, "half-100", "held"), _by(checks, "half-100", "free")
    assert held and free
    assert all(c.over == 0 for c in held)
    assert sum(c.over for c in free) > 0


def test_the_limit_slows_web_and_bulk_clients_and_spares_client_relays(
    checks_and_bandwidths: tuple[list[LimitCheck], list[ClientBandwidth]],
) -> None:
    _, bandwidths = checks_and_bandwidths
    variants = sorted({b.variant for b in bandwidths})
    means = group_means(bandwidths, variants)
    # The relays are loaded (exits about 80% busy without a limit): the
    # limit halves bulk clients; web clients lose less, as the capacity bulk
    # clients leave them makes up for part of what their own limit takes.
    assert means[("limit-100", "bulk")].mean < means[("unlimited", "bulk")].mean / 2
    assert means[("limit-100", "web")].mean < means[("unlimited", "web")].mean
    assert means[("limit-100", "web")].mean > means[("unlimited", "web")].mean / 2
    for group in ("web", "bulk"):
        assert means[("limit-100", group)].mean < means[("limit-200", group)].mean
    assert means[("relays-high", "client-relay")].mean > 2 * means[("relays-high", "web")].mean
    # Client relays are exempt at 200 KBytes/s too: faster than web clients.
    assert means[("relays-200", "client-relay")].mean > means[("relays-200", "web")].mean


def test_held_transfers_run_at_the_limit_and_an_unreachable_limit_fails_the_check(
    tmp_path: Path,
) -> None:
    transfers = TRANSFERS.read(_table("transfers.csv", tmp_path))
    clients = CLIENTS.read(_table("clients.csv", tmp_path))
    circuits = CIRCUITS.read(_table("circuits.csv", tmp_path))
    limits = relay_limits(RELAYS.read(_table("relays.csv", tmp_path)))
    checks = limit_checks(transfers, clients, circuits, limits, REFERENCE)
    held = _by(checks, "limit-100", "held")
    # Split by class: bulk clients download back to back, so the bucket
    # paces some of their transfers.
    assert {c.cls for c in held} == {"bulk", "web"}
    assert sum(c.at_limit for c in held if c.cls == "bulk") > 0
    assert not [f for f in engagement_failures(checks) if f.variant == "limit-100"]
    # The same relays given a limit a hundred times higher: nothing reaches it.
    lifted = {key: RelayLimit(lim.rate * 100, lim.burst) for key, lim in limits.items()}
    unreached = limit_checks(transfers, clients, circuits, lifted, REFERENCE)
    failures = engagement_failures(unreached)
    assert {(f.variant, f.check) for f in failures} >= {("limit-100", "limit-engaged")}
    assert all(f.seed is not None for f in failures)
