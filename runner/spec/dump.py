"""A spec written back as YAML the way specs are written: long and
multi-line strings as block scalars (a folded ``>`` description stays
folded, not one quoted string whose apostrophes are doubled and whose
closing quote stands alone on the last line), a quoted string with an
apostrophe in double quotes (single ones double it), short lists of plain
values on one line, mappings a key a line. Loading the text gives the same
values back."""

from __future__ import annotations

from typing import Any

import yaml

STR = "tag:yaml.org,2002:str"


class _SpecDumper(yaml.SafeDumper):
    pass


def _string(dumper: _SpecDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style where a block scalar cannot hold
    # the string exactly (trailing spaces, say): the style is only a wish.
    if "\n" in value.rstrip("\n"):
        return dumper.represent_scalar(STR, value, style="|")
    # A plain string never ends in a line break: this one was a block in
    # the spec (a folded description), or is too long for one line.
    if value.endswith("\n") or len(value) > dumper.best_width:
        return dumper.represent_scalar(STR, value, style=">")
    # Quoted where plain cannot hold it (": " in it, say): in double quotes
    # if it has an apostrophe, which single quotes would double.
    analysis = dumper.analyze_scalar(value)
    if "'" in value and not (analysis.allow_flow_plain and analysis.allow_block_plain):
        return dumper.represent_scalar(STR, value, style='"')
    return dumper.represent_scalar(STR, value)


def _list(dumper: _SpecDumper, value: list[Any]) -> yaml.SequenceNode:
    plain = all(not isinstance(v, (dict, list)) and "\n" not in str(v) for v in value)
    flow = bool(value) and plain and sum(len(str(v)) + 2 for v in value) <= dumper.best_width // 2
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_SpecDumper.add_representer(str, _string)
_SpecDumper.add_representer(list, _list)


def spec_yaml(raw: Any, width: int = 80) -> str:
    """``raw`` (a spec's validated data, Spec.raw) as YAML text, its lines
    folded near ``width``."""
    return yaml.dump(
        raw,
        Dumper=_SpecDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=width,
    )
