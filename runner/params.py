"""Typed, self-describing parameters for generators (topologies, workloads).

A generator declares ``PARAMS = {name: Param(...)}``; the spec loader checks a
spec's ``params`` mapping against it, so every generator's errors read the same
way: ``file: key.path: what was expected``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from runner.errors import SpecError
from runner.phases import parse_phase
from runner.units import parse_bandwidth, parse_share, parse_size, parse_time, short


@dataclass(frozen=True)
class Where:
    """Where a value sits in a spec: the file and the dotted key path."""

    path: str
    key: str

    def child(self, name: str | int) -> Where:
        if isinstance(name, int):
            return Where(self.path, f"{self.key}[{name}]")
        return Where(self.path, f"{self.key}.{name}" if self.key else name)

    def error(self, expected: str) -> SpecError:
        return SpecError(self.path, self.key or "(top level)", expected)


def _to_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {short(value)}")
    return value


def _to_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {short(value)}")
    return float(value)


def _to_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {short(value)}")
    return value


def _to_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {short(value)}")
    return value


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": _to_int,
    "float": _to_float,
    "str": _to_str,
    "bool": _to_bool,
    "size": parse_size,
    "time": parse_time,
    "share": parse_share,
    "bandwidth": parse_bandwidth,
    "phase": parse_phase,
}


@dataclass(frozen=True)
class Param:
    """One parameter: its kind, its default (``REQUIRED`` if none) and bounds.

    ``kind`` is one of int, float, str, bool, size, time, share, bandwidth, phase
    (runner.phases), or ``list:<kind>`` for a non-empty list of those.
    """

    kind: str
    default: Any = None
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""

    def convert(self, value: Any, where: Where) -> Any:
        if self.kind.startswith("list:"):
            inner = Param(
                self.kind.removeprefix("list:"),
                minimum=self.minimum,
                maximum=self.maximum,
                choices=self.choices,
            )
            if not isinstance(value, list) or not value:
                raise where.error(f"expected a non-empty list of {inner.kind} values")
            return tuple(inner.convert(item, where.child(i)) for i, item in enumerate(value))
        try:
            converted = _CONVERTERS[self.kind](value)
        except ValueError as exc:
            raise where.error(str(exc)) from None
        if self.choices and converted not in self.choices:
            raise where.error(f"expected one of {', '.join(self.choices)}, got {short(converted)}")
        if self.minimum is not None and converted < self.minimum:
            raise where.error(f"expected at least {self.minimum}, got {short(value)}")
        if self.maximum is not None and converted > self.maximum:
            raise where.error(f"expected at most {self.maximum}, got {short(value)}")
        return converted


def mapping_with_keys(
    value: Any, where: Where, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``value`` as a mapping with every required key and no unknown one."""
    if not isinstance(value, dict):
        raise where.error("expected a mapping")
    for key in value:
        if key not in required and key not in optional:
            known = ", ".join((*required, *optional))
            raise where.child(str(key)).error(f"unknown key (expected one of: {known})")
    for key in required:
        if key not in value:
            raise where.child(key).error("required key is missing")
    return value


def check_params(
    given: Any, schema: Mapping[str, Param], where: Where, generator: str
) -> dict[str, Any]:
    """Validate ``given`` against ``schema``; return converted values with defaults."""
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise where.error(f"expected a mapping of parameters for {generator!r}")
    unknown = sorted(set(given) - set(schema))
    if unknown:
        known = ", ".join(sorted(schema)) or "none"
        raise where.child(str(unknown[0])).error(
            f"unknown parameter for {generator!r} (known: {known})"
        )
    result: dict[str, Any] = {}
    for name, param in schema.items():
        if name in given:
            result[name] = param.convert(given[name], where.child(name))
        elif param.required:
            raise where.child(name).error(f"required parameter of {generator!r} is missing")
        else:
            result[name] = (
                param.convert(param.default, where.child(name))
                if param.default is not None
                else None
            )
    return result
