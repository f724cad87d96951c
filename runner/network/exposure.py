"""Torrc lines that open a private network beyond its own hosts.

On the local backend the networks are real processes on this machine: an
exit policy that accepts every address lets the network's exits reach the
machine's own services and beyond, and a SOCKS or control port on an
address other than loopback lets anyone who reaches the machine use it.
On the shared loopback such a line is refused unless the variant says it
means it (``opens_network: true``); in a network namespace of the run's
own, which nothing else on the machine sees, it is only warned about.
Under Shadow nothing leaves the simulation.
"""

from __future__ import annotations

import ipaddress
import re

from runner.errors import SpecError
from runner.spec.model import Spec, Variant

_LISTENERS = ("socksport", "controlport", "httptunnelport", "transport", "natdport", "dnsport")
_ANY_ADDRESS = ("*", "*4", "*6", "0.0.0.0/0", "[::]/0", "::/0")


def _opens_exits(value: str) -> bool:
    for entry in re.split(r"\s*,\s*", value.strip()):
        words = entry.split()
        if len(words) >= 2 and words[0].lower() == "accept":
            address = words[1].rsplit(":", 1)[0] if ":" in words[1] else words[1]
            if address in _ANY_ADDRESS:
                return True
    return False


def _off_loopback(value: str) -> bool:
    """A listener's address that is not on the loopback (a bare port is)."""
    first = value.split()[0] if value.split() else ""
    if first.isdigit() or first.lower() in ("auto", "0"):
        return False
    host = first.rsplit(":", 1)[0].strip("[]") if ":" in first else first
    if host.lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a name or unix socket path: not a test address


def opening_lines(variant: Variant) -> list[str]:
    """The variant's torrc lines that open the network (role: line)."""
    found = []
    for role, lines in variant.torrc.items():
        for line in lines:
            option, _, value = line.partition(" ")
            option = option.lower()
            if (option == "exitpolicy" and _opens_exits(value)) or (
                option in _LISTENERS and _off_loopback(value)
            ):
                found.append(f"{role}: {line}")
    return found


def check_exposure(spec: Spec, shared_loopback: bool) -> list[str]:
    """Refuse, on the shared loopback, a variant whose lines open the
    network and that does not say it means it; warnings otherwise."""
    warnings = []
    for variant in spec.variants:
        lines = opening_lines(variant)
        if not lines or variant.opens_network:
            continue
        if shared_loopback:
            raise SpecError(
                spec.path,
                f"variants.{variant.name}.torrc",
                f"lines that open the network beyond its hosts ({'; '.join(lines)}) are "
                "refused on the local backend's shared loopback, where they reach this "
                "machine; set opens_network: true on the variant if that is meant",
            )
        warnings.append(
            f"warning: {variant.name}: {'; '.join(lines)} opens the network beyond its "
            "hosts (here inside the run's own network namespace); set opens_network: "
            "true on the variant if that is meant"
        )
    return warnings
