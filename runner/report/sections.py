"""The analyses every experiment has: transfers, the relays' load and
their CPU, each with its report section."""

from __future__ import annotations

from runner.analyses.cpu import cpu_result
from runner.analyses.load import load_result
from runner.analyses.transfers import transfers_result
from runner.report.base import Analysis
from runner.report.cpu import cpu_section
from runner.report.load import load_section
from runner.report.transfers import transfers_section
from runner.tables import schema

TRANSFERS = Analysis("transfers", (schema.TRANSFERS,), transfers_result, transfers_section)
LOAD = Analysis("load", (schema.RELAY_LOAD,), load_result, load_section)
CPU = Analysis("relay CPU", (schema.PROCESS_CPU,), cpu_result, cpu_section)
