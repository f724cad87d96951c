"""The analyses every experiment has: transfers, circuits, the relays in the
consensus, their load and their CPU, each with its report section."""

from __future__ import annotations

from runner.analyses.circuits import circuit_summaries
from runner.analyses.cpu import cpu_result
from runner.analyses.load import load_result
from runner.analyses.relays import consensus_summaries
from runner.analyses.transfers import transfers_result
from runner.report.base import Analysis
from runner.report.circuits import circuits_section
from runner.report.cpu import cpu_section
from runner.report.load import load_section
from runner.report.relays import relays_section
from runner.report.transfers import transfers_section
from runner.tables import schema

TRANSFERS = Analysis("transfers", (schema.TRANSFERS,), transfers_result, transfers_section)
CIRCUITS = Analysis("circuits", (schema.CIRCUITS,), circuit_summaries, circuits_section)
RELAYS = Analysis("relays in the consensus", (schema.RELAYS,), consensus_summaries, relays_section)
LOAD = Analysis("load", (schema.RELAY_LOAD,), load_result, load_section)
CPU = Analysis("relay CPU", (schema.PROCESS_CPU,), cpu_result, cpu_section)
