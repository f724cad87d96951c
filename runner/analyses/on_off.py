"""The check every patched mechanism gets: at work in every complete run of
a variant that switches it on, and absent from every other run, judged
from the counters its tors logged (summed per run)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from runner.checks import Failure

R = TypeVar("R")


class _Named(Protocol):
    @property
    def name(self) -> str: ...


V = TypeVar("V", bound=_Named)


def on_off_failures(
    check: str,
    variants: Sequence[V],
    complete_runs: set[tuple[str, int]],
    runs: Mapping[tuple[str, int], R],
    is_on: Callable[[V], bool],
    when_on: Callable[[R | None], str | None],
    when_off: Callable[[R | None], str | None],
) -> list[Failure]:
    """A failure of ``check`` for each complete run where the mechanism is
    on and ``when_on`` finds it idle, or off and ``when_off`` finds it at
    work; ``runs``: each run's counters (None where none was logged)."""
    failures = []
    for variant in variants:
        for seed in sorted(s for v, s in complete_runs if v == variant.name):
            run = runs.get((variant.name, seed))
            problem = when_on(run) if is_on(variant) else when_off(run)
            if problem:
                failures.append(Failure(variant.name, seed, check, problem))
    return failures
