"""The relays' CPU per byte, a hypothesis metric (``relay_cpu_per_byte``):
per run, the relays' tor CPU seconds over the bytes those relays moved, both
over the run's measured period, on the local backend (real processes; Shadow
simulates time, not CPU, so its runs have no value).

Whose CPU: the process_cpu rows of program ``tor`` on hosts whose role is a
relay role (exitguard, exit, guard, middle; runner.analyses.cpu.relay_tor).
Not authorities, servers or clients, and not a client that also runs a
relay (Tortoise's client relays): its one tor is a client and a relay at
once, and its CPU and its bytes (relay_load counts its own downloads, and
what it writes to its own tgen) hold its own traffic beside what it relays.

Which bytes: relay_load's mean bytes read plus mean bytes written per
second, times the seconds it averaged (the relay's BW events in the
measured period): every byte its tor moved, a relayed cell once in and once
out, as tor spends CPU on reading and on writing it. The window is the
CPU's: the local backend reads each process's CPU when traffic starts and
when the measured period ends, and relay_load counts the BW events from the
same start (the clock's start plus the bootstrap the run recorded) for the
same length, so nothing is scaled.

Per run: the relays' CPU seconds summed over their bytes summed (a busy
relay weighs as its bytes), over the relays in both tables (a relay whose
load is missing, a lost log, is left out of both), in CPU seconds per GB.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from runner.analyses.cpu import relay_tor
from runner.analyses.stats import ClientValues
from runner.spec.hypotheses import RELAY_METRICS, Hypothesis
from runner.spec.model import RELAY_ROLES
from runner.tables.schema import ProcessCpu, RelayLoad

GB = 1e9


@dataclass(frozen=True)
class RelayWork:
    """One relay in one run: its tor's CPU seconds and the bytes it read and
    wrote, over the measured period."""

    variant: str
    seed: int
    relay: str
    cpu_s: float
    moved_bytes: int


def relay_work(cpu: Iterable[ProcessCpu], loads: Iterable[RelayLoad]) -> list[RelayWork]:
    """Each relay's CPU and bytes, for the relays both tables have."""
    moved = {
        (row.variant, row.seed, row.relay): (row.mean_read_bytes + row.mean_written_bytes)
        * row.seconds
        for row in loads
        if row.role in RELAY_ROLES
    }
    spent: dict[tuple[str, int, str], float] = defaultdict(float)
    for row in cpu:
        if relay_tor(row):
            spent[(row.variant, row.seed, row.host)] += row.cpu_s
    return [
        RelayWork(variant, seed, relay, seconds, moved[(variant, seed, relay)])
        for (variant, seed, relay), seconds in sorted(spent.items())
        if moved.get((variant, seed, relay), 0) > 0
    ]


@dataclass(frozen=True)
class RelayCpuPerByte:
    """A run's relays' CPU seconds per GB they moved, from (CPU seconds,
    bytes) per relay: the sums' ratio."""

    def __call__(self, by_relay: ClientValues) -> float:
        pairs = [np.asarray(v, float).reshape(-1, 2) for v in by_relay.values() if len(v)]
        if not pairs:
            return float("nan")
        both = np.concatenate(pairs)
        moved = float(both[:, 1].sum())
        return float(both[:, 0].sum()) / moved * GB if moved > 0 else float("nan")


def per_run(work: Sequence[RelayWork]) -> dict[tuple[str, int], float]:
    """(variant, seed) -> the run's relays' CPU seconds per GB."""
    runs: dict[tuple[str, int], dict[str, list[tuple[float, int]]]] = defaultdict(dict)
    for w in work:
        runs[(w.variant, w.seed)][w.relay] = [(w.cpu_s, w.moved_bytes)]
    statistic = RelayCpuPerByte()
    return {key: statistic(by_relay) for key, by_relay in runs.items()}


def unmeasured(h: Hypothesis, work: Sequence[RelayWork]) -> str | None:
    """Why ``h`` has no value to read, where it is a relay metric and no run
    of its variants has the relays' CPU; None otherwise."""
    if h.metric not in RELAY_METRICS or any(w.variant in h.variants for w in work):
        return None
    return (
        f"{h.metric} needs the relays' process CPU, which only the local backend measures "
        "(run with `--backend local`): none of these runs recorded it (under Shadow, which "
        "simulates time and not CPU, no run does)"
    )
