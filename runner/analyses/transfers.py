"""Compare variants: summaries per (variant, class, size), changes against the
baseline across seeds, and the per-client completion check.

Changes are paired by seed: a seed names one sampled network, and every
variant ran on it, so the change on seed k is variant(k) / baseline(k) - 1;
the interval is a t interval over those per-seed changes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.analyses.stats import ClientQuantile, Estimate, client_quantile, paired_change
from runner.checks import Failure
from runner.tables.schema import TransferRow
from runner.units import human_size

Key = tuple[str, str, int]  # variant, class, size


@dataclass(frozen=True)
class GroupSummary:
    variant: str
    cls: str
    size: int
    completed: int
    failed: int
    ttfb_median: float
    ttfb_p90: float
    ttlb_median: float
    ttlb_p90: float
    goodput_median: float  # Mbit/s

    @property
    def error_rate(self) -> float:
        total = self.completed + self.failed
        return self.failed / total if total else float("nan")


@dataclass(frozen=True)
class Change:
    variant: str
    cls: str
    size: int
    metric: str
    estimate: Estimate  # relative change of the per-seed quantile, as a fraction
    reference: str = ""
    # The same by a hierarchical bootstrap, where there are enough seeds.
    bootstrap: Estimate | None = None


@dataclass(frozen=True)
class ClientCheck:
    variant: str
    seed: int
    host: str
    cls: str
    attempted: int
    completed: int
    ok: bool

    @property
    def rate(self) -> float:
        return self.completed / self.attempted if self.attempted else 0.0


def _after_first_byte(row: TransferRow) -> float | None:
    """Time to last byte net of time to first byte: the transfer once it
    has started, without the round trip that brought its first byte."""
    if row.ttlb is None or row.ttfb is None:
        return None
    return max(row.ttlb - row.ttfb, 0.0)


METRICS: dict[str, Callable[[TransferRow], float | None]] = {
    "ttfb": lambda r: r.ttfb,
    "ttlb": lambda r: r.ttlb,
    "after_first_byte": _after_first_byte,
    "goodput": lambda r: r.goodput_mbit,
}


def _measured(rows: Iterable[TransferRow]) -> list[TransferRow]:
    return [r for r in rows if r.measured]


def summarize(rows: Iterable[TransferRow], variant_order: list[str]) -> list[GroupSummary]:
    """Per (variant, class, size), over every seed: counts, and quantiles
    with every measured client in every seed counted once (the median over
    client-runs of each one's quantile)."""
    groups: dict[Key, list[TransferRow]] = defaultdict(list)
    for row in _measured(rows):
        groups[(row.variant, row.cls, row.size)].append(row)
    result = []
    for (variant, cls, size), members in groups.items():
        ok = [r for r in members if r.success]
        ttfb = _by_client(ok, lambda r: r.ttfb)
        ttlb = _by_client(ok, lambda r: r.ttlb)
        goodput = _by_client(ok, lambda r: r.goodput_mbit)
        result.append(
            GroupSummary(
                variant,
                cls,
                size,
                len(ok),
                len(members) - len(ok),
                client_quantile(ttfb, 0.5),
                client_quantile(ttfb, 0.9),
                client_quantile(ttlb, 0.5),
                client_quantile(ttlb, 0.9),
                client_quantile(goodput, 0.5),
            )
        )
    order = {v: i for i, v in enumerate(variant_order)}
    return sorted(result, key=lambda g: (g.cls, g.size, order.get(g.variant, 99)))


def _by_client(
    rows: Iterable[TransferRow], value_of: Callable[[TransferRow], float | None]
) -> dict[str, list[float]]:
    """client-run (seed and host) -> its values."""
    found: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if (value := value_of(r)) is not None:
            found[f"{r.seed}/{r.host}"].append(value)
    return found


def changes(
    rows: Iterable[TransferRow],
    pairs: Iterable[tuple[str, str]],
    metric: str,
    quantile_q: float = 0.5,
) -> list[Change]:
    """Relative change of a variant's per-seed quantile (every measured
    client counted once: runner/analyses/stats.client_quantile) against a
    reference's.

    For each (variant, reference) pair, class and size: on every seed both
    ran, the ratio ``variant / reference``; the change is their geometric
    mean minus one, with a t interval on the log scale (it cannot pass
    -100%), and from ``BOOTSTRAP_SEEDS`` seeds on a hierarchical bootstrap
    beside it. ``Change.variant`` is ``variant``; ``Change.reference`` names
    the other.
    """
    value_of = METRICS[metric]
    per_seed: dict[tuple[str, str, int, int], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in _measured(rows):
        value = value_of(row) if row.success else None
        if value is not None:
            per_seed[(row.variant, row.cls, row.size, row.seed)][row.host].append(value)
    groups = sorted({(c, s) for _, c, s, _ in per_seed})
    result = []
    for variant, reference in pairs:
        for cls, size in groups:
            seeds = [
                (values, per_seed.get((reference, cls, size, seed), {}))
                for (v, c, s, seed), values in per_seed.items()
                if (v, c, s) == (variant, cls, size)
            ]
            found = paired_change(seeds, ClientQuantile(quantile_q))
            if found.ratios:
                result.append(
                    Change(variant, cls, size, metric, found.estimate, reference, found.bootstrap)
                )
    return result


def completion_checks(
    rows: Iterable[TransferRow],
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]],
    min_completion: float,
) -> list[ClientCheck]:
    """Per measured client and run: finished transfers that succeeded.

    ``measured_clients`` maps (variant, seed) of each complete run to its
    measured (host, class) pairs, so a client that logged nothing fails.
    """
    counts: dict[tuple[str, int, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in _measured(rows):
        entry = counts[(row.variant, row.seed, row.host)]
        entry[0] += 1
        entry[1] += int(row.success)
    checks = []
    for (variant, seed), clients in sorted(measured_clients.items()):
        for host, cls in clients:
            attempted, completed = counts.get((variant, seed, host), [0, 0])
            rate = completed / attempted if attempted else 0.0
            checks.append(
                ClientCheck(
                    variant,
                    seed,
                    host,
                    cls,
                    attempted,
                    completed,
                    attempted > 0 and rate >= min_completion,
                )
            )
    return checks


def transfers_per_size(
    rows: Iterable[TransferRow],
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]],
    sizes: dict[str, tuple[int, ...]],
) -> dict[tuple[str, int, str, int], int]:
    """Completed transfers per (variant, seed, host, size) for every measured
    client and every size its class's workload asks for (0 where none)."""
    counts: dict[tuple[str, int, str, int], int] = defaultdict(int)
    for row in _measured(rows):
        if row.success:
            counts[(row.variant, row.seed, row.host, row.size)] += 1
    result = {}
    for (variant, seed), clients in measured_clients.items():
        for host, cls in clients:
            for size in sizes.get(cls, ()):
                result[(variant, seed, host, size)] = counts.get((variant, seed, host, size), 0)
    return result


@dataclass(frozen=True)
class TransfersResult:
    """The transfer checks, the summary per variant, class and size, and
    the changes of each comparison (by metric)."""

    min_completion: float
    checks: list[ClientCheck]
    # (variant, seed, host, size) -> completed transfers of that size
    per_size: dict[tuple[str, int, str, int], int]
    min_per_size: int
    failures: list[Failure]
    summaries: list[GroupSummary]
    changes: dict[str, list[Change]]  # ttfb, ttlb, after_first_byte
    hypotheses_named: bool  # the spec states hypotheses on some comparison


def completion_failure(check: ClientCheck, min_completion: float) -> Failure:
    if check.attempted == 0:
        # Nothing finished: a dead client, or a run too short for its transfers.
        message = "finished no transfer (none succeeded, none failed)"
    else:
        message = (
            f"{check.completed}/{check.attempted} transfers completed (< {min_completion:.0%})"
        )
    return Failure(check.variant, check.seed, "min-completion", message, check.host)


def per_size_failures(
    per_size: dict[tuple[str, int, str, int], int], minimum: int
) -> list[Failure]:
    """A failure per client and size with fewer completed transfers than ``minimum``."""
    return [
        Failure(
            variant,
            seed,
            "min-transfers-per-size",
            f"{count} completed {human_size(size)} transfers (< {minimum})",
            host,
        )
        for (variant, seed, host, size), count in sorted(per_size.items())
        if count < minimum
    ]


def transfers_result(inp: Inputs) -> TransfersResult:
    spec, transfers = inp.spec, inp.transfers
    minimum = spec.checks.min_completion
    checks = completion_checks(transfers, inp.measured_clients, minimum)
    failures = [completion_failure(c, minimum) for c in checks if not c.ok]
    per_size = transfers_per_size(transfers, inp.measured_clients, spec.class_sizes())
    per_size_minimum = spec.checks.min_transfers_per_size
    failures += per_size_failures(per_size, per_size_minimum)
    return TransfersResult(
        min_completion=minimum,
        checks=checks,
        per_size=per_size,
        min_per_size=per_size_minimum,
        failures=failures,
        summaries=summarize(transfers, inp.variants),
        changes={
            metric: changes(transfers, spec.comparisons, metric)
            for metric in ("ttfb", "ttlb", "after_first_byte")
        },
        hypotheses_named=bool(spec.hypotheses),
    )
