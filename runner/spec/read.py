"""A spec file's YAML, read with limits: its size, and the values its
aliases stand for once written out (a nest of aliases multiplies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from runner.errors import SpecError

MAX_SPEC_BYTES = 1 << 20
# Far above any real spec (the largest here has a few thousand values), far
# below what a nest of aliases can make of a few lines.
MAX_SPEC_VALUES = 100_000


def read_spec_yaml(path: Path) -> Any:
    """The YAML data of the spec file at ``path``; SpecError if it is too
    large or not YAML."""
    shown = str(path)
    text = path.read_bytes()
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(shown, "(file)", f"expected a spec of at most {MAX_SPEC_BYTES} bytes")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None and _expanded_size(node, {}) > MAX_SPEC_VALUES:
            raise SpecError(
                shown,
                "(file)",
                f"expected at most {MAX_SPEC_VALUES} values once YAML aliases are expanded "
                "(aliases nested in aliases multiply)",
            )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise SpecError(
            shown, where, f"expected valid YAML ({getattr(exc, 'problem', exc)})"
        ) from None


def _expanded_size(node: yaml.Node, seen: dict[int, int]) -> int:
    """How many values ``node`` stands for with every alias written out:
    counted once per node (aliases share their node), so never expanded."""
    if id(node) in seen:
        return seen[id(node)]
    seen[id(node)] = 1  # a node that contains itself counts once
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, seen) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, seen) + _expanded_size(v, seen) for k, v in node.value)
    seen[id(node)] = size
    return size
