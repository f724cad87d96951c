"""A fingerprint of the rule a spec's verdicts are decided by: its
hypotheses as the family reads them (names, claims and their order, what
each compares, its direction and smallest change, whether it is in the
family) and its seeds' design. Each run records the rule of the spec that
generated it, so that a report can tell verdicts read under a rule
committed after the runs (post hoc: exploratory) from those whose rule
was fixed before them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from runner.spec.model import Spec


def rule_fingerprint(spec: Spec) -> str:
    """The rule's fingerprint: 16 hex digits."""
    hypotheses = [
        {
            "name": h.name,
            "variant": h.variant,
            "reference": h.reference,
            "interaction": h.interaction,
            "contrast": h.contrast,
            # Only where set: the rules of hypotheses without it stay as they were.
            **({"same_clients": True} if h.same_clients else {}),
            "metric": h.metric,
            "class": h.cls,
            "size": h.size,
            "sizes": list(h.sizes),
            "quantile": h.quantile,
            "phase": h.phase,
            "expect": h.expect,
            "smallest_change": h.smallest_change,
            "claim": h.claim.id if h.claim is not None else None,
            "exploratory": bool(h.exploratory) or h.claim is None,
        }
        for h in spec.hypotheses
    ]
    rounds: dict[str, Any] | None = (
        asdict(spec.seed_rounds) if spec.seed_rounds is not None else None
    )
    text = json.dumps({"hypotheses": hypotheses, "seeds": rounds}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
