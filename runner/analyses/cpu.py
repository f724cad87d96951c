"""What a variant costs the relays in CPU: the seconds each relay's tor ran
on a core over the measured period, on the local backend, where the
processes are real (Shadow simulates time, not CPU).

Per run, the mean over a role's relays; per variant, the mean over seeds
with a 95% interval cut at zero; against the spec's baseline, the change
paired by seed on the log scale, as every other change in the report.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from runner.analyses.inputs import Inputs
from runner.analyses.stats import Estimate, level_ci, ratio_change_ci
from runner.spec.model import ALL_RELAYS, RELAY_ROLES
from runner.tables.schema import PROCESS_CPU, ProcessCpu


@dataclass(frozen=True)
class RelayCpu:
    variant: str
    role: str  # a relay role, or ALL_RELAYS
    seconds: Estimate  # a relay's tor, over the measured period
    change: Estimate | None  # against the baseline, paired by seed


def relay_tor(row: ProcessCpu) -> bool:
    """Whether ``row`` is a relay's tor: a host whose role is a relay role
    (not an authority, a server, or a client, even one that also runs a
    relay, whose tor carries its own traffic too)."""
    return row.program == "tor" and row.role in RELAY_ROLES


def per_run(rows: Sequence[ProcessCpu]) -> dict[tuple[str, str, int], float]:
    """(variant, role, seed) -> mean CPU seconds of the role's relays' tor."""
    groups: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in rows:
        if relay_tor(r):
            groups[(r.variant, r.role, r.seed)].append(r.cpu_s)
            groups[(r.variant, ALL_RELAYS, r.seed)].append(r.cpu_s)
    return {key: statistics.fmean(values) for key, values in groups.items()}


def relay_cpu(rows: Sequence[ProcessCpu], variants: Sequence[str], baseline: str) -> list[RelayCpu]:
    runs = per_run(rows)
    result = []
    for variant in variants:
        for role in (*RELAY_ROLES, ALL_RELAYS):
            seeds = sorted(s for v, r, s in runs if (v, r) == (variant, role))
            if not seeds:
                continue
            ratios = [
                runs[(variant, role, s)] / runs[(baseline, role, s)]
                for s in seeds
                if runs.get((baseline, role, s), 0) > 0
            ]
            result.append(
                RelayCpu(
                    variant,
                    role,
                    level_ci([runs[(variant, role, s)] for s in seeds]),
                    ratio_change_ci(ratios) if variant != baseline and ratios else None,
                )
            )
    return result


@dataclass(frozen=True)
class CpuResult:
    baseline: str
    measured: bool  # the runs measured CPU (local ones; Shadow does not model it)
    relays: list[RelayCpu]


def cpu_result(inp: Inputs) -> CpuResult:
    rows = PROCESS_CPU.read_from(inp.layout)
    return CpuResult(
        inp.spec.baseline, bool(rows), relay_cpu(rows, inp.variants, inp.spec.baseline)
    )
