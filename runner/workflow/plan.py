"""A plan from a pilot's collected tables: computed, rendered, and written
beside them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.workflow.results import PlanResult

if TYPE_CHECKING:
    from runner.layout import Layout
    from runner.spec.model import Spec


def write_plan(spec: Spec, layout: Layout, target: Spec | None, cores: int) -> PlanResult:
    """The plan from the runs of ``spec`` (the pilot) for ``target`` (None:
    for the pilot's own spec), priced also on a machine of ``cores`` cores;
    written as plan.md and plan.json beside the pilot's tables."""
    from runner.analyses.client_bandwidth import per_client
    from runner.execute.placement import usable_cpus
    from runner.manifest import write_json_atomic
    from runner.planning.seed_plan import make_plan, plan_data
    from runner.report.seed_plan import render
    from runner.tables.schema import CLIENTS, RELAY_LOAD, TRANSFERS

    transfers = TRANSFERS.read(layout.transfers_csv)
    clients = CLIENTS.read_from(layout)
    plan = make_plan(
        spec,
        layout,
        transfers,
        per_client(transfers, clients),
        RELAY_LOAD.read_from(layout),
        target=target,
    )
    text = "\n".join(render(plan, len(usable_cpus()), cores))
    # A plan for another spec is named after it, so the pilot's own stays.
    stem = f"plan-{target.name}" if target else "plan"
    markdown = layout.experiment_dir / f"{stem}.md"
    data = layout.experiment_dir / f"{stem}.json"
    markdown.write_text(text + "\n")
    write_json_atomic(data, plan_data(plan))
    return PlanResult(0, plan, text, (markdown, data))
