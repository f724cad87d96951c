"""Checks that relays' rate limits on non-relay clients held (Tortoise,
tor-patches/0002).

The limit checks follow the token bucket a client's guard applies: in any
transfer, the bytes received can be at most ``rate * ttlb + burst`` (the
bucket counts cell and TLS overhead too, so payload stays further below).
A client counts as *held* when every guard of the circuits that carried its
streams limits non-relay clients, *free* when none does, and *mixed*
otherwise (left out).

A held transfer is *at the limit* when, past its burst, its payload ran at
70% of the rate or more: the bucket, not the path, set its pace. A limited run
where no held transfer ever reached its limit tested a limit that never
engaged; the check says so.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from runner.analyses.client_bandwidth import ClientBandwidth, group_means, per_client
from runner.analyses.inputs import Inputs
from runner.analyses.stats import Estimate
from runner.checks import Failure
from runner.experiments.tortoise.setting import LimitSetting, limit_settings
from runner.spec.model import CLIENT_RELAY
from runner.tables.schema import CLIENTS, RELAYS, CircuitRow, ClientRow, RelayRow, TransferRow

# A held transfer whose payload past its burst came to this share of the
# rate or more ran at the limit. The bucket counts cells and TLS records,
# and a transfer's time includes its first round trips, so the fastest held
# transfers' payload reaches 0.78-0.85 of the rate; 0.7 leaves a margin.
AT_LIMIT = 0.7


@dataclass(frozen=True)
class RelayLimit:
    rate: int  # bytes/s
    burst: int  # bytes


def relay_limits(relays: Iterable[RelayRow]) -> dict[tuple[str, int, str], RelayLimit]:
    """(variant, seed, relay) -> the limit it applies, for limiting relays."""
    return {
        (r.variant, r.seed, r.relay): RelayLimit(r.client_limit_rate, r.client_limit_burst or 0)
        for r in relays
        if r.client_limit_rate
    }


def client_guards(circuits: Iterable[CircuitRow]) -> dict[tuple[str, int, str], set[str]]:
    """(variant, seed, client) -> the guards of the circuits that carried its
    streams."""
    guards: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    for c in circuits:
        if c.streams and c.guard:
            guards[(c.variant, c.seed, c.host)].add(c.guard)
    return guards


@dataclass(frozen=True)
class LimitCheck:
    """One run's clients of one standing and class against their guards' limit."""

    variant: str
    seed: int
    standing: str  # held, free, client-relay
    clients: int
    transfers: int
    over: int  # transfers that got more than rate * ttlb + burst
    worst: float  # the largest (bytes - burst) / (rate * ttlb) seen; >1 is over
    rate: int  # the limit compared against (bytes/s)
    cls: str = ""  # the clients' class (web, bulk)
    at_limit: int = 0  # transfers at AT_LIMIT or more of the rate past their burst


def _standing(
    info: ClientRow, guards: set[str], limits: dict[str, RelayLimit]
) -> tuple[str, RelayLimit | None]:
    if info.client_relay:
        return CLIENT_RELAY, None
    if not guards:
        return "unknown", None
    limited = [limits[g] for g in guards if g in limits]
    if not limited:
        return "free", None
    if len(limited) < len(guards):
        return "mixed", None
    return "held", min(limited, key=lambda lim: lim.rate + lim.burst)


def limit_checks(
    transfers: list[TransferRow],
    clients: list[ClientRow],
    circuits: list[CircuitRow],
    relay_limits: dict[tuple[str, int, str], RelayLimit],
    reference: RelayLimit,
) -> list[LimitCheck]:
    """Per run, standing and class: how many transfers beat the token bucket
    bound, and how many ran at the limit.

    Held clients are checked against their guards' limit; free clients and
    client relays against ``reference`` (the experiment's limit), to show
    that without a limit they do exceed it."""
    guards = client_guards(circuits)
    by_run: dict[tuple[str, int], dict[str, RelayLimit]] = defaultdict(dict)
    for (variant, seed, relay), limit in relay_limits.items():
        by_run[(variant, seed)][relay] = limit
    standing = {}
    for c in clients:
        standing[(c.variant, c.seed, c.host)] = _standing(
            c, guards.get((c.variant, c.seed, c.host), set()), by_run[(c.variant, c.seed)]
        )
    counts: dict[tuple[str, int, str, str], list[float]] = {}
    hosts: dict[tuple[str, int, str, str], set[str]] = defaultdict(set)
    rates: dict[tuple[str, int, str, str], int] = {}
    for t in transfers:
        if not (t.success and t.ttlb):
            continue
        kind, own = standing.get((t.variant, t.seed, t.host), ("unknown", None))
        if kind in ("unknown", "mixed"):
            continue
        bound = own or reference
        key = (t.variant, t.seed, kind, t.cls)
        entry = counts.setdefault(key, [0, 0, 0.0, 0])
        ratio = (t.size - bound.burst) / (bound.rate * t.ttlb)
        entry[0] += 1
        entry[1] += int(ratio > 1)
        entry[2] = max(entry[2], ratio)
        entry[3] += int(ratio >= AT_LIMIT)
        hosts[key].add(t.host)
        rates[key] = bound.rate
    return [
        LimitCheck(
            *key[:3], len(hosts[key]), int(e[0]), int(e[1]), e[2], rates[key], key[3], int(e[3])
        )
        for key, e in sorted(counts.items())
    ]


def _reference(limits: dict[tuple[str, int, str], RelayLimit]) -> RelayLimit | None:
    """The limit most relays were given: what unlimited clients are compared to."""
    if not limits:
        return None
    counts = Counter(limits.values())
    return min(counts, key=lambda lim: (-counts[lim], lim.rate))


def engagement_failures(checks: list[LimitCheck]) -> list[Failure]:
    """A failure per run with held clients none of whose transfers ran at
    the limit: the limit never engaged, so the run did not test it."""
    held: dict[tuple[str, int], list[LimitCheck]] = defaultdict(list)
    for c in checks:
        if c.standing == "held":
            held[(c.variant, c.seed)].append(c)
    return [
        Failure(
            variant,
            seed,
            "limit-engaged",
            f"none of {sum(c.transfers for c in runs)} transfers of held clients ran at "
            f"{AT_LIMIT:.0%} of their guard's limit or more past its burst: the limit never "
            "engaged",
        )
        for (variant, seed), runs in sorted(held.items())
        if not any(c.at_limit for c in runs)
    ]


def _failure(check: LimitCheck) -> Failure:
    return Failure(
        check.variant,
        check.seed,
        "client-limit",
        f"{check.over} of {check.transfers} transfers of held clients beat their guard's "
        f"limit ({check.rate / 1024:g} KiB/s; worst {check.worst:.2f}x)",
    )


@dataclass(frozen=True)
class ClientsResult:
    bandwidths: list[ClientBandwidth]  # each measured client's, per run
    means: dict[tuple[str, str], Estimate]  # (variant, group) -> mean over seeds
    reference: RelayLimit | None  # the limit most relays were given
    checks: list[LimitCheck]
    failures: list[Failure]
    # Measured limits: their multiple, value per seed and what they did.
    settings: list[LimitSetting] = field(default_factory=list)


def clients_result(inp: Inputs) -> ClientsResult:
    """Nothing without a clients table."""
    clients = CLIENTS.read_from(inp.layout)
    bandwidths = per_client(inp.transfers, clients)
    if not bandwidths:
        return ClientsResult([], {}, None, [], [])
    means = group_means(bandwidths, inp.variants)
    relays = RELAYS.read_from(inp.layout)
    limits = relay_limits(relays)
    reference = _reference(limits)
    if reference is None:
        return ClientsResult(bandwidths, means, None, [], [])
    checks = limit_checks(inp.transfers, clients, inp.circuits, limits, reference)
    failures = [_failure(c) for c in checks if c.standing == "held" and c.over]
    failures += engagement_failures(checks)
    settings = limit_settings(inp.spec, relays, bandwidths)
    return ClientsResult(bandwidths, means, reference, checks, failures, settings)
