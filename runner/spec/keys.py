"""A spec's YAML keys, declared once: on the dataclass field each one fills.

A field that a YAML mapping gives is declared with ``yaml_key()``. A simple
value carries the Param (runner.params) that checks it, which also says
whether the mapping must give it and its default (the field's default too);
any other is read by a parser of its own, and ``yaml_key()`` says only whether
the mapping must give it. A mapping's allowed keys and its simple values
then come from the dataclass, so a new key is one new field.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where, mapping_with_keys

_METADATA = "spec_key"
NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


@dataclass(frozen=True)
class YamlKey:
    """How a field is given in a YAML mapping."""

    name: str  # the YAML key; empty: the field's own name
    required: bool  # in the form (of a mapping's forms) that has the field
    param: Param | None  # a simple value's check; None: read by its own parser


def yaml_key(
    param: Param | None = None,
    *,
    name: str = "",
    required: bool = False,
    default: Any = dataclasses.MISSING,
    default_factory: Callable[[], Any] | Any = dataclasses.MISSING,
) -> Any:
    """A field given in the YAML under its own name (or ``name``): with
    ``param``, a simple value (see the module); ``default`` and
    ``default_factory`` are the field's, for the fields without one from
    ``param``."""
    metadata = {_METADATA: YamlKey(name, required or (param is not None and param.required), param)}
    if param is not None and param.default is not None:
        assert default is dataclasses.MISSING and default_factory is dataclasses.MISSING
        default = param.convert(param.default, Where("(default)", name))
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _keys(cls: type, leave_out: Collection[str]) -> list[tuple[str, YamlKey]]:
    """(field name, key) of each of ``cls``'s keyed fields but ``leave_out``'s."""
    found = []
    for f in dataclasses.fields(cls):
        declared = f.metadata.get(_METADATA)
        if declared is not None and f.name not in leave_out:
            found.append((f.name, declared))
    return found


def keys_of(
    cls: type, *, leave_out: Collection[str] = (), extra: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``cls``'s required and optional YAML keys, each in the order of its
    fields. ``leave_out``: fields of another form of the mapping; ``extra``:
    optional keys that fill no field of their own."""
    keys = _keys(cls, leave_out)
    required = tuple(k.name or field for field, k in keys if k.required)
    optional = tuple(k.name or field for field, k in keys if not k.required)
    return required, (*optional, *extra)


def mapping_of(
    cls: type,
    value: Any,
    where: Where,
    *,
    leave_out: Collection[str] = (),
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``value`` as a mapping of ``cls``'s keys (see keys_of): every
    required one and no unknown one."""
    return mapping_with_keys(value, where, *keys_of(cls, leave_out=leave_out, extra=extra))


def simple_values(
    cls: type,
    body: Mapping[str, Any],
    where: Where,
    *,
    leave_out: Collection[str] = (),
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Field name -> value of each simple field of ``cls``, checked: as
    ``body`` gives it, or else its default (``defaults`` has those that
    depend on other values); None where it has none."""
    values: dict[str, Any] = {}
    for field, k in _keys(cls, leave_out):
        if k.param is None:
            continue
        name = k.name or field
        given = body[name] if name in body else (defaults or {}).get(field, k.param.default)
        if given is None and name not in body:
            values[field] = None
        else:
            values[field] = k.param.convert(given, where.child(name))
    return values


def check_name(value: Any, where: Where, pattern: re.Pattern[str] = NAME) -> str:
    """A name the spec gives (of the spec, a variant, a workload...)."""
    if not isinstance(value, str) or not pattern.match(value):
        raise where.error(f"expected a name matching {pattern.pattern}, got {value!r}")
    return value
