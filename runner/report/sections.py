"""The analyses every experiment has: transfers, the relays' load and
their CPU, the relay positions each variant's traffic runs through, and
the keep-up check where a spec asks for it, each with its report section."""

from __future__ import annotations

from runner.analyses.contract import Analysis
from runner.analyses.cpu import cpu_result
from runner.analyses.keep_up import keep_up_result
from runner.analyses.load import load_result
from runner.analyses.paths import paths_result
from runner.analyses.pinned import pinned_result
from runner.analyses.transfers import transfers_result
from runner.report.cpu import cpu_section
from runner.report.keep_up import keep_up_section
from runner.report.load import load_section
from runner.report.paths import paths_section
from runner.report.pinned import pinned_section
from runner.report.transfers import transfers_section
from runner.spec.model import Spec
from runner.tables import schema

TRANSFERS = Analysis("transfers", (schema.TRANSFERS,), transfers_result, transfers_section)
LOAD = Analysis("load", (schema.RELAY_LOAD,), load_result, load_section)
PATHS = Analysis("paths", (schema.CIRCUITS, schema.RELAY_LOAD), paths_result, paths_section)


def _pins_paths(spec: Spec) -> bool:
    return any(v.pinned_path > 0 for v in spec.variants)


PINNED = Analysis("pinned paths", (schema.CIRCUITS,), pinned_result, pinned_section, _pins_paths)
CPU = Analysis("relay CPU", (schema.PROCESS_CPU,), cpu_result, cpu_section)


def _asks_keep_up(spec: Spec) -> bool:
    return bool(spec.checks.keep_up)


KEEP_UP = Analysis(
    "keep up", (schema.RELAY_LOAD, schema.CLIENTS), keep_up_result, keep_up_section, _asks_keep_up
)
