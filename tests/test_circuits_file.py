"""Circuits drawn from a file of measured paths (runner/network/circuits.py,
``network.circuits``): the file read and refused line by line, the draw per
seed, the relays it makes and their scaled rates and regions, each measured
client pinned to its circuit, and the spec's errors naming file and key."""

from __future__ import annotations

import hashlib
import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.errors import DataError, SpecError
from runner.experiments import load_spec
from runner.network.backends import SHADOW
from runner.network.circuits import circuit_relays, drawn_circuits, parse_circuits
from runner.network.generate import client_sessions
from runner.network.mixing import variant_plan
from runner.network.pinned_paths import pinned_paths
from runner.spec.model import Spec

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "congestion-scaled.yaml"


def _fingerprint(n: int) -> str:
    return f"{n:040X}"


def _line(index: int, hops: list[tuple[int, str, int]]) -> str:
    return "\t".join([str(index), *(f"{_fingerprint(n)} {r} {rate}" for n, r, rate in hops)])


def _circuits_text(count: int = 40) -> str:
    """Circuits over 6 entries (1-6, also middles), 6 middles (7-12) and 4 exits (13-16)."""
    rng = random.Random(7)
    rate = {n: 100_000 * n for n in range(1, 17)}
    region = {n: ("EU", "NA", "SA")[n % 3] for n in range(1, 17)}
    lines = []
    for index in range(count):
        entry = rng.randint(1, 6)
        middle = rng.choice([n for n in range(1, 13) if n != entry])
        exit_ = rng.randint(13, 16)
        lines.append(_line(index, [(n, region[n], rate[n]) for n in (entry, middle, exit_)]))
    return "\n".join(lines) + "\n"


def _spec(tmp_path: Path, text: str | None = None, **circuits: Any) -> Spec:
    """congestion-scaled on a file of ``text`` in ``tmp_path``: 10
    circuits a seed (1 bulk, 9 web), 1 bulk and 9 web clients a class."""
    data = tmp_path / "circuits.dat"
    data.write_bytes((text if text is not None else _circuits_text()).encode())
    spec = yaml.safe_load(CONFIG.read_text())
    spec["network"]["circuits"] |= {
        "file": str(data),
        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
        "count": 10,
        "paper_circuits": 40,
    } | circuits
    clients = spec["network"]["clients"]
    for cls, count in {"bulk3n": 1, "web3n": 9, "bulk4n": 1, "web4n": 9}.items():
        clients[cls]["count"] = count
    spec["matrix"]["factors"]["scenario"]["c100-4n"]["clients"] |= {"bulk4n": 1, "web4n": 2}
    path = tmp_path / "congestion-scaled.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_spec(path)


def test_a_good_file_reads_circuit_by_circuit_with_each_relays_role() -> None:
    circuits = parse_circuits(_circuits_text(), "circuits.dat")
    assert len(circuits) == 40 and [c.line for c in circuits] == list(range(1, 41))
    assert all(len(c.hops) == 3 for c in circuits)
    first = circuits[0].hops[0]
    assert first.fingerprint == _fingerprint(int(first.fingerprint, 16))
    assert first.rate == 100_000 * int(first.fingerprint, 16)
    roles = {r.fingerprint: r.role for r in circuit_relays(circuits)}
    # Exits only ever last, middles 7-12 only ever second, entries guards.
    assert {roles[_fingerprint(n)] for n in range(13, 17) if _fingerprint(n) in roles} == {"exit"}
    assert {roles[_fingerprint(n)] for n in range(7, 13) if _fingerprint(n) in roles} == {"middle"}
    assert {roles[_fingerprint(n)] for n in range(1, 7) if _fingerprint(n) in roles} == {"guard"}
    # A relay first and last in different circuits flags for both positions.
    both = parse_circuits(
        _line(0, [(1, "EU", 9), (2, "EU", 9), (3, "NA", 9)])
        + "\n"
        + _line(1, [(3, "NA", 9), (2, "EU", 9), (4, "EU", 9)]),
        "x",
    )
    assert {r.fingerprint: r.role for r in circuit_relays(both)}[_fingerprint(3)] == "exitguard"


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda line: line.replace("\t", " ", 1), "an index and 3 hops"),
        (lambda line: line.rsplit("\t", 1)[0], "an index and 3 hops"),
        (lambda line: line.replace(" EU ", " Europe ", 1), "a region of two capital letters"),
        (lambda line: line[:3] + "Z" + line[4:], "a fingerprint of 40 hex digits"),
        (lambda line: line.rsplit(" ", 1)[0] + " 0", "a rate in bytes/s above 0"),
    ],
)
def test_a_damaged_line_is_refused_naming_the_file_and_the_line(damage: Any, expected: str) -> None:
    lines = _circuits_text().splitlines()
    lines[6] = damage(lines[6].replace("NA", "EU").replace("SA", "EU"))
    with pytest.raises(DataError, match=f"^circuits.dat:7(, hop \\d)?: expected {expected}"):
        parse_circuits("\n".join(lines), "circuits.dat")


def test_a_relay_with_two_rates_or_twice_in_a_circuit_is_refused() -> None:
    one = _line(0, [(1, "EU", 5), (2, "EU", 5), (3, "EU", 5)])
    other = _line(1, [(1, "EU", 6), (2, "EU", 5), (4, "EU", 5)])
    with pytest.raises(DataError, match=r"^f:2: relay 0+1 has rate 6, but 5 on line 1"):
        parse_circuits(f"{one}\n{other}\n", "f")
    twice = _line(0, [(1, "EU", 5), (2, "EU", 5), (1, "EU", 5)])
    with pytest.raises(DataError, match=r"^f:1: a relay appears twice in one circuit"):
        parse_circuits(twice, "f")


def test_a_missing_or_different_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    (tmp_path / "circuits.dat").unlink()
    with pytest.raises(SpecError) as missing:
        drawn_circuits(spec, 101)
    assert missing.value.key == "network.circuits.file"
    assert str(tmp_path / "circuits.dat") in missing.value.expected
    other = tmp_path / "other"
    other.mkdir()
    spec = _spec(other)
    (other / "circuits.dat").write_text(_circuits_text(39))
    with pytest.raises(SpecError) as changed:
        drawn_circuits(spec, 101)
    assert changed.value.key == "network.circuits.sha256"
    assert str(other / "circuits.dat") in changed.value.expected


def test_a_seed_draws_distinct_circuits_in_the_files_order_and_their_relays(
    tmp_path: Path,
) -> None:
    spec = _spec(tmp_path)
    drawn = drawn_circuits(spec, 101)
    assert len(drawn) == 10 == len({c.line for c in drawn})
    assert [c.line for c in drawn] == sorted(c.line for c in drawn)
    assert drawn_circuits(spec, 101) == drawn and drawn_circuits(spec, 102) != drawn
    variant = spec.variant("c375-4n-fixed")
    plan = variant_plan(spec, variant, 101)
    relays = [h for h in plan.hosts if h.is_relay and h.role != "authority"]
    fingerprints = {hop.fingerprint for c in drawn for hop in c.hops}
    assert len(relays) == len(fingerprints)
    by_origin = {h.origin.split()[-1]: h for h in relays if h.origin}
    assert set(by_origin) == fingerprints
    for fingerprint, host in by_origin.items():
        n = int(fingerprint, 16)
        # 100,000 x n bytes/s x 8 bits x 10 / 40 circuits.
        assert host.bandwidth_up == host.bandwidth_down == 200_000 * n
        assert host.region == {"EU": "eu", "NA": "na", "SA": "na"}[("EU", "NA", "SA")[n % 3]]
    # Every variant of the seed runs on the same relays.
    other = variant_plan(spec, spec.variant("c100-4n-maruthop"), 101)
    assert [h for h in other.hosts if h.is_relay] == [h for h in plan.hosts if h.is_relay]


def test_each_measured_client_is_pinned_to_its_circuit_bulk_first(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    drawn = drawn_circuits(spec, 101)
    for name in ("c375-3n-backtap", "c375-4n-maruthop", "c100-4n-fixed"):
        variant = spec.variant(name)
        plan = variant_plan(spec, variant, 101)
        names = {h.origin.split()[-1]: h.name for h in plan.hosts if h.origin}
        paths = pinned_paths(spec, variant, plan)
        clients = [h for h in plan.hosts if h.role == "client"]
        assert set(paths) == {h.name for h in clients}
        kinds = {"bulk3n": 0, "bulk4n": 0, "web3n": 1, "web4n": 1}
        seen: dict[str, int] = {}
        for host in clients:
            index = seen.setdefault(host.cls, 0)
            seen[host.cls] += 1
            circuit = drawn[index + kinds[host.cls] * math.ceil(0.1 * 10)]
            want = [names[hop.fingerprint] for hop in circuit.hops]
            path = paths[host.name]
            assert [*path.guards, *path.middles, *path.exits] == want, (name, host.name)
    # A scenario that keeps fewer clients keeps their circuits.
    small = spec.variant("c100-4n-fixed")
    full = spec.variant("c375-4n-fixed")
    kept = pinned_paths(spec, small, variant_plan(spec, small, 101))
    every = pinned_paths(spec, full, variant_plan(spec, full, 101))
    assert len(kept) == 3 and all(every[name] == path for name, path in kept.items())


def test_first_requests_spread_over_start_within(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    variant = spec.variant("c375-4n-fixed")
    plan = variant_plan(spec, variant, 101)
    begin = spec.duration.bootstrap
    starts = [client_sessions(spec, 101, h, SHADOW)[0][0] for h in plan.hosts if h.role == "client"]
    assert all(begin + 0.1 <= s <= begin + 30 for s in starts)
    assert max(starts) - min(starts) > 10  # spread, not in step
    (tmp_path / "b").mkdir()
    at_once = _spec(tmp_path / "b", start_within=["0 s", "0 s"])
    plan = variant_plan(at_once, at_once.variant("c375-4n-fixed"), 101)
    assert {
        client_sessions(at_once, 101, h, SHADOW)[0][0] for h in plan.hosts if h.role == "client"
    } == {begin}


@pytest.mark.parametrize(
    ("change", "key", "expected"),
    [
        ({"bulk": ["bulk3n"]}, "network.circuits", "exactly one of 'bulk' and 'web'"),
        (
            {"bulk": ["bulk3n", "web4n"], "web": ["web3n", "bulk4n"]},
            "network.circuits.bulk[1]",
            "has 9 clients, more than the 1 bulk circuits",
        ),
        ({"bulk": ["bulk3n", "nosuch"]}, "network.circuits.bulk[1]", "measured client class"),
        ({"sha256": "abc"}, "network.circuits.sha256", "64 hex digits"),
        ({"start_within": ["30 s", "1 s"]}, "network.circuits.start_within", "[earliest, latest]"),
    ],
)
def test_a_circuits_block_that_cannot_pin_every_client_is_refused(
    tmp_path: Path, change: dict[str, Any], key: str, expected: str
) -> None:
    with pytest.raises(SpecError) as error:
        _spec(tmp_path, **change)
    assert error.value.key == key and expected in error.value.expected


def test_relays_and_circuits_together_are_refused(tmp_path: Path) -> None:
    spec = yaml.safe_load(CONFIG.read_text())
    spec["network"]["relays"] = {"exit": {"count": 3, "bandwidth": "10 Mbit"}}
    path = tmp_path / "congestion-scaled.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert error.value.key == "network.relays" and "not both" in error.value.expected


def test_the_pinned_check_says_it_could_not_draw_the_pins_without_the_file(
    tmp_path: Path,
) -> None:
    # Stored runs are analysed where the data file may be absent (a fresh
    # clone): the pinned-path check says so instead of failing the stage.
    from types import SimpleNamespace
    from typing import cast

    from runner.analyses.inputs import Inputs
    from runner.analyses.pinned import pinned_result
    from runner.errors import DataMissingError

    spec = _spec(tmp_path)
    (tmp_path / "circuits.dat").unlink()
    variant = next(v for v in spec.variants if v.pinned_path > 0)
    inputs = SimpleNamespace(
        spec=spec, circuits=[], measured_clients={(variant.name, 101): [("c", "web3n")]}
    )
    found = pinned_result(cast(Inputs, inputs))
    assert found.runs == [] and found.failures == []
    assert "cannot read the circuits file" in found.unchecked
    assert str(tmp_path / "circuits.dat") in found.unchecked
    with pytest.raises(DataMissingError):  # a spec error elsewhere, as before
        drawn_circuits(spec, 101)
