"""The report's relay CPU section (runner.analyses.cpu), for local runs."""

from __future__ import annotations

from pathlib import Path

from runner.analyses.contract import Section
from runner.analyses.cpu import CpuResult
from runner.analyses.inputs import Inputs
from runner.report.markdown import table


def cpu_section(result: CpuResult, inp: Inputs, out: Path) -> Section:
    section = Section()
    if not result.measured:
        return section  # Shadow runs: no CPU to measure
    baseline, found = result.baseline, result.relays
    section.lines += [
        "",
        "## Relay CPU",
        "",
        "CPU seconds (user and system) of each relay's tor over the measured period, "
        "on the local backend, where every tor is a real process on this machine's cores "
        "(under Shadow CPU time is not modelled). Per run, the mean over a role's relays; "
        "here the mean over seeds with a 95% interval cut at zero, and the change against "
        f"{baseline}, paired by seed, on the log scale.",
        "",
        *table(
            ["variant", "relays", "CPU seconds per relay", f"change vs {baseline}", "seeds"],
            [
                [
                    c.variant,
                    c.role,
                    c.seconds.format(digits=2, signed=False),
                    "–" if c.change is None else c.change.format(scale=100, unit="%"),
                    str(c.seconds.n),
                ]
                for c in found
            ],
        ),
    ]
    return section
