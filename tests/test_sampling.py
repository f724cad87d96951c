"""Relays and client links drawn from published measurements (runner.datasets)."""

import hashlib
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.datasets import (
    FOLDER,
    RELAYS_2018,
    SPEEDS_2020,
    country_speeds,
    data_dir,
    read_data,
    relay_population,
)
from runner.errors import DataError, SpecError
from runner.experiments import parse_spec
from runner.network.plan import plan_network
from runner.network.sampling import bins, split_by_shares
from tests.conftest import CI_SMALL, ROOT, needs_data

needs_relays = needs_data(RELAYS_2018)
needs_speeds = needs_data(SPEEDS_2020)


def _spec(relays: dict[str, Any], **client_links: Any) -> Any:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["relays"] = relays
    if client_links:
        data["network"]["clients"]["perf"].pop("bandwidth", None)
        data["network"]["clients"]["perf"].pop("bandwidth_up", None)
        data["network"]["clients"]["perf"]["count"] = 40
        data["network"]["clients"]["perf"]["links"] = client_links
    return parse_spec(data, "test.yaml")


def test_shares_split_in_whole_numbers_with_a_floor() -> None:
    assert split_by_shares(20, [1284.0, 463.0, 138.0, 113.0]) == [13, 5, 1, 1]
    assert split_by_shares(5, [0.9, 0.1], least=1) == [4, 1]
    assert sum(split_by_shares(7, [1.0, 1.0, 1.0])) == 7


@needs_relays
def test_bins_cover_the_sorted_population_in_near_equal_parts() -> None:
    relays = list(relay_population("tor-2018"))
    parts = bins(relays, 7)
    assert sum(len(b) for b in parts) == len(relays)
    assert max(len(b) for b in parts) - min(len(b) for b in parts) <= 1
    tops = [max(r.capacity_bytes for r in b) for b in parts]
    assert tops == sorted(tops)


@needs_relays
def test_twenty_sampled_relays_keep_the_population_bandwidth_over_five_seeds() -> None:
    scale = 0.1
    spec = _spec({"any": {"count": 20, "sample": "tor-2018", "bandwidth_scale": scale}})
    drawn: list[float] = []
    roles: Counter[str] = Counter()
    origins = set()
    for seed in range(1, 6):
        relays = [h for h in plan_network(spec, seed).hosts if h.role != "authority" and h.is_relay]
        assert len(relays) == 20
        drawn += [h.bandwidth_up for h in relays]
        roles.update(h.role for h in relays)
        origins |= {h.origin for h in relays}
    population = [r.capacity_bytes * 8 * scale for r in relay_population("tor-2018")]
    want = statistics.quantiles(population, n=4)
    got = statistics.quantiles(drawn, n=4)
    for q_want, q_got in zip(want, got, strict=True):
        assert abs(q_got - q_want) <= 0.25 * q_want, (want, got)
    # The population's role shares: 13 middles, 5 guards, 1 exit, 1 exitguard of 20.
    assert roles == Counter({"middle": 65, "guard": 25, "exit": 5, "exitguard": 5})
    assert len(origins) > 60  # seeds draw different relays
    assert all(o.startswith("tor-2018 row ") for o in origins)


@needs_relays
def test_a_seed_draws_one_network_and_a_role_group_draws_within_its_role() -> None:
    spec = _spec(
        {
            "exit": {"count": 3, "sample": "tor-2018"},
            "guard": {"count": 3, "sample": "tor-2018"},
            "middle": {"count": 3, "bandwidth": "50 Mbit"},
        }
    )
    a, b, c = (plan_network(spec, s) for s in (1, 1, 2))
    origin = lambda p: [h.origin for h in p.hosts if h.is_relay]  # noqa: E731
    assert origin(a) == origin(b) != origin(c)
    population = {r.row: r for r in relay_population("tor-2018")}
    for host in a.with_role("exit", "guard"):
        assert host.origin is not None
        row = int(host.origin.split()[2])
        assert population[row].role == host.role
        assert host.bandwidth_up == population[row].capacity_bytes * 8
    assert all(h.origin is None and h.bandwidth_up == 50_000_000 for h in a.with_role("middle"))


@needs_relays
def test_countries_place_relays_in_their_regions() -> None:
    data = yaml.safe_load(CI_SMALL.read_text())
    data["network"]["topology"] = {
        "generator": "multi_region",
        "params": {
            "regions": ["na", "eu"],
            "latency": {"na-na": "10 ms", "eu-eu": "10 ms", "na-eu": "40 ms"},
        },
    }
    data["network"]["relays"] = {
        "any": {"count": 30, "sample": "tor-2018", "countries": {"US": "na", "CA": "na", "*": "eu"}}
    }
    plan = plan_network(parse_spec(data, "test.yaml"), 3)
    relays = [h for h in plan.hosts if h.origin]
    for host in relays:
        country = host.origin.split("(")[1].rstrip(")") if host.origin else ""
        assert host.region == ("na" if country in ("US", "CA") else "eu")
    assert {h.region for h in relays} == {"na", "eu"}


@needs_speeds
def test_measured_links_give_each_client_its_country_speeds() -> None:
    spec = _spec(
        {
            "exit": {"count": 2, "bandwidth": "50 Mbit"},
            "guard": {"count": 2, "bandwidth": "50 Mbit"},
        },
        home={"share": 0.75, "speeds": "speedtest-2020", "countries": {"US": 0.5, "DE": 0.5}},
        office={"share": 0.25, "bandwidth": "100 Mbit"},
    )
    speeds = country_speeds("speedtest-2020")
    clients = [h for h in plan_network(spec, 1).hosts if h.role == "client"]
    home = [h for h in clients if h.link == "home"]
    assert len(home) == 30
    countries = Counter()
    for host in home:
        assert host.origin is not None and host.origin.startswith("speedtest-2020 ")
        country = host.origin.split()[1]
        countries[country] += 1
        assert (host.bandwidth_down, host.bandwidth_up) == (
            speeds[country].down_bits,
            speeds[country].up_bits,
        )
    assert set(countries) == {"US", "DE"}


@pytest.mark.parametrize(
    ("relays", "key", "expected"),
    [
        ({"any": {"count": 9, "bandwidth": "1 Mbit"}}, "network.relays.any", "give 'sample'"),
        (
            {"any": {"count": 9, "sample": "tor-1999"}},
            "network.relays.any.sample",
            "unknown relay population",
        ),
        ({"any": {"count": 3, "sample": "tor-2018"}}, "network.relays.any.count", "at least 4"),
        (
            {"any": {"count": 9, "sample": "tor-2018", "countries": {"US": "main"}}},
            "network.relays.any.countries",
            "'*' entry",
        ),
        (
            {"any": {"count": 9, "sample": "tor-2018", "countries": {"USA": "main", "*": "main"}}},
            "network.relays.any.countries.USA",
            "two-letter",
        ),
    ],
)
def test_sampled_groups_are_checked(relays: dict[str, Any], key: str, expected: str) -> None:
    with pytest.raises(SpecError) as err:
        _spec(relays)
    assert err.value.key == key
    assert expected in err.value.expected


def test_a_missing_data_file_names_where_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORNET_DATA", str(tmp_path))
    with pytest.raises(DataError) as err:
        read_data(RELAYS_2018)
    message = str(err.value)
    assert str(tmp_path / FOLDER / RELAYS_2018.name) in message
    assert RELAYS_2018.sha256 in message and "tmodel-ccs2018.github.io" in message


def test_a_changed_data_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / FOLDER
    folder.mkdir()
    (folder / SPEEDS_2020.name).write_bytes(b"not the published file")
    monkeypatch.setenv("TORNET_DATA", str(tmp_path))
    with pytest.raises(DataError) as err:
        read_data(SPEEDS_2020)
    digest = hashlib.sha256(b"not the published file").hexdigest()
    assert digest in str(err.value) and SPEEDS_2020.sha256 in str(err.value)


@needs_relays
def test_the_published_relays_read_as_a_population() -> None:
    relays = relay_population("tor-2018")
    assert len(relays) == 1998 - 81  # never-observed relays are left out
    assert Counter(r.role for r in relays)["exitguard"] > 0
    assert all(r.capacity_bytes > 0 and len(r.country) == 2 for r in relays)


def test_the_data_sets_are_found_beside_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORNET_DATA", raising=False)
    assert data_dir() == ROOT.parent / "shared" / "data"
    monkeypatch.setenv("TORNET_DATA", "/elsewhere")
    assert data_dir() == Path("/elsewhere")
