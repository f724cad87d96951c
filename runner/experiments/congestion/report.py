"""The report's congestion-control sections (runner.experiments.congestion.compute):
downloads and download rates per class and mechanism, each variant's web /
bulk rate ratio, ECDFs of time to first and last byte, the estimate each
variant decides with, hop feedback's totals, N23's credit, hop windows'
reports and decisions, web and bulk circuits' hop windows, and PCTCP's
connections per circuit."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Protocol, TypeVar

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.checks import Failure
from runner.experiments.congestion.circuit_window_report import circuit_window_section
from runner.experiments.congestion.compute import CongestionResult, Part
from runner.experiments.congestion.mechanisms import (
    ConnectionSharing,
    HopWindowRun,
    MechanismTotals,
    N23Run,
    RateRatio,
    estimate_of,
    mechanism_of,
    scenario_of,
)
from runner.report.markdown import table
from runner.report.plots import cdf_plot
from runner.spec.model import Spec


class _OfVariant(Protocol):
    @property
    def variant(self) -> str: ...


R = TypeVar("R", bound=_OfVariant)


def _positions(counts: tuple[int, ...], width: int) -> str:
    return " / ".join(str(n) for n in (counts + (0,) * width)[:width])


def congestion_sections(result: CongestionResult, inp: Inputs, out: Path) -> Section:
    """Nothing unless a variant sets cc_hop_feedback, n23 or hop_window in
    its consensus."""
    if not result.asked:
        return Section()
    spec, transfers = inp.spec, inp.transfers
    by_name = {v.name: v for v in spec.variants}

    lines = [
        "",
        "## Congestion control",
        "",
        "Each variant runs one window on one scenario's clients: the fixed window "
        "(`cc_alg=0`), Vegas (`cc_alg=2`), or Vegas with hop feedback "
        "(`cc_hop_feedback=1`, tor-patches/0005); PCTCP adds a connection per circuit "
        "(`MCTorPerCircuit 1`, tor-patches/0003), N23 per-hop credit (`n23=1`, "
        "tor-patches/0006), a BackTap-style hop window (`hop_window=1`, with Marut's "
        "estimate at the source where `hop_window_marut` is 1 or 2; tor-patches/0007). "
        "Per class: downloads completed in a run "
        "and the mean over a run's completed downloads of size over time to last byte, as "
        "the mean over seeds with a 95% t CI cut at zero; failed downloads over all runs.",
        "",
    ]
    lines += _variants_table(result, spec)
    lines.append("")
    results = result.classes
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

    if result.hop_feedback is not None:
        lines += _hop_feedback_section(result.hop_feedback, spec, result.complete_runs)
    if result.n23 is not None:
        lines += _n23_section(result.n23, spec)
    if result.hop_window is not None:
        lines += _hop_window_section(result.hop_window, spec)
        lines += circuit_window_section(result.circuit_windows, spec)
    if result.pctcp is not None:
        lines += _pctcp_section(result.pctcp, spec)
    return Section(lines=lines, plots=plots)


def _variants_table(result: CongestionResult, spec: Spec) -> list[str]:
    """Each variant's mechanism, the estimate it decides with and its web /
    bulk rate ratio."""
    lines = [
        "Per variant, *web / bulk rate*: in each seed, the web class's mean download rate "
        "(as in the class table) over the bulk class's, then the geometric mean of these "
        "ratios over the seeds where both classes completed a download (*seeds*), with a "
        "95% t CI over their logs; above 1, a web download gets more than a bulk one. "
        "n/a where the variant runs no web or no bulk class.",
        "",
    ]
    ratios = {r.variant: r for r in result.rate_ratios}
    return lines + table(
        ["variant", "mechanism", "decides with", "seeds", "web / bulk rate (geometric mean)"],
        [
            [v.name, mechanism_of(v), estimate_of(v), *_ratio_cells(ratios.get(v.name))]
            for v in spec.variants
        ],
    )


def _ratio_cells(ratio: RateRatio | None) -> list[str]:
    """A variant's seeds and web / bulk rate ratio; n/a without the pair."""
    if ratio is None or ratio.web is None or ratio.bulk is None:
        return ["", "n/a"]
    return [str(ratio.seeds), ratio.ratio.format(1, "", 2)]


def _verdict(name: str, failures: list[Failure], passed: str) -> list[str]:
    """A section's checks: each failure, or what passing them means."""
    if failures:
        return ["", f"**{name} checks FAILED:**", ""] + [f"- {f}" for f in failures]
    return ["", passed]


def _in_spec_order(runs: list[R], spec: Spec) -> list[R]:
    """Runs in the order the spec lists their variants."""
    order = [v.name for v in spec.variants]
    return sorted(runs, key=lambda r: order.index(r.variant) if r.variant in order else -1)


def _hop_window_section(part: Part[HopWindowRun], spec: Spec) -> list[str]:
    """Hop windows' reports and decisions per run."""
    runs, failures = part.rows, part.failures
    by_name = {v.name: v for v in spec.variants}
    lines = [
        "",
        "### Hop windows",
        "",
        "Totals per run over its tors, from each tor's last `Hop window totals` log line. "
        "A hop tells the previous hop of every relay cell of a circuit it has forwarded or "
        "delivered: one entry per circuit with news (circuit, count, Marut's c_diff), the "
        "entries of a channel packed into one HOP_FORWARDED cell per pass of the main loop. "
        "The previous hop's window opens by the count, and the time from writing a cell to "
        "hearing it was forwarded is the hop RTT it decides with, once per RTT. *Entries "
        "per cell*: how much a flush packs together. *Stalls*: a window full after a send. "
        "*Before feedback*: relay cells sent to a hop that had reported nothing yet (not "
        "limited). *Remote larger*: at the sending end under Marut, decisions where the "
        "c_diff carried from the next hops exceeded the end's own diff.",
        "",
    ]
    lines += table(
        [
            "variant",
            "mechanism",
            "seed",
            "tors",
            "entries sent",
            "taken",
            "dropped",
            "entries per cell",
            "stalls",
            "relay cells sent",
            "before feedback",
            "decisions",
            "+1 / -1",
            "remote larger",
            "mean window (cells)",
        ],
        [
            [
                r.variant,
                mechanism_of(by_name[r.variant]) if r.variant in by_name else "",
                str(r.seed),
                str(r.tors),
                str(r.feedback_sent),
                str(r.feedback_received),
                str(r.feedback_dropped),
                f"{r.entries_per_cell:.1f}",
                str(r.stalls),
                str(r.cells_sent),
                str(r.cells_before_feedback),
                str(r.decisions),
                f"{r.increases} / {r.decreases}",
                str(r.remote_larger),
                f"{r.mean_window:.1f}",
            ]
            for r in _in_spec_order(runs, spec)
        ],
    )
    lines += _verdict(
        "Hop window",
        failures,
        (
            "Hop window checks: feedback taken and windows decided in every run that "
            "switches them on, no feedback in any other run; where tors logged their "
            "circuits, on every circuit that carried streams each relay held and decided "
            "its window (BackTap), or only the exit did and every relay before it heard "
            "from its next hop (Marut)."
        ),
    )
    return lines


def _hop_feedback_section(part: Part[MechanismTotals], spec: Spec, complete_runs: int) -> list[str]:
    """Hop feedback's totals per variant."""
    by_name = {v.name: v for v in spec.variants}
    totals, failures = part.rows, part.failures
    width = max(
        (max((i + 1 for i, n in enumerate(t.received) if n), default=0) for t in totals),
        default=0,
    )
    width = max(width, 3)
    lines = [
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
    lines += _verdict(
        "Hop feedback",
        failures,
        (
            f"Hop feedback checks: at work in every run that switches it on, absent "
            f"elsewhere ({complete_runs} runs)."
        ),
    )
    return lines


def _n23_section(part: Part[N23Run], spec: Spec) -> list[str]:
    """N23's counters per run."""
    runs, failures = part.rows, part.failures
    by_name = {v.name: v for v in spec.variants}
    lines = [
        "",
        "### N23 credit",
        "",
        "Totals per run over its tors, from each tor's last `N23 totals` log line. A hop "
        "returns N2 credits to the previous hop in a credit cell each time it has forwarded "
        "or delivered N2 of a circuit's relay cells; a hop with no credit left for its next "
        "hop holds the circuit's cells (a *stall*), and where the circuit starts its streams "
        "stop reading. *Before credit*: relay cells sent to a hop that had not yet returned "
        "any credit (so was not yet known to run N23) and were not limited.",
        "",
    ]
    lines += table(
        [
            "variant",
            "mechanism",
            "seed",
            "tors",
            "credit cells sent",
            "taken",
            "dropped",
            "stalls",
            "relay cells sent",
            "before credit",
        ],
        [
            [
                r.variant,
                mechanism_of(by_name[r.variant]) if r.variant in by_name else "",
                str(r.seed),
                str(r.tors),
                str(r.credit_sent),
                str(r.credit_received),
                str(r.credit_dropped),
                str(r.stalls),
                str(r.cells_sent),
                str(r.cells_before_credit),
            ]
            for r in _in_spec_order(runs, spec)
        ],
    )
    lines += _verdict(
        "N23",
        failures,
        (
            "N23 checks: credit returned and taken in every run that switches it on, no "
            "credit cell in any other run."
        ),
    )
    return lines


def _pctcp_section(part: Part[ConnectionSharing], spec: Spec) -> list[str]:
    """Connections per circuit from the placement lines."""
    sharing, failures = part.rows, part.failures
    by_name = {v.name: v for v in spec.variants}
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
            for s in _in_spec_order(sharing, spec)
        ],
    )
    lines += _verdict(
        "PCTCP",
        failures,
        (
            "PCTCP checks: a connection per circuit in every run that switches it on, "
            "shared connections in every other run that logs placements."
        ),
    )
    return lines
