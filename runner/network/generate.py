"""Write one run directory: a complete private Tor network for (variant, seed).

Layout (as tornettools writes it, so its tools read our runs)::

    <run>/shadow.yaml
    <run>/conf/                      network.gml, tor.*.torrc, tgen.*.graphml
    <run>/shadow.data.template/hosts/<host>/   torrc-defaults, torrc, keys/, v3bw
    <run>/manifest.json

The directory is built under ``<run>.partial`` and renamed when complete.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import RunError
from runner.layout import SHADOW_TEMPLATE, Layout, partial_path
from runner.manifest import HostInfo, record_generated
from runner.network.backends import SHADOW, Backend
from runner.network.identity import run_identity
from runner.network.limits import relay_client_limit
from runner.network.mixing import torrc_sections, variant_plan
from runner.network.pinned_paths import PinnedPath, pinned_paths, pinned_torrc
from runner.network.plan import Host, NetworkPlan
from runner.network.schedule import Process, host_processes
from runner.network.tor_builds import MAKE_OF_BUILD, TOOL_OF_BUILD
from runner.network.tor_keys import HostKeys, KeyTools, ensure_keys, install_keys
from runner.network.torrc import (
    Ports,
    authority_torrc,
    common_torrc,
    conf_file,
    host_defaults,
    host_torrc,
    relay_rate,
    role_torrc,
    v3bw,
)
from runner.spec.model import Spec, Variant
from runner.spec.rule import rule_fingerprint
from topologies.gml import to_shadow_gml
from workloads.models import (
    MODELS,
    Endpoint,
    cross_traffic_files,
    cross_traffic_graph,
    server_graph,
)
from workloads.tgen import write_graphml

CLIENT_GRAPH = "tgen.graphml"  # in each client's host directory
SERVER_GRAPH = "tgen-server.graphml"  # in each server's host directory
CROSS_GRAPH = "tgen-cross.graphml"  # in a relay's host directory, with cross traffic


@dataclass(frozen=True)
class Tools:
    """Absolute paths and versions of the programs a run uses."""

    paths: dict[str, str]
    versions: dict[str, str | None]

    def key_tools(self) -> KeyTools:
        return KeyTools(self.paths["tor-gencert"], self.paths.get("faketime"))

    def for_variant(self, variant: Variant) -> dict[str, str]:
        """Program paths for a variant's hosts: its tor build replaces ``tor``."""
        if variant.tor == "stock":
            return dict(self.paths)
        build = TOOL_OF_BUILD[variant.tor]
        if build not in self.paths:
            raise RunError(
                f"variant {variant.name} needs the {variant.tor} tor: "
                f"run `{MAKE_OF_BUILD[variant.tor]}`"
            )
        return self.paths | {"tor": self.paths[build]}


def _write_conf(
    conf: Path,
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    variant: Variant,
    ports: dict[str, Ports],
    backend: Backend,
    server_port: int,
) -> None:
    conf.mkdir(parents=True)
    (conf / "network.gml").write_text(to_shadow_gml(plan.graph))
    (conf / "resolv.conf").write_text("nameserver 127.0.0.1\n")
    authorities = [(h, keys[h.name], ports[h.name]) for h in plan.with_role("authority")]
    # Hosts sharing this machine get closed control ports and exits that
    # reach only the network's servers; Shadow's network reaches nothing else.
    (conf / conf_file("common")).write_text(
        common_torrc(authorities, cookie_auth=backend.shares_machine)
    )
    (conf / conf_file("authority")).write_text(
        authority_torrc(plan, keys, variant, backend.voting_interval)
    )
    servers = [f"{s.ip}:{server_port}" for s in plan.with_role("server")]
    narrow = backend.shares_machine
    for role, text in role_torrc(servers if narrow else None, [server_port]).items():
        (conf / conf_file(role)).write_text(text)


def _write_host(
    hosts_dir: Path,
    host: Host,
    spec: Spec,
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    variant: Variant,
    ports: Ports,
    backend: Backend,
    v3bw_time: int,
    sections: list[str],
    pinned: list[str],
) -> None:
    home = hosts_dir / host.name
    home.mkdir(parents=True)
    server_port = backend.server_port(spec.network.servers.port)
    peers = tuple(f"{s.ip}:{server_port}" for s in plan.with_role("server"))
    if host.role == "server":
        write_graphml(server_graph(server_port), home / SERVER_GRAPH)
        # Servers read clients' packet models, and paced cross traffic's.
        _write_files(home, workload_files(spec) | cross_traffic_files(variant.cross_rate))
        return
    if host.workload is not None:
        workload = spec.workloads[host.workload]
        endpoint = Endpoint(
            socks_proxy=f"{backend.socks_bind(host)}:{ports.socks_port}",
            peers=peers,
            seed=random.Random(f"{spec.name}/tgen/{plan.seed}/{host.name}").randrange(1, 2**31),
        )
        write_graphml(MODELS[workload.model].build(workload.params, endpoint), home / CLIENT_GRAPH)
        _write_files(home, workload_files(spec, workload.name))
    (home / "torrc-defaults").write_text(host_defaults(host))
    torrc = host_torrc(
        host, ports, variant, backend.socks_bind(host), sections, backend.outbound_bind()
    )
    if pinned:
        torrc += f"# pinned path ({variant.pinned_path} legs): runner.network.pinned_paths\n"
        torrc += "".join(f"{line}\n" for line in pinned)
    (home / "torrc").write_text(torrc)
    cross = cross_flows(spec, variant, host)
    if cross:
        assert spec.network.cross_traffic is not None
        traffic = spec.network.cross_traffic
        graph = cross_traffic_graph(
            cross, traffic.size, traffic.direction, peers, variant.cross_rate
        )
        write_graphml(graph, home / CROSS_GRAPH)
        _write_files(home, cross_traffic_files(variant.cross_rate))
    if host.is_relay:
        install_keys(keys[host.name], home)
    if host.role == "authority":
        (home / "v3bw").write_text(v3bw(plan, keys, v3bw_time))


def cross_flows(spec: Spec, variant: Variant, host: Host) -> int:
    """How many cross-traffic flows ``host`` keeps going in ``variant``."""
    traffic = spec.network.cross_traffic
    if traffic is None or host.client_relay or host.role not in traffic.roles:
        return 0
    return traffic.flows if variant.cross_flows is None else variant.cross_flows


def cross_start(spec: Spec) -> list[tuple[float, float | None]]:
    """Cross traffic starts with the clients' traffic, when the bootstrap ends."""
    return [(spec.duration.bootstrap, None)]


def workload_files(spec: Spec, name: str | None = None) -> dict[str, str]:
    """The files beside the tgen graph that workload ``name`` needs (all the
    spec's workloads' when None): Markov models, for one."""
    files: dict[str, str] = {}
    for workload in spec.workloads.values():
        model = MODELS[workload.model]
        if (name is None or workload.name == name) and hasattr(model, "files"):
            files |= model.files(workload.params)
    return files


def _write_files(home: Path, files: dict[str, str]) -> None:
    for file_name, text in files.items():
        (home / file_name).write_text(text)


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


def client_sessions(
    spec: Spec, seed: int, host: Host, backend: Backend
) -> list[tuple[float, float | None]]:
    """When ``host``'s workload runs: the same for every variant of a seed."""
    if host.workload is None:
        return []
    workload = spec.workloads[host.workload]
    begin = spec.duration.bootstrap
    end = begin + backend.measure(spec)
    rng = random.Random(f"{spec.name}/sessions/{seed}/{host.name}")
    circuits = spec.network.circuits
    if circuits is not None and host.measured:
        # nstor's start times: each circuit's first request at a time
        # drawn uniformly, from a stream of its own.
        start = random.Random(f"{spec.name}/circuit-start/{seed}/{host.name}")
        begin += start.uniform(*circuits.start_within)
    return MODELS[workload.model].sessions(workload.params, rng, begin, end)


def _client_limit(host: Host, variant: Variant, sections: list[str]) -> dict[str, Any] | None:
    if not host.is_relay or host.role == "authority":
        return None
    lines = [line for section in sections for line in variant.torrc.get(section, ())]
    limit = relay_client_limit(lines, variant.consensus, relay_rate(host))
    if limit is None:
        return None
    return {"rate_bytes": limit.rate, "burst_bytes": limit.burst, "per_client": limit.per_client}


def host_records(
    plan: NetworkPlan,
    variant: Variant,
    sections: dict[str, list[str]],
    pinned: dict[str, PinnedPath] | None = None,
) -> dict[str, HostInfo]:
    records: dict[str, HostInfo] = {
        h.name: {
            "role": h.role,
            "class": h.cls,
            "variant": variant.name,
            "measured": h.measured,
            "workload": h.workload,
            "link": h.link,
            "client_relay": h.client_relay,
            "client_relay_as": h.client_relay_as if h.client_relay else None,
            "origin": h.origin,  # the measured relay it was drawn as, if any
            "torrc_sections": sections.get(h.name, []),
            # For relays: the limit they apply to non-relay clients, if any.
            "client_limit": _client_limit(h, variant, sections.get(h.name, [])),
            "ip": h.ip,
            "region": h.region,
            "network_node_id": h.node_id,
            "bandwidth_up_bits": h.bandwidth_up,
            "bandwidth_down_bits": h.bandwidth_down,
        }
        for h in plan.hosts
    }
    for name, path in (pinned or {}).items():
        records[name]["pinned_path"] = {
            "guards": list(path.guards),
            "middles": list(path.middles),
            "exits": list(path.exits),
        }
    return records


def generate_run(
    spec: Spec,
    variant: Variant,
    seed: int,
    layout: Layout,
    tools: Tools,
    command: list[str],
    parallelism: int = 1,
    backend: Backend = SHADOW,
) -> Path:
    """Generate the run directory of (variant, seed) for ``backend``; return it."""
    started = time.monotonic()
    run_dir = layout.run_dir(variant.name, seed)
    work = partial_path(run_dir)
    if work.exists():
        shutil.rmtree(work)
    plan = backend.plan(variant_plan(spec, variant, seed))
    sections = torrc_sections(spec, variant, plan)
    relays = [(h.name, h.role == "authority") for h in plan.hosts if h.is_relay]
    keys = ensure_keys(
        layout.key_store(backend.name, seed), seed, relays, tools.key_tools(), backend.cert_time
    )
    ports = {h.name: backend.ports(i) for i, h in enumerate(plan.hosts)}
    programs = tools.for_variant(variant)
    try:
        _write_network(work, spec, variant, plan, keys, ports, backend, sections, programs["tor"])
        processes = _processes(spec, variant, seed, plan, ports, backend)
        backend.write_processes(
            work, plan, processes, programs, spec, seed, parallelism, variant.name
        )
        generate_s = round(time.monotonic() - started, 3)
        _record(
            spec, variant, seed, backend, tools, programs, command, plan, sections, work, generate_s
        )
    except BaseException:
        # A half-written run directory is never left to be mistaken for one.
        shutil.rmtree(work, ignore_errors=True)
        raise
    if run_dir.exists():
        shutil.rmtree(run_dir)
    work.rename(run_dir)
    return run_dir


def _write_network(
    work: Path,
    spec: Spec,
    variant: Variant,
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    ports: dict[str, Ports],
    backend: Backend,
    sections: dict[str, list[str]],
    tor: str,
) -> None:
    """Write the network's shared configuration and each host's directory
    into ``work``, and have ``tor`` verify every host's torrc."""
    v3bw_time = backend.v3bw_time()
    _write_conf(
        work / "conf",
        plan,
        keys,
        variant,
        ports,
        backend,
        backend.server_port(spec.network.servers.port),
    )
    hosts_dir = work / SHADOW_TEMPLATE / "hosts"
    fingerprints = {name: k.fingerprint for name, k in keys.items()}
    pinned = {
        name: pinned_torrc(path, fingerprints)
        for name, path in pinned_paths(spec, variant, plan).items()
    }
    for host in plan.hosts:
        _write_host(
            hosts_dir,
            host,
            spec,
            plan,
            keys,
            variant,
            ports[host.name],
            backend,
            v3bw_time,
            sections.get(host.name, []),
            pinned.get(host.name, []),
        )
    tor_homes = [hosts_dir / h.name for h in plan.hosts if h.runs_tor]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda home: verify_torrc(tor, home), tor_homes))


def _processes(
    spec: Spec,
    variant: Variant,
    seed: int,
    plan: NetworkPlan,
    ports: dict[str, Ports],
    backend: Backend,
) -> dict[str, list[Process]]:
    """Which processes each host runs, and when."""
    return {
        h.name: host_processes(
            h,
            ports[h.name].control_port,
            CLIENT_GRAPH if h.workload else None,
            SERVER_GRAPH,
            client_sessions(spec, seed, h, backend) if h.workload else cross_start(spec),
            CROSS_GRAPH if cross_flows(spec, variant, h) else None,
            h.workload is not None and workload_ends(spec, h.workload),
        )
        for h in plan.hosts
    }


def workload_ends(spec: Spec, name: str) -> bool:
    """Whether the clients of workload ``name`` end on their own."""
    workload = spec.workloads[name]
    ends = getattr(MODELS[workload.model], "ends", None)
    return bool(ends and ends(workload.params))


def _record(
    spec: Spec,
    variant: Variant,
    seed: int,
    backend: Backend,
    tools: Tools,
    programs: dict[str, str],
    command: list[str],
    plan: NetworkPlan,
    sections: dict[str, list[str]],
    work: Path,
    generate_s: float,
) -> None:
    """Write the generated run's record: what it is, what made it and its hosts."""
    record_generated(
        work,
        experiment=spec.name,
        variant=variant.name,
        seed=seed,
        backend=backend.name,
        local_network=backend.host_network(),
        clock_epoch=backend.clock_epoch,
        spec_path=spec.path,
        spec_sha256=spec.sha256,
        identity=run_identity(spec, variant, seed, backend, tools.versions),
        variant_settings={
            "tor": variant.tor,
            "torrc": {k: list(v) for k, v in variant.torrc.items()},
            "consensus": variant.consensus,
            # Parameters measured from other runs of the seed, and how.
            "consensus_from": {
                param: {"rule": m.describe(), "value": variant.consensus.get(param)}
                for param, m in variant.consensus_from.items()
            },
        },
        bootstrap_s=spec.duration.bootstrap,
        measure_s=spec.measure_of(variant.name),
        versions=tools.versions,
        programs=programs,
        command=command,
        hosts=host_records(plan, variant, sections, pinned_paths(spec, variant, plan)),
        generate_s=generate_s,
        rule=rule_fingerprint(spec),
    )
