"""Regression policy: how wide a baseline's bands are on each backend, and
what a baseline records of where it came from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.analyses.regress import LOCAL_ABSOLUTE_SLACK_S, LOCAL_FACTOR_BAND

if TYPE_CHECKING:
    from runner.analyses.regress import Verdict
    from runner.network.backends import Backend
    from runner.spec.model import Spec
    from runner.tables.schema import TransferRow


def tolerance(backend: Backend) -> tuple[float | None, float]:
    """The bands' factor (None: the default relative bands) and absolute
    slack in seconds for a baseline of ``backend``'s runs. Real-time (not
    simulated) timings have no network model and depend on the host: only
    gross changes count there; the experiment's own checks still apply."""
    if backend.simulated:
        return None, 0.0
    return LOCAL_FACTOR_BAND, LOCAL_ABSOLUTE_SLACK_S


def baseline(spec: Spec, backend: Backend, rows: list[TransferRow]) -> dict[str, Any]:
    """A baseline of ``rows`` (the experiment's transfers), with the spec,
    backend and program versions it was measured with."""
    from runner.analyses.regress import make_baseline
    from runner.execute.run_all import resolve_tools

    tools = resolve_tools(spec, backend)
    factor, slack_s = tolerance(backend)
    provenance = {"spec_sha256": spec.sha256, "backend": backend.name, "versions": tools.versions}
    variants = [v.name for v in spec.variants]
    return make_baseline(rows, variants, spec.name, provenance, factor, slack_s)


def check(spec: Spec, rows: list[TransferRow], path: Path) -> tuple[str | None, list[Verdict]]:
    """What the baseline at ``path`` says of its provenance if it is not
    this spec's (None if it is), and a verdict per metric it lists."""
    from runner.analyses.regress import check_against, provenance_note

    note = provenance_note(path, spec.sha256)
    return note, check_against(rows, [v.name for v in spec.variants], path)
