"""The congestion mechanisms' analysis (the registry lists it: runner.experiments.registry)."""

from __future__ import annotations

from runner.analyses.contract import Analysis
from runner.experiments.congestion.compute import congestion_result
from runner.experiments.congestion.mechanisms import is_congestion_experiment
from runner.experiments.congestion.report import congestion_sections
from runner.experiments.congestion.tables import CIRCUIT_WINDOWS, HOP_FEEDBACK, HOP_WINDOW, N23
from runner.spec.model import Spec


def _asks(spec: Spec) -> bool:
    return is_congestion_experiment(spec.variants)


ANALYSES = (
    Analysis(
        "congestion windows, hop feedback, N23 and hop windows",
        (HOP_FEEDBACK, N23, HOP_WINDOW, CIRCUIT_WINDOWS),
        congestion_result,
        congestion_sections,
        _asks,
    ),
)
