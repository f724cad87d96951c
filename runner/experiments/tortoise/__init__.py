"""Tortoise: relays rate-limit clients that are not relays
(tor-patches/0002). Its analysis gives each client's average bandwidth by
group and checks that the limits held."""

from __future__ import annotations

from runner.experiments.tortoise.report import client_sections
from runner.report.base import Analysis, ReportInput, Section
from runner.tables.schema import CLIENTS


def _clients(inp: ReportInput) -> Section:
    lines, failures, plots = client_sections(
        inp.layout, inp.variants, inp.transfers, inp.circuits, inp.out
    )
    return Section(failures=failures, lines=lines, plots=plots)


ANALYSES = (Analysis("client bandwidth and rate limits", (CLIENTS,), _clients),)
