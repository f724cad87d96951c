"""What every analysis starts from."""

from __future__ import annotations

from dataclasses import dataclass

from runner.layout import Layout
from runner.spec.model import Spec
from runner.tables.schema import CircuitRow, TransferRow


@dataclass(frozen=True)
class Inputs:
    """The spec, where its results are, and the tables most analyses read."""

    spec: Spec
    layout: Layout
    transfers: list[TransferRow]
    circuits: list[CircuitRow]
    # (variant, seed) of each complete run -> its measured (host, class) pairs
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]]

    @property
    def variants(self) -> list[str]:
        return [v.name for v in self.spec.variants]
