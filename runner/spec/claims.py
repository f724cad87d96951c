"""Which published claim a hypothesis tests, and the paper's number in the
hypothesis's own reading.

    claims:
      paper: "Conflux (PETS 2013) and ConfluxM"
      tested: {C1: "Conflux (2 legs) shortens downloads against Tor"}
      not_tested: {C4: "no hypothesis on the tail of download times"}
    hypotheses:
      - name: conflux-shortens-10mb
        ...
        claim: {id: C1, figure: "Table I, 10 MB", change: -25.4%, reading: time}
      - name: conflux-after-first-byte
        ...
        extension: the paper gives download times only

A claim's ``change`` is the paper's number as the paper gives it (a signed
percentage; left out for a qualitative claim) and ``reading`` what kind of
reading it is: a ``time``, a ``throughput``, a ``count`` or a ``cpu`` figure
(CPU time or utilisation, which only a CPU metric reads). The report puts
it in the reading of the hypothesis's metric (in_reading) beside the
project's change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from runner.params import Where
from runner.spec.keys import mapping_of, yaml_key
from runner.units import short

READINGS = ("time", "throughput", "count", "cpu")
# What kind of reading each hypothesis metric is (runner.spec.hypotheses.METRICS).
METRIC_READINGS = {
    "ttfb": "time",
    "ttlb": "time",
    "after_first_byte": "time",
    "round_completion": "time",
    "goodput": "throughput",
    "client_bandwidth": "throughput",
    "downloads_completed": "count",
    "relay_cpu_per_byte": "cpu",
}
_ID = re.compile(r"^[A-Z][0-9]{1,3}$")
_CHANGE = re.compile(r"^[+-][0-9]+(\.[0-9]+)?%$")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A published claim a hypothesis tests: its id (as in the claims
    ledger), where in the paper its number is, and the number (a fraction,
    as the paper gives it; None for a qualitative claim) with its reading."""

    id: str = yaml_key(required=True)
    figure: str = yaml_key(required=True)
    change: float | None = yaml_key(default=None)
    reading: str | None = yaml_key(default=None)  # one of READINGS, given with change


@dataclass(frozen=True, kw_only=True)
class ClaimsLedger:
    """The spec's ``claims:``: which paper(s), the claims its hypotheses
    test (id -> the claim in a few words) and those it cannot (id -> why)."""

    paper: str = yaml_key(required=True)
    tested: dict[str, str] = yaml_key(default_factory=dict)
    not_tested: dict[str, str] = yaml_key(default_factory=dict)
    # Where the runs' conditions differ from the paper's, in a line; the
    # claims tables give it after what the spec itself says of its network
    # (runner.spec.conditions), so each verdict reads as under those.
    conditions: str = yaml_key(default="")


def in_reading(change: float, reading: str, metric: str) -> float:
    """The paper's ``change`` (a fraction, a ``reading``) as a change of
    ``metric``: a time metric reads a throughput change X as the time change
    1/(1+X) - 1 (+48% throughput is -32.4% time), a rate metric reads a
    time change T as 1/(1+T) - 1; counts, and readings of the metric's own
    kind, are taken as given. A CPU figure is read by a CPU metric only
    (check_reading), as given."""
    kind = METRIC_READINGS[metric]
    if reading == kind or "count" in (reading, kind):
        return change
    return 1 / (1 + change) - 1


def check_reading(claim: Claim, metric: str, where: Where) -> None:
    """A paper's CPU figure is read by a CPU metric, and a CPU metric reads
    only a CPU figure: neither converts to a time or a throughput."""
    kind = METRIC_READINGS[metric]
    if claim.reading is None or (claim.reading == "cpu") == (kind == "cpu"):
        return
    if kind == "cpu":
        raise where.child("reading").error(
            f"{metric} reads a paper's CPU figure: expected `reading: cpu`, got {claim.reading!r}"
        )
    cpu_metrics = ", ".join(m for m, k in METRIC_READINGS.items() if k == "cpu")
    raise where.child("reading").error(
        f"a CPU figure is read by {cpu_metrics} only, not {metric} ({kind})"
    )


def _text(value: Any, where: Where, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"expected {what}, a non-empty string, got {short(value)}")
    return value.strip()


def _claim_id(value: Any, where: Where) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise where.error(
            f"expected a claim id, a letter and digits such as C1 or B3, got {short(value)}"
        )
    return value


def parse_claim(value: Any, where: Where) -> Claim:
    """A hypothesis's ``claim: {id, figure, change, reading}``."""
    body = mapping_of(Claim, value, where)
    change = None
    if "change" in body:
        raw = body["change"]
        if not isinstance(raw, str) or not _CHANGE.match(raw.strip()):
            raise where.child("change").error(
                "expected the paper's change as a signed percentage, such as -25.4% or +48% "
                f"(leave it out for a qualitative claim), got {short(raw)}"
            )
        change = float(Decimal(raw.strip()[:-1]) / 100)  # -56.7% is -0.567, as written
        if change <= -1:
            raise where.child("change").error("expected a change above -100%")
        if "reading" not in body:
            raise where.child("reading").error(
                f"required with a change: what kind of reading the paper's number is "
                f"({', '.join(READINGS)})"
            )
    reading = body.get("reading")
    if reading is not None:
        if change is None:
            raise where.child("reading").error("a reading applies to a change only")
        if reading not in READINGS:
            raise where.child("reading").error(
                f"expected one of {', '.join(READINGS)}, got {short(reading)}"
            )
    return Claim(
        id=_claim_id(body["id"], where.child("id")),
        figure=_text(body["figure"], where.child("figure"), "where in the paper the number is"),
        change=change,
        reading=reading,
    )


def parse_extension(value: Any, where: Where) -> str:
    """A hypothesis's ``extension:``, why it is the project's own question."""
    return _text(value, where, "why this is the project's own question")


def _by_id(value: Any, where: Where, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"expected a mapping of claim id to {what}")
    return {
        _claim_id(key, where.child(str(key))): _text(text, where.child(str(key)), what)
        for key, text in value.items()
    }


def parse_ledger(value: Any, where: Where) -> ClaimsLedger | None:
    """The spec's ``claims: {paper, tested, not_tested, conditions}``."""
    if value is None:
        return None
    body = mapping_of(ClaimsLedger, value, where)
    tested = _by_id(body.get("tested"), where.child("tested"), "the claim in a few words")
    not_tested = _by_id(
        body.get("not_tested"), where.child("not_tested"), "why this experiment cannot test it"
    )
    for key in not_tested:
        if key in tested:
            raise where.child(f"not_tested.{key}").error(
                f"{key} is also under claims.tested: a claim is tested or not, not both"
            )
    conditions = body.get("conditions")
    return ClaimsLedger(
        paper=_text(body["paper"], where.child("paper"), "which paper(s)"),
        tested=tested,
        not_tested=not_tested,
        conditions=""
        if conditions is None
        else _text(conditions, where.child("conditions"), "how the runs' conditions differ"),
    )


def check_ledger(ledger: ClaimsLedger | None, named: list[tuple[Where, str]], where: Where) -> None:
    """Every claim a hypothesis names (``named``: where it is named, the id)
    is under ``claims.tested``, and every claim there is named by one."""
    tested = ledger.tested if ledger is not None else {}
    for at, claim_id in named:
        if claim_id in tested:
            continue
        if ledger is None:
            raise at.error(
                f"a hypothesis that names claim {claim_id} needs the spec's `claims:` section, "
                f"with {claim_id} under `tested`"
            )
        known = ", ".join(tested) or "none"
        raise at.error(f"claim {claim_id} is not under claims.tested (tested: {known})")
    ids = {claim_id for _, claim_id in named}
    for claim_id in tested:
        if claim_id not in ids:
            raise where.child(f"tested.{claim_id}").error(
                f"no hypothesis names claim {claim_id}: name it in a hypothesis's `claim:`, or "
                "move it under claims.not_tested with why this experiment cannot test it"
            )
