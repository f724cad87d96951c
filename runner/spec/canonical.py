"""A spec's canonical form: everything it loads to (its variants with their
torrc and consensus, network, workloads, seeds, checks, hypotheses and
claims) as plain JSON data, the same however the spec is written. A spec
that says the same things another way (``extends:``, a matrix, defaults)
has the same canonical form; ``runner validate --expand json`` prints it
and tests/fixtures/expanded/ holds each config's."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from runner.spec.model import Spec, left_out_while_empty

# Where the spec was read from and its raw data: how it is written, not what it says.
_LEFT_OUT = ("path", "sha256", "raw")
# Fields added after the configs' snapshots, beside the spec's own list:
# left out while empty, so that specs that do not use them keep their
# canonical form.
_ALSO_LEFT_OUT: dict[type, tuple[str, ...]] = {Spec: ("variant_measure",)}


def canonical_form(spec: Spec) -> dict[str, Any]:
    """``spec`` as JSON data, field by field (see the module)."""
    return {
        f.name: _plain(getattr(spec, f.name))
        for f in fields(spec)
        if f.name not in _LEFT_OUT and not _empty_new(spec, f.name)
    }


def _empty_new(value: Any, name: str) -> bool:
    """Whether field ``name`` of ``value`` is a new one left empty."""
    return left_out_while_empty(value, name, _ALSO_LEFT_OUT)


def canonical_json(spec: Spec) -> str:
    """The canonical form as JSON text: keys sorted, two-space indents."""
    return json.dumps(canonical_form(spec), sort_keys=True, indent=2, ensure_ascii=False)


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it: dataclasses as mappings, tuples as
    lists, mapping keys of any type (a topology's latencies are keyed by
    pairs of regions) as JSON text."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in fields(value)
            if not _empty_new(value, f.name)
        }
    if isinstance(value, dict):
        return {_key(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_plain(v) for v in value), key=_key)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"no canonical form for {type(value).__name__}")


def _key(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
