"""Rounds of parallel streams (the rounds workload, workloads.models.Rounds):
their completion times and throughputs with Tukey's fences, and the
fairness gap between two users of one path.

A round is one phase of the workload: its streams start together, and it
completes when the last of their bytes has arrived, at the client for a
download, at the server for an upload.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from runner.analyses.stats import ClientValues, Estimate, level_ci
from runner.checks import Failure
from runner.phases import Phase
from runner.spec.model import Spec
from runner.tables.schema import ServedRow, TransferRow
from workloads.models import phase_of_vertex, phase_stream_of_vertex

TUKEY_K = 1.5


@dataclass(frozen=True)
class Round:
    variant: str
    seed: int
    host: str
    phase: str
    start: float
    streams: int  # streams the phase starts
    finished: int  # streams that finished (at both ends for an upload)
    failed: int
    completion: float | None  # seconds from the start to the last byte
    payload: int  # bytes the phase moves

    @property
    def complete(self) -> bool:
        return self.completion is not None

    @property
    def throughput_mbit(self) -> float | None:
        if not self.completion:
            return None
        return self.payload * 8 / self.completion / 1e6


def rounds(
    transfers: Iterable[TransferRow],
    served: Iterable[ServedRow],
    phases_by_class: Mapping[str, tuple[Phase, ...]],
) -> list[Round]:
    """The rounds of every measured client whose class runs phases. A round
    still running when the simulation stopped is left out; one with a failed
    stream has no completion time."""
    groups = _round_groups(transfers, phases_by_class)
    by_peer: dict[tuple[str, int, str, int], list[ServedRow]] = defaultdict(list)
    for s in served:
        index = phase_of_vertex(s.vertex)
        if index is not None:
            by_peer[(s.variant, s.seed, s.peer, index)].append(s)
    starts: dict[tuple[str, int, str, int], list[float]] = defaultdict(list)
    for variant, seed, host, _cls, index, start in groups:
        starts[(variant, seed, host, index)].append(start)
    for values in starts.values():
        values.sort()

    result = []
    for (variant, seed, host, cls, index, start), rows in sorted(groups.items()):
        phase = phases_by_class[cls][index]
        failed = sum(not r.success for r in rows)
        ends = [r.end for r in rows if r.success and r.end is not None]
        if phase.direction == "up":
            # The server's record ends when the upload's last byte arrived.
            following = [s for s in starts[(variant, seed, host, index)] if s > start]
            until = following[0] if following else math.inf
            at_server = [
                s for s in by_peer[(variant, seed, host, index)] if start <= s.start < until
            ]
            failed += sum(not s.success for s in at_server)
            ends = [s.end for s in at_server if s.success] if len(ends) == len(rows) else []
        finished = len(ends)
        if failed == 0 and finished < phase.streams:
            continue  # still running when the simulation stopped
        completion = max(ends) - start if failed == 0 and finished == phase.streams else None
        result.append(
            Round(
                variant,
                seed,
                host,
                phase.name,
                start,
                phase.streams,
                finished,
                failed,
                completion,
                phase.streams * phase.size,
            )
        )
    return result


def _round_groups(
    transfers: Iterable[TransferRow], phases_by_class: Mapping[str, tuple[Phase, ...]]
) -> dict[tuple[str, int, str, str, int, float], list[TransferRow]]:
    """The measured clients' phase streams by round: (variant, seed, host,
    class, phase index, the round's start). A round starts when its first
    streams start together; a phase run over a few connections starts the
    rest later, each in the round begun last before it."""
    by_phase: dict[tuple[str, int, str, str, int], list[tuple[int, TransferRow]]] = defaultdict(
        list
    )
    for t in transfers:
        found = phase_stream_of_vertex(t.vertex)
        if not t.measured or found is None or t.cls not in phases_by_class:
            continue
        by_phase[(t.variant, t.seed, t.host, t.cls, found[0])].append((found[1], t))
    groups: dict[tuple[str, int, str, str, int, float], list[TransferRow]] = defaultdict(list)
    for key, numbered in by_phase.items():
        lanes = phases_by_class[key[3]][key[4]].lanes
        starts = sorted({round(t.start, 3) for k, t in numbered if k < lanes})
        for _, t in numbered:
            at = bisect.bisect_right(starts, round(t.start, 3)) - 1
            if at >= 0:  # a later stream of a round begun before the log did not count
                groups[(*key, starts[at])].append(t)
    return groups


def tukey_fences(values: Sequence[float] | np.ndarray, k: float = TUKEY_K) -> tuple[float, float]:
    """(low, high): values outside are outliers by Tukey's rule."""
    q1, q3 = np.percentile(np.asarray(values, dtype=float), [25, 75])
    spread = k * (q3 - q1)
    return float(q1 - spread), float(q3 + spread)


def within_fences(values: Sequence[float] | np.ndarray, k: float = TUKEY_K) -> np.ndarray:
    """Whether each value lies within Tukey's fences of ``values``."""
    array = np.asarray(values, dtype=float)
    low, high = tukey_fences(array, k)
    return np.asarray((array >= low) & (array <= high))


@dataclass(frozen=True)
class ClientRoundMean:
    """A seed's round completion time from (phase number, seconds) per
    complete round of each measured client: per client, its rounds within
    Tukey's fences of its own rounds of the same phase, their mean; then the
    mean over clients (every client counts once). The paper removed
    outliers by Tukey's fences, and one long round (a retransmission
    timeout, a stalled circuit) would otherwise stand for many."""

    def __call__(self, by_client: ClientValues) -> float:
        means = []
        for values in by_client.values():
            pairs = np.asarray(values, dtype=float).reshape(-1, 2)
            if not len(pairs):
                continue
            kept = np.zeros(len(pairs), dtype=bool)
            for phase in np.unique(pairs[:, 0]):
                of_phase = pairs[:, 0] == phase
                kept[of_phase] = within_fences(pairs[of_phase, 1])
            means.append(float(pairs[kept, 1].mean()))
        return float(np.mean(means)) if means else float("nan")


@dataclass(frozen=True)
class PhaseSummary:
    variant: str
    phase: str
    rounds: int  # complete rounds, all seeds
    failed: int  # rounds with a failed stream
    outliers: int  # complete rounds outside Tukey's fences (left out below)
    fences: tuple[float, float]
    completion: Estimate  # seconds: mean over seeds of each seed's mean
    throughput: Estimate  # Mbit/s, likewise


def _kept(complete: list[Round]) -> tuple[tuple[float, float], dict[int, list[Round]]]:
    """Tukey's fences over complete rounds, and per seed the rounds within them."""
    low, high = tukey_fences([r.completion for r in complete if r.completion is not None])
    per_seed: dict[int, list[Round]] = defaultdict(list)
    for r in complete:
        if r.completion is not None and low <= r.completion <= high:
            per_seed[r.seed].append(r)
    return (low, high), per_seed


def too_few_rounds(all_rounds: Sequence[Round], minimum: int) -> list[Failure]:
    """A failure per run, client and phase with fewer than ``minimum`` complete rounds."""
    if minimum <= 0:
        return []
    counts: dict[tuple[str, int, str, str], int] = defaultdict(int)
    for r in all_rounds:
        counts[(r.variant, r.seed, r.host, r.phase)] += int(r.completion is not None)
    return [
        Failure(
            variant,
            seed,
            "min-rounds-per-phase",
            f"{n} complete {phase} rounds, fewer than {minimum}",
            host,
        )
        for (variant, seed, host, phase), n in sorted(counts.items())
        if n < minimum
    ]


def cycles_completed(all_rounds: Sequence[Round]) -> dict[tuple[str, int], int]:
    """(variant, seed) -> the cycles the run completed: the fewest complete
    rounds of any phase of any measured client (a cycle is one round of
    every phase)."""
    counts: dict[tuple[str, int, str, str], int] = defaultdict(int)
    for r in all_rounds:
        counts[(r.variant, r.seed, r.host, r.phase)] += int(r.completion is not None)
    runs: dict[tuple[str, int], int] = {}
    for (variant, seed, _, _), n in counts.items():
        runs[(variant, seed)] = min(n, runs.get((variant, seed), n))
    return runs


def seed_completions(all_rounds: Sequence[Round]) -> dict[tuple[str, str], dict[int, float]]:
    """(variant, phase) -> per seed, the mean completion time of its
    complete rounds within Tukey's fences (as ``summarize`` counts them)."""
    by_key: dict[tuple[str, str], list[Round]] = defaultdict(list)
    for r in all_rounds:
        if r.completion is not None:
            by_key[(r.variant, r.phase)].append(r)
    result = {}
    for key, complete in by_key.items():
        _, per_seed = _kept(complete)
        result[key] = {
            seed: float(np.mean([r.completion for r in rs if r.completion]))
            for seed, rs in per_seed.items()
        }
    return result


def summarize(all_rounds: Sequence[Round], variants: Sequence[str]) -> list[PhaseSummary]:
    """Per variant and phase: completion time and throughput over seeds,
    each seed's rounds outside Tukey's fences (over all seeds of the
    variant) left out."""
    by_key: dict[tuple[str, str], list[Round]] = defaultdict(list)
    for r in all_rounds:
        by_key[(r.variant, r.phase)].append(r)
    result = []
    for (variant, phase), group in sorted(
        by_key.items(), key=lambda kv: (variants.index(kv[0][0]), kv[0][1])
    ):
        complete = [r for r in group if r.completion is not None]
        if not complete:
            continue
        (low, high), per_seed = _kept(complete)
        kept = [r for rs in per_seed.values() for r in rs]
        completion = level_ci(
            [float(np.mean([r.completion for r in rs if r.completion])) for rs in per_seed.values()]
        )
        throughput = level_ci(
            [
                float(np.mean([r.throughput_mbit for r in rs if r.throughput_mbit]))
                for rs in per_seed.values()
            ]
        )
        result.append(
            PhaseSummary(
                variant,
                phase,
                len(complete),
                sum(r.failed > 0 for r in group),
                len(complete) - len(kept),
                (low, high),
                completion,
                throughput,
            )
        )
    return result


@dataclass(frozen=True)
class FairnessGap:
    variant: str
    phase: str
    gap: Estimate  # 1 - slower user's throughput / faster user's, over seeds


def fairness_gaps(all_rounds: Sequence[Round], variants: Sequence[str]) -> list[FairnessGap]:
    """For runs with two measured users: per phase, one minus the ratio of
    the two users' mean round throughputs (0 is fair), over seeds."""
    per_user: dict[tuple[str, str, int], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in all_rounds:
        if r.throughput_mbit is not None:
            per_user[(r.variant, r.phase, r.seed)][r.host].append(r.throughput_mbit)
    gaps: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (variant, phase, _seed), users in per_user.items():
        if len(users) != 2:
            continue
        a, b = (float(np.mean(v)) for v in users.values())
        gaps[(variant, phase)].append(1 - min(a, b) / max(a, b))
    return [
        FairnessGap(variant, phase, level_ci(values, ceiling=1.0))
        for (variant, phase), values in sorted(
            gaps.items(), key=lambda kv: (variants.index(kv[0][0]), kv[0][1])
        )
    ]


def class_phases(spec: Spec) -> dict[str, tuple[Phase, ...]]:
    """The phases of each client class whose workload is ``rounds``."""
    return {
        group.name: spec.workloads[group.workload].params["phases"]
        for group in spec.network.clients
        if spec.workloads[group.workload].model == "rounds"
    }
