"""What a variant changes in a seed's network.

Growth adds clients; client caps leave some out; client relays turn a share
of a class's clients into relays too; mixed sections give a variant's torrc lines to a share of the
hosts they name. Every choice is per seed and nested across shares (a host
chosen at 2% is chosen at 4% too), so the variants of a seed stay paired.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from runner.network.plan import NetworkPlan, plan_network
from runner.network.torrc import variant_roles
from runner.spec.model import Spec, Variant


def _rank(spec: Spec, seed: int, what: str, name: str) -> str:
    return hashlib.sha256(f"{spec.name}/{what}/{seed}/{name}".encode()).hexdigest()


def _chosen(spec: Spec, seed: int, what: str, names: list[str], share: float) -> set[str]:
    """``share`` of ``names``, in a per-seed random order fixed by ``what``."""
    ordered = sorted(names, key=lambda n: _rank(spec, seed, what, n))
    return set(ordered[: round(share * len(names))])


def variant_plan(spec: Spec, variant: Variant, seed: int) -> NetworkPlan:
    """The seed's network as ``variant`` runs it."""
    plan = plan_network(spec, seed, variant.extra_clients, variant.topology, variant.add_clients)
    if variant.clients:
        kept: dict[str, int] = {}
        capped = []
        for h in plan.hosts:
            if h.role == "client" and h.cls in variant.clients:
                kept[h.cls] = kept.get(h.cls, 0) + 1
                if kept[h.cls] > variant.clients[h.cls]:
                    continue
            capped.append(h)
        plan = NetworkPlan(plan.seed, plan.graph, tuple(capped))
    if not variant.client_relays:
        return plan
    relays: set[str] = set()
    for cls, share in variant.client_relays.items():
        names = [h.name for h in plan.hosts if h.role == "client" and h.cls == cls]
        relays |= _chosen(spec, seed, f"client-relays/{cls}", names, share)
    role = variant.client_relay_role
    hosts = tuple(
        replace(h, client_relay=True, client_relay_as=role) if h.name in relays else h
        for h in plan.hosts
    )
    return NetworkPlan(plan.seed, plan.graph, hosts)


def torrc_sections(spec: Spec, variant: Variant, plan: NetworkPlan) -> dict[str, list[str]]:
    """For each tor host, the variant's torrc sections that apply to it."""
    sections = {h.name: variant_roles(h) for h in plan.hosts if h.runs_tor}
    for section, share in variant.fractions.items():
        names = [name for name, roles in sections.items() if section in roles]
        keep = _chosen(spec, plan.seed, f"fraction/{section}", names, share)
        for name in names:
            if name not in keep:
                sections[name].remove(section)
    return sections
