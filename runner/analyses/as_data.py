"""An analysis's result as plain JSON data: dataclasses become objects of
their fields, tuples and sets lists, a mapping with keys that are not
strings a list of ``{"key": ..., "value": ...}``, an enum's member its
value, and numbers that JSON cannot hold (NaN, infinities) null.
runner.analyses.from_data reads it back as its type."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def as_data(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {k: as_data(v) for k, v in value.items()}
        return [{"key": as_data(k), "value": as_data(v)} for k, v in value.items()]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [as_data(v) for v in items]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, enum.Enum):
        return as_data(value.value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")
