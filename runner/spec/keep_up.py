"""checks.keep_up: a variant must keep up with a reference run on the same
seed, so that a mechanism that starves the path fails its runs' checks
instead of passing for a slower design.

    checks:
      keep_up:
        - variant: backtap           # against...
          reference: fixed           # the same seed's run of this variant
          metric: busiest_relay      # the busiest relay's mean utilisation
          within: 10%                # at least the reference's, less 10 points
        - variant: single-backtap
          reference: single-fixed
          metric: client_bandwidth   # the median over a class's measured clients
          class: bulk
          at_least: 90%              # of the reference's
        - variant: tree-n23
          reference: tree-fixed
          metric: busiest_relay
          within: 10%
          judge: mean                # over the seeds both ran (default: each)

``judge: each`` (the default) fails every run that falls short of its
seed's reference run. ``judge: mean`` holds the variant's mean over the
seeds both ran against the reference's and fails the variant when that
falls short; each seed's pair is still shown. It is for networks where a
run can fall short by chance under any design (a relay's connection that
stalls for seconds under Shadow's TCP), so that one seed's accident does
not fail a design that keeps up on the seeds taken together.

In a matrix, ``{factor, reference, where?}`` in place of ``variant`` and
``reference`` holds every level of a factor against one of its levels
(runner.spec.matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where
from runner.spec.keys import mapping_of, yaml_key

# metric -> what a run's value is
METRICS = {
    "busiest_relay": "the busiest relay's mean utilisation over the measured period",
    "client_bandwidth": "the median over the class's measured clients of each one's payload "
    "over its transfers' time (0 for a client that completed none)",
}
JUDGE_EACH = "each"
JUDGE_MEAN = "mean"
_JUDGES = (JUDGE_EACH, JUDGE_MEAN)
_SHARE = Param("share", minimum=0.0, maximum=1.0)


@dataclass(frozen=True, kw_only=True)
class KeepUp:
    """One variant against its reference on each seed they share."""

    variant: str = yaml_key(required=True)
    reference: str = yaml_key(required=True)
    metric: str = yaml_key(required=True)  # a key of METRICS
    group: str | None = yaml_key(name="class", default=None)  # client class, for client_bandwidth
    # client_bandwidth: a fraction of the reference's.
    at_least: float | None = yaml_key(default=None)
    # busiest_relay: points below the reference's, as a fraction.
    within: float | None = yaml_key(default=None)
    judge: str = yaml_key(default=JUDGE_EACH)  # each seed's run, or the mean over the seeds

    def required(self, reference_value: float) -> float:
        """The least value that keeps up with a reference run's value."""
        if self.metric == "busiest_relay":
            return reference_value - (self.within or 0.0)
        return reference_value * (self.at_least or 0.0)

    def requirement(self, reference: str = "the reference") -> str:
        """The requirement in words."""
        if self.metric == "busiest_relay":
            return f"busiest relay at least as busy as {reference}'s, less {self.within:.0%} points"
        return f"{self.group} clients' bandwidth at least {self.at_least:.0%} of {reference}'s"

    def rule(self) -> str:
        return self.requirement(self.reference)

    @property
    def over_seeds(self) -> bool:
        return self.judge == JUDGE_MEAN


def _one(value: Any, where: Where, variants: list[str], classes: list[str]) -> KeepUp:
    body = mapping_of(KeepUp, value, where)
    for key in ("variant", "reference"):
        if body[key] not in variants:
            raise where.child(key).error(f"expected one of the variants {variants}")
    if body["variant"] == body["reference"]:
        raise where.child("reference").error("expected a variant other than `variant`")
    metric = body["metric"]
    if metric not in METRICS:
        raise where.child("metric").error(f"expected one of {sorted(METRICS)}")
    judge = body.get("judge", JUDGE_EACH)
    if judge not in _JUDGES:
        raise where.child("judge").error(f"expected one of {list(_JUDGES)}")
    if metric == "busiest_relay":
        if "within" not in body or {"class", "at_least"} & set(body):
            raise where.error("busiest_relay takes `within` (points, e.g. 10%) and nothing else")
        within = _SHARE.convert(body["within"], where.child("within"))
        return KeepUp(
            variant=body["variant"],
            reference=body["reference"],
            metric=metric,
            within=within,
            judge=judge,
        )
    if "at_least" not in body or "class" not in body or "within" in body:
        raise where.error("client_bandwidth takes `class` and `at_least` (e.g. 90%)")
    if body["class"] not in classes:
        raise where.child("class").error(f"expected a measured client class {classes}")
    at_least = _SHARE.convert(body["at_least"], where.child("at_least"))
    return KeepUp(
        variant=body["variant"],
        reference=body["reference"],
        metric=metric,
        group=body["class"],
        at_least=at_least,
        judge=judge,
    )


def parse_keep_up(
    value: Any, where: Where, variants: list[str], classes: list[str]
) -> tuple[KeepUp, ...]:
    """checks.keep_up, written out as one item per variant (see the module)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise where.error("expected a list of {variant, reference, metric, ...}")
    return tuple(_one(item, where.child(i), variants, classes) for i, item in enumerate(value))
