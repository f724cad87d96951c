"""Each backend's execution: the one registry of backends is
``runner.network.backends.BACKENDS``; this maps each of its backends, by
name, to how the execution stage runs it (``runner.execute.execution``).
The network layer cannot know its executions (they sit above it), so they
are found here, and a backend without one is an error that names it."""

from __future__ import annotations

from runner.execute.execution import Execution
from runner.execute.local.execution import LocalExecution
from runner.execute.simulate import ShadowExecution
from runner.network.backends import BACKENDS, LOCAL, SHADOW, Backend

EXECUTIONS: dict[str, Execution] = {SHADOW.name: ShadowExecution(), LOCAL.name: LocalExecution()}


class NoExecution(LookupError):
    """A backend that the execution stage does not know how to run."""


def execution(backend: Backend) -> Execution:
    """How ``backend`` runs; NoExecution, naming it, where none is registered."""
    try:
        return EXECUTIONS[backend.name]
    except KeyError:
        raise NoExecution(
            f"backend {backend.name!r} has no execution: add one to EXECUTIONS in "
            f"{__name__} (backends: {', '.join(sorted(BACKENDS))})"
        ) from None
