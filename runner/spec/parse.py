"""Experiment specs: load a YAML file, validate every key, return plain data
(runner.spec.model).

Nothing is written and nothing runs until a spec has passed here; each
problem is reported as ``file: key: what was expected``. Each part of the
spec has its parser (runner.spec.network, .variants, .seeds, .checks,
.hypotheses, .claims); the checks that cross parts are here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.errors import SpecError
from runner.params import Where, check_params
from runner.spec.checks import parse_checks
from runner.spec.claims import ClaimsLedger, check_ledger, parse_ledger
from runner.spec.compose import resolve_extends
from runner.spec.expect import ExpectKey
from runner.spec.hypotheses import Hypothesis, parse_hypotheses
from runner.spec.hypothesis_forms import expand_hypotheses
from runner.spec.keys import check_name, mapping_of, simple_values
from runner.spec.matrix import expand_spec
from runner.spec.measured import check_references
from runner.spec.model import (
    CLIENT_RELAY,
    NEW_CONSENSUS_PARAMS,
    Duration,
    Network,
    Spec,
    Variant,
    Workload,
)
from runner.spec.network import parse_network
from runner.spec.own_name import check_own_name
from runner.spec.pace import variant_measures
from runner.spec.read import read_spec_yaml
from runner.spec.seeds import parse_seeds
from runner.spec.variants import parse_new_params, parse_variants
from runner.units import human_size
from workloads.models import MODELS


def parse_spec(
    data: Any, path: str, sha256: str = "", expect_keys: Sequence[ExpectKey] = ()
) -> Spec:
    """Validate already-loaded YAML ``data`` from ``path``; ``expect_keys``:
    the keys a variant's ``expect:`` may give (the registered experiments',
    runner.experiments.load_spec passes them)."""
    top = Where(path, "")
    data = resolve_extends(data, path)  # a no-op where load_spec_file resolved it
    data = expand_hypotheses(data, path)  # defaults, figures named once
    data = expand_spec(data, path)  # a matrix of factors, written out as variants
    body = mapping_of(Spec, data, top, extra=(NEW_CONSENSUS_PARAMS,))
    name = check_name(body["name"], top.child("name"))
    seeds, seed_rounds = parse_seeds(body["seeds"], top.child("seeds"))
    duration = _duration(body["duration"], top.child("duration"))
    network = parse_network(body["network"], top.child("network"))
    workloads = _workloads(body["workloads"], top.child("workloads"))
    _check_client_workloads(network, workloads, top)
    variants = _variants(body, top, network, expect_keys)
    names = [v.name for v in variants]
    baseline = body.get("baseline", names[0])
    if baseline not in names:
        raise top.child("baseline").error(f"expected one of the variants {names}, got {baseline!r}")
    classes = [g.name for g in network.clients if g.measured]
    checks = parse_checks(body.get("checks"), top.child("checks"), names, classes)
    comparisons = _comparisons(body.get("comparisons"), top.child("comparisons"), names, baseline)
    if any(v.client_relays for v in variants):
        classes.append(CLIENT_RELAY)
    hypotheses = parse_hypotheses(body.get("hypotheses"), top.child("hypotheses"), names, classes)
    _check_hypotheses_against_workloads(hypotheses, network, workloads, top.child("hypotheses"))
    claims = _claims(body.get("claims"), hypotheses, top)
    if seed_rounds is not None and not hypotheses:
        raise top.child("seeds").error(
            "seeds as {min, max, step} run until the hypotheses are decisive: state at "
            "least one under `hypotheses`, or give a list of seeds"
        )
    description = body.get("description", "")
    if not isinstance(description, str):
        raise top.child("description").error("expected a string")
    return Spec(
        name=name,
        description=description.strip(),
        path=path,
        sha256=sha256,
        seeds=tuple(seeds),
        baseline=baseline,
        duration=duration,
        network=network,
        workloads=workloads,
        variants=variants,
        checks=checks,
        comparisons=comparisons,
        hypotheses=hypotheses,
        seed_rounds=seed_rounds,
        raw=body,
        claims=claims,
        variant_measure=variant_measures(variants, network, workloads, duration.measure, top),
    )


def _duration(value: Any, where: Where) -> Duration:
    body = mapping_of(Duration, value, where)
    # The local backend measures as long as Shadow unless the spec says otherwise.
    return Duration(
        **simple_values(Duration, body, where, defaults={"local_measure": body["measure"]})
    )


def _workloads(value: Any, where: Where) -> dict[str, Workload]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a mapping of workloads (at least one)")
    result = {}
    for name, body_value in value.items():
        w = where.child(str(name))
        body = mapping_of(Workload, body_value, w)
        model = body["model"]
        if model not in MODELS:
            raise w.child("model").error(
                f"unknown workload model {model!r} (known: {', '.join(MODELS)})"
            )
        params = check_params(body.get("params"), MODELS[model].PARAMS, w.child("params"), model)
        workload = Workload(name=str(name), model=model, params=params)
        result[check_name(name, w)] = workload
    return result


def _check_client_workloads(network: Network, workloads: dict[str, Workload], top: Where) -> None:
    """Every client class runs a workload the spec defines."""
    for group in network.clients:
        if group.workload not in workloads:
            raise top.child(f"network.clients.{group.name}.workload").error(
                f"no workload called {group.workload!r} (defined: {', '.join(workloads)})"
            )


def _variants(
    body: dict[str, Any], top: Where, network: Network, expect_keys: Sequence[ExpectKey]
) -> tuple[Variant, ...]:
    """The variants, checked against the network and each other."""
    new_params = parse_new_params(body.get(NEW_CONSENSUS_PARAMS), top.child(NEW_CONSENSUS_PARAMS))
    variants = parse_variants(
        body["variants"],
        top.child("variants"),
        {g.name for g in network.clients},
        new_params,
        expect_keys,
        (network.topology, body["network"].get("topology", {}).get("params")),
    )
    check_references(list(variants), top.child("variants"))
    for v in variants:
        for key, value in (("cross_flows", v.cross_flows), ("cross_rate", v.cross_rate)):
            if value is not None and network.cross_traffic is None:
                raise top.child(f"variants.{v.name}.{key}").error(
                    "the network has no cross_traffic for a variant to change"
                )
        if v.cross_rate is not None and network.cross_traffic.direction != "down":  # type: ignore[union-attr]
            raise top.child(f"variants.{v.name}.cross_rate").error(
                "expected cross_traffic with direction down: paced flows are sent by the servers"
            )
    return variants


def _comparisons(
    value: Any, where: Where, names: list[str], baseline: str
) -> tuple[tuple[str, str], ...]:
    """(variant, reference) pairs to compare; by default each variant against the baseline."""
    if value is None:
        return tuple((v, baseline) for v in names if v != baseline)
    if not isinstance(value, list) or not value:
        raise where.error("expected a list of [variant, reference] pairs")
    pairs = []
    for i, pair in enumerate(value):
        pw = where.child(i)
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise pw.error("expected a pair [variant, reference] of two different variants")
        for name in pair:
            if name not in names:
                raise pw.error(f"unknown variant {name!r} (variants: {names})")
        pairs.append((str(pair[0]), str(pair[1])))
    return tuple(pairs)


def _claims(value: Any, hypotheses: tuple[Hypothesis, ...], top: Where) -> ClaimsLedger | None:
    """The claims ledger, and every claim a hypothesis names in it."""
    claims = parse_ledger(value, top.child("claims"))
    check_ledger(
        claims,
        [
            (top.child("hypotheses").child(i).child("claim.id"), h.claim.id)
            for i, h in enumerate(hypotheses)
            if h.claim is not None
        ],
        top.child("claims"),
    )
    return claims


def _check_hypotheses_against_workloads(
    hypotheses: tuple[Hypothesis, ...],
    network: Network,
    workloads: dict[str, Workload],
    where: Where,
) -> None:
    """A hypothesis must ask about what some measured client's workload does:
    a size it transfers, a phase its rounds have, rounds at all."""
    for i, h in enumerate(hypotheses):
        at = where.child(i)
        groups = [g for g in network.clients if g.measured and h.cls in (None, g.name)]
        if h.cls == CLIENT_RELAY:
            continue  # client relays are clients of any class
        models = [workloads[g.workload] for g in groups]
        phases = [p for w in models for p in w.params.get("phases", ())]
        who = h.cls or "the measured clients"
        if h.metric == "round_completion" and not phases:
            kinds = sorted({w.model for w in models})
            raise at.child("metric").error(
                f"round_completion needs a rounds workload, and {who} run {', '.join(kinds)}"
            )
        if h.phase is not None and h.phase not in {p.name for p in phases}:
            known = sorted({p.name for p in phases})
            raise at.child("phase").error(
                f"no rounds workload of {who} has a phase {h.phase!r} (phases: {known})"
            )
        if h.size is not None and all(w.model != "markov" for w in models):
            _check_size(h.size, models, phases, at.child("size"), who)


def _check_size(
    size: int, models: list[Workload], phases: list[Any], where: Where, who: str
) -> None:
    """A hypothesis's size is one that the workloads of ``who`` transfer."""
    sizes = {p.size for p in phases}
    for w in models:
        sizes |= set(w.params.get("sizes", ())) | (
            {w.params["size"]} if "size" in w.params else set()
        )
    if size not in sizes:
        shown = ", ".join(human_size(x) for x in sorted(sizes)) or "none"
        raise where.error(f"no workload of {who} transfers {human_size(size)} (sizes: {shown})")


def load_spec_file(path: Path, expect_keys: Sequence[ExpectKey] = ()) -> Spec:
    """Read and validate the spec at ``path`` (and the spec it extends); SpecError
    on any problem."""
    shown = str(path)
    if not path.is_file():
        raise SpecError(shown, "(file)", "no such spec file")
    data = resolve_extends(read_spec_yaml(path), shown)
    spec = parse_spec(data, shown, content_sha256(data), expect_keys)
    check_own_name(path, spec.name)
    return spec


def spec_data(path: Path) -> Any:
    """The data of the spec file at ``path`` as the parser reads it: the spec
    it extends merged in, its hypotheses a list, each with its defaults and
    figures (a matrix is kept). For tests and tools that change a config."""
    data = resolve_extends(read_spec_yaml(path), str(path))
    return expand_hypotheses(data, str(path))


def content_sha256(data: Any) -> str:
    """A hash of what the spec says, not of its file's bytes: comments,
    spacing and key order change nothing."""
    text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
