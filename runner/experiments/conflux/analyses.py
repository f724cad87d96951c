"""Conflux's analyses (the registry lists them: runner.experiments.registry)."""

from __future__ import annotations

from runner.analyses.contract import Analysis
from runner.experiments.conflux.circuits import circuit_summaries
from runner.experiments.conflux.circuits_report import circuits_section
from runner.experiments.conflux.conflux_legs import legs_result
from runner.experiments.conflux.consensus import consensus_summaries
from runner.experiments.conflux.consensus_report import relays_section
from runner.experiments.conflux.legs_report import conflux_legs_section
from runner.tables.schema import CIRCUITS, RELAYS

CIRCUIT_ANALYSES = (
    Analysis("circuits", (CIRCUITS,), circuit_summaries, circuits_section),
    Analysis("conflux legs", (CIRCUITS,), legs_result, conflux_legs_section),
)
CONSENSUS = Analysis("relays in the consensus", (RELAYS,), consensus_summaries, relays_section)
