"""The confirmatory family: one test per published claim, its hypotheses in
a committed order, Holm's step-down across claims.

A claim is one confirmatory test. Its hypotheses (the claim pooled over its
sizes, or its sizes one by one) are tested in the order the spec lists
them, a fixed sequence: the first at the claim's level; once it is decided
its level passes to the next, and so on; a hypothesis after one still
undecided is not tested (*gated*). When a claim's last hypothesis is
decided its level is shared equally by the claims still open. Claims start
at alpha / K each (K claims). This is the graphical procedure of Bretz,
Maurer, Brannath and Posch (Statistics in Medicine 28, 2009) with each
claim a chain and the end of every chain passing to the others' heads; for
chains of one hypothesis it is Holm's step-down over the claims. It holds
the family-wise error rate at alpha for any dependence between claims,
where each interval at level w errs at most w (``tests/test_family.py``
checks the whole rule by simulation, with skewed seeds).

Hypotheses that test no claim (``extension:``) and claim hypotheses the
spec sets outside the family (``exploratory:``) are read at alpha each.

The rule is written once, on arrays: a row is one experiment (the report's
answers are one row; the plan's simulation thousands), and ``decides``
says, for some rows, whether one hypothesis is decisive at each row's level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from runner.spec.hypotheses import Hypothesis

CONFIRMATORY = "confirmatory"  # tests a published claim, in the family
EXPLORATORY = "exploratory"  # the project's own question, or a claim set outside


def family(h: Hypothesis) -> str:
    """Whether a hypothesis is in the experiment's family."""
    return CONFIRMATORY if h.claim is not None and not h.exploratory else EXPLORATORY


@dataclass(frozen=True)
class FamilyShape:
    """The family's shape: per claim (in the order claims first appear),
    its confirmatory hypotheses' indices in their committed order; and the
    exploratory hypotheses' indices."""

    claims: tuple[tuple[int, ...], ...]
    exploratory: tuple[int, ...]

    @property
    def size(self) -> int:
        return sum(len(chain) for chain in self.claims) + len(self.exploratory)


def layout_of(hypotheses: Sequence[Hypothesis]) -> FamilyShape:
    chains: dict[str, list[int]] = {}
    exploratory = []
    for i, h in enumerate(hypotheses):
        if family(h) == CONFIRMATORY:
            assert h.claim is not None
            chains.setdefault(h.claim.id, []).append(i)
        else:
            exploratory.append(i)
    return FamilyShape(tuple(tuple(c) for c in chains.values()), tuple(exploratory))


def first_level(layout: FamilyShape, index: int, alpha: float) -> float:
    """A hypothesis's level at the family's first step: alpha / K for a
    claim's hypothesis (its head's level, which a gated one inherits),
    alpha for an exploratory one."""
    if index in layout.exploratory:
        return alpha
    return alpha / len(layout.claims)


# (rows, hypothesis index, each row's level) -> which rows it is decisive in
Decides = Callable[[np.ndarray, int, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class FamilyOutcome:
    """Per row and hypothesis: decided, the level it was read at (where it
    was decided, or its level at the end), and gated (not reached)."""

    decided: np.ndarray  # bool (rows, hypotheses)
    level: np.ndarray  # float (rows, hypotheses)
    gated: np.ndarray  # bool (rows, hypotheses)


def run_family(layout: FamilyShape, decides: Decides, rows: int, alpha: float) -> FamilyOutcome:
    """The rule over ``rows`` experiments at once."""
    size = layout.size
    decided = np.zeros((rows, size), dtype=bool)
    level = np.zeros((rows, size))
    every = np.arange(rows)
    for j in layout.exploratory:
        level[:, j] = alpha
        decided[:, j] = decides(every, j, level[:, j])
    count = len(layout.claims)
    if not count:
        return FamilyOutcome(decided, level, np.zeros_like(decided))
    head = np.zeros((rows, count), dtype=int)  # position of each claim's next test
    weight = np.full((rows, count), alpha / count)
    lengths = np.array([len(chain) for chain in layout.claims])
    changed = np.ones(rows, dtype=bool)
    while changed.any():
        moving = np.flatnonzero(changed)
        changed[:] = False
        for c, chain in enumerate(layout.claims):
            for position, j in enumerate(chain):
                at = moving[head[moving, c] == position]
                if not len(at):
                    continue
                level[at, j] = weight[at, c]
                hit = at[decides(at, j, weight[at, c])]
                decided[hit, j] = True
                head[hit, c] += 1
                changed[hit] = True
        _pass_on_finished(head, weight, lengths)
    gated = np.zeros_like(decided)
    for c, chain in enumerate(layout.claims):
        for position, j in enumerate(chain):
            later = head[:, c] < position
            gated[later, j] = True
            level[later, j] = weight[later, c]
    return FamilyOutcome(decided, level, gated)


def _pass_on_finished(head: np.ndarray, weight: np.ndarray, lengths: np.ndarray) -> None:
    """A claim whose chain is decided to its end shares its level equally
    among the rows' claims still open."""
    finished = (head >= lengths) & (weight > 0)
    if not finished.any():
        return
    freed = np.where(finished, weight, 0.0).sum(axis=1)
    weight[finished] = 0.0
    still_open = head < lengths
    counts = still_open.sum(axis=1)
    share = np.divide(freed, counts, out=np.zeros_like(freed), where=counts > 0)
    weight += still_open * share[:, None]
