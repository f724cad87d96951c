"""A failed check as a record: the run it fails (if one), the check, and
what went wrong. Runs are found by their key, never by parsing the text,
so ``--retry-failed`` retries a run however its failure is worded; the
text the report and the console show is ``str(failure)``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    variant: str | None  # None: an experiment-wide check
    seed: int | None  # None: not tied to one run (a check over a variant's seeds)
    check: str  # a short stable name: "paths", "load", "conflux-legs", ...
    message: str
    where: str | None = None  # within the run: a host, a log, "client → server"

    @property
    def run(self) -> tuple[str, int] | None:
        """The (variant, seed) it fails; None where it is no one run's."""
        if self.variant is None or self.seed is None:
            return None
        return (self.variant, self.seed)

    def subject(self) -> str:
        """What failed, as the report names it: ``variant/seed-k host``."""
        run = self.variant or ""
        if self.variant is not None and self.seed is not None:
            run += "/seed-" + str(self.seed)
        return " ".join(part for part in (run, self.where) if part)

    def __str__(self) -> str:
        subject = self.subject()
        return f"{subject}: {self.message}" if subject else self.message


def failures_by_run(failures: Iterable[Failure]) -> dict[tuple[str, int], list[Failure]]:
    """The failures tied to one run, by its (variant, seed)."""
    found: dict[tuple[str, int], list[Failure]] = {}
    for failure in failures:
        if failure.run is not None:
            found.setdefault(failure.run, []).append(failure)
    return found
