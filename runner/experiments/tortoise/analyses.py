"""Tortoise's analysis (the registry lists it: runner.experiments.registry)."""

from __future__ import annotations

from runner.analyses.contract import Analysis
from runner.experiments.tortoise.limits import clients_result
from runner.experiments.tortoise.report import clients_and_limits_section
from runner.tables.schema import CLIENTS

ANALYSES = (
    Analysis(
        "client bandwidth and rate limits", (CLIENTS,), clients_result, clients_and_limits_section
    ),
)
