"""Consensus parameters measured from another variant's run of the same
seed (``consensus_from``, runner.spec.measured): the mean per-client
bandwidth of a class, from that run's clients and transfers. The caller
hands in how a run's rows are read (runner.tables.collect.logged_rows,
from its logs, before the experiment is collected)."""

from __future__ import annotations

from collections.abc import Callable

from runner.analyses.client_bandwidth import per_client
from runner.errors import RunError
from runner.spec.model import Variant
from runner.tables.schema import ClientRow, TransferRow

# (variant, seed) -> that run's clients and transfers; RunError where it
# is not complete.
RunRows = Callable[[str, int], tuple[list[ClientRow], list[TransferRow]]]


def class_bandwidth(rows_of: RunRows, variant: str, seed: int, cls: str) -> float:
    """The mean over ``variant``'s clients of class ``cls`` on ``seed`` of
    each one's payload over its transfers' time (bytes/s); clients that
    also run a relay are a group of their own and not counted."""
    clients, transfers = rows_of(variant, seed)
    rates = [
        b.bytes / b.seconds
        for b in per_client(transfers, clients)
        if b.group == cls and b.seconds > 0
    ]
    if not rates:
        raise RunError(f"{variant}/seed-{seed}: no {cls} client completed a transfer")
    return sum(rates) / len(rates)


def measured_params(rows_of: RunRows, variant: Variant, seed: int) -> dict[str, int]:
    """``variant``'s measured consensus parameters on ``seed``, each at
    least 1; a RunError names the run that could not be measured."""
    values = {}
    for param, m in sorted(variant.consensus_from.items()):
        try:
            rate = class_bandwidth(rows_of, m.variant, seed, m.cls)
        except RunError as exc:
            raise RunError(f"{param} of {variant.name} is measured from {exc}") from exc
        values[param] = max(1, round(m.times * rate))
    return values
