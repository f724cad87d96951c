"""MCTor's analysis (the registry lists it: runner.experiments.registry)."""

from __future__ import annotations

from runner.analyses.contract import Analysis
from runner.analyses.workload_rounds import class_phases
from runner.experiments.mctor.compute import mctor_result
from runner.experiments.mctor.report import mctor_sections
from runner.experiments.mctor.tables import PLACEMENTS
from runner.spec.model import Spec
from runner.tables.schema import SERVED


def _asks_mctor(spec: Spec) -> bool:
    """A class runs rounds of parallel streams, or a variant expects MCTor."""
    expects = any("mctor_connections" in v.expect for v in spec.variants)
    return bool(class_phases(spec)) or expects


ANALYSES = (
    Analysis(
        "MCTor rounds and connections",
        (SERVED, PLACEMENTS),
        mctor_result,
        mctor_sections,
        _asks_mctor,
    ),
)
