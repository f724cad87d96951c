"""The report's congestion-control sections (runner.analyses.congestion): downloads
and download rates per class and mechanism, ECDFs of time to first and last
byte, hop feedback's totals and PCTCP's connections per circuit."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from runner.analyses.congestion import (
    class_results,
    connection_sharing,
    is_congestion_experiment,
    is_pctcp,
    mechanism_failures,
    mechanism_of,
    mechanism_totals,
    pctcp_failures,
    scenario_of,
)
from runner.layout import Layout
from runner.report.markdown import table
from runner.report.plots import cdf_plot
from runner.spec.model import Spec
from runner.tables.rows import TransferRow, read_hop_feedback, read_placements

Sections = tuple[list[str], list[str], list[Path]]


def _positions(counts: tuple[int, ...], width: int) -> str:
    return " / ".join(str(n) for n in (counts + (0,) * width)[:width])


def congestion_sections(
    spec: Spec,
    layout: Layout,
    transfers: list[TransferRow],
    complete_runs: set[tuple[str, int]],
    out: Path,
) -> Sections:
    """Sections, failures and plots; nothing unless a variant sets
    cc_hop_feedback in its consensus."""
    if not is_congestion_experiment(spec.variants):
        return [], [], []
    variants = [v.name for v in spec.variants]
    by_name = {v.name: v for v in spec.variants}
    hop_rows = read_hop_feedback(layout.hop_feedback_csv)
    failures = mechanism_failures(hop_rows, spec.variants, complete_runs)

    lines = [
        "",
        "## Congestion control",
        "",
        "Each variant runs one window on one scenario's clients: the fixed window "
        "(`cc_alg=0`), Vegas (`cc_alg=2`), or Vegas with hop feedback "
        "(`cc_hop_feedback=1`, tor-patches/0005); PCTCP adds a connection per circuit "
        "(`MCTorPerCircuit 1`, tor-patches/0003). Per class: downloads completed in a run "
        "and the mean over a run's completed downloads of size over time to last byte, as "
        "the mean over seeds with a 95% t CI cut at zero; failed downloads over all runs.",
        "",
    ]
    results = class_results(transfers, variants, list(spec.seeds))
    lines += table(
        [
            "scenario",
            "class",
            "variant",
            "mechanism",
            "seeds",
            "downloads completed per run",
            "mean download rate (Mbit/s)",
            "failed",
        ],
        [
            [
                scenario_of(by_name[r.variant]),
                r.cls,
                r.variant,
                mechanism_of(by_name[r.variant]),
                str(r.seeds),
                r.completed.format(1, "", 1, signed=False),
                r.rate_mbit.format(1, "", 2, signed=False),
                str(r.failed),
            ]
            for r in sorted(results, key=lambda r: (scenario_of(by_name[r.variant]), r.cls))
        ],
    )

    plots = []
    scenarios: dict[str, list[str]] = defaultdict(list)
    for v in spec.variants:
        scenarios[scenario_of(v)].append(v.name)
    measured = [r for r in transfers if r.measured]
    for scenario, names in scenarios.items():
        mine = [r for r in measured if r.variant in names]
        for cls in sorted({r.cls for r in mine}):
            rows = [r for r in mine if r.cls == cls]
            for metric in ("ttfb", "ttlb"):
                path = out / f"cc-{scenario}-{cls}-{metric}.png"
                cdf_plot(rows, metric, f"{scenario}, {cls}: {metric.upper()}", names, path)
                plots.append(path)

    totals = mechanism_totals(hop_rows, variants)
    width = max(
        (max((i + 1 for i, n in enumerate(t.received) if n), default=0) for t in totals),
        default=0,
    )
    width = max(width, 3)
    lines += [
        "",
        "### Hop feedback",
        "",
        "Totals over a variant's runs, from each tor's last `Hop feedback totals` log line. "
        "Positions count from the hop next to the client for downloads (1 = guard, "
        f"2 = middle, ..., the last = exit); columns give positions 1 to {width}. The "
        "client originates a cell ahead of each circuit SENDME; each relay folds in its "
        "queue of the circuit's cells and forwards it; the exit, the sending end, keeps "
        "the largest value until its next window decision. *Larger* counts the decisions "
        "where the hops' value, not the exit's own Vegas estimate, was the larger, and "
        "where that value came from. Runs without hop feedback log nothing.",
        "",
    ]
    lines += table(
        [
            "variant",
            "window",
            "runs logged",
            "originated",
            "received by position",
            "forwarded by position",
            "delivered",
            "dropped",
            "window decisions",
            "with feedback",
            "feedback larger",
            "larger at position",
        ],
        [
            [
                t.variant,
                mechanism_of(by_name[t.variant]),
                str(t.runs),
                str(t.originated),
                _positions(t.received, width),
                _positions(t.forwarded, width),
                str(t.delivered),
                str(t.dropped),
                str(t.decisions),
                str(t.with_feedback),
                f"{t.feedback_larger} ({t.larger_share:.1%})"
                if t.with_feedback
                else str(t.feedback_larger),
                _positions(t.larger_at, width),
            ]
            for t in totals
        ],
    )
    if failures:
        lines += ["", "**Hop feedback checks FAILED:**", ""] + [f"- {f}" for f in failures]
    else:
        lines += [
            "",
            f"Hop feedback checks: at work in every run that switches it on, absent "
            f"elsewhere ({len(complete_runs)} runs).",
        ]
    pctcp_lines, pctcp_fails = _pctcp_section(spec, layout, complete_runs)
    return lines + pctcp_lines, failures + pctcp_fails, plots


def _pctcp_section(
    spec: Spec, layout: Layout, complete_runs: set[tuple[str, int]]
) -> tuple[list[str], list[str]]:
    """Connections per circuit from the placement lines, where any variant
    switches PCTCP on."""
    if not any(is_pctcp(v) for v in spec.variants):
        return [], []
    placements = read_placements(layout.placements_csv) if layout.placements_csv.is_file() else []
    sharing = connection_sharing(placements)
    failures = pctcp_failures(sharing, spec.variants, complete_runs)
    by_name = {v.name: v for v in spec.variants}
    order = [v.name for v in spec.variants]
    lines = [
        "",
        "### Connections per circuit (PCTCP)",
        "",
        "From every tor's placement lines (`MCTorConnections 1` logs each circuit placed "
        "on a connection, with the circuits on each of its connections to that relay): "
        "the placements in each run, how many found a connection to that relay carrying "
        "two or more of the tor's circuits, and the most on one. Under PCTCP none may; "
        "with shared connections (stock tor) some must.",
        "",
    ]
    lines += table(
        ["variant", "mechanism", "seed", "placements", "on a shared connection", "most on one"],
        [
            [
                s.variant,
                mechanism_of(by_name[s.variant]),
                str(s.seed),
                str(s.placements),
                str(s.shared),
                str(s.most),
            ]
            for s in sorted(
                sharing, key=lambda s: order.index(s.variant) if s.variant in order else -1
            )
        ],
    )
    if failures:
        lines += ["", "**PCTCP checks FAILED:**", ""] + [f"- {f}" for f in failures]
    else:
        lines += [
            "",
            "PCTCP checks: a connection per circuit in every run that switches it on, "
            "shared connections in every other run that logs placements.",
        ]
    return lines, failures
