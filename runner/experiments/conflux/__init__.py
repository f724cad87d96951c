"""Conflux and ConfluxM: multipath circuits (tor-patches/0001). Its
analysis checks that each measured client linked conflux sets of the legs
its variant expects (``expect: {conflux_legs: N}``)."""

from __future__ import annotations

from runner.experiments.conflux.legs import legs_result
from runner.experiments.conflux.report import conflux_legs_section
from runner.report.base import Analysis
from runner.spec.expect import ExpectKey
from runner.tables.schema import CIRCUITS

ANALYSES = (Analysis("conflux legs", (CIRCUITS,), legs_result, conflux_legs_section),)
# 0: conflux must not be used; N: every linked set has N legs.
EXPECT_KEYS = (ExpectKey("conflux_legs", minimum=0, maximum=8),)
