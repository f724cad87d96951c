"""The torrc files of a private test network.

Each tor host gets ``torrc-defaults`` (includes of the shared files in
``conf/``: the common settings and its role's settings) and ``torrc`` (its
own name, address, ports and bandwidth, then the variant's lines for its
role and class). Later lines win in tor, so variant lines override defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.network.plan import Host, NetworkPlan
from runner.network.tor_keys import HostKeys
from runner.spec.model import Variant, client_sections

CONF_FROM_HOST = "../../../conf"  # hosts run in <run>/shadow.data/hosts/<name>/


@dataclass(frozen=True)
class Ports:
    or_port: int = 9001
    dir_port: int = 8080
    socks_port: int = 9050
    control_port: int = 9051


def conf_file(role: str) -> str:
    return f"tor.{role}.torrc"


CONTROL_COOKIE = "control_auth_cookie"  # in each host's directory, with cookie auth


def common_torrc(
    authorities: list[tuple[Host, HostKeys, Ports]], geoip: bool = False, cookie_auth: bool = False
) -> str:
    """Settings of every tor. ``cookie_auth``: control ports take only a
    controller that reads the host's cookie file (hosts sharing a machine)."""
    lines = [
        f"DirAuthority {h.name} orport={p.or_port} no-v2 v3ident={k.v3ident} "
        f"{h.ip}:{p.dir_port} {k.fingerprint}"
        for h, k, p in authorities
    ]
    lines += [
        "TestingTorNetwork 1",
        # Turned on by TestingTorNetwork; unused here and costly in memory.
        "TestingEnableCellStatsEvent 0",
        "DataDirectory .",
        f"ServerDNSResolvConfFile {CONF_FROM_HOST}/resolv.conf",
        "ServerDNSAllowBrokenConfig 1",
        "ServerDNSDetectHijacking 0",
        "ServerDNSTestAddresses " + ",".join(h.ip for h, _, _ in authorities),
        "AssumeReachable 1",
        "NumCPUs 1",
        "Log notice stdout",
        "SafeLogging 0",
        "LogTimeGranularity 1",
        "DisableDebuggerAttachment 0",
        "CellStatistics 0",
        "PaddingStatistics 0",
        "DirReqStatistics 0",
        "EntryStatistics 0",
        "ExitPortStatistics 0",
        "ConnDirectionStatistics 0",
        "HiddenServiceStatistics 0",
        "ExtraInfoStatistics 0",
        # Path bias and DoS defences misfire in a network of a handful of relays.
        "PathBiasUseThreshold 10000",
        "PathBiasCircThreshold 10000",
        "DoSCircuitCreationEnabled 0",
        "DoSConnectionEnabled 0",
        "DoSRefuseSingleHopClientRendezvous 0",
        "GeoIPFile" if not geoip else "",
        "GeoIPv6File",
        "ProtocolWarnings 1",
        "CookieAuthentication 1" if cookie_auth else "",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def authority_torrc(
    plan: NetworkPlan,
    keys: dict[str, HostKeys],
    variant: Variant,
    voting_interval: int = 60,
) -> str:
    guards = [keys[h.name].fingerprint for h in plan.in_position("guard")]
    exits = [keys[h.name].fingerprint for h in plan.in_position("exit")]
    delay = min(5, (voting_interval - 1) // 4)
    lines = [
        "AuthoritativeDirectory 1",
        "V3AuthoritativeDirectory 1",
        "V3BandwidthsFile v3bw",
        # A first consensus within a minute, then one every voting interval.
        "TestingV3AuthInitialVotingInterval 20 seconds",
        "TestingV3AuthInitialVoteDelay 4 seconds",
        "TestingV3AuthInitialDistDelay 4 seconds",
        f"V3AuthVotingInterval {voting_interval} seconds",
        # tor wants the two delays under half the interval.
        f"V3AuthVoteDelay {delay} seconds",
        f"V3AuthDistDelay {delay} seconds",
        "TestingDirAuthVoteGuard " + ",".join(guards),
        "TestingDirAuthVoteGuardIsStrict 1",
        "TestingDirAuthVoteExit " + ",".join(exits),
        "TestingDirAuthVoteExitIsStrict 1",
        'ExitPolicy "reject *:*"',
    ]
    # Stable goes to relays whose uptime reaches the median, unless they have
    # been up this long. Relays start by role (runner.network.schedule), so
    # without this the middles, started last, never reach the median and are
    # never Stable; Conflux legs need Stable relays, and every leg then ran
    # guard -> guard -> exit. In real time relays start seconds apart in an
    # order that varies, which made Stable a matter of chance. Every relay
    # is Stable from the first vote instead, on every backend (the consensus
    # check, runner.experiments.conflux.consensus, verifies it per run).
    lines.append("AuthDirVoteStableGuaranteeMinUptime 0")
    # Fast goes to relays above the slowest eighth, unless they reach this
    # guarantee (100 KB/s by default): a network that makes one relay slow on
    # purpose (a congested middle) would otherwise leave it without Fast, and
    # general circuits never use it. Every relay of 1 KB/s or more is Fast
    # instead (0 would switch the guarantee off, not lower it).
    lines.append("AuthDirFastGuarantee 1 KBytes")
    if variant.consensus:
        params = " ".join(f"{k}={v}" for k, v in sorted(variant.consensus.items()))
        lines.append(f"ConsensusParams {params}")
    return "\n".join(lines) + "\n"


def role_torrc(
    servers: list[str] | None = None, server_ports: list[int] | None = None
) -> dict[str, str]:
    """Each role's settings. Exits accept every address when ``servers`` is
    None (a simulated network reaches nothing beyond itself), else only the
    network's own servers (``address:port``), for hosts sharing a real machine.

    Clients choose exits by microdescriptor, which keeps only the ports a
    policy accepts for every address; a policy naming the servers alone would
    read "reject 1-65535" there and no client would use the exit. So after the
    servers come: every private and local address rejected, then the servers'
    ports for the remaining (public) addresses, which the exit can never
    reach, since its outbound connections are bound to its own loopback
    address (``OutboundBindAddressExit``, in its torrc) and Linux does not
    route a loopback source off the machine. Authorities vote the Exit flag
    (TestingDirAuthVoteExit), so the policy changes no flag or weight."""
    if servers is None:
        return ROLE_TORRC
    lines = ["ExitPolicyRejectLocalInterfaces 1"]
    lines += [f"ExitPolicy accept {s}" for s in servers]
    lines += ["ExitPolicy reject private:*"]
    lines += [f"ExitPolicy accept *:{p}" for p in sorted(set(server_ports or ()))]
    lines += ['ExitPolicy "reject *:*"']
    policy = "\n".join(lines) + "\n"
    return ROLE_TORRC | {"exitguard": policy, "exit": policy}


ROLE_TORRC = {
    "relay": "SocksPort 0\n",
    "exitguard": 'ExitPolicy "accept *:*"\n',
    "exit": 'ExitPolicy "accept *:*"\n',
    "guard": 'ExitPolicy "reject *:*"\n',
    "middle": 'ExitPolicy "reject *:*"\n',
    "client": "ClientOnly 1\n",
}


def defaults_includes(host: Host) -> list[str]:
    """The shared files a host's torrc-defaults includes, in order."""
    files = [conf_file("common")]
    if host.role == "authority":
        files += [conf_file("relay"), conf_file("authority")]
    elif host.client_relay:  # a client's own relay, in the variant's position
        files += [conf_file("relay"), conf_file(host.client_relay_as)]
    elif host.is_relay:
        files += [conf_file("relay"), conf_file(host.role)]
    else:
        files += [conf_file("client")]
    return files


def host_defaults(host: Host) -> str:
    return "".join(f"%include {CONF_FROM_HOST}/{f}\n" for f in defaults_includes(host))


def variant_roles(host: Host) -> list[str]:
    """Which of a variant's torrc sections apply to ``host``, in order."""
    if host.role == "authority":
        return ["all", "authority"]
    if host.client_relay:
        return ["all", "relay", "client", host.cls]
    if host.is_relay:
        return ["all", "relay", host.role]
    return client_sections(host.cls)


def relay_rate(host: Host) -> int:
    """The bytes/s a relay gives the network: its uplink, at least tor's
    minimum BandwidthRate."""
    return max(76800, host.bandwidth_up // 8)


def host_torrc(
    host: Host,
    ports: Ports,
    variant: Variant,
    socks_bind: str = "127.0.0.1",
    sections: list[str] | None = None,
    bind: str | None = None,
) -> str:
    """A host's own torrc: identity, ports, bandwidth, then the variant's lines.

    ``socks_bind`` is where a client's SOCKS port listens (its own loopback
    under Shadow; its own address when hosts share a machine). The control
    port is always on 127.0.0.1, where oniontrace connects. ``sections``
    are the variant's sections for this host (default: all its roles').
    ``bind``: whose outbound connections leave from the host's own address.
    ``exit``: an exit's, from its loopback address, so they cannot leave the
    machine (see role_torrc); tor binds no connection to a loopback address,
    so on the shared loopback every host reaches relays from 127.0.0.1.
    ``all``: every host's, in a network namespace of the run's own, so
    relays see each host at its address, as on a real network."""
    address = host.ip
    lines = [f"# {host.name}: role {host.role}, class {host.cls}, variant {variant.name}"]
    if host.is_relay:
        rate = relay_rate(host)
        lines += [
            f"Nickname {host.name}",
            f"Address {address}",
            f"ORPort {address}:{ports.or_port} IPv4Only",
            f"DirPort {address}:{ports.dir_port}",
        ]
        if host.client_relay:
            # A client's own traffic is not capped by what its relay donates:
            # the donation (its uplink) limits relayed traffic only.
            link = max(rate, host.bandwidth_down // 8)
            lines += [
                f"BandwidthRate {link} bytes",
                f"BandwidthBurst {link} bytes",
                f"RelayBandwidthRate {rate} bytes",
                f"RelayBandwidthBurst {rate} bytes",
            ]
        else:
            lines += [f"BandwidthRate {rate} bytes", f"BandwidthBurst {rate} bytes"]
        if bind == "exit" and host.role in ("exit", "exitguard"):
            lines.append(f"OutboundBindAddressExit {address}")
    if bind == "all":
        lines.append(f"OutboundBindAddress {address}")
    if host.role == "client":
        lines.append(f"SocksPort {socks_bind}:{ports.socks_port}")
    lines.append(f"ControlPort 127.0.0.1:{ports.control_port}")
    for role in variant_roles(host) if sections is None else sections:
        extra = variant.torrc.get(role, ())
        if extra:
            lines.append(f"# variant {variant.name}, section {role}")
            lines += list(extra)
    return "\n".join(lines) + "\n"


def v3bw(plan: NetworkPlan, keys: dict[str, HostKeys], timestamp: int) -> str:
    """The bandwidth file the authorities vote from: each relay's capacity in KB/s."""
    lines = [str(timestamp)]
    for host in plan.hosts:
        if not host.is_relay:
            continue
        # Authorities get a token weight so clients rarely route through them.
        weight = 20 if host.role == "authority" else max(1, host.bandwidth_up // 8000)
        lines.append(f"node_id=${keys[host.name].fingerprint}\tbw={weight}\tnick={host.name}")
    return "\n".join(lines) + "\n"
