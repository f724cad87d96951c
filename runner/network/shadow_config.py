"""The ``shadow.yaml`` of one run (Shadow 3.x configuration)."""

from __future__ import annotations

from typing import Any

from runner.layout import SHADOW_DATA, SHADOW_TEMPLATE
from runner.network.plan import NetworkPlan
from runner.network.schedule import Process
from runner.units import format_bandwidth_for_shadow

GRAPH_FILE = "conf/network.gml"
# Every program's clock zone, named: without TZ, glibc and GLib look at
# /etc/localtime again for each timestamp they format (two stat calls and a
# readlink per log line of tgen and oniontrace, each a system call Shadow
# handles: 9% of a ci-small run's CPU, bench/results.md "Cost profile"), and
# the logs' local times would follow the zone of the machine that ran them.
ENVIRONMENT = {"TZ": "UTC"}


def shadow_process(proc: Process, program_paths: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": program_paths[proc.program],
        "args": list(proc.args),
        "start_time": _ms(proc.start),
        "expected_final_state": "running",
        "environment": dict(ENVIRONMENT),
    }
    if proc.stop is not None:
        # tgen has no SIGTERM handler: the signal ends it.
        entry["shutdown_time"] = _ms(proc.stop)
        entry["expected_final_state"] = {"signaled": "SIGTERM"}
    elif proc.ends:
        # A client that stops after its cycles: one still running when the
        # simulation stops had too little time, and Shadow says so.
        entry["expected_final_state"] = {"exited": 0}
    return entry


def _ms(seconds: float) -> str:
    return f"{int(seconds)} s" if float(seconds).is_integer() else f"{round(seconds * 1000)} ms"


def shadow_config(
    plan: NetworkPlan,
    processes: dict[str, list[Process]],
    program_paths: dict[str, str],
    bootstrap: float,
    stop_time: float,
    seed: int,
    parallelism: int,
) -> dict[str, Any]:
    hosts = {}
    for host in plan.hosts:
        hosts[host.name] = {
            "network_node_id": host.node_id,
            "ip_addr": host.ip,
            "bandwidth_down": format_bandwidth_for_shadow(host.bandwidth_down),
            "bandwidth_up": format_bandwidth_for_shadow(host.bandwidth_up),
            "processes": [shadow_process(p, program_paths) for p in processes[host.name]],
        }
    return {
        "general": {
            "stop_time": f"{int(stop_time)} s",
            # Shadow's randomness (and so tor's, tgen's) follows the run's seed.
            "seed": seed,
            # No bandwidth limits or loss while the network bootstraps.
            "bootstrap_end_time": f"{int(bootstrap)} s",
            "data_directory": SHADOW_DATA,
            "template_directory": SHADOW_TEMPLATE,
            "parallelism": parallelism,
            "progress": True,
            "heartbeat_interval": "60 s",
        },
        # Options that leave the simulation as it was (the hosts' logs
        # byte-identical) and save some of Shadow's own CPU where a run has
        # a core to itself (8% on a conflux-small run; none measured with a
        # run on every core: bench/results.md, "Shadow's options"): a worker
        # waiting for work sleeps instead of spinning in sched_yield, and
        # the memory manager maps the processes' memory (none of tor, tgen
        # and oniontrace forks).
        "experimental": {"use_worker_spinning": False, "use_memory_manager": True},
        "network": {
            "graph": {"type": "gml", "file": {"path": GRAPH_FILE}},
            "use_shortest_path": True,
        },
        "hosts": hosts,
    }
