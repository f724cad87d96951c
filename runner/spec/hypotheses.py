"""What an experiment tests, stated in its spec before it runs.

    hypotheses:
      - name: new-speeds-up-bulk
        variant: new                 # against...
        reference: stock
        metric: ttlb                 # see METRICS
        class: bulk                  # a client class (default: every measured client)
        size: 5 MiB                  # transfer metrics only (default: every size)
        # or sizes: [400 KB, 5 MB]   # pooled: per seed, the mean of each size's log ratio
        quantile: 0.5                # of ttfb/ttlb per seed (default: the median)
        expect: decrease             # or increase, or same (below)
        smallest_change: 10%         # the smallest change that would matter
        claim: {id: C1, figure: "Table I, 10 MB", change: -25.4%, reading: time}
        # or, for a question no paper states:
        # extension: why this is the project's own question
        exploratory: why             # optional, with claim: reported beside its claim,
                                     # outside the confirmatory family
        interaction:                 # optional: the change is (variant / reference)
          variant: new2              # divided by (new2 / stock) on the same seed,
          reference: stock           # e.g. "a third leg adds less than the second"

      - name: relay-runners-get-more # a contrast: two client groups of the same runs
        variant: new                 # (no reference: the runs are the variant's)
        metric: client_bandwidth
        class: client-relay          # this group's statistic...
        contrast: others             # ...over this group's, seed by seed: a class,
        expect: increase             # or `others` (every other measured client)
        smallest_change: 10%

      - name: bulk-suffers-more      # a contrast of changes: with a reference, the
        variant: limited             # class's change over the group's, seed by seed
        reference: unlimited         # (limited / unlimited of bulk over that of web)
        metric: client_bandwidth
        class: bulk
        contrast: web
        expect: decrease
        smallest_change: 10%

      - name: runners-gain           # the same clients in the reference: those in
        variant: relays-limited      # `class` in the variant's run of the seed, read
        reference: limited           # in the reference's run, where they run no relay
        metric: client_bandwidth
        class: client-relay
        same_clients: true
        expect: increase
        smallest_change: 10%

Each is answered in the report's "Answers" section (runner/analyses/answers.py),
and each claim beside the paper's number in its "Claims" section
(runner/spec/claims.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.params import Param, Where, mapping_with_keys
from runner.spec.claims import (
    Claim,
    check_reading,
    in_reading,
    parse_claim,
    parse_extension,
)
from runner.spec.keys import mapping_of, simple_values, yaml_key
from runner.units import human_size

# metric -> what it is, per seed; the change is variant / reference per seed.
METRICS = {
    "ttfb": "time to first byte (the quantile over a seed's transfers)",
    "ttlb": "time to last byte (the quantile over a seed's transfers)",
    "after_first_byte": "time to last byte net of time to first byte (the quantile over a "
    "seed's transfers)",
    "goodput": "goodput, size over time to last byte (the median over a seed's transfers)",
    "client_bandwidth": "a client's payload over its transfers' time (mean over a seed's clients)",
    "round_completion": "a round's completion time (the mean over a seed's clients of each "
    "one's mean over its complete rounds within Tukey's fences of its own rounds)",
    "downloads_completed": "transfers completed in a run",
    "relay_cpu_per_byte": "the relays' tor CPU seconds over the bytes they read and wrote, "
    "summed over a run's relays in its measured period (local backend only: runs under "
    "Shadow have no process CPU)",
}
TRANSFER_METRICS = ("ttfb", "ttlb", "after_first_byte", "goodput")
QUANTILE_METRICS = ("ttfb", "ttlb", "after_first_byte")
# Read from a run's relays, not its clients: no class, contrast or size.
RELAY_METRICS = ("relay_cpu_per_byte",)
DIRECTIONS = ("decrease", "increase")
SAME = "same"  # an equivalence: the change stays within +-smallest_change
EXPECTATIONS = (*DIRECTIONS, SAME)
OTHERS = "others"  # a contrast's group: every measured client not in the hypothesis's class


@dataclass(frozen=True)
class Side:
    """One statistic a hypothesis's ratio takes, per seed: a variant's runs
    and the measured clients read in them."""

    variant: str
    cls: str | None  # a client class or group; None: every measured client
    others: bool = False  # every measured client not in ``cls`` instead
    # The clients are those in ``cls`` in this variant's run of the same
    # seed (the same hosts), whatever their group in ``variant``'s run.
    clients_of: str | None = None

    def holds(self, variant: str, group: str) -> bool:
        """Whether a client of ``group`` in a run of ``variant`` is read
        (``group``: in ``clients_of``'s run where that is set)."""
        if variant != self.variant:
            return False
        if self.cls is None:
            return True
        return (group != self.cls) if self.others else (group == self.cls)


@dataclass(frozen=True, kw_only=True)
class Hypothesis:
    name: str = yaml_key(Param("str", required=True))
    variant: str = yaml_key(required=True)
    reference: str = yaml_key()  # a contrast's is its variant
    metric: str = yaml_key(Param("str", choices=tuple(METRICS), required=True))
    expect: str = yaml_key(Param("str", choices=EXPECTATIONS, required=True))
    # A fraction, such as 0.1; for ``same`` the margin.
    smallest_change: float = yaml_key(Param("share", minimum=0.001, maximum=10, required=True))
    # A client class; None: every measured client.
    cls: str | None = yaml_key(name="class", default=None)
    size: int | None = yaml_key(Param("size", minimum=1), default=None)  # bytes; None: every size
    # Sizes pooled into one change (bytes): per seed, the mean over these
    # sizes of each size's log ratio (the geometric mean of the ratios), for
    # a claim that speaks of every size at once. Empty: one size or all.
    sizes: tuple[int, ...] = yaml_key(Param("list:size", minimum=1), default=())
    quantile: float = yaml_key(Param("float", default=0.5, minimum=0.01, maximum=0.99))
    # round_completion: one phase of the rounds.
    phase: str | None = yaml_key(Param("str"), default=None)
    why: str = yaml_key(default="")
    # The published claim it tests, or why it is the project's own question.
    claim: Claim | None = yaml_key(default=None)
    extension: str = yaml_key(default="")
    # Why a hypothesis that tests a claim is kept outside the confirmatory
    # family (a size the plan says the design cannot decide, a claim that
    # follows from others): reported beside its claim, at 5% on its own.
    exploratory: str = yaml_key(default="")
    # (variant, reference) of the ratio this hypothesis's ratio is divided by,
    # seed by seed: an interaction of two changes; None: a plain change.
    interaction: tuple[str, str] | None = yaml_key(default=None)
    # A contrast: the class (or OTHERS) whose statistic in the same runs the
    # class's is divided by, seed by seed; ``reference`` is then ``variant``,
    # or with a reference of its own, that ratio is divided by the same
    # ratio in the reference's runs (the class's change over the group's).
    contrast: str | None = yaml_key(default=None)
    # The reference's side reads the clients in ``cls`` in the variant's run
    # of the same seed (the same hosts): a client relay's own gain against
    # running none.
    same_clients: bool = yaml_key(Param("bool", default=False))

    @property
    def sides(self) -> tuple[Side, ...]:
        """The statistics of each seed the ratio takes, in order: numerator
        and denominator, and for an interaction the ratio it is divided by."""
        if self.contrast is not None:
            runs = dict.fromkeys((self.variant, self.reference))
            return tuple(
                side
                for run in runs
                for side in (
                    Side(run, self.cls),
                    Side(run, self.cls, others=True)
                    if self.contrast == OTHERS
                    else Side(run, self.contrast),
                )
            )
        if self.same_clients:
            return (
                Side(self.variant, self.cls),
                Side(self.reference, self.cls, clients_of=self.variant),
            )
        pairs = (self.variant, self.reference, *(self.interaction or ()))
        return tuple(Side(v, self.cls) for v in pairs)

    @property
    def ratio_of_ratios(self) -> bool:
        """Whether its change is one ratio over another (an interaction, or a
        contrast against a reference), not a plain ratio."""
        return len(self.sides) == 4

    @property
    def direction(self) -> int:
        """-1 for a decrease, +1 for an increase, 0 for ``same`` (none)."""
        return {"decrease": -1, "increase": 1}.get(self.expect, 0)

    @property
    def equivalence(self) -> bool:
        """Whether it states that the change stays within its margin."""
        return self.expect == SAME

    @property
    def asks(self) -> str:
        """What it expects of the change, in words: "decrease by at least
        10%", "stay within +-15%"."""
        if self.equivalence:
            return f"stay within ±{self.smallest_change:.0%}"
        return f"{self.expect} by at least {self.smallest_change:.0%}"

    @property
    def variants(self) -> tuple[str, ...]:
        """Every variant whose runs the hypothesis reads, each once."""
        return tuple(dict.fromkeys((self.variant, self.reference, *(self.interaction or ()))))

    @property
    def paper_change(self) -> float | None:
        """The paper's number in this hypothesis's reading (a fraction);
        None for an extension or a qualitative claim."""
        if self.claim is None or self.claim.change is None or self.claim.reading is None:
            return None
        return in_reading(self.claim.change, self.claim.reading, self.metric)

    def describe(self) -> str:
        where = self.cls or ("relays" if self.metric in RELAY_METRICS else "all clients")
        if self.phase is not None:
            where += f", phase {self.phase}"
        if self.size is not None:
            where += f", {human_size(self.size)}"
        if self.sizes:
            where += f", pooled over {', '.join(human_size(s) for s in self.sizes)}"
        what = (
            self.metric
            if self.metric not in QUANTILE_METRICS
            else (
                f"{'median' if self.quantile == 0.5 else f'p{self.quantile * 100:g}'} {self.metric}"
            )
        )
        if self.contrast is not None:
            against = "every other measured client" if self.contrast == OTHERS else self.contrast
            if self.reference != self.variant:
                return (
                    f"{self.variant} vs {self.reference}: the change in {what} of {where} "
                    f"over {against}'s, seed by seed, should {self.asks}"
                )
            return (
                f"{self.variant}: {what} of {where} over {against}'s, in the same runs, should "
                f"{self.asks}"
            )
        if self.same_clients:
            where += f" (the same clients in {self.reference}'s runs)"
        if self.interaction is not None:
            other = f"{self.interaction[0]} vs {self.interaction[1]}"
            return (
                f"({self.variant} vs {self.reference}) / ({other}): the ratio of {what} "
                f"({where}) should {self.asks}"
            )
        return f"{self.variant} vs {self.reference}: {what} ({where}) should {self.asks}"


def _interaction(value: Any, where: Where, variants: list[str]) -> tuple[str, str]:
    """The pair of variants whose ratio a hypothesis's ratio is divided by."""
    item = mapping_with_keys(value, where, ("variant", "reference"), ())
    for key in ("variant", "reference"):
        if item[key] not in variants:
            raise where.child(key).error(f"unknown variant {item[key]!r} (variants: {variants})")
    if item["variant"] == item["reference"]:
        raise where.child("reference").error("expected a variant other than `variant`")
    return (str(item["variant"]), str(item["reference"]))


def parse_hypotheses(
    value: Any, where: Where, variants: list[str], classes: list[str]
) -> tuple[Hypothesis, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.error("expected a list of hypotheses")
    result = []
    names: set[str] = set()
    for i, item in enumerate(value):
        at = where.child(i)
        body = mapping_of(Hypothesis, item, at)
        simple = simple_values(Hypothesis, body, at)
        if simple["name"] in names:
            raise at.child("name").error(f"another hypothesis is called {simple['name']!r}")
        names.add(simple["name"])
        result.append(_hypothesis(body, simple, at, variants, classes))
    return tuple(result)


def _hypothesis(
    item: dict[str, Any],
    simple: dict[str, Any],
    at: Where,
    variants: list[str],
    classes: list[str],
) -> Hypothesis:
    """One hypothesis from its keys (``simple``: its simple values, checked)."""
    metric = simple["metric"]
    cls = item.get("class")
    _check_relay_metric(item, at, metric)
    _check_groups(item, at, metric, classes)
    contrast = _contrast(item, at, cls)
    if contrast is None and "reference" not in item:
        raise at.error("expected a `reference:` (or a `contrast:` between client groups)")
    # A contrast without a reference reads both groups in the variant's own runs.
    reference = item.get("reference", item["variant"])
    for key, run in (("variant", item["variant"]), ("reference", reference)):
        if run not in variants:
            raise at.child(key).error(f"unknown variant {run!r} (variants: {variants})")
    if "reference" in item and item["variant"] == reference:
        raise at.child("reference").error("expected a variant other than `variant`")
    _check_same_clients(simple, at, metric, cls, contrast)
    _check_metric_keys(item, at, metric)
    claim_or_extension = _claim_or_extension(item, at)
    if claim_or_extension.get("claim") is not None:
        check_reading(claim_or_extension["claim"], metric, at.child("claim"))
    simple = simple | {"sizes": tuple(simple.get("sizes") or ())}
    hypothesis = Hypothesis(
        **simple,
        variant=str(item["variant"]),
        reference=str(reference),
        cls=cls,
        why=str(item.get("why", "")).strip(),
        **claim_or_extension,
        exploratory=_exploratory(item, at),
        interaction=_interaction(item["interaction"], at.child("interaction"), variants)
        if "interaction" in item
        else None,
        contrast=contrast,
    )
    if "sizes" in item and len(set(hypothesis.sizes)) < 2:
        raise at.child("sizes").error("expected at least two distinct sizes to pool")
    if hypothesis.interaction == (hypothesis.variant, hypothesis.reference):
        raise at.child("interaction").error(
            "expected another pair than variant and reference (their ratio over itself is 1)"
        )
    return hypothesis


def _check_relay_metric(item: dict[str, Any], at: Where, metric: str) -> None:
    """A relay metric reads every relay of a run: no client group to choose."""
    if metric not in RELAY_METRICS:
        return
    for key in ("class", "contrast", "same_clients"):
        if key in item:
            raise at.child(key).error(
                f"{metric} reads a run's relays, not its clients: expected no `{key}:`"
            )


def _check_groups(item: dict[str, Any], at: Where, metric: str, classes: list[str]) -> None:
    """The class and the contrast's group are client classes the metric applies to."""
    for group, key in ((item.get("class"), "class"), (item.get("contrast"), "contrast")):
        if group is None or (key == "contrast" and group == OTHERS):
            continue
        if group not in classes:
            raise at.child(key).error(f"unknown client class {group!r} (classes: {classes})")
        if group == "client-relay" and metric != "client_bandwidth":
            raise at.child(key).error("client-relay applies to client_bandwidth only")


def _check_same_clients(
    simple: dict[str, Any], at: Where, metric: str, cls: str | None, contrast: str | None
) -> None:
    """``same_clients`` reads one class's hosts of the variant's runs in the
    reference's, which only client bandwidth keeps per client and group."""
    if not simple.get("same_clients"):
        return
    if cls is None:
        raise at.child("same_clients").error("expected a `class:` whose clients to follow")
    if metric != "client_bandwidth":
        raise at.child("same_clients").error("same_clients applies to client_bandwidth only")
    if contrast is not None:
        raise at.child("same_clients").error(
            "a contrast reads its groups in each run: expected no `same_clients:`"
        )


def _check_metric_keys(item: dict[str, Any], at: Where, metric: str) -> None:
    """A size, a phase and a quantile are given only to metrics that have them."""
    for key in ("size", "sizes"):
        if key in item and metric not in TRANSFER_METRICS:
            raise at.child(key).error(f"a size applies to {', '.join(TRANSFER_METRICS)} only")
    if "size" in item and "sizes" in item:
        raise at.child("sizes").error(
            "expected one of `size:` (one size) and `sizes:` (sizes pooled), got both"
        )
    if "phase" in item and metric != "round_completion":
        raise at.child("phase").error("a phase applies to round_completion only")
    if "quantile" in item and metric not in QUANTILE_METRICS:
        raise at.child("quantile").error(
            f"a quantile applies to {', '.join(QUANTILE_METRICS)} only"
        )


def _exploratory(item: dict[str, Any], at: Where) -> str:
    """Why a hypothesis that tests a claim stays outside the family ("": it is in it)."""
    if "exploratory" not in item:
        return ""
    if "claim" not in item:
        raise at.child("exploratory").error(
            "only a hypothesis with a `claim:` can be set outside the confirmatory family "
            "(an `extension:` is always outside it)"
        )
    return parse_extension(item["exploratory"], at.child("exploratory"))


def _contrast(item: dict[str, Any], at: Where, cls: str | None) -> str | None:
    """A contrast's other group, checked against the hypothesis's other keys."""
    if "contrast" not in item:
        return None
    contrast = Param("str").convert(item["contrast"], at.child("contrast"))
    if cls is None:
        raise at.child("contrast").error("a contrast needs a `class:` to set against it")
    if contrast == cls:
        raise at.child("contrast").error(f"expected a group other than the class {cls!r}")
    if "interaction" in item:
        raise at.child("interaction").error(
            "a contrast compares two client groups (against a `reference:` at most): "
            "expected no `interaction:`"
        )
    return str(contrast)


def _claim_or_extension(item: dict[str, Any], at: Where) -> dict[str, Any]:
    """Exactly one of ``claim:`` and ``extension:``, as Hypothesis fields."""
    if ("claim" in item) == ("extension" in item):
        given = "both" if "claim" in item else "neither"
        raise at.error(
            "expected exactly one of `claim:` (the published claim the hypothesis tests: "
            "{id, figure, change, reading}) and `extension:` (why it is the project's own "
            f"question), got {given}"
        )
    if "claim" in item:
        return {"claim": parse_claim(item["claim"], at.child("claim"))}
    return {"extension": parse_extension(item["extension"], at.child("extension"))}
