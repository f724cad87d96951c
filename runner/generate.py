"""Write one run directory: a complete private Tor network for (variant, seed).

Layout (as tornettools writes it, so its tools read our runs)::

    <run>/shadow.yaml
    <run>/conf/                      network.gml, tor.*.torrc, tgen.*.graphml
    <run>/shadow.data.template/hosts/<host>/   torrc-defaults, torrc, keys/, v3bw
    <run>/manifest.json

The directory is built under ``<run>.partial`` and renamed when complete.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runner.errors import RunError
from runner.layout import Layout, partial_path
from runner.manifest import STATUS_GENERATED, write_manifest
from runner.plan import Host, NetworkPlan, plan_network
from runner.schedule import Process, host_processes
from runner.shadow_config import SHADOW_TEMPLATE, shadow_config
from runner.spec import Spec, Variant
from runner.tor_keys import SHADOW_CERT_TIME, HostKeys, KeyTools, ensure_keys, install_keys
from runner.torrc import (
    ROLE_TORRC,
    Ports,
    authority_torrc,
    common_torrc,
    conf_file,
    host_defaults,
    host_torrc,
    v3bw,
)
from topologies.gml import to_shadow_gml
from workloads.models import MODELS, Endpoint, server_graph
from workloads.tgen import write_graphml

SHADOW_EPOCH = 946684800  # 2000-01-01 00:00:00 UTC, Shadow's simulated start
SERVER_GRAPH = "tgen.server.graphml"
PATCHED_TOR = "tor-patched"  # key of the patched build in Tools.paths


@dataclass(frozen=True)
class Tools:
    """Absolute paths and versions of the programs a run uses."""

    paths: dict[str, str]
    versions: dict[str, str | None]

    def key_tools(self) -> KeyTools:
        return KeyTools(self.paths["tor"], self.paths["tor-gencert"], self.paths.get("faketime"))

    def for_variant(self, variant: Variant) -> dict[str, str]:
        """Program paths for a variant's hosts: its tor build replaces ``tor``."""
        if variant.tor == "stock":
            return dict(self.paths)
        if PATCHED_TOR not in self.paths:
            raise RunError(f"variant {variant.name} needs the patched tor: run `make tor`")
        return self.paths | {"tor": self.paths[PATCHED_TOR]}


def workload_file(name: str) -> str:
    return f"tgen.{name}.graphml"


def _write_conf(
    conf: Path,
    spec: Spec,
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    variant: Variant,
    ports: Ports,
) -> None:
    conf.mkdir(parents=True)
    (conf / "network.gml").write_text(to_shadow_gml(plan.graph))
    (conf / "resolv.conf").write_text("nameserver 127.0.0.1\n")
    authorities = [(h, keys[h.name], ports) for h in plan.with_role("authority")]
    (conf / conf_file("common")).write_text(common_torrc(authorities))
    (conf / conf_file("authority")).write_text(authority_torrc(plan, keys, variant))
    for role, text in ROLE_TORRC.items():
        (conf / conf_file(role)).write_text(text)
    servers = tuple(f"{h.ip}:{spec.network.servers.port}" for h in plan.with_role("server"))
    endpoint = Endpoint(socks_proxy=f"127.0.0.1:{ports.socks_port}", peers=servers)
    for name, workload in spec.workloads.items():
        graph = MODELS[workload.model].build(workload.params, endpoint)
        write_graphml(graph, conf / workload_file(name))
    write_graphml(server_graph(spec.network.servers.port), conf / SERVER_GRAPH)


def _write_host(
    hosts_dir: Path,
    host: Host,
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    variant: Variant,
    ports: Ports,
    v3bw_time: int,
) -> None:
    home = hosts_dir / host.name
    home.mkdir(parents=True)
    if not host.runs_tor:
        return
    (home / "torrc-defaults").write_text(host_defaults(host))
    (home / "torrc").write_text(host_torrc(host, ports, variant))
    if host.is_relay:
        install_keys(keys[host.name], home)
    if host.role == "authority":
        (home / "v3bw").write_text(v3bw(plan, keys, v3bw_time))


def verify_torrc(tor: str, home: Path) -> None:
    """Run ``tor --verify-config`` on a host's torrc files, in its directory."""
    proc = subprocess.run(
        [tor, "--verify-config", "--defaults-torrc", "torrc-defaults", "-f", "torrc"],
        cwd=home,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [
            ln for ln in (proc.stdout + proc.stderr).splitlines() if "[warn]" in ln or "[err]" in ln
        ]
        raise RunError(f"{home}/torrc: tor --verify-config failed:\n" + "\n".join(lines[-8:]))


def host_manifest(plan: NetworkPlan, variant: Variant) -> dict[str, dict[str, Any]]:
    return {
        h.name: {
            "role": h.role,
            "class": h.cls,
            "variant": variant.name,
            "measured": h.measured,
            "workload": h.workload,
            "ip": h.ip,
            "region": h.region,
            "network_node_id": h.node_id,
            "bandwidth_up_bits": h.bandwidth_up,
            "bandwidth_down_bits": h.bandwidth_down,
        }
        for h in plan.hosts
    }


def generate_run(
    spec: Spec,
    variant: Variant,
    seed: int,
    layout: Layout,
    tools: Tools,
    command: list[str],
    parallelism: int = 1,
) -> Path:
    """Generate the Shadow run directory of (variant, seed); return its path."""
    started = time.monotonic()
    run_dir = layout.run_dir(variant.name, seed)
    work = partial_path(run_dir)
    if work.exists():
        shutil.rmtree(work)
    plan = plan_network(spec, seed)
    relays = [(h.name, h.role == "authority") for h in plan.hosts if h.is_relay]
    keys = ensure_keys(
        layout.key_store("shadow", seed), relays, tools.key_tools(), SHADOW_CERT_TIME
    )
    ports = Ports()
    programs = tools.for_variant(variant)
    try:
        _write_conf(work / "conf", spec, plan, keys, variant, ports)
        hosts_dir = work / SHADOW_TEMPLATE / "hosts"
        for host in plan.hosts:
            _write_host(hosts_dir, host, plan, keys, variant, ports, SHADOW_EPOCH + 1)
        tor_homes = [hosts_dir / h.name for h in plan.hosts if h.runs_tor]
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda home: verify_torrc(programs["tor"], home), tor_homes))

        processes: dict[str, list[Process]] = {
            h.name: host_processes(
                h,
                spec.duration.bootstrap,
                ports.control_port,
                f"../../../conf/{workload_file(h.workload)}" if h.workload else None,
                f"../../../conf/{SERVER_GRAPH}",
            )
            for h in plan.hosts
        }
        config = shadow_config(
            plan,
            processes,
            programs,
            spec.duration.bootstrap,
            spec.stop_time,
            seed,
            parallelism,
        )
        (work / "shadow.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        manifest = {
            "experiment": spec.name,
            "variant": variant.name,
            "seed": seed,
            "backend": "shadow",
            "clock_epoch": SHADOW_EPOCH,
            "status": STATUS_GENERATED,
            "spec": {"path": spec.path, "sha256": spec.sha256},
            "variant_settings": {
                "tor": variant.tor,
                "torrc": {k: list(v) for k, v in variant.torrc.items()},
                "consensus": variant.consensus,
            },
            "duration": {
                "bootstrap_s": spec.duration.bootstrap,
                "measure_s": spec.duration.measure,
            },
            "versions": tools.versions,
            "programs": programs,
            "command": command,
            "hosts": host_manifest(plan, variant),
            "phases": {"generate_s": round(time.monotonic() - started, 3)},
        }
        write_manifest(work, manifest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if run_dir.exists():
        shutil.rmtree(run_dir)
    work.rename(run_dir)
    return run_dir
