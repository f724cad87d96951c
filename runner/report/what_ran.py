"""The report's opening and its record of what ran: the title, the spec,
the backend, the seeds and the tool versions; then the variants and each
run's status and phase times (with the damaged log lines collection
skipped), and the runs that are stale or ran with other tool versions."""

from __future__ import annotations

from runner.analyses.runs import StaleRun, complete, tool_sets
from runner.layout import Layout
from runner.network.backends import Backend, backend_named
from runner.planning.seed_rounds import design_change_lines, read_rounds
from runner.report.markdown import table
from runner.spec.model import Spec
from runner.tables.runs import RunRow
from runner.tables.schema import LogDamageRow


def _phase(run: RunRow, name: str) -> str:
    value = run.phase_s(name)
    return "–" if value is None else f"{value:.1f}"


def skipped_lines(damage: list[LogDamageRow] | None, run: RunRow) -> str:
    """A run's damaged log lines skipped in collection, with logs missing or empty."""
    if damage is None or not run.complete:
        return "–"
    mine = [d for d in damage if (d.variant, d.seed) == (run.variant, run.seed)]
    text = str(sum(d.skipped_lines for d in mine))
    absent = sum(d.missing or d.empty for d in mine)
    return text + (f" ({absent} logs missing or empty)" if absent else "")


def versions_line(runs: list[RunRow]) -> str:
    """``versions: tor 0.4.9.11, ...`` of the first complete run."""
    first = next(iter(complete(runs)), None)
    found = sorted(first.tool_versions().items()) if first else []
    return "versions: " + ", ".join(f"{k} {v}" for k, v in found if v)


def what_ran(
    spec: Spec,
    layout: Layout,
    runs: list[RunRow],
    damage: list[LogDamageRow] | None,
    stale: list[StaleRun],
) -> tuple[list[str], list[str]]:
    """The title, the spec and versions; then the variants and the runs
    (``stale``: those analyze found stale)."""
    done = complete(runs)
    first = done[0] if done else None
    backend = backend_named(first.backend if first else None)
    head = _heading(spec, layout, runs, first, backend)
    if not backend.simulated:
        head += [f"- note: {_real_time_note(done)}"]
    lines = _variants_table(spec) + _runs_table(runs, backend, damage)
    return [*head, ""], lines + stale_runs(stale, runs)


def _heading(
    spec: Spec,
    layout: Layout,
    runs: list[RunRow],
    first: RunRow | None,
    backend: Backend,
) -> list[str]:
    """The title and description; the spec, backend, seeds, time and versions."""
    lines = [f"# Experiment `{spec.name}`", ""]
    if spec.description:
        lines += [spec.description, ""]
    return lines + [
        f"- spec: `{spec.path}` (sha256 `{spec.sha256[:16]}`)",
        f"- backend: {(first.backend if first else '') or 'n/a'}",
        f"- seeds: {', '.join(map(str, spec.seeds))}; baseline variant: `{spec.baseline}`",
        *_fewer_seeds_line(spec),
        *rounds_line(spec, layout),
        (
            f"- real time: {backend.measure(spec):.0f} s of traffic once the network "
            "had bootstrapped"
            if not backend.simulated
            else f"- simulated time: {spec.duration.bootstrap:.0f} s bootstrap + "
            f"{_traffic(spec, backend)} of traffic"
        ),
        "- " + versions_line(runs),
    ]


def _traffic(spec: Spec, backend: Backend) -> str:
    """The simulated traffic: the spec's, or each variant's own range."""
    if not spec.variant_measure:
        return f"{backend.measure(spec):.0f} s"
    times = [backend.measure(spec, v.name) for v in spec.variants]
    return (
        f"{min(times):.0f} to {max(times):.0f} s, each variant its own "
        "(its clients end after their cycles)"
    )


def _real_time_note(complete: list[RunRow]) -> str:
    """What real processes' timings show, and how long their bootstraps took."""
    return (
        "the local backend runs real tor processes on this machine with no link latency "
        "or bandwidth emulation (only tor's own rate limits): its timings show that the "
        "network works, they are not a model of the Tor network. Bootstrap took "
        + ", ".join(
            f"{bootstrap_s:.0f} s"
            for bootstrap_s in (r.phase_s("bootstrap") for r in complete)
            if bootstrap_s is not None
        )
        + " of wall time."
    )


def _variants_table(spec: Spec) -> list[str]:
    lines = ["## Variants", ""]
    return lines + table(
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


def _runs_table(
    runs: list[RunRow], backend: Backend, damage: list[LogDamageRow] | None
) -> list[str]:
    """Each run's status and the time of its phases, and the damaged log
    lines collection skipped where it counted them."""
    lines = ["", "## Runs", ""]
    real = not backend.simulated
    # Real processes run; Shadow simulates. Time waited for the machine is apart.
    work = ["run (s)", "waited (s)"] if real else ["simulate (s)"]
    columns = ["variant", "seed", "status", "generate (s)", *work, "collect (s)"]
    return lines + table(
        columns + (["damaged log lines skipped"] if damage is not None else []),
        [
            [
                r.variant,
                str(r.seed),
                r.status,
                _phase(r, "generate"),
                _phase(r, "simulate"),
                *([_phase(r, "wait")] if real else []),
                _phase(r, "collect"),
            ]
            + ([skipped_lines(damage, r)] if damage is not None else [])
            for r in runs
        ],
    )


def stale_runs(stale: list[StaleRun], runs: list[RunRow]) -> list[str]:
    """The complete runs whose identity differs from what the spec now gives
    (made before it changed, or kept with --keep-stale), as analyze found
    them, and whether the runs were made with more than one set of tool
    versions: a report never mixes runs silently."""
    rows = [[r.name, ", ".join(r.changed)] for r in stale]
    versions = tool_sets(runs)
    lines = []
    if rows:
        lines += [
            "",
            f"**Stale runs:** {len(rows)} complete runs differ from what the spec now gives "
            "(made before it changed: `runner run` makes them again, unless --keep-stale "
            "keeps them). Their results are in every table below:",
            "",
            *table(["run", "what differs"], rows),
        ]
    if len(versions) > 1:
        lines += [
            "",
            f"**Tool versions:** the runs were made with {len(versions)} different sets of "
            "tool versions (each run's manifest.json says which).",
        ]
    return lines


def _fewer_seeds_line(spec: Spec) -> list[str]:
    """The variants later seed rounds left out, and the seeds they ran."""
    if not spec.variant_seeds:
        return []
    by_seeds: dict[tuple[int, ...], list[str]] = {}
    for name, seeds in spec.variant_seeds.items():
        by_seeds.setdefault(seeds, []).append(name)
    parts = [
        f"{len(names)} at seeds {', '.join(map(str, seeds))}"
        for seeds, names in sorted(by_seeds.items(), key=lambda item: (len(item[0]), item[0]))
    ]
    return [
        f"- variants at fewer seeds (the later rounds ran only what undetermined hypotheses "
        f"compare): {'; '.join(parts)} of {len(spec.variants)} variants"
    ]


def rounds_line(spec: Spec, layout: Layout) -> list[str]:
    """How many rounds of seeds ran, and why they stopped."""
    if spec.seed_rounds is None:
        return []
    data = read_rounds(layout)
    if not data:
        return ["- seed rounds: none recorded (run `runner experiment` to run them)"]
    counts = ", ".join(
        f"{len(r['seeds'])}" + (f" ({r['runs']} runs)" if r.get("runs") else "")
        for r in data["rounds"]
    )
    rule = data.get("rule", {})
    bounds = _bounds_text(rule.get("looks", []), rule.get("t_boundaries", []))
    sides = rule.get("family_t_boundaries")
    if bounds and isinstance(sides, dict):
        looks = rule.get("looks", [])
        bounds = (
            f"exploratory, at 5%: {bounds}; confirmatory, at the family's first step 5% / "
            f"{rule.get('claims', rule.get('confirmatory'))} claims, the side toward the "
            f"claim: {_bounds_text(looks, sides.get('toward', []))}; the other side: "
            f"{_bounds_text(looks, sides.get('away', []))}"
        )
    # The design the rounds ran under (the spec's, unless it changed since).
    low, high, step = (
        rule.get(key, getattr(spec.seed_rounds, key)) for key in ("min", "max", "step")
    )
    return [
        f"- seed rounds: {len(data['rounds'])} ({counts} seeds; rule: {low} "
        f"to {high} seeds, {step} more a round, looks from {spec.seed_rounds.decide_from} "
        "seeds, stopping when every confirmatory hypothesis (every hypothesis, where none "
        "tests a claim) is decisive at the look's group-sequential boundary or futile"
        + (f" ({bounds})" if bounds else "")
        + f"); stopped: {data['stopped']}",
        *design_change_lines(spec, data),
    ]


def _bounds_text(looks: list[int], bounds: list[float]) -> str:
    """``5 seeds: t = 11.40, 7 seeds: t = 5.16``, from the rounds' record."""
    return ", ".join(f"{n} seeds: t = {float(t):.2f}" for n, t in zip(looks, bounds, strict=False))
