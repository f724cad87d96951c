"""Conflux and ConfluxM: multipath circuits (tor-patches/0001). Its
analyses: the circuits clients built and the conflux sets they linked; the
check that each measured client linked sets of the legs its variant
expects (``expect: {conflux_legs: N}``); and the relays of the last
consensus with the flags a leg needs. The report shows them for every
experiment (the registry places them), since every client builds
circuits on that consensus."""

from __future__ import annotations

from runner.experiments.conflux.circuits import circuit_summaries
from runner.experiments.conflux.circuits_report import circuits_section
from runner.experiments.conflux.consensus import consensus_summaries
from runner.experiments.conflux.consensus_report import relays_section
from runner.experiments.conflux.legs import legs_result
from runner.experiments.conflux.legs_report import conflux_legs_section
from runner.report.base import Analysis
from runner.spec.expect import ExpectKey
from runner.tables.schema import CIRCUITS, RELAYS

CIRCUIT_ANALYSES = (
    Analysis("circuits", (CIRCUITS,), circuit_summaries, circuits_section),
    Analysis("conflux legs", (CIRCUITS,), legs_result, conflux_legs_section),
)
CONSENSUS = Analysis("relays in the consensus", (RELAYS,), consensus_summaries, relays_section)
# 0: conflux must not be used; N: every linked set has N legs.
EXPECT_KEYS = (ExpectKey("conflux_legs", minimum=0, maximum=8),)
