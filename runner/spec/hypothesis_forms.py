"""The hypotheses written short, and written out before they are parsed
(runner.spec.hypotheses):

    hypothesis_defaults: {metric: round_completion, expect: decrease, smallest_change: 10%}
    claims:
      paper: ...
      tested: {M3: ...}
      figures:                     # a claim's figure, named once
        m3-uniform: {id: M3, figure: "five 627 MB downloads, uniform", change: +48%,
                     reading: throughput}
    hypotheses:                    # a mapping by name (or a list with `name:`)
      n5-uniform-download:
        variant: base-n5-uniform-noloss
        reference: base-n1-noloss
        phase: download
        claim: m3-uniform          # a figure's name, or the claim's own mapping

Each hypothesis takes every default it does not give; a key given as
``null`` takes none (a hypothesis of every client where the default names
a class). In the mapping form a spec that ``extends:`` another changes one
hypothesis's key without restating the rest (runner.spec.compose).
"""

from __future__ import annotations

from typing import Any

from runner.params import Where

DEFAULTS = "hypothesis_defaults"
FIGURES = "figures"


def expand_hypotheses(data: Any, path: str) -> Any:
    """``data`` with its hypotheses as a list of complete mappings: the
    mapping form written out, the defaults given, figures' names replaced
    by the figures; data without any of these as it is."""
    if not isinstance(data, dict):
        return data
    top = Where(path, "")
    result = dict(data)
    defaults = _defaults(result.pop(DEFAULTS, None), top.child(DEFAULTS))
    figures = _figures(result, top.child("claims"))
    if "hypotheses" not in result:
        return result  # defaults for no hypothesis say nothing
    if not isinstance(result["hypotheses"], list | dict):
        return result  # parse_hypotheses says what was expected
    items = _as_list(result["hypotheses"], top.child("hypotheses"))
    named: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue  # parse_hypotheses says what was expected
        complete = {k: v for k, v in {**defaults, **item}.items() if v is not None}
        claim = complete.get("claim")
        if isinstance(claim, str):
            where = top.child("hypotheses").child(i).child("claim")
            if claim not in figures:
                known = ", ".join(figures) or "none"
                raise where.error(
                    f"expected a claim's mapping or a figure named under claims.figures "
                    f"(named: {known}), got {claim!r}"
                )
            complete["claim"] = figures[claim]
            named.add(claim)
        items[i] = complete
    for name in figures:
        if name not in named:
            raise top.child(f"claims.{FIGURES}.{name}").error(
                "no hypothesis names this figure: name it in a `claim:`, or leave it out"
            )
    result["hypotheses"] = items
    return result


def _defaults(value: Any, where: Where) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error("expected a mapping of hypothesis key to the value each one takes")
    if "name" in value:
        raise where.child("name").error("expected no default name: each hypothesis has its own")
    return dict(value)


def _figures(result: dict[str, Any], where: Where) -> dict[str, Any]:
    """Pop ``claims.figures`` (name -> a claim's mapping) from ``result``."""
    claims = result.get("claims")
    if not isinstance(claims, dict) or FIGURES not in claims:
        return {}
    figures = claims[FIGURES]
    result["claims"] = {k: v for k, v in claims.items() if k != FIGURES}
    if not isinstance(figures, dict) or not figures:
        raise where.child(FIGURES).error(
            "expected a mapping of a figure's name to its claim {id, figure, change, reading}"
        )
    return {str(name): body for name, body in figures.items()}


def _as_list(value: list[Any] | dict[str, Any], where: Where) -> list[Any]:
    """The hypotheses as a list: the mapping form's names put in each one."""
    if isinstance(value, list):
        return list(value)
    items = []
    for name, body in value.items():
        at = where.child(str(name))
        if not isinstance(body, dict):
            raise at.error("expected a hypothesis's keys (a mapping), or a list of hypotheses")
        if "name" in body:
            raise at.child("name").error("expected no `name:`: the key is the hypothesis's name")
        items.append({"name": name, **body})
    return items
