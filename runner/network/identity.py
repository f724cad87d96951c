"""A run's identity: a fingerprint of everything that determines the run.

The parts are the resolved variant (its tor build, torrc lines, consensus
parameters and the rest of what it changes), the network, the workloads, the
durations the backend uses, the seed, the backend and the tool versions (the
patched tor's series hash and the libraries tor runs with among them). Not
the spec file's bytes: a comment or a description changes no run. Each part
is hashed on its own, so a re-run can say which part of a run changed.

The staged tor (tor-patches/staged/) is a part of its own, in the runs of
``tor: staged`` variants only: the tools part leaves it out, so that a
staged variant added to a spec, or a staged patch changed, moves no other
run of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass, replace
from typing import Any

from runner.network.backends import Backend
from runner.network.tor_builds import of_build
from runner.spec.model import Network, RelayGroup, Spec, Variant, left_out_while_empty

TOOLS_PART = "tools"
STAGED_PART = "staged_tor"  # the staged build's version (its key), in staged runs only
# Variant fields that name or describe a variant and change nothing in a run.
_VARIANT_LABELS = ("name", "description", "factors")
# Fields added after runs were made, beside the spec's own list: left out
# of a fingerprint while empty, so that the runs of specs that do not give
# them keep their identity.
_ALSO_LEFT_OUT: dict[type, tuple[str, ...]] = {RelayGroup: ("bandwidth_of",)}


def _canonical(value: Any) -> Any:
    """``value`` as JSON can hold it, the same whatever the order of its
    mappings and sets: dataclasses as mappings, mapping keys of any type
    (a topology's latencies are keyed by pairs of regions) as JSON text."""
    if is_dataclass(value) and not isinstance(value, type):
        # Field by field, as asdict would, its nested dataclasses included.
        value = {
            f.name: getattr(value, f.name)
            for f in fields(value)
            if not left_out_while_empty(value, f.name, _ALSO_LEFT_OUT)
        }
    if isinstance(value, dict):
        return {_text(_canonical(k)): _canonical(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_canonical(v) for v in value), key=_text)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot fingerprint {type(value).__name__}")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def digest(value: Any) -> str:
    text = json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _variant(variant: Variant) -> dict[str, Any]:
    """What the variant sets; consensus parameters it measures are left to
    the runs they are measured from (``measured_from``), so the same run
    has one identity before and after its parameters are measured."""
    settings = {
        f.name: getattr(variant, f.name)
        for f in fields(variant)
        if f.name not in _VARIANT_LABELS and not left_out_while_empty(variant, f.name)
    }
    settings["consensus"] = {
        k: v for k, v in variant.consensus.items() if k not in variant.consensus_from
    }
    return settings


def _placed(network: Network) -> Network:
    """The network without the client classes it has none of (count 0,
    only variants add them): they place no host and draw nothing, so a
    spec that gains one keeps its runs' identities."""
    return replace(network, clients=tuple(g for g in network.clients if g.count))


def spec_parts(spec: Spec, variant: Variant, seed: int, backend: Backend) -> dict[str, Any]:
    """The parts of a run's identity that the spec (and the backend) decide."""
    duration: dict[str, float] = {
        "bootstrap": spec.duration.bootstrap,
        "measure": backend.measure(spec, variant.name),
    }
    parts: dict[str, Any] = {
        "experiment": spec.name,  # mixed networks draw their hosts by it
        "variant": digest(_variant(variant)),
        "network": digest(_placed(spec.network)),
        "workloads": digest(spec.workloads),
        "duration": digest(duration),
        "seed": seed,
        "backend": backend.name,
    }
    if variant.consensus_from:
        # A simulation is deterministic: the runs measured from, by their
        # own identities, decide the measured values.
        sources = sorted({m.variant for m in variant.consensus_from.values()})
        parts["measured_from"] = digest(
            {name: spec_parts(spec, spec.variant(name), seed, backend) for name in sources}
        )
    return parts


def run_identity(
    spec: Spec,
    variant: Variant,
    seed: int,
    backend: Backend,
    versions: dict[str, str | None],
) -> dict[str, Any]:
    """``{"fingerprint": ..., "parts": {...}}`` as a run's manifest records it."""
    parts = spec_parts(spec, variant, seed, backend) | tools_parts(variant, versions)
    return {"fingerprint": digest(parts), "parts": parts}


def tools_parts(variant: Variant, versions: dict[str, str | None]) -> dict[str, str]:
    """The identity's parts from the tools: their versions but the staged
    tor's, and for a staged variant the staged tor's on their own."""
    staged = {name: v for name, v in versions.items() if of_build(name, "staged")}
    shared = {name: v for name, v in versions.items() if name not in staged}
    parts = {TOOLS_PART: digest(shared)}
    if variant.tor == "staged":
        parts[STAGED_PART] = digest(staged)
    return parts


def changed_parts(recorded: Any, expected: dict[str, Any]) -> list[str]:
    """The parts of ``expected`` that a run's recorded identity differs in
    (every part if it recorded none)."""
    parts = recorded.get("parts") if isinstance(recorded, dict) else None
    if not isinstance(parts, dict):
        return ["identity (not recorded)"]
    return [name for name, value in expected.items() if parts.get(name) != value]
