"""The rate limit a relay applies to clients that are not relays.

tor's per-connection buckets (``PerConnBWRate``/``PerConnBWBurst`` in a
relay's torrc, else the consensus' ``perconnbwrate``/``perconnbwburst``),
shared per client address with ``PerConnBWPerClient`` (tor-patches/0002).
The runner records each relay's limit in the manifest, so checks compare
what clients got with what their relays were told to allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# tor's memory units (src/app/config/config.c, memory_units): powers of 1024.
_TOR_UNITS = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1 << 10,
    "kbyte": 1 << 10,
    "kbytes": 1 << 10,
    "kilobyte": 1 << 10,
    "kilobytes": 1 << 10,
    "mb": 1 << 20,
    "mbyte": 1 << 20,
    "mbytes": 1 << 20,
    "megabyte": 1 << 20,
    "megabytes": 1 << 20,
    "gb": 1 << 30,
    "gbyte": 1 << 30,
    "gbytes": 1 << 30,
}
_VALUE = re.compile(r"^\s*([0-9]+)\s*([A-Za-z]*)\s*$")


def tor_bytes(text: str) -> int:
    """Bytes in a tor memory value such as ``100 KBytes`` (KB = 1024 bytes)."""
    match = _VALUE.match(text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _TOR_UNITS:
        raise ValueError(f"expected a tor byte count such as '100 KBytes', got {text!r}")
    return int(match.group(1)) * _TOR_UNITS[unit]


@dataclass(frozen=True)
class ClientLimit:
    rate: int  # bytes/s
    burst: int  # bytes
    per_client: bool  # one bucket per client address, not per connection


def relay_client_limit(
    torrc_lines: list[str], consensus: dict[str, int], bandwidth_rate: int
) -> ClientLimit | None:
    """The limit a relay with these variant torrc lines applies, or None.

    Mirrors connection_or_update_token_buckets_helper(): a torrc value wins
    over the consensus; an unset burst falls back to the relay's own
    BandwidthBurst (``bandwidth_rate`` here)."""
    options: dict[str, str] = {}
    for line in torrc_lines:
        key, _, value = line.partition(" ")
        options[key.lower()] = value.strip()
    rate = tor_bytes(options["perconnbwrate"]) if "perconnbwrate" in options else 0
    burst = tor_bytes(options["perconnbwburst"]) if "perconnbwburst" in options else 0
    rate = rate or consensus.get("perconnbwrate", 0)
    burst = burst or consensus.get("perconnbwburst", bandwidth_rate)
    if not rate or rate >= bandwidth_rate:
        return None
    setting = options.get("perconnbwperclient", "auto").lower()
    per_client = setting == "1" or (setting == "auto" and consensus.get("perconnbwperclient") == 1)
    return ClientLimit(rate, burst, per_client)
