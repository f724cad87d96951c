"""MCTor: several connections between adjacent relays and several circuits
per client (tor-patches/0003). Its analysis gives the rounds of parallel
streams by variant and checks the connections and circuits on the path."""

from __future__ import annotations

from runner.analyses.workload_rounds import class_phases
from runner.experiments.mctor.analysis import mctor_result
from runner.experiments.mctor.report import mctor_sections
from runner.experiments.mctor.tables import PLACEMENTS
from runner.report.base import Analysis
from runner.spec.expect import ExpectKey
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
# Connections between adjacent hops of a measured client's pinned path, and
# the circuits carrying its streams when apart from them (MCTorCircuits).
EXPECT_KEYS = (
    ExpectKey("mctor_connections", minimum=1, maximum=16),
    ExpectKey(
        "mctor_circuits",
        minimum=1,
        maximum=16,
        needs="mctor_connections",
        why_needed="the connections the circuits share",
    ),
)
