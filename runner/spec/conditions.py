"""The conditions an experiment's runs have, in one line, for the claims
tables: what the spec says of its network, clients and traffic (relays,
clients per class, the measured period, client relays, growth, parameters
measured on the network), then the spec's own ``claims.conditions`` where
it says how they differ from the paper's. A verdict holds under these, not
the paper's, so each experiment's claims are labelled with them."""

from __future__ import annotations

from runner.spec.model import Spec


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.1 else f"{share:.1%}"


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _client_relays(spec: Spec, clients: int) -> str | None:
    """How many clients also run a relay in the variants that have some,
    as a count and a share of the clients (chosen per class, rounded as
    runner.network.mixing chooses them)."""
    counts = sorted(
        {
            sum(round(v.client_relays.get(g.name, 0.0) * g.count) for g in spec.network.clients)
            for v in spec.variants
            if v.client_relays
        }
    )
    if not counts:
        return None
    shares = _joined([f"{n} ({_percent(n / clients)})" for n in counts])
    return f"client relays {shares} of the clients"


def _measured(spec: Spec) -> list[str]:
    """Parameters set per seed from another variant's clients: their
    multiples, of the variant and class they are measured from (parameters
    at the same multiples of the same clients named together)."""
    found: dict[str, tuple[str, dict[str, None]]] = {}
    for v in spec.variants:
        for param, m in v.consensus_from.items():
            source = f"{m.variant}'s {m.cls} clients' mean bandwidth"
            found.setdefault(param, (source, {}))[1][f"{m.times:g}x"] = None
    alike: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for param, (source, times) in found.items():
        alike.setdefault((source, tuple(times)), []).append(param)
    return [
        f"{_joined(params)} at {_joined(list(times))} {source} on the same seed"
        for (source, times), params in alike.items()
    ]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def conditions_line(spec: Spec) -> str:
    """The line (see the module): "under tortoise-small's own conditions
    (8 relays, 45 clients: 40 web, 5 bulk; ...)"."""
    net = spec.network
    relays = f"{sum(g.count for g in net.relays)} relays"
    if net.circuits is not None:
        relays = (
            f"the relays of {net.circuits.count} circuits drawn a seed from {net.circuits.file}"
        )
    clients = sum(g.count for g in net.clients if g.measured)
    by_class = ", ".join(f"{g.count} {g.name}" for g in net.clients if g.count)
    parts = [
        f"{relays}, {sum(g.count for g in net.clients)} clients ({by_class})",
        f"{_minutes(spec.duration.measure)} of traffic a run",
    ]
    relayed = _client_relays(spec, clients)
    if relayed is not None:
        parts.append(relayed)
    growth = sorted({v.extra_clients for v in spec.variants if v.extra_clients})
    if growth:
        parts.append(f"growth of {_joined([_percent(g) for g in growth])} more clients")
    parts += _measured(spec)
    line = f"under {spec.name}'s own conditions ({'; '.join(parts)})"
    own = spec.claims.conditions if spec.claims is not None else ""
    return f"{line}: {own}" if own else line
