"""The report's load section: relay utilisation and clients' share of their
access links per variant, and the spec's required load (checks.load)."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.inputs import Inputs
from runner.analyses.load import LoadResult
from runner.analyses.stats import Estimate
from runner.report.markdown import table
from runner.spec.model import ALL_RELAYS, CLIENT_RELAY, LOAD_ROLES


def _pct(est: Estimate) -> str:
    return est.format(scale=100, unit="%", digits=0)


def _bottlenecks(
    summary: dict[tuple[str, str], tuple[Estimate, Estimate, Estimate]],
    variants: list[str],
    roles: list[str],
) -> dict[str, tuple[str, Estimate]]:
    """variant -> the role with the highest mean utilisation, and it."""
    result = {}
    for variant in variants:
        present = [(summary[(variant, r)][0], r) for r in roles if (variant, r) in summary]
        if present:
            est, role = max(present, key=lambda p: p[0].mean)
            result[variant] = (role, est)
    return result


def load_section(result: LoadResult, inp: Inputs, out: Path) -> Section:
    spec = inp.spec
    scope = spec.checks.load_variants
    section = Section()
    if spec.checks.load:
        ranges = ", ".join(
            f"{role} {lo:.0%}-{hi:.0%}" for role, (lo, hi) in spec.checks.load.items()
        )
        which = f"in every run of {', '.join(scope)}" if scope else "in every run"
        section.checks.append(
            f"Load: {which}, the mean utilisation of these relays (of the busiest "
            f"one, for 'busiest') is in range: {ranges}."
        )
    if not result.runs:
        return section
    summary = result.summary
    roles = [r for r in (*LOAD_ROLES, ALL_RELAYS) if any(k[1] == r for k in summary)]
    rows = []
    for variant in inp.variants:
        for role in roles:
            if (variant, role) in summary:
                mean, p90, busiest = summary[(variant, role)]
                rows.append([variant, role, _pct(mean), _pct(p90), _pct(busiest), str(mean.n)])
    section.lines += [
        "",
        "## Load",
        "",
        "How busy the relays were over the measured period: per second, the larger of "
        "the bytes a relay's tor read and wrote (oniontrace's BW events) over its link "
        "capacity; per run, the mean over a role's relays of their mean and of their "
        "90th percentile, and the busiest relay's mean (where one hop is the bottleneck, "
        "the mean over all can hide it); here the mean over seeds with a 95% interval "
        "cut at zero (not "
        "at 100%: tor's token bucket can burst past the link's rate within a second). "
        "A network whose "
        "relays sit near 0% is idle: mechanisms that act under load do not engage.",
        "",
        *table(
            ["variant", "relays", "mean utilisation", "p90 utilisation", "busiest", "seeds"],
            rows,
        ),
    ]
    bottlenecks = _bottlenecks(summary, inp.variants, [r for r in roles if r != ALL_RELAYS])
    if len({role for role, _ in bottlenecks.values()}) > 1 or any(
        r.startswith(CLIENT_RELAY) for r in roles
    ):
        section.lines += [
            "",
            "The bottleneck of each variant: the role whose relays were busiest on average.",
            "",
            *table(
                ["variant", "bottleneck", "mean utilisation"],
                [[v, role, _pct(est)] for v, (role, est) in bottlenecks.items()],
            ),
        ]
    shares = result.shares
    if shares:
        share_rows = [
            [variant, cls, _pct(est), str(est.n)]
            for variant in inp.variants
            for (v, cls), est in sorted(shares.items())
            if v == variant
        ]
        section.lines += [
            "",
            "Measured clients' share of their own access link: a client's average "
            "bandwidth (payload of its completed transfers over their times to last byte) "
            "over its download link; per seed the median over the class's clients, here "
            "the mean over seeds with a 95% interval cut to [0, 100%]. Near 100%, the "
            "access link and not Tor limits the client.",
            "",
            *table(["variant", "class", "share of access link", "seeds"], share_rows),
        ]
    return section
