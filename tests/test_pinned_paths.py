"""Pinned paths (runner/network/pinned_paths.py) and their check
(runner/analyses/pinned.py): one draw per seed and client, the same in
every variant, nested across legs; circuits off the pin and sets whose
legs share a relay fail."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from runner.analyses.pinned import pinned_run
from runner.errors import SpecError
from runner.experiments import load_spec
from runner.network.backends import SHADOW
from runner.network.identity import run_identity
from runner.network.mixing import variant_plan
from runner.network.pinned_paths import PinnedPath, drawn_paths, pinned_paths, pinned_torrc
from runner.tables.schema import CircuitRow
from tests.conftest import FIXTURE_VERSIONS

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "conflux-small.yaml"


def test_every_variant_of_a_seed_draws_the_same_nested_relays() -> None:
    spec = load_spec(CONFIG)
    plain, conflux = spec.variant("plain-pinned"), spec.variant("conflux-pinned")
    for seed in (101, 102):
        one = pinned_paths(spec, plain, variant_plan(spec, plain, seed))
        two = pinned_paths(spec, conflux, variant_plan(spec, conflux, seed))
        assert set(one) == set(two) and len(one) == 2  # both measured clients
        for host, path in one.items():
            assert len(path.guards) == len(path.middles) == len(path.exits) == 1
            assert len(two[host].guards) == len(two[host].middles) == 2
            assert path.guards[0] == two[host].guards[0]
            assert path.middles[0] == two[host].middles[0]
            assert path.exits == two[host].exits
    plan = variant_plan(spec, plain, 101)
    draws = drawn_paths(spec, plan)
    roles = {h.name: h.role for h in plan.hosts}
    for path in draws.values():
        assert {roles[g] for g in path.guards} <= {"guard", "exitguard"}
        assert {roles[m] for m in path.middles} == {"middle"}
        assert len(set(path.guards)) == len(path.guards) == 4  # all, without replacement
    # Seeds differ in their draws (not one fixed path for every network).
    other = drawn_paths(spec, variant_plan(spec, plain, 102))
    assert any(draws[h] != other[h] for h in draws)


def test_a_variant_without_a_pin_keeps_its_identity_and_draws_nothing() -> None:
    spec = load_spec(CONFIG)
    plain = spec.variant("plain")
    assert pinned_paths(spec, plain, variant_plan(spec, plain, 101)) == {}
    # pinned_path 0 is left out of the identity: the runs made before it existed keep theirs.
    same = run_identity(spec, plain, 101, SHADOW, FIXTURE_VERSIONS)
    assert run_identity(spec, replace(plain, pinned_path=0), 101, SHADOW, FIXTURE_VERSIONS) == same
    assert run_identity(spec, replace(plain, pinned_path=1), 101, SHADOW, FIXTURE_VERSIONS) != same


def test_more_legs_than_relays_is_an_error_naming_the_key() -> None:
    spec = load_spec(CONFIG)
    wide = replace(spec.variant("conflux-pinned"), pinned_path=5)  # 4 guards, 4 middles
    with pytest.raises(SpecError, match=r"variants\.conflux-pinned\.pinned_path.*5 legs need 5"):
        pinned_paths(spec, wide, variant_plan(spec, wide, 101))


def test_the_torrc_lines_name_the_relays_by_fingerprint() -> None:
    path = PinnedPath(("g1", "g2"), ("m1", "m2"), ("e1",))
    lines = pinned_torrc(path, {"g1": "AA", "g2": "BB", "m1": "CC", "m2": "DD", "e1": "EE"})
    assert lines == ["EntryNodes $AA,$BB", "MiddleNodes $CC,$DD", "ExitNodes $EE"]


def _circuit(cid: str, path: str, conflux: str = "", streams: int = 1) -> CircuitRow:
    return CircuitRow(
        "conflux-pinned", 101, "c1", "perf", cid, "BUILT", 10.0, 0.5, "GENERAL", conflux,
        path.split()[0], streams, 3, "", tuple(path.split()),
    )  # fmt: skip


FULL = PinnedPath(("g1", "g2", "g3"), ("m1", "m2", "m3"), ("e1", "e2"))


def test_the_check_passes_legs_on_the_pin_and_fails_what_is_off_it() -> None:
    pin = FULL.first(2)
    good = [_circuit("1", "g1 m2 e1", "X"), _circuit("2", "g2 m1 e1", "X")]
    run = pinned_run("conflux-pinned", 101, "c1", pin, FULL, good)
    assert (run.circuits, run.off_path, run.sets, run.shared_relay_sets) == (2, 0, 1, 0)
    assert run.first_path_sets == 0 and run.failure() is None
    on_plain = pinned_run("v", 1, "c1", pin, FULL, [_circuit("1", "g1 m1 e1", "Y")])
    assert on_plain.first_path_sets == 1
    off = pinned_run("v", 1, "c1", pin, FULL, [*good, _circuit("3", "g3 m1 e1")])
    failure = off.failure()
    assert failure is not None and "1 of 3 circuits ran on relays" in failure.message
    shared = pinned_run(
        "v", 1, "c1", pin, FULL, [_circuit("1", "g1 m1 e1", "Z"), _circuit("2", "g2 m1 e1", "Z")]
    )
    failure = shared.failure()
    assert failure is not None and "sharing a guard or middle" in failure.message
    # Circuits of tor's own (no stream, no set) and onion-service ones are not counted.
    idle = pinned_run("v", 1, "c1", pin, FULL, [_circuit("9", "g3 m3 e2", streams=0)])
    assert idle.circuits == 0
    failure = idle.failure()
    assert failure is not None and "untested" in failure.message
