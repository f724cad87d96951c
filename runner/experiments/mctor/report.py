"""The report's MCTor sections (runner.experiments.mctor.compute): rounds of
parallel streams by variant, the fairness gap, and the connections and
circuits on the path."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.workload_rounds import FairnessGap, PhaseSummary
from runner.experiments.mctor.compute import MctorResult, stream_rule
from runner.experiments.mctor.connections import HopCheck
from runner.experiments.mctor.fair_share import ShareCheck
from runner.experiments.mctor.loss_gain import CONNECTIONS, LossGain
from runner.report.markdown import table
from runner.report.plots import save_figure  # sets matplotlib's Agg backend first
from runner.spec.model import Spec, Variant

_SCENARIO = re.compile(r"(^|-)n\d+(-(uniform|hashing))?$")


def _scenario(variant: Variant) -> str:
    """The variant's levels but its connections (a matrix's), or its name
    without N and the rule."""
    if CONNECTIONS in variant.factors:
        return " ".join(x for k, x in variant.factors.items() if k != CONNECTIONS)
    return _SCENARIO.sub("", variant.name) or "base"


def _gain_plot(gains: list[LossGain], phase: str, path: Path) -> None:
    """The change of round completion time against loss, one line per
    scenario and N connections."""
    series: dict[str, list[LossGain]] = defaultdict(list)
    for g in gains:
        if g.phase == phase:
            series[f"{g.others} {g.connections}"].append(g)
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, points in sorted(series.items()):
        points.sort(key=lambda g: g.loss)
        xs = [g.loss * 100 for g in points]
        ys = [g.change.mean * 100 for g in points]
        low = [
            (g.change.mean - g.change.low) * 100 if g.change.low is not None else 0.0
            for g in points
        ]
        high = [
            (g.change.high - g.change.mean) * 100 if g.change.high is not None else 0.0
            for g in points
        ]
        seeds = min(g.change.n for g in points)
        ax.errorbar(
            xs, ys, yerr=[low, high], marker="o", capsize=3, label=f"{label} ({seeds} seeds)"
        )
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(sorted({g.loss * 100 for g in gains if g.phase == phase}))
    save_figure(
        fig,
        ax,
        path,
        (
            "packet loss on the lossy hop, each way (%)",
            "round completion time vs N = 1 (%)",
            f"{phase}: change over one connection, 95% t interval",
        ),
    )


def _gain_lines(gains: list[LossGain], out: Path) -> tuple[list[str], list[Path]]:
    if not gains:
        return [], []
    lines = [
        "",
        "## Gain against loss",
        "",
        "For each variant with N connections per hop: the change of its mean round "
        "completion time against the one-connection variant of the same scenario and "
        "loss, paired by seed (per seed the ratio of the two seeds' means of their "
        "rounds within Tukey's fences; geometric mean, 95% t interval on the log ratios, "
        "so it cannot pass -100%). Negative: N connections finish rounds sooner. Loss is "
        "the largest on any link of the variant's network, each way.",
        "",
        *table(
            ["phase", "scenario", "connections", "loss", "change vs N = 1", "seeds"],
            [
                [
                    g.phase,
                    g.others,
                    g.connections,
                    f"{g.loss:.2%}",
                    g.change.format(100, "%", 1),
                    str(g.change.n),
                ]
                for g in sorted(gains, key=lambda g: (g.phase, g.others, g.connections, g.loss))
            ],
        ),
    ]
    plots = []
    for phase in sorted({g.phase for g in gains}):
        path = out / f"mctor-gain-vs-loss-{phase}.png"
        _gain_plot(gains, phase, path)
        plots.append(path)
    return lines, plots


def _plot(summaries: list[PhaseSummary], spec: Spec, phase: str, path: Path) -> None:
    """Completion time against N, one line per scenario and rule."""
    by_name = {v.name: v for v in spec.variants}
    series: dict[str, list[tuple[int, PhaseSummary]]] = defaultdict(list)
    for s in summaries:
        variant = by_name[s.variant]
        n = variant.expect.get("mctor_connections")
        if s.phase != phase or n is None:
            continue
        rules = ("uniform", "hashing") if n == 1 else (stream_rule(variant),)
        for rule in rules:
            series[f"{_scenario(variant)} {rule}"].append((n, s))
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, points in sorted(series.items()):
        if len(points) < 2:
            continue
        points.sort(key=lambda p: p[0])
        xs = [n for n, _ in points]
        ys = [s.completion.mean for _, s in points]
        errors = [
            (s.completion.mean - (s.completion.low or s.completion.mean))
            if s.completion.low is not None
            else 0.0
            for _, s in points
        ]
        ax.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=label)
    ax.set_xticks(sorted({n for points in series.values() for n, _ in points}))
    save_figure(
        fig,
        ax,
        path,
        (
            "connections per hop (N)",
            "round completion time (s)",
            f"{phase}: mean over seeds, 95% t interval",
        ),
    )


def mctor_sections(result: MctorResult, inp: Inputs, out: Path) -> Section:
    """Nothing unless a client class runs the rounds workload or a variant
    expects MCTor connections."""
    if not result.asked:
        return Section()
    spec, summaries = inp.spec, result.summaries
    variants = [v.name for v in spec.variants]
    lines = _rounds_lines(summaries, spec)
    plots = []
    for phase in sorted({s.phase for s in summaries}):
        path = out / f"mctor-completion-{phase}.png"
        _plot(summaries, spec, phase, path)
        plots.append(path)

    gain_lines, gain_plots = _gain_lines(result.loss_gains, out)
    lines += gain_lines
    plots += gain_plots
    lines += _share_lines(result.shares)
    lines += _cycles_lines(result.cycles, spec)
    lines += _fairness_lines(result.gaps)
    if result.expected:
        lines += _connections_lines(result.hops, variants)
        lines += _circuit_sections(result, variants)
    section = Section(lines=lines, plots=plots)
    minimum = spec.checks.min_rounds_per_phase
    if minimum:
        section.checks.append(
            f"Rounds: every measured client completes at least {minimum} rounds of each "
            "phase in every run."
        )
    return section


def _rounds_lines(summaries: list[PhaseSummary], spec: Spec) -> list[str]:
    """Per variant and phase: its rounds, the failed and outlying ones, the
    mean completion time and throughput."""
    by_name = {v.name: v for v in spec.variants}
    lines = [
        "",
        "## Rounds of parallel streams",
        "",
        "A round starts a phase's streams together and completes with the last byte of "
        "the last stream: at the client for a download, at the server for an upload. "
        "Throughput is the round's payload over its completion time. Rounds outside "
        "Tukey's fences (k = 1.5, over all seeds of the variant and phase) are counted as "
        "outliers and left out of the means; the mean is over seeds of each seed's mean, "
        "with a 95% t interval cut at zero. Rounds with a failed stream are counted apart.",
        "",
    ]
    return lines + table(
        ["variant", "N", "rule", "phase", "rounds", "failed", "outliers (fences, s)"]
        + ["completion (s)", "throughput (Mbit/s)"],
        [
            [
                s.variant,
                str(by_name[s.variant].expect.get("mctor_connections") or "–"),
                stream_rule(by_name[s.variant])
                if (by_name[s.variant].expect.get("mctor_connections") or 1) > 1
                else "–",
                s.phase,
                str(s.rounds),
                str(s.failed),
                f"{s.outliers} ({s.fences[0]:.2f}, {s.fences[1]:.2f})",
                s.completion.format(1, "", 2),
                s.throughput.format(1, "", 1),
            ]
            for s in summaries
        ],
    )


def _share_lines(shares: list[ShareCheck]) -> list[str]:
    """Claim M8's fair share beside the throughput N connections got."""
    if not shares:
        return []
    lines = [
        "",
        "## Fair share per connection (claim M8)",
        "",
        "M8's model: m connections among k flows sharing a link get m / (1 + (m - 1) / k) "
        "of one share, where k counts the greedy TCP flows competing at the middle plus "
        "the path's connection (a paced flow takes its rate, not a share, and counts "
        "none; without competing flows k = 1 and the model predicts no gain). Beside it, "
        "the throughput of a round over m connections against one connection's in the "
        "same scenario and loss: the inverse of the Gain against loss table's change, "
        "mean over seeds with its 95% interval. The model predicts the share of a link "
        "the connections contend for; where loss or the path's windows limit a round "
        "instead, the two need not agree.",
        "",
    ]
    return lines + table(
        ["variant", "against", "phase", "m", "k", "predicted (shares)", "measured (x)"],
        [
            [
                c.variant,
                c.reference,
                c.phase,
                str(c.connections),
                str(c.flows),
                f"{c.predicted:.2f}",
                c.measured.format(1, "", 2),
            ]
            for c in shares
        ],
    )


def _cycles_lines(cycles: dict[tuple[str, int], int], spec: Spec) -> list[str]:
    """How many cycles of every phase each run completed, beside the
    traffic its variant simulated."""
    if not cycles:
        return []
    lines = [
        "",
        "## Cycles per run",
        "",
        "The cycles each run completed: the fewest complete rounds of any phase of any "
        "measured client. Where the workload stops its clients after a number of cycles, "
        "each variant simulates its own expected time for them (runner/spec/pace.py).",
        "",
    ]
    order = {v.name: i for i, v in enumerate(spec.variants)}
    variants = sorted({v for v, _ in cycles}, key=lambda v: (order.get(v, len(order)), v))
    seeds = sorted({s for _, s in cycles})
    return lines + table(
        ["variant", "traffic simulated (s)", *(f"seed {s}" for s in seeds)],
        [
            [
                v,
                f"{spec.measure_of(v):.0f}",
                *(str(cycles[(v, s)]) if (v, s) in cycles else "–" for s in seeds),
            ]
            for v in variants
        ],
    )


def _fairness_lines(gaps: list[FairnessGap]) -> list[str]:
    """The fairness gap between two users on one path, where runs had two."""
    if not gaps:
        return []
    lines = [
        "",
        "## Fairness between two users",
        "",
        "In runs with two measured users on the same path: one minus the ratio of the "
        "slower user's mean round throughput to the faster one's (0 is fair), per "
        "phase, mean over seeds with a 95% t interval cut to [0, 1].",
        "",
    ]
    return lines + table(
        ["variant", "phase", "fairness gap"],
        [[g.variant, g.phase, g.gap.format(1, "", 3)] for g in gaps],
    )


def _connections_lines(hops: list[HopCheck], variants: list[str]) -> list[str]:
    """The connections each hop of a measured client's pinned path had open."""
    lines = [
        "",
        "## Connections on the path",
        "",
        "From the placement lines tor logs with MCTorConnections set "
        "(tor-patches/0003): for each hop of each measured client's pinned path, the "
        "connections the nearer end had open to the next one when it last placed a "
        "circuit there, how many of them still took new circuits (usable), the most "
        "usable at any placement, and the outbound circuits on each open connection "
        "then. A hop passes when the last usable count is what the variant asks for.",
        "",
    ]
    return lines + table(
        ["variant", "seed", "hop", "expected", "open", "usable", "most usable"]
        + ["circuits each", "placements", "ok"],
        [
            [
                h.variant,
                str(h.seed),
                f"{h.host} → {h.peer}",
                str(h.expected),
                "–" if h.open_connections is None else str(h.open_connections),
                "–" if h.usable_connections is None else str(h.usable_connections),
                str(h.most_usable),
                " ".join(map(str, h.circuits)) or "–",
                str(h.placements),
                _ok(h.ok),
            ]
            for h in sorted(hops, key=lambda h: (variants.index(h.variant), h.seed))
        ],
    )


def _ok(value: bool | None) -> str:
    """A check's cell: passed, failed, or not judged."""
    return {True: "yes", False: "NO", None: "–"}[value]


def _circuit_sections(result: MctorResult, variants: list[str]) -> list[str]:
    """The circuits that carried each measured client's streams, and the
    connections they sit on at every hop."""
    lines: list[str] = []
    used, spread = result.stream_circuits, result.spread
    lines += [
        "",
        "## Circuits carrying the streams",
        "",
        "From the client's STREAM events (oniontrace): how many circuits carried at "
        "least one of a measured client's streams. MCTor keeps N circuits (or "
        "MCTorCircuits) and gives each stream one of them; stock tor (one circuit, "
        "one connection) promises no number, so it is shown, not checked. At least "
        "N must carry streams; more do when tor replaces one: MCTor's client swaps a "
        "circuit that shares a connection with another for one on a connection of its "
        "own once that is built, and where MCTorCircuits puts the circuits on one "
        "connection, a stream that waits 10 s for its exit's answer behind the other "
        "circuits' cells makes tor retire its circuit for new streams. 'beyond N' "
        "counts the streams that rode circuits other than the N busiest.",
        "",
    ]
    lines += table(
        ["variant", "seed", "client", "expected", "circuits", "streams", "beyond N", "ok"],
        [
            [u.variant, str(u.seed), u.host, str(u.expected), str(u.circuits)]
            + [str(u.streams), str(u.beyond), _ok(u.ok)]
            for u in sorted(used, key=lambda u: (variants.index(u.variant), u.seed))
        ],
    )
    lines += [
        "",
        "## Connections under the circuits carrying the streams",
        "",
        "Each circuit that carried a measured client's streams, followed hop by hop "
        "through the circuit IDs of the placement lines: on how many distinct "
        "connections those circuits sit at each hop. N circuits on N connections is "
        "MCTor; N circuits sharing one connection is the MCTorCircuits control. "
        "'followed' counts the circuits found in the hop's log; '–' in ok means the "
        "build logged no circuit IDs.",
        "",
    ]
    lines += table(
        ["variant", "seed", "hop", "circuits", "followed", "connections", "expected", "ok"],
        [
            [s.variant, str(s.seed), f"{s.host} → {s.peer}", str(s.circuits)]
            + [str(s.followed), str(s.connections), str(s.expected)]
            + [_ok(s.ok)]
            for s in sorted(spread, key=lambda s: (variants.index(s.variant), s.seed))
        ],
    )
    return lines
