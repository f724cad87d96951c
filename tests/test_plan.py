import re

from runner.plan import plan_network
from runner.spec import load_spec
from tests.conftest import CI_SMALL


def test_names_follow_tornettools_and_counts_match_the_spec() -> None:
    plan = plan_network(load_spec(CI_SMALL), 1)
    names = [h.name for h in plan.hosts]
    assert names[0] == "4uthority1"
    relays = [n for n in names if n.startswith("relay")]
    assert relays == [
        "relay1exit",
        "relay2exit",
        "relay3guard",
        "relay4guard",
        "relay5middle",
        "relay6middle",
    ]
    assert [n for n in names if n.startswith("perfclient")] == [
        f"perfclient{i}exit" for i in range(1, 5)
    ]
    assert "server1exit" in names
    assert all(re.fullmatch(r"[A-Za-z0-9]{1,19}", n) for n in relays)  # tor nicknames
    assert len({h.ip for h in plan.hosts}) == len(plan.hosts)


def test_a_seed_names_one_network() -> None:
    spec = load_spec(CI_SMALL)
    a, b, c = plan_network(spec, 1), plan_network(spec, 1), plan_network(spec, 2)
    bandwidths = lambda p: [h.bandwidth_up for h in p.hosts if h.is_relay]  # noqa: E731
    assert bandwidths(a) == bandwidths(b)
    assert bandwidths(a) != bandwidths(c)
    for host in a.hosts:
        if host.role in ("exit", "guard"):
            assert 40_000_000 <= host.bandwidth_up <= 100_000_000
