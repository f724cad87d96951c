"""Parsing of the human units used in specs: sizes, times and bandwidths.

Specs say ``5 MiB``, ``10 min`` or ``100 Mbit``; tgen and Shadow want their own
spellings, so everything is parsed into plain numbers here and formatted again
by the module that writes each consumer's file.
"""

from __future__ import annotations

import re

_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z/]*)\s*$")

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}

_TIME_UNITS = {
    "ms": 0.001,
    "msec": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}

# Bandwidths are in bits per second, decimal prefixes, as Shadow counts them.
_BANDWIDTH_UNITS = {
    "bit": 1,
    "kbit": 1000,
    "mbit": 1000**2,
    "gbit": 1000**3,
}


def short(value: object, limit: int = 60) -> str:
    """A value as an error message shows it: its repr, cut to ``limit``."""
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 5] + "...'" + f" ({len(shown)} chars)"


def _split(text: object, what: str) -> tuple[float, str]:
    if isinstance(text, bool):
        raise ValueError(f"expected a {what}, got a boolean")
    if isinstance(text, int | float):
        return float(text), ""
    if not isinstance(text, str):
        raise ValueError(f"expected a {what} such as {_EXAMPLES[what]}, got {short(text)}")
    match = _NUMBER_UNIT.match(text)
    if not match:
        raise ValueError(f"expected a {what} such as {_EXAMPLES[what]}, got {short(text)}")
    return float(match.group(1)), match.group(2).lower()


_EXAMPLES = {"size": "'5 MiB'", "time": "'10 min'", "bandwidth": "'100 Mbit'"}


def parse_size(text: object) -> int:
    """Bytes in ``text`` (``'400 KB'``, ``'5 MiB'``, ``1024``)."""
    value, unit = _split(text, "size")
    if unit not in _SIZE_UNITS:
        raise ValueError(
            f"unknown size unit {unit!r} in {short(text)} (use B, KB, KiB, MB, MiB, GB)"
        )
    result = value * _SIZE_UNITS[unit]
    if result != int(result):
        raise ValueError(f"size {short(text)} is not a whole number of bytes")
    return int(result)


def parse_share(text: object) -> float:
    """A fraction from ``'10%'`` or ``0.1``."""
    if isinstance(text, str) and text.strip().endswith("%"):
        try:
            return float(text.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    raise ValueError(f"expected a share such as '10%' or 0.1, got {short(text)}")


def human_size(size: int) -> str:
    """``size`` bytes the way a spec writes them: '5 MiB', '400 KB'."""
    for unit, factor in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    for unit, factor in (("MB", 10**6), ("KB", 10**3)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def parse_time(text: object) -> float:
    """Seconds in ``text`` (``'500 ms'``, ``'10 min'``, ``30``)."""
    value, unit = _split(text, "time")
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit {unit!r} in {short(text)} (use ms, s, min, h)")
    return value * _TIME_UNITS[unit]


def parse_bandwidth(text: object) -> int:
    """Bits per second in ``text`` (``'100 Mbit'``, ``'1 Gbit'``)."""
    value, unit = _split(text, "bandwidth")
    unit = unit.removesuffix("/s").removesuffix("ps")
    if unit not in _BANDWIDTH_UNITS:
        raise ValueError(f"unknown bandwidth unit in {short(text)} (use bit, Kbit, Mbit, Gbit)")
    return int(round(value * _BANDWIDTH_UNITS[unit]))


def format_size_for_tgen(size_bytes: int) -> str:
    """tgen's size syntax: an integer and a unit."""
    return f"{size_bytes} bytes"


def format_time_for_tgen(seconds: float) -> str:
    """tgen's time syntax: an integer and a unit, in milliseconds when needed."""
    if float(seconds).is_integer():
        return f"{int(seconds)} seconds"
    return f"{int(round(seconds * 1000))} milliseconds"


def format_bandwidth_for_shadow(bits_per_second: int) -> str:
    """Shadow's bandwidth syntax, in whole kilobits."""
    return f"{max(1, bits_per_second // 1000)} kilobit"


def format_latency_for_shadow(seconds: float) -> str:
    """Shadow's latency syntax, in whole microseconds (Shadow needs latency > 0)."""
    return f"{max(1, int(round(seconds * 1_000_000)))} us"
