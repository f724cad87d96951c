"""The questions experiments ask, each an analysis: the tables it adds from
every run's logs, and the checks, report sections and plots it derives from
them. ``runner.tables.collect`` and ``runner.report.assemble`` loop over
ANALYSES and know none by name; the report shows them in this order.

A new question is a module of computations here, its section builder in
runner/report/, and one entry below (see docs/extending.md).
"""

from __future__ import annotations

from runner.analyses.base import Analysis, ReportInput, Section
from runner.analyses.congestion import is_congestion_experiment
from runner.report.circuits import circuits_section
from runner.report.clients import client_sections
from runner.report.congestion import congestion_sections
from runner.report.cpu import cpu_section
from runner.report.load import load_section
from runner.report.mctor import class_phases, mctor_sections
from runner.report.relays import relays_section
from runner.report.transfers import transfers_section
from runner.spec.model import Spec
from runner.tables import schema


def _clients(inp: ReportInput) -> Section:
    lines, failures, plots = client_sections(
        inp.layout, inp.variants, inp.transfers, inp.circuits, inp.out
    )
    return Section(failures=failures, lines=lines, plots=plots)


def _mctor(inp: ReportInput) -> Section:
    lines, failures, plots = mctor_sections(
        inp.spec, inp.layout, inp.transfers, inp.circuits, inp.measured_clients, inp.out
    )
    return Section(failures=failures, lines=lines, plots=plots)


def _asks_mctor(spec: Spec) -> bool:
    """A class runs rounds of parallel streams, or a variant expects MCTor."""
    expects = any(v.expect_mctor_connections is not None for v in spec.variants)
    return bool(class_phases(spec)) or expects


def _congestion(inp: ReportInput) -> Section:
    lines, failures, plots = congestion_sections(
        inp.spec, inp.layout, inp.transfers, set(inp.measured_clients), inp.out
    )
    return Section(failures=failures, lines=lines, plots=plots)


ANALYSES: tuple[Analysis, ...] = (
    Analysis("transfers", (schema.TRANSFERS,), transfers_section),
    Analysis("circuits and conflux legs", (schema.CIRCUITS,), circuits_section),
    Analysis("client bandwidth and rate limits", (schema.CLIENTS,), _clients),
    Analysis(
        "MCTor rounds and connections", (schema.SERVED, schema.PLACEMENTS), _mctor, _asks_mctor
    ),
    Analysis(
        "congestion windows, hop feedback, N23 and hop windows",
        (schema.HOP_FEEDBACK, schema.N23, schema.HOP_WINDOW),
        _congestion,
        lambda spec: is_congestion_experiment(spec.variants),
    ),
    Analysis("relays in the consensus", (schema.RELAYS,), relays_section),
    Analysis("load", (schema.RELAY_LOAD,), load_section),
    Analysis("relay CPU", (schema.PROCESS_CPU,), cpu_section),
)
