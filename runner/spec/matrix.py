"""Factorial designs: ``matrix:`` in a spec, expanded into plain variants at load time.

::

    matrix:
      name: "{scenario}-{mechanism}"          # one placeholder per factor
      description: "{mechanism}; {scenario}"  # filled with the levels' descriptions
      all: {tor: patched, torrc: {client: [NumEntryGuards 1]}}   # every variant
      factors:
        scenario: {hop3: {description: ..., clients: {...}}, hop4: {...}}
        mechanism: {fixed: {description: ..., consensus: {cc_alg: 0}}, ...}
      grids: [{scenario: hop3}, {mechanism: fixed}]               # optional: a union
      exclude: [{scenario: tree, mechanism: [fixed, vegas]}]      # optional
      twins: [{of: {scenario: tree}, name: "{name}-rr", factors: {scheduler: rr},
               torrc: {all: [TestingCircuitMuxRoundRobin 1]}}]   # optional

Each combination of levels (in some grid, if ``grids`` are given, and in
no exclusion; a grid's or an exclusion's factor names one level or a list)
is a variant: ``all`` and one partial variant per factor, merged. A twin
is a matrix variant with one more change and one more factor's level.
Torrc lines of a role concatenate (``all`` first, then the factors in
order) and paces multiply (runner.spec.pace); any other key set by two parts, a consensus
parameter among them, is an error. Each variant carries its levels under
``factors``, so analyses read them instead of parsing names.

Comparisons and the load check's variants can be given per factor::

    comparisons:
      - {factor: mechanism, pairs: [[marut, vegas], [fixed, vegas]]}  # within each scenario
    checks:
      load_variants: {factor: mechanism, levels: [fixed, vegas]}
      keep_up:                                                        # runner.spec.keep_up
        - {factor: mechanism, reference: fixed, metric: busiest_relay, within: 10%}
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from runner.errors import SpecError
from runner.params import Where
from runner.params import mapping_with_keys as _mapping

FACTORS = "factors"  # a variant's key holding its levels
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_LEVEL = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_MATRIX_KEYS = ("name", "factors")
# A twin's own keys; the rest is the change it makes (torrc, consensus...).
_TWIN_KEYS = ("of", "name", "factors", "descriptions")
_TWIN_OPTIONAL = ("descriptions", "tor", "torrc", "consensus", "clients", "topology", "expect")
_MATRIX_OPTIONAL = ("description", "all", "grids", "exclude", "twins")


def _merge(parts: list[tuple[Where, dict[str, Any]]]) -> dict[str, Any]:
    """One variant from partial variants; ``where`` names each part in errors."""
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for where, part in parts:
        for key, value in part.items():
            if key == "description":
                continue
            if key == "torrc":
                if not isinstance(value, dict):
                    raise where.child("torrc").error("expected a mapping of role to torrc lines")
                torrc = merged.setdefault("torrc", {})
                for role, lines in value.items():
                    if not isinstance(lines, list):
                        raise where.child(f"torrc.{role}").error("expected a list of torrc lines")
                    torrc[role] = [*torrc.get(role, []), *lines]
                continue
            if key == "consensus":
                if not isinstance(value, dict):
                    raise where.child("consensus").error("expected a mapping of parameters")
                consensus = merged.setdefault("consensus", {})
                for param, setting in value.items():
                    label = f"consensus.{param}"
                    if label in owner:
                        raise where.child(label).error(
                            f"also set by {owner[label]}: a parameter may be set by one level only"
                        )
                    owner[label] = where.key
                    consensus[param] = setting
                continue
            if key == "pace":
                # Each factor's level slows or speeds the rounds: paces multiply.
                if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                    raise where.child("pace").error("expected a positive number")
                merged["pace"] = round(merged.get("pace", 1.0) * value, 6)
                continue
            if key in owner:
                raise where.child(key).error(
                    f"also set by {owner[key]}: each key other than torrc comes from one part"
                )
            owner[key] = where.key
            merged[key] = value
    return merged


def _levels(value: Any, where: Where) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of level name to a partial variant")
    levels = {}
    for level, body in value.items():
        w = where.child(str(level))
        if not isinstance(level, str) or not _LEVEL.match(level):
            raise w.error(f"expected a level name matching {_LEVEL.pattern}")
        if body is not None and not isinstance(body, dict):
            raise w.error("expected a partial variant (a mapping), or nothing")
        levels[level] = dict(body or {})
    return levels


def _fill(pattern: str, values: dict[str, str], where: Where) -> str:
    def one(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise where.error(f"unknown factor {{{match.group(1)}}} (factors: {list(values)})")
        return values[match.group(1)]

    return _PLACEHOLDER.sub(one, pattern)


def expand_matrix(value: Any, where: Where) -> dict[str, dict[str, Any]]:
    """The plain variants (name -> body) of a ``matrix:`` block."""
    body = _mapping(value, where, _MATRIX_KEYS, _MATRIX_OPTIONAL)
    fw = where.child("factors")
    if not isinstance(body["factors"], dict) or not body["factors"]:
        raise fw.error("expected a mapping of factor name to its levels")
    factors = {str(f): _levels(levels, fw.child(str(f))) for f, levels in body["factors"].items()}
    name_pattern = body["name"]
    nw = where.child("name")
    if not isinstance(name_pattern, str):
        raise nw.error("expected a pattern such as '{scenario}-{mechanism}'")
    named = set(_PLACEHOLDER.findall(name_pattern))
    if named != set(factors):
        raise nw.error(f"expected one placeholder for each factor: {sorted(factors)}")
    common = body.get("all") or {}
    if not isinstance(common, dict):
        raise where.child("all").error("expected a partial variant given to every variant")
    excluded = _selections(body.get("exclude"), where.child("exclude"), factors, "to leave out")
    grids = _selections(body.get("grids"), where.child("grids"), factors, "grids")
    description = body.get("description")
    variants: dict[str, dict[str, Any]] = {}
    for combination in itertools.product(*(factors[f].items() for f in factors)):
        levels = {f: level for f, (level, _) in zip(factors, combination, strict=True)}
        if grids and not any(_holds(grid, levels) for grid in grids):
            continue  # in no grid of the union
        if any(_holds(rule, levels) for rule in excluded):
            continue
        parts = [(where.child("all"), common)] + [
            (fw.child(f"{f}.{level}"), part)
            for f, (level, part) in zip(factors, combination, strict=True)
        ]
        variant = _merge(parts)
        if description is not None:
            texts = {
                f: str(part.get("description", level))
                for f, (level, part) in zip(factors, combination, strict=True)
            }
            variant["description"] = _fill(str(description), texts, where.child("description"))
        variant[FACTORS] = levels
        variants[_fill(name_pattern, levels, nw)] = variant
    return variants | _twins(body.get("twins"), where.child("twins"), factors, variants)


def _twins(
    value: Any,
    where: Where,
    factors: dict[str, dict[str, Any]],
    variants: dict[str, dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The twins of matrix variants: each the variant with one more change
    (a partial variant, merged as a level is) and one more level."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise where.error("expected a list of twins {of, name, factors, ...}")
    twins: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(value):
        w = where.child(i)
        body = _mapping(item, w, ("of", "name", "factors"), _TWIN_OPTIONAL)
        of = body["of"] if isinstance(body["of"], list) else [body["of"]]
        selections = [_selection(s, w.child("of").child(j), factors) for j, s in enumerate(of)]
        extra = body["factors"]
        if not isinstance(extra, dict) or not extra or set(extra) & set(factors):
            raise w.child("factors").error(
                f"expected a mapping of new factors (not {list(factors)}) to the twins' levels"
            )
        change = {k: v for k, v in body.items() if k not in _TWIN_KEYS}
        texts = body.get("descriptions") or {}
        for selection in selections:
            for name, base in variants.items():
                if not _holds(selection, base[FACTORS]):
                    continue
                twin = _merge([(w.child("of"), _setting(base)), (w, change)])
                twin["description"] = str(texts.get(name, base.get("description", "")))
                twin[FACTORS] = {**base[FACTORS], **{str(k): str(v) for k, v in extra.items()}}
                twins[_fill(str(body["name"]), {"name": name}, w.child("name"))] = twin
    return twins


def _setting(variant: dict[str, Any]) -> dict[str, Any]:
    """A matrix variant's keys but its labels."""
    return {k: v for k, v in variant.items() if k not in (FACTORS, "description")}


def _selection(value: Any, where: Where, factors: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """A ``{factor: level or [levels]}`` mapping (a grid, an exclusion, a
    twin's ``of``), checked against the matrix's factors."""
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of factor to a level or a list of levels")
    chosen = {}
    for factor, given in value.items():
        w = where.child(str(factor))
        if factor not in factors:
            raise w.error(f"unknown factor (factors: {list(factors)})")
        levels = given if isinstance(given, list) else [given]
        if not levels:
            raise w.error(f"expected a level of {factor!r} or a non-empty list of them")
        for level in levels:
            if not isinstance(level, str) or level not in factors[factor]:
                known = list(factors[factor])
                raise w.error(f"unknown level {level!r} of factor {factor!r} (levels: {known})")
        chosen[str(factor)] = {str(lv) for lv in levels}
    return chosen


def _selections(
    value: Any, where: Where, factors: dict[str, dict[str, Any]], what: str
) -> list[dict[str, set[str]]]:
    """A list of selections (see _selection); ``what`` says what one is for."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"expected a list of {{factor: level or [levels]}} {what}")
    return [_selection(item, where.child(i), factors) for i, item in enumerate(value)]


def _holds(selection: dict[str, set[str]], levels: dict[str, str]) -> bool:
    """Whether a combination of ``levels`` is one the selection names."""
    return all(levels[f] in chosen for f, chosen in selection.items())


def _factor_of(value: dict[str, Any], where: Where, variants: dict[str, dict[str, Any]]) -> str:
    factor = value.get("factor")
    known = {f for body in variants.values() for f in body.get(FACTORS, {})}
    if factor not in known:
        raise where.child("factor").error(f"expected a factor of the matrix ({sorted(known)})")
    return str(factor)


def _with_level(
    variants: dict[str, dict[str, Any]], factor: str, level: str
) -> dict[tuple[tuple[str, str], ...], str]:
    """Variants at ``level`` of ``factor``, keyed by their other levels."""
    found = {}
    for name, body in variants.items():
        levels = body.get(FACTORS, {})
        if levels.get(factor) == level:
            found[tuple(sorted((f, lv) for f, lv in levels.items() if f != factor))] = name
    return found


def expand_comparisons(value: Any, where: Where, variants: dict[str, dict[str, Any]]) -> Any:
    """Comparisons with ``{factor, pairs}`` items written out as [variant, reference]
    pairs, one per combination of the other factors' levels."""
    if not isinstance(value, list):
        return value
    pairs: list[Any] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            pairs.append(item)
            continue
        w = where.child(i)
        body = _mapping(item, w, ("factor", "pairs"), ())
        factor = _factor_of(body, w, variants)
        if not isinstance(body["pairs"], list) or not body["pairs"]:
            raise w.child("pairs").error("expected a list of [level, reference level] pairs")
        for j, pair in enumerate(body["pairs"]):
            pw = w.child(f"pairs.{j}")
            if not (isinstance(pair, list) and len(pair) == 2):
                raise pw.error("expected a pair [level, reference level]")
            ours, theirs = (_with_level(variants, factor, str(lv)) for lv in pair)
            if not ours or not theirs:
                raise pw.error(f"expected two levels of factor {factor!r}")
            pairs += [[ours[k], theirs[k]] for k in ours if k in theirs]
    return pairs


def expand_levels(value: Any, where: Where, variants: dict[str, dict[str, Any]]) -> Any:
    """``{factor, levels}`` as the list of variants at those levels."""
    if not isinstance(value, dict):
        return value
    body = _mapping(value, where, ("factor", "levels"), ())
    factor = _factor_of(body, where, variants)
    levels = body["levels"]
    if not isinstance(levels, list) or not levels:
        raise where.child("levels").error(f"expected a list of levels of {factor!r}")
    names = []
    for i, level in enumerate(levels):
        chosen = [n for n, b in variants.items() if b.get(FACTORS, {}).get(factor) == level]
        if not chosen:
            raise where.child(f"levels.{i}").error(f"no variant has {factor} {level!r}")
        names += chosen
    return [n for n in variants if n in set(names)]


def expand_keep_up(value: Any, where: Where, variants: dict[str, dict[str, Any]]) -> Any:
    """checks.keep_up items given as ``{factor, reference, where?, ...}``
    written out as one item per variant: each level of ``factor`` against
    the ``reference`` level with the same other levels (only those matching
    ``where``, a mapping of factor to level or list of levels)."""
    if not isinstance(value, list):
        return value
    items: list[Any] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or "factor" not in item:
            items.append(item)
            continue
        w = where.child(i)
        factor = _factor_of(item, w, variants)
        if "reference" not in item:
            raise w.child("reference").error("required key is missing")
        if "variant" in item:
            raise w.child("variant").error("a factor's item names its reference level only")
        references = _with_level(variants, factor, str(item["reference"]))
        if not references:
            raise w.child("reference").error(f"no variant has {factor} {item['reference']!r}")
        chosen = item.get("where") or {}
        if not isinstance(chosen, dict):
            raise w.child("where").error("expected a mapping of factor to level(s)")
        known = {f for body in variants.values() for f in body.get(FACTORS, {})}
        for f in chosen:
            if f not in known:
                raise w.child(f"where.{f}").error(
                    f"expected a factor of the matrix ({sorted(known)})"
                )
        rest = {k: v for k, v in item.items() if k not in ("factor", "reference", "where")}
        for name, body in variants.items():
            levels = body.get(FACTORS, {})
            if factor not in levels or levels[factor] == item["reference"]:
                continue
            if any(
                levels.get(str(f)) not in (want if isinstance(want, list) else [want])
                for f, want in chosen.items()
            ):
                continue
            key = tuple(sorted((f, lv) for f, lv in levels.items() if f != factor))
            if key in references:
                items.append({"variant": name, "reference": references[key], **rest})
    return items


def expand_spec(data: Any, path: str) -> Any:
    """The spec's data with ``matrix`` written out as plain ``variants`` (which
    may also list plain variants of their own) and per-factor comparisons and
    load variants written out; data without ``matrix`` is returned as it is."""
    if not isinstance(data, dict) or "matrix" not in data:
        return data
    top = Where(path, "")
    expanded = expand_matrix(data["matrix"], top.child("matrix"))
    plain = data.get("variants") or {}
    if not isinstance(plain, dict):
        raise SpecError(path, "variants", "expected a mapping of variants")
    for name in plain:
        if name in expanded:
            raise top.child(f"variants.{name}").error("also a variant of the matrix")
    variants = {**expanded, **plain}
    result = {k: v for k, v in data.items() if k != "matrix"}
    result["variants"] = variants
    if "comparisons" in data:
        result["comparisons"] = expand_comparisons(
            data["comparisons"], top.child("comparisons"), variants
        )
    checks = data.get("checks")
    if isinstance(checks, dict) and "load_variants" in checks:
        checks = {
            **checks,
            "load_variants": expand_levels(
                checks["load_variants"], top.child("checks.load_variants"), variants
            ),
        }
    if isinstance(checks, dict) and "keep_up" in checks:
        checks = {
            **checks,
            "keep_up": expand_keep_up(checks["keep_up"], top.child("checks.keep_up"), variants),
        }
    if checks is not None:
        result["checks"] = checks
    return result
