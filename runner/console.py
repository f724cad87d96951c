"""Where the runner's messages to its user go, a line at a time: every
stage speaks through a Console it is handed, never through print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass


def _stdout(text: str) -> None:
    print(text, flush=True)


def _stderr(text: str) -> None:
    # Looked up at each line, so that a redirected sys.stderr is followed.
    print(text, file=sys.stderr, flush=True)


def _nowhere(text: str) -> None:
    pass


@dataclass(frozen=True)
class Console:
    """What an experiment did (``out``) and what went wrong (``err``).

    The steps of a workflow speak as they finish (a seed round's runs,
    then its tables), so their lines go here as they come rather than in
    the result at the end. The command line prints them, as a notebook
    does by default; ``Console.quiet()`` drops them, and a test may
    collect them."""

    out: Callable[[str], None] = _stdout
    err: Callable[[str], None] = _stderr

    @classmethod
    def quiet(cls) -> Console:
        return cls(_nowhere, _nowhere)


# The command line's: each line to stdout or stderr as it comes. The
# default of the stages that speak while they work (a run's placement, a
# build's steps), for callers that hand in no console of their own.
TERMINAL = Console()
