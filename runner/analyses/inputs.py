"""What every analysis starts from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from runner.analyses.runs import measured_clients
from runner.layout import Layout
from runner.spec.model import Spec
from runner.tables.runs import RunRow
from runner.tables.schema import CIRCUITS, TRANSFERS, CircuitRow, TransferRow

# A comparison of the report's Changes table: variant, reference, client
# class, transfer size, metric.
ChangeKey = tuple[str, str, str, int, str]


@dataclass(frozen=True)
class Inputs:
    """The spec, where its results are, and the tables most analyses read."""

    spec: Spec
    layout: Layout
    transfers: list[TransferRow]
    circuits: list[CircuitRow]
    # (variant, seed) of each complete run -> its measured (host, class) pairs
    measured_clients: dict[tuple[str, int], list[tuple[str, str]]]
    # The comparisons a hypothesis answers -> (the hypothesis, its change as
    # the Answers section gives it): where a comparison is a hypothesis's,
    # the report shows that answer and no other interval for it. The
    # report's alone: it fills it from answers.json; analyze leaves it empty.
    answered: dict[ChangeKey, tuple[str, str]] = field(default_factory=dict)

    @property
    def variants(self) -> list[str]:
        return [v.name for v in self.spec.variants]


def collected_inputs(spec: Spec, layout: Layout, runs: Iterable[RunRow]) -> Inputs:
    """The Inputs of the collected tables, with the measured clients of ``runs``."""
    return Inputs(
        spec,
        layout,
        TRANSFERS.read(layout.transfers_csv),
        CIRCUITS.read(layout.circuits_csv),
        measured_clients(runs),
    )
