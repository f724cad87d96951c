"""Consensus parameters measured from another variant's run of the same
seed (``consensus_from``, runner.spec.measured): the mean per-client
bandwidth of a class, read from that run's own logs."""

from __future__ import annotations

from runner.analyses.client_bandwidth import per_client
from runner.errors import RunError
from runner.layout import Layout
from runner.logs.run_logs import RunLogs
from runner.manifest import read_run_if_any
from runner.spec.model import Variant
from runner.tables.schema import CLIENTS, TRANSFERS


def class_bandwidth(layout: Layout, variant: str, seed: int, cls: str) -> float:
    """The mean over ``variant``'s clients of class ``cls`` on ``seed`` of
    each one's payload over its transfers' time (bytes/s); clients that
    also run a relay are a group of their own and not counted."""
    run_dir = layout.run_dir(variant, seed)
    record = read_run_if_any(run_dir)
    if record is None or not record.complete:
        raise RunError(f"{variant}/seed-{seed} is not complete ({run_dir})")
    logs = RunLogs(run_dir, record, {"tor": ()})
    clients = [c for c in CLIENTS.rows(logs)]
    rates = [
        b.bytes / b.seconds
        for b in per_client(TRANSFERS.rows(logs), clients)
        if b.group == cls and b.seconds > 0
    ]
    if not rates:
        raise RunError(f"{variant}/seed-{seed}: no {cls} client completed a transfer ({run_dir})")
    return sum(rates) / len(rates)


def measured_params(layout: Layout, variant: Variant, seed: int) -> dict[str, int]:
    """``variant``'s measured consensus parameters on ``seed``, each at
    least 1; a RunError names the run that could not be measured."""
    values = {}
    for param, m in sorted(variant.consensus_from.items()):
        try:
            rate = class_bandwidth(layout, m.variant, seed, m.cls)
        except RunError as exc:
            raise RunError(f"{param} of {variant.name} is measured from {exc}") from exc
        values[param] = max(1, round(m.times * rate))
    return values
