"""The reverse of ``as_data``: plain JSON data read back as the type an
analysis's compute function returns, so that the report renders from the
JSON files ``analyze`` wrote. Each field's type comes from
``typing.get_type_hints`` on the dataclasses; a generic dataclass
(``Part[N23Run]``) gives its fields' type variables their arguments.

What ``as_data`` made lossy comes back as the type says: a null where the
type is a float (and not also None) is NaN (infinities are NaN too); a
tuple, a set or a ``Path`` from a list or a string; a mapping whose keys
are not strings from its ``[{"key": ..., "value": ...}]`` list. Data that
does not fit its type raises ``TypeError`` naming where in the data it is.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import enum
import types
import typing
from pathlib import PurePath
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

# A type variable's argument, within a generic dataclass.
Bindings = dict[Any, Any]

_SEQUENCES = (list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection)
_SETS = (set, frozenset, abc.Set, abc.MutableSet)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)


def from_data(hint: Any, data: Any) -> Any:
    """``data`` (as ``as_data`` made it, after a trip through JSON) as ``hint``."""
    return _read(hint, data, "result", {})


def _read(hint: Any, data: Any, where: str, bindings: Bindings) -> Any:
    if isinstance(hint, TypeVar):
        return _read(bindings.get(hint, Any), data, where, bindings)
    if hint is Any or hint is object:
        return data
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return _union(get_args(hint), data, where, bindings)
    if origin is Literal:
        if data not in get_args(hint):
            raise _mismatch(where, f"one of {get_args(hint)}", data)
        return data
    if dataclasses.is_dataclass(origin or hint):
        return _dataclass(hint, data, where, bindings)
    if origin is None:
        return _plain(hint, data, where)
    return _container(origin, get_args(hint), data, where, bindings)


def _plain(hint: Any, data: Any, where: str) -> Any:
    """A number, a string, a flag, None, a path or an enum's member."""
    if hint is float:
        if data is None:
            return float("nan")  # as_data writes NaN and infinities as null
        # An int where a float is typed is a float to the type system (PEP 484): kept.
        if isinstance(data, int | float) and not isinstance(data, bool):
            return data
    elif hint is type(None) or hint is None:
        if data is None:
            return None
    elif hint is bool or hint is str:
        if isinstance(data, hint):
            return data
    elif hint is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
    elif isinstance(hint, type) and issubclass(hint, PurePath):
        if isinstance(data, str):
            return hint(data)
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(data)
        except ValueError:
            pass
    elif hint in (list, tuple, set, frozenset, dict):
        return _container(hint, (), data, where, {})
    else:
        raise TypeError(f"{where}: cannot read data as {hint!r}")
    raise _mismatch(where, getattr(hint, "__name__", repr(hint)), data)


def _union(options: tuple[Any, ...], data: Any, where: str, bindings: Bindings) -> Any:
    """The first of ``options`` that ``data`` reads as; None first where None is one."""
    if data is None and type(None) in options:
        return None
    problems = []
    for option in options:
        if option is type(None):
            continue
        try:
            return _read(option, data, where, bindings)
        except TypeError as exc:
            problems.append(str(exc))
    raise TypeError(f"{where}: fits none of the union's types ({'; '.join(problems)})")


def _dataclass(hint: Any, data: Any, where: str, bindings: Bindings) -> Any:
    """A dataclass from the object of its fields; missing fields take their defaults."""
    cls = get_origin(hint) or hint
    if not isinstance(data, dict):
        raise _mismatch(where, f"an object of {cls.__name__}'s fields", data)
    if get_origin(hint) is not None:
        resolved = [_bound(arg, bindings) for arg in get_args(hint)]
        bindings = dict(zip(cls.__parameters__, resolved, strict=True))
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise TypeError(f"{where}: {cls.__name__} has no field {', '.join(unknown)}")
    values = {}
    for name, field in fields.items():
        if name in data:
            values[name] = _read(hints[name], data[name], f"{where}.{name}", bindings)
        elif field.init and _required(field):
            raise TypeError(f"{where}: {cls.__name__}'s field {name} is missing")
    made = cls(**{name: value for name, value in values.items() if fields[name].init})
    for name, value in values.items():
        if not fields[name].init:
            object.__setattr__(made, name, value)  # frozen or not, as it was written
    return made


def _bound(hint: Any, bindings: Bindings) -> Any:
    """A generic argument that is itself a type variable, bound by the outer one."""
    return bindings.get(hint, Any) if isinstance(hint, TypeVar) else hint


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _container(
    origin: Any, args: tuple[Any, ...], data: Any, where: str, bindings: Bindings
) -> Any:
    """A list, tuple, set or mapping of ``args``' types (Any where none is given)."""
    if origin in _MAPPINGS:
        key, value = args or (Any, Any)
        return _mapping(key, value, data, where, bindings)
    if not isinstance(data, list):
        raise _mismatch(where, "a list", data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(data)
        elif not args:
            args = (Any,) * len(data)
        elif len(args) != len(data):
            raise TypeError(f"{where}: {len(data)} items where the tuple has {len(args)}")
        return tuple(
            _read(arg, item, f"{where}[{i}]", bindings)
            for i, (arg, item) in enumerate(zip(args, data, strict=True))
        )
    item_type = args[0] if args else Any
    items = [_read(item_type, item, f"{where}[{i}]", bindings) for i, item in enumerate(data)]
    if origin in _SETS:
        return frozenset(items) if origin is frozenset else set(items)
    if origin in _SEQUENCES:
        return items
    raise TypeError(f"{where}: cannot read data as {origin!r}")


def _mapping(key: Any, value: Any, data: Any, where: str, bindings: Bindings) -> dict[Any, Any]:
    """A mapping from an object (string keys) or from its list of
    ``{"key": ..., "value": ...}`` items (any other keys)."""
    if isinstance(data, dict):
        pairs = list(data.items())
    elif isinstance(data, list) and all(
        isinstance(item, dict) and set(item) == {"key", "value"} for item in data
    ):
        pairs = [(item["key"], item["value"]) for item in data]
    else:
        raise _mismatch(where, "an object, or a list of key and value items", data)
    return {
        _read(key, k, f"{where}[{i}].key", bindings): _read(
            value, v, f"{where}[{i}].value", bindings
        )
        for i, (k, v) in enumerate(pairs)
    }


def _mismatch(where: str, expected: str, data: Any) -> TypeError:
    return TypeError(f"{where}: expected {expected}, got {type(data).__name__} {data!r:.60}")
