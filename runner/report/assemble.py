"""Write ``report/report.md`` (and its plots) for an experiment's collected runs."""

from __future__ import annotations

import csv
import math
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.analyses.transfers import (
    ClientCheck,
    changes,
    completion_checks,
    conflux_leg_checks,
    summarize,
    transfers_per_size,
)
from runner.execute.manifest import STATUS_COMPLETE, read_manifest
from runner.layout import Layout, partial_path
from runner.report.clients import client_sections
from runner.report.congestion import congestion_sections
from runner.report.markdown import table
from runner.report.mctor import mctor_sections
from runner.report.plots import draw_all, human_size
from runner.spec.model import Spec
from runner.tables.rows import (
    CircuitRow,
    LogDamageRow,
    read_circuits,
    read_log_damage,
    read_transfers,
)


@dataclass(frozen=True)
class ReportResult:
    path: Path
    checks_passed: bool
    failures: list[str]


def _seconds(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _manifests(spec: Spec, layout: Layout) -> list[dict[str, Any]]:
    found = []
    for seed in spec.seeds:
        for variant in spec.variants:
            run_dir = layout.run_dir(variant.name, seed)
            try:
                found.append(read_manifest(run_dir))
            except (OSError, ValueError):
                found.append({"variant": variant.name, "seed": seed, "status": "missing"})
    return found


def _phase(manifest: dict[str, Any], name: str) -> str:
    value = manifest.get("phases", {}).get(f"{name}_s")
    return "–" if value is None else f"{value:.1f}"


def circuit_summary(circuits: list[CircuitRow], variants: list[str]) -> list[list[str]]:
    """Per variant: circuits built and failed, build time, linked conflux sets.

    Onion-service circuits (purpose HS_*) are left out: tor builds and closes
    them on its own (vanguards), and none of the measured traffic uses them.
    """
    rows = []
    for variant in variants:
        mine = [c for c in circuits if c.variant == variant and not c.purpose.startswith("HS_")]
        built = [c for c in mine if c.status == "BUILT"]
        builds = sorted(c.build for c in built if c.build is not None)
        median = builds[len(builds) // 2] if builds else float("nan")
        legs: dict[tuple[int, str, str], set[str]] = defaultdict(set)
        for c in mine:
            if c.conflux_id:
                legs[(c.seed, c.host, c.conflux_id)].add(c.circuit_id)
        by_size: dict[int, int] = defaultdict(int)
        for members in legs.values():
            by_size[len(members)] += 1
        shape = ", ".join(f"{n} legs: {count}" for n, count in sorted(by_size.items())) or "–"
        rows.append(
            [
                variant,
                str(len(built)),
                str(len(mine) - len(built)),
                _seconds(median),
                str(len(legs)),
                shape,
            ]
        )
    return rows


def relay_summary(relays_csv: Path, variants: list[str]) -> list[list[str]]:
    """Per variant and seed: how the last consensus saw the relays."""
    if not relays_csv.is_file():
        return []
    with relays_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    table = []
    seeds = sorted({int(r["seed"]) for r in rows})
    for variant in variants:
        for seed in seeds:
            mine = [r for r in rows if r["variant"] == variant and int(r["seed"]) == seed]
            if not mine:
                continue
            flags = [set(r["flags"].split()) for r in mine]
            exits = [f for f in flags if "Exit" in f]
            table.append(
                [
                    variant,
                    str(seed),
                    str(len(mine)),
                    f"{sum({'Fast', 'Stable'} <= f for f in exits)}/{len(exits)}",
                    str(sum("Guard" in f for f in flags)),
                    str(sum("Stable" in f for f in flags)),
                    f"{sum(r['measured'] == '1' for r in mine)}/{len(mine)}",
                ]
            )
    return table


def skipped_lines(damage: list[LogDamageRow] | None, manifest: dict[str, Any]) -> str:
    """A run's damaged log lines skipped in collection, with logs missing or empty."""
    if damage is None or manifest.get("status") != STATUS_COMPLETE:
        return "–"
    mine = [d for d in damage if (d.variant, d.seed) == (manifest["variant"], manifest["seed"])]
    text = str(sum(d.skipped_lines for d in mine))
    absent = sum(d.missing or d.empty for d in mine)
    return text + (f" ({absent} logs missing or empty)" if absent else "")


def completion_failure(check: ClientCheck, min_completion: float) -> str:
    where = f"{check.variant}/seed-{check.seed} {check.host}"
    if check.attempted == 0:
        # Nothing finished: a dead client, or a run too short for its transfers.
        return f"{where}: finished no transfer (none succeeded, none failed)"
    return (
        f"{where}: {check.completed}/{check.attempted} transfers completed (< {min_completion:.0%})"
    )


def write_report(spec: Spec, layout: Layout) -> ReportResult:
    """Compute the comparison and write the report; the caller decides on exit codes."""
    variants = [v.name for v in spec.variants]
    transfers = read_transfers(layout.transfers_csv)
    circuits = read_circuits(layout.circuits_csv)
    damage = read_log_damage(layout.log_damage_csv)
    manifests = _manifests(spec, layout)
    complete = [m for m in manifests if m.get("status") == STATUS_COMPLETE]
    measured_clients = {
        (m["variant"], int(m["seed"])): [
            (h, info["class"]) for h, info in sorted(m["hosts"].items()) if info["measured"]
        ]
        for m in complete
    }
    checks: list[ClientCheck] = completion_checks(
        transfers, measured_clients, spec.checks.min_completion
    )
    failures = [completion_failure(c, spec.checks.min_completion) for c in checks if not c.ok]
    per_size = transfers_per_size(transfers, measured_clients, spec.class_sizes())
    minimum = spec.checks.min_transfers_per_size
    failures += [
        f"{variant}/seed-{seed} {host}: {count} completed {human_size(size)} transfers "
        f"(< {minimum})"
        for (variant, seed, host, size), count in sorted(per_size.items())
        if count < minimum
    ]
    leg_checks = conflux_leg_checks(
        circuits,
        measured_clients,
        {v.name: v.expect_conflux_legs for v in spec.variants if v.expect_conflux_legs is not None},
    )
    failures += [
        f"{c.variant}/seed-{c.seed} {c.host}: conflux sets by legs {c.sets_by_legs or '{}'}, "
        f"expected {'none' if c.expected == 0 else f'only {c.expected}-leg sets'}"
        for c in leg_checks
        if not c.ok
    ]

    out = layout.report_dir
    work = partial_path(out)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    plots = draw_all(transfers, variants, work)
    client_lines, client_failures, client_plots = client_sections(
        layout, variants, transfers, circuits, work
    )
    failures += client_failures
    plots += client_plots
    mctor_lines, mctor_failures, mctor_plots = mctor_sections(
        spec, layout, transfers, circuits, measured_clients, work
    )
    failures += mctor_failures
    plots += mctor_plots
    congestion_lines, congestion_failures, congestion_plots = congestion_sections(
        spec, layout, transfers, set(measured_clients), work
    )
    failures += congestion_failures
    failures += [
        f"{m['variant']}/seed-{m['seed']}: run {m.get('status')}"
        + (f": {str(m.get('error', '')).splitlines()[0]}" if m.get("error") else "")
        for m in manifests
        if m.get("status") != STATUS_COMPLETE
    ]
    failures += [d.describe() for d in damage or [] if d.matters]
    plots += congestion_plots

    first = complete[0] if complete else {}
    lines = [f"# Experiment `{spec.name}`", ""]
    if spec.description:
        lines += [spec.description, ""]
    lines += [
        f"- spec: `{spec.path}` (sha256 `{spec.sha256[:16]}`)",
        f"- backend: {first.get('backend', 'n/a')}",
        f"- seeds: {', '.join(map(str, spec.seeds))}; baseline variant: `{spec.baseline}`",
        (
            f"- real time: {spec.duration.local_measure:.0f} s of traffic once the network "
            "had bootstrapped"
            if first.get("backend") == "local"
            else f"- simulated time: {spec.duration.bootstrap:.0f} s bootstrap + "
            f"{spec.duration.measure:.0f} s of traffic"
        ),
        "- versions: "
        + ", ".join(f"{k} {v}" for k, v in sorted((first.get("versions") or {}).items()) if v),
    ]
    backend_note = ""
    if first.get("backend") == "local":
        backend_note = (
            "the local backend runs real tor processes on this machine with no link latency "
            "or bandwidth emulation (only tor's own rate limits): its timings show that the "
            "network works, they are not a model of the Tor network. Bootstrap took "
            + ", ".join(
                f"{m['phases']['bootstrap_s']:.0f} s"
                for m in complete
                if "bootstrap_s" in m.get("phases", {})
            )
            + " of wall time."
        )
    if backend_note:
        lines += [f"- note: {backend_note}"]
    lines += ["", "## Variants", ""]
    lines += table(
        ["variant", "description", "tor", "torrc lines", "consensus parameters"],
        [
            [
                v.name + (" (baseline)" if v.name == spec.baseline else ""),
                v.description or "–",
                v.tor,
                "; ".join(f"{role}: {', '.join(ls)}" for role, ls in v.torrc.items()) or "–",
                " ".join(f"{k}={x}" for k, x in sorted(v.consensus.items())) or "–",
            ]
            for v in spec.variants
        ],
    )
    lines += ["", "## Runs", ""]
    columns = ["variant", "seed", "status", "generate (s)", "simulate (s)", "collect (s)"]
    lines += table(
        columns + (["damaged log lines skipped"] if damage is not None else []),
        [
            [
                str(m["variant"]),
                str(m["seed"]),
                str(m.get("status")),
                _phase(m, "generate"),
                _phase(m, "simulate"),
                _phase(m, "collect"),
            ]
            + ([skipped_lines(damage, m)] if damage is not None else [])
            for m in manifests
        ],
    )
    lines += ["", "## Checks", ""]
    passed = sum(c.ok for c in checks)
    lines.append(
        f"Every measured client must finish at least one transfer and complete at least "
        f"{spec.checks.min_completion:.0%} of the transfers it finished, in every run: "
        f"{passed}/{len(checks)} client-runs pass."
    )
    if minimum:
        fewest = min(per_size.values(), default=0)
        lines += [
            "",
            f"Every measured client must complete at least {minimum} transfers of each "
            f"size in every run: the fewest was {fewest}.",
        ]
    worst = sorted(checks, key=lambda c: c.rate)[:3]
    if worst:
        lines += [
            "",
            "Lowest completion: "
            + "; ".join(
                f"{c.variant}/seed-{c.seed} {c.host} {c.completed}/{c.attempted}" for c in worst
            ),
        ]
    if leg_checks:
        passed_legs = sum(c.ok for c in leg_checks)
        lines += [
            "",
            "Conflux must be active as each variant expects (only sets of the expected "
            f"number of legs; none where that is 0): {passed_legs}/{len(leg_checks)} "
            "client-runs pass.",
        ]
    if damage is not None:
        lines += [
            "",
            "Every log a run's tables come from must be present and not empty, and no "
            "damaged line that was skipped may have held a record (a transfer's result, a "
            f"circuit event): {sum(d.matters for d in damage)} logs fail this.",
        ]
    if failures:
        lines += ["", "**FAILED:**", ""] + [f"- {f}" for f in failures]

    lines += [
        "",
        "## Transfers",
        "",
        "Pooled over seeds; times in seconds from the request to the first/last byte "
        "(as tornettools counts them); goodput is size over time to last byte.",
        "",
    ]
    summaries = summarize(transfers, variants)
    lines += table(
        [
            "class",
            "size",
            "variant",
            "n ok",
            "failed",
            "error rate",
            "TTFB median",
            "TTFB p90",
            "TTLB median",
            "TTLB p90",
            "goodput median (Mbit/s)",
        ],
        [
            [
                g.cls,
                human_size(g.size),
                g.variant,
                str(g.completed),
                str(g.failed),
                f"{g.error_rate:.1%}",
                _seconds(g.ttfb_median),
                _seconds(g.ttfb_p90),
                _seconds(g.ttlb_median),
                _seconds(g.ttlb_p90),
                f"{g.goodput_median:.2f}",
            ]
            for g in summaries
        ],
    )
    lines += [
        "",
        "## Changes",
        "",
        "Relative change of the per-seed median of a variant against its reference "
        "(negative is faster), paired by seed: the mean over seeds with a 95% t "
        "confidence interval across seeds.",
        "",
    ]
    by_metric = {
        metric: {
            (c.variant, c.reference, c.cls, c.size): c
            for c in changes(transfers, spec.comparisons, metric)
        }
        for metric in ("ttfb", "ttlb")
    }
    lines += table(
        ["class", "size", "variant", "against", "TTFB change", "TTLB change"],
        [
            [
                key[2],
                human_size(key[3]),
                key[0],
                key[1],
                by_metric["ttfb"][key].estimate.format(100, "%")
                if key in by_metric["ttfb"]
                else "n/a",
                change.estimate.format(100, "%"),
            ]
            for key, change in sorted(by_metric["ttlb"].items(), key=lambda kv: kv[0][2:])
        ],
    )
    lines += [
        "",
        "## Circuits",
        "",
        "Clients' circuits from oniontrace CIRC events, without "
        "onion-service (HS_*) circuits; a conflux set is the legs linked under one "
        "CONFLUX_ID.",
        "",
    ]
    lines += table(
        [
            "variant",
            "built",
            "failed",
            "build time median (s)",
            "conflux sets linked",
            "sets by number of legs",
        ],
        circuit_summary(circuits, variants),
    )
    if leg_checks:
        lines += [
            "",
            "## Conflux legs per client",
            "",
            "Sets each measured client linked in each run, by number of legs, against what "
            "the variant expects.",
            "",
        ]
        lines += table(
            ["variant", "seed", "client", "expected legs", "sets linked", "sets by legs", "check"],
            [
                [
                    c.variant,
                    str(c.seed),
                    c.host,
                    str(c.expected),
                    str(c.sets),
                    ", ".join(f"{n} legs: {k}" for n, k in sorted(c.sets_by_legs.items())) or "–",
                    "ok" if c.ok else "FAILED",
                ]
                for c in leg_checks
            ],
        )
    lines += client_lines
    lines += mctor_lines
    lines += congestion_lines
    relay_table = relay_summary(layout.relays_csv, variants)
    if relay_table:
        lines += [
            "",
            "## Relays in the last consensus",
            "",
            "From the first authority's last consensus. Conflux legs need Fast and Stable "
            "relays; weights are measured (from the bandwidth file) only when at least three "
            "authorities vote them, else they are the relays' own reports.",
            "",
        ]
        lines += table(
            [
                "variant",
                "seed",
                "relays",
                "exits Fast+Stable",
                "Guard",
                "Stable",
                "measured weights",
            ],
            relay_table,
        )
    lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    (work / "report.md").write_text("\n".join(lines) + "\n")
    if out.exists():
        shutil.rmtree(out)
    work.rename(out)
    return ReportResult(out / "report.md", not failures, failures)
