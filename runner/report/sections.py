"""The analyses every experiment has: transfers, circuits, the relays in the
consensus, their load and their CPU, each with its report section."""

from __future__ import annotations

from runner.report.base import Analysis
from runner.report.circuits import circuits_section
from runner.report.cpu import cpu_section
from runner.report.load import load_section
from runner.report.relays import relays_section
from runner.report.transfers import transfers_section
from runner.tables import schema

TRANSFERS = Analysis("transfers", (schema.TRANSFERS,), transfers_section)
CIRCUITS = Analysis("circuits", (schema.CIRCUITS,), circuits_section)
RELAYS = Analysis("relays in the consensus", (schema.RELAYS,), relays_section)
LOAD = Analysis("load", (schema.RELAY_LOAD,), load_section)
CPU = Analysis("relay CPU", (schema.PROCESS_CPU,), cpu_section)
