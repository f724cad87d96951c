"""What a variant changes in its seed's network besides torrc lines: the
position its client relays take, and its own topology parameters (loss on
a link as a factor)."""

from pathlib import Path

import pytest
import yaml

from runner.errors import SpecError
from runner.experiments import parse_spec
from runner.network.mixing import variant_plan
from runner.network.torrc import defaults_includes, variant_roles
from runner.spec.model import Spec
from runner.tables.schema import load_role
from tests.test_mixing import _spec

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.parametrize("position", ["exit", "guard", "middle"])
def test_client_relays_take_the_position_their_variant_gives(position: str) -> None:
    spec = _spec(
        {
            "none": {},
            "relays": {"client_relays": {"perf": 0.25}, "client_relay_role": position},
        }
    )
    plan = variant_plan(spec, spec.variant("relays"), 1)
    relays = [h for h in plan.hosts if h.client_relay]
    assert len(relays) == 12 and {h.client_relay_as for h in relays} == {position}
    # The authorities flag them for that position, and only them besides
    # the relays of that role.
    for flag in ("exit", "guard"):
        flagged = {h.name for h in plan.in_position(flag)}
        own = {h.name for h in plan.hosts if h.role in (flag, "exitguard")}
        assert flagged == own | ({h.name for h in relays} if flag == position else set())
    # Their torrc: the relay's defaults of that position; the client's lines too.
    assert defaults_includes(relays[0])[-1].endswith(f"{position}.torrc")
    assert variant_roles(relays[0]) == ["all", "relay", "client", "perf"]
    # Their load is counted apart from the dedicated relays'.
    info = {"role": "client", "client_relay": True, "client_relay_as": position}
    assert load_role(info) == f"client-relay-{position}"
    assert load_role({"role": "client", "client_relay": False}) is None
    assert load_role({"role": "exit"}) == "exit"
    # The same clients become relays whatever the position: the variants stay paired.
    middles = _spec({"none": {}, "relays": {"client_relays": {"perf": 0.25}}})
    same = variant_plan(middles, middles.variant("relays"), 1)
    assert {h.name for h in same.hosts if h.client_relay} == {h.name for h in relays}


def test_an_unknown_client_relay_position_is_named() -> None:
    with pytest.raises(SpecError, match="client_relay_role: expected one of middle, guard, exit"):
        _spec({"a": {"client_relays": {"perf": 0.1}, "client_relay_role": "authority"}})


def _mctor(variants: dict[str, object]) -> Spec:
    data = yaml.safe_load((CONFIGS / "mctor-small.yaml").read_text())
    data["network"]["topology"]["params"]["packet_loss"] = {"nyc-lon": 0.0005}
    data["variants"] = variants
    data["baseline"] = next(iter(variants))
    for key in ("comparisons", "hypotheses", "claims", "matrix"):
        data.pop(key, None)
    data["seeds"] = [1]  # rounds need hypotheses
    return parse_spec(data, "loss.yaml")


def test_a_variants_topology_changes_only_the_links_it_names() -> None:
    spec = _mctor(
        {
            "lossless": {"topology": {"packet_loss": {}}},
            "lossy": {"topology": {"packet_loss": {"lon-sgp": 0.001}}},
            "network": {},
        }
    )
    plans = {v.name: variant_plan(spec, v, 3) for v in spec.variants}

    def losses(name: str) -> dict[frozenset[str], float]:
        graph = plans[name].graph
        return {
            frozenset((graph.nodes[a]["region"], graph.nodes[b]["region"])): d["packet_loss"]
            for a, b, d in graph.edges(data=True)
        }

    assert set(losses("lossless").values()) == {0.0}
    assert losses("lossy")[frozenset(("lon", "sgp"))] == 0.001
    assert sum(v > 0 for v in losses("lossy").values()) == 1
    # The network's own loss where the variant gives none.
    assert losses("network") != losses("lossless") and max(losses("network").values()) > 0
    # Same hosts, same latencies (the jitter drawn per seed): only loss differs.
    assert plans["lossy"].hosts == plans["lossless"].hosts == plans["network"].hosts
    for a, b, d in plans["lossy"].graph.edges(data=True):
        assert plans["lossless"].graph.edges[a, b]["latency"] == d["latency"]


def test_a_bad_topology_parameter_of_a_variant_is_named() -> None:
    with pytest.raises(SpecError, match=r"variants.lossy.topology.packet_loss.lon-mars"):
        _mctor({"lossy": {"topology": {"packet_loss": {"lon-mars": 0.01}}}})
    with pytest.raises(SpecError, match=r"variants.lossy.topology.packet_loss.lon-sgp"):
        _mctor({"lossy": {"topology": {"packet_loss": {"lon-sgp": 2}}}})
