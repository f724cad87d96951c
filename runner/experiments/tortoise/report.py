"""The report's per-client sections: average bandwidth by group, and
whether relays' limits on non-relay clients held (runner.analyses.client_bandwidth)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt

from runner.analyses.client_bandwidth import ClientBandwidth
from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.experiments.tortoise.limits import AT_LIMIT, ClientsResult
from runner.experiments.tortoise.setting import LimitSetting
from runner.report.axes import log_x_axis
from runner.report.markdown import table
from runner.report.plots import draw_cdf, save_figure  # sets matplotlib's Agg backend first
from runner.spec.model import CLIENT_RELAY


def _cdf(bandwidths: list[ClientBandwidth], group: str, variants: list[str], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    drawn: list[float] = []
    for variant in variants:
        per_seed: dict[int, dict[str, list[float]]] = defaultdict(dict)
        for b in bandwidths:
            if b.variant == variant and b.group == group:
                per_seed[b.seed][b.host] = [b.kib_per_s]
                drawn.append(b.kib_per_s)
        if per_seed:
            draw_cdf(ax, per_seed, variant, alpha=0.15)
    positive = [v for v in drawn if v > 0]
    if positive:
        log_x_axis(ax, min(positive), max(positive))
    ax.set_ylim(0, 1)
    labels = (
        "client's average bandwidth (KiB/s)",
        "cumulative fraction of clients",
        f"{group}: per-client average bandwidth",
    )
    save_figure(fig, ax, path, labels, legend="lower right")


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _times(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}x"


def _settings(settings: list[LimitSetting]) -> list[str]:
    """The limits: how each was set, its value per seed, its multiple of the
    reference's bulk and web means, and what it did to bulk and web clients
    against the reference."""
    if not settings:
        return []
    rows = []
    for s in settings:
        values = ", ".join(
            f"{x.seed}: {x.rate / 1024:.0f}" if x.rate else f"{x.seed}: –" for x in s.seeds
        )
        differs = "the limit" if s.only_the_limit else "more than the limit"
        rows.append(
            [s.variant, s.rule, values, _times(s.rate_over_bulk), _times(s.rate_over_web)]
            + [_ratio(s.bulk), _ratio(s.web), differs, str(len(s.seeds))]
        )
    return [
        "",
        "## Where the limits sat",
        "",
        "Each limit is set per seed from the network it runs in, a multiple of a class's "
        "mean client bandwidth in another variant on the same seed (its reference), or given "
        "in the consensus, the same on every seed (its reference the baseline). *Per seed* "
        "gives the rate the relays were given (KiB/s); *x bulk* and *x web* that rate over "
        "the reference's mean bulk and web client bandwidth on the seed, as a mean over "
        "seeds (where the limit sat against what each class got without it); *bulk* and "
        "*web* the seed's mean client bandwidth of that class over the reference's, as a "
        "mean over seeds (the hypotheses judge them); *differs by* says whether the variant "
        "differs from its reference by the limit alone.",
        "",
        *table(
            ["variant", "limit", "per seed (KiB/s)", "x bulk", "x web", "bulk", "web"]
            + ["differs by", "seeds"],
            rows,
        ),
    ]


def clients_and_limits_section(result: ClientsResult, inp: Inputs, out: Path) -> Section:
    """Nothing without a clients table."""
    variants, bandwidths = inp.variants, result.bandwidths
    if not bandwidths:
        return Section()
    lines = [
        "",
        "## Per-client bandwidth",
        "",
        "A client's average bandwidth is the payload of its completed transfers over the "
        "sum of their times to last byte. Clients that also run a relay form the group "
        f"`{CLIENT_RELAY}`. Mean over seeds of each seed's mean, with a 95% t interval "
        "across seeds, cut at zero (a bandwidth cannot be negative).",
        "",
    ]
    counts: dict[tuple[str, str], set[tuple[int, str]]] = defaultdict(set)
    for b in bandwidths:
        counts[(b.variant, b.group)].add((b.seed, b.host))
        counts[(b.variant, "all")].add((b.seed, b.host))
    rows = [
        [group, variant, str(len(counts[(variant, group)])), estimate.format(1, "", 1)]
        for (variant, group), estimate in sorted(
            result.means.items(), key=lambda kv: (kv[0][1], variants.index(kv[0][0]))
        )
    ]
    lines += table(["group", "variant", "clients (all seeds)", "mean bandwidth (KiB/s)"], rows)
    plots = []
    for group in sorted({b.group for b in bandwidths}):
        path = out / f"client-bandwidth-{group}.png"
        _cdf(bandwidths, group, variants, path)
        plots.append(path)
    reference, checks = result.reference, result.checks
    if reference is None:
        return Section(lines=lines, plots=plots)
    lines += _settings(result.settings)
    lines += [
        "",
        "## Rate limit",
        "",
        "A guard's token bucket lets a transfer receive at most rate x TTLB + burst bytes. "
        "A client is *held* when every guard of the circuits that carried its streams "
        "limits non-relay clients (checked against that limit), *free* when none does "
        "(clients whose streams used both kinds are left out); clients that also "
        f"run a relay are `{CLIENT_RELAY}`. Free clients and client relays are compared "
        f"with the limit most relays were given ({reference.rate / 1024:g} KiB/s, burst "
        f"{reference.burst / 1024:g} KiB): *over* counts transfers that got more than that "
        "bound; *worst* is the largest (bytes - burst) / (rate x TTLB), above 1 when over; "
        f"*at the limit* counts transfers at {AT_LIMIT:.0%} of the rate or more past their "
        "burst, whose pace the bucket set (a limited run with none at the limit fails the "
        "check: its limit never engaged).",
        "",
    ]
    lines += table(
        ["variant", "seed", "standing", "class", "clients", "transfers", "at the limit"]
        + ["over", "worst"],
        [
            [c.variant, str(c.seed), c.standing, c.cls, str(c.clients), str(c.transfers)]
            + [f"{c.at_limit} ({c.at_limit / c.transfers:.0%})", str(c.over), f"{c.worst:.2f}"]
            for c in sorted(
                checks, key=lambda c: (variants.index(c.variant), c.seed, c.standing, c.cls)
            )
        ],
    )
    return Section(lines=lines, plots=plots)
