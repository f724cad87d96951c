"""Contrasts: a hypothesis whose change is one client group's statistic over
another's in the same runs, seed by seed (Tortoise's T4: under the limit,
clients that run relays get more than those that do not)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from runner.analyses.answers import SUPPORTED, answer, changes_key
from runner.analyses.client_bandwidth import ClientBandwidth
from runner.errors import SpecError
from runner.experiments import load_spec
from runner.params import Where
from runner.planning.seed_plan import spread
from runner.spec.hypotheses import Hypothesis, Side, parse_hypotheses
from runner.tables.schema import TransferRow
from tests.conftest import FIXTURES, fixture_report

T4 = Hypothesis(
    name="relay-runners-get-more",
    variant="relays-low",
    reference="relays-low",
    metric="client_bandwidth",
    expect="increase",
    smallest_change=0.1,
    cls="client-relay",
    contrast="others",
)
VARIANTS = ["unlimited", "relays-low"]
CLASSES = ["web", "bulk", "client-relay"]


def _clients(
    variant: str, seed: int, group: str, rate: float, n: int
) -> tuple[list[TransferRow], list[ClientBandwidth]]:
    """``n`` clients of ``group`` whose transfers run near ``rate`` KiB/s."""
    rng = np.random.default_rng(seed * 97 + len(group) * 7 + len(variant))
    rows, bandwidths = [], []
    for i in range(n):
        host = f"{group}{i}"
        times = 1024 * 1024 / 1024 / rate * rng.lognormal(0, 0.1, 4)
        rows += [
            TransferRow(variant, seed, host, "bulk", True, 1024 * 1024, 0.0, 0.1, t, True, "")
            for t in times
        ]
        bandwidths.append(
            ClientBandwidth(variant, seed, host, group, 4 * 1024 * 1024, float(times.sum()), 4)
        )
    return rows, bandwidths


def _network(seeds: int, advantage: float) -> tuple[list[TransferRow], list[ClientBandwidth]]:
    rows: list[TransferRow] = []
    bandwidths: list[ClientBandwidth] = []
    for seed in range(1, seeds + 1):
        level = 100.0 * (1 + seed / 7)  # networks differ; the groups' ratio does not
        for group, rate, n in (
            ("client-relay", advantage * level, 3),
            ("web", level, 4),
            ("bulk", level, 4),
        ):
            more_rows, more_bandwidths = _clients("relays-low", seed, group, rate, n)
            rows += more_rows
            bandwidths += more_bandwidths
        # Another variant's clients: a contrast reads its own variant alone.
        other_rows, other_bandwidths = _clients("unlimited", seed, "web", 5 * level, 4)
        rows += other_rows
        bandwidths += other_bandwidths
    return rows, bandwidths


def test_a_contrast_is_one_groups_statistic_over_the_others_in_the_same_runs() -> None:
    rows, bandwidths = _network(6, 1.4)
    found = answer(T4, rows, bandwidths)
    assert found.estimate.n == 6
    assert found.estimate.mean == pytest.approx(0.4, abs=0.05)
    assert found.verdict == SUPPORTED
    # Against one class only, the same.
    web = answer(replace(T4, contrast="web"), rows, bandwidths)
    assert web.estimate.mean == pytest.approx(0.4, abs=0.05)
    # Its plan reads the same ratios and splits off the clients' part.
    parts = spread(T4, rows, bandwidths)
    assert parts is not None and parts.seeds == 6
    assert parts.effect == pytest.approx(math.log(1.4), abs=0.05)
    assert parts.clients is not None and parts.transfers is not None


def test_its_sides_and_description_name_both_groups_of_one_variant() -> None:
    assert T4.sides == (
        Side("relays-low", "client-relay"),
        Side("relays-low", "client-relay", others=True),
    )
    assert T4.variants == ("relays-low",)
    assert not T4.sides[1].holds("relays-low", "client-relay")
    assert T4.sides[1].holds("relays-low", "web")
    assert not T4.sides[1].holds("unlimited", "web")
    assert "over every other measured client's, in the same runs" in T4.describe()
    assert changes_key(T4, []) is None  # the Changes table compares variants only


def test_a_spec_states_a_contrast_and_bad_ones_are_refused() -> None:
    where = Where("x.yaml", "hypotheses")
    base = {
        "name": "h",
        "variant": "relays-low",
        "metric": "client_bandwidth",
        "class": "client-relay",
        "expect": "increase",
        "smallest_change": "10%",
        "claim": {"id": "T4", "figure": "text", "change": "+38%", "reading": "throughput"},
    }
    (h,) = parse_hypotheses([base | {"contrast": "others"}], where, VARIANTS, CLASSES)
    assert (h.contrast, h.reference, h.cls) == ("others", "relays-low", "client-relay")
    for bad, key, message in (
        (base | {"contrast": "nope"}, "contrast", "unknown client class 'nope'"),
        (base | {"contrast": "client-relay"}, "contrast", "a group other than the class"),
        (
            {k: v for k, v in base.items() if k != "class"} | {"contrast": "web"},
            "contrast",
            "needs a `class:`",
        ),
        (base | {"contrast": "web", "reference": "relays-low"}, "reference", "other than"),
        (base | {"contrast": "web", "same_clients": True}, "same_clients", "a contrast"),
        (
            base | {"contrast": "web", "interaction": {"variant": "a", "reference": "b"}},
            "interaction",
            "expected no",
        ),
        (base, "hypotheses", r"expected a `reference:` \(or a `contrast:`"),
    ):
        with pytest.raises(SpecError, match=message) as caught:
            parse_hypotheses([bad], where, VARIANTS, CLASSES)
        assert key in str(caught.value)


# T1 as the paper reads it: the limit costs bulk clients more than web ones,
# each class's change in the same runs (the paper's 0.70 over 0.85).
T1 = replace(
    T4,
    name="bulk-suffers-more",
    variant="limited",
    reference="unlimited",
    cls="bulk",
    contrast="web",
    expect="decrease",
)


def _classes_under(variant: str, seed: int, factors: dict[str, float], level: float) -> Any:
    rows: list[TransferRow] = []
    bandwidths: list[ClientBandwidth] = []
    for group, factor in factors.items():
        more_rows, more_bandwidths = _clients(variant, seed, group, factor * level, 4)
        rows += more_rows
        bandwidths += more_bandwidths
    return rows, bandwidths


def test_a_contrast_with_a_reference_is_the_class_change_over_the_groups() -> None:
    rows: list[TransferRow] = []
    bandwidths: list[ClientBandwidth] = []
    for seed in range(1, 7):
        level = 100.0 * (1 + seed / 7)  # networks differ; the changes do not
        # Unlimited, bulk clients are faster than web ones: the contrast of
        # changes leaves that out, where a contrast in one run would not.
        for variant, factors in (
            ("unlimited", {"bulk": 1.75, "web": 1.0}),
            ("limited", {"bulk": 1.75 * 0.70, "web": 0.85}),
        ):
            more_rows, more_bandwidths = _classes_under(variant, seed, factors, level)
            rows += more_rows
            bandwidths += more_bandwidths
    assert T1.sides == (
        Side("limited", "bulk"),
        Side("limited", "web"),
        Side("unlimited", "bulk"),
        Side("unlimited", "web"),
    )
    assert T1.ratio_of_ratios and T1.variants == ("limited", "unlimited")
    found = answer(T1, rows, bandwidths)
    assert found.estimate.n == 6
    assert found.estimate.mean == pytest.approx(0.70 / 0.85 - 1, abs=0.03)
    assert found.verdict == SUPPORTED
    parts = spread(T1, rows, bandwidths)  # its seeds' spread alone, as an interaction's
    assert parts is not None and parts.clients is None
    assert parts.effect == pytest.approx(math.log(0.70 / 0.85), abs=0.03)
    assert "limited vs unlimited: the change in client_bandwidth of bulk over web's" in (
        T1.describe()
    )
    (parsed,) = parse_hypotheses(
        [
            {
                "name": "h",
                "variant": "limited",
                "reference": "unlimited",
                "metric": "client_bandwidth",
                "class": "bulk",
                "contrast": "web",
                "expect": "decrease",
                "smallest_change": "10%",
                "extension": "test",
            }
        ],
        Where("x.yaml", "hypotheses"),
        ["unlimited", "limited"],
        CLASSES,
    )
    assert parsed.sides == T1.sides


def test_same_clients_read_a_relay_runners_own_gain() -> None:
    """T4 as a runner's own gain: the clients that run a relay in
    relays-low, against the same hosts in limited, where they run none."""
    t4 = replace(T4, reference="limited", contrast=None, same_clients=True)
    rows: list[TransferRow] = []
    bandwidths: list[ClientBandwidth] = []
    for seed in range(1, 7):
        level = 100.0 * (1 + seed / 7)
        for variant, runner_rate, runner_group in (
            ("limited", level, "web"),
            ("relays-low", 1.38 * level, "client-relay"),
        ):
            # Hosts web0-web2 run a relay in relays-low; web3-web6 never do,
            # and are slower, so a group contrast would read another number.
            for i in range(7):
                runs_relay = i < 3
                one_rows, one = _clients(
                    variant, seed, "web", runner_rate if runs_relay else 0.5 * level, 1
                )
                host = f"web{i}"
                rows += [replace(r, host=host) for r in one_rows]
                group = runner_group if runs_relay else "web"
                bandwidths += [replace(b, host=host, group=group) for b in one]
    assert t4.sides[1] == Side("limited", "client-relay", clients_of="relays-low")
    found = answer(t4, rows, bandwidths)
    assert found.estimate.n == 6
    assert found.estimate.mean == pytest.approx(0.38, abs=0.05)
    assert "(the same clients in limited's runs)" in t4.describe()
    # Without it, the client-relay group is empty in limited: no seed pairs.
    assert answer(replace(t4, same_clients=False), rows, bandwidths).estimate.n == 0
    where = Where("x.yaml", "hypotheses")
    base = {
        "name": "h",
        "variant": "relays-low",
        "reference": "unlimited",
        "metric": "client_bandwidth",
        "class": "client-relay",
        "expect": "increase",
        "smallest_change": "10%",
        "same_clients": True,
        "extension": "test",
    }
    (parsed,) = parse_hypotheses([base], where, VARIANTS, CLASSES)
    assert parsed.same_clients and parsed.sides[1].clients_of == "relays-low"
    for bad, message in (
        ({k: v for k, v in base.items() if k != "class"}, "a `class:`"),
        (base | {"metric": "ttlb", "class": "web"}, "same_clients applies to client_bandwidth"),
    ):
        with pytest.raises(SpecError, match=message) as caught:
            parse_hypotheses([bad], where, VARIANTS, CLASSES)
        assert "same_clients" in str(caught.value)


def test_tortoise_t4_and_t6_written_in_a_spec_are_reported(tmp_path: Path) -> None:
    """T4 as a contrast and T6 as an interaction, on the committed
    tortoise-small runs: both flow through answers.json, Claims and Answers."""
    raw = yaml.safe_load((FIXTURES / "tortoise-small" / "spec.yaml").read_text())
    claim = {"figure": "text", "reading": "throughput"}
    raw["hypotheses"] = [
        {
            "name": "relay-runners-get-more",
            "variant": "relays-low",
            "metric": "client_bandwidth",
            "class": "client-relay",
            "contrast": "others",
            "expect": "increase",
            "smallest_change": "10%",
            "claim": claim | {"id": "T4", "change": "+38%"},
        },
        {
            "name": "the-limit-absorbs-growth",
            "variant": "growth-100",
            "reference": "limit-100",
            "interaction": {"variant": "growth-unlimited", "reference": "unlimited"},
            "metric": "client_bandwidth",
            "class": "web",
            "expect": "increase",
            "smallest_change": "5%",
            "claim": claim | {"id": "T6", "change": "+11%"},
        },
    ]
    raw["claims"]["tested"] = {"T4": "relay runners get more", "T6": "absorbs growth"}
    raw["claims"]["not_tested"] = {k: "not here" for k in ("T1", "T2", "T3", "T5", "T7", "T8")}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    spec = load_spec(path)
    report = fixture_report("tortoise-small", tmp_path / "results", spec)
    records = {
        r["hypothesis"]: r for r in json.loads((report.parent.parent / "answers.json").read_text())
    }
    t4, t6 = records["relay-runners-get-more"], records["the-limit-absorbs-growth"]
    assert (t4["contrast"], t4["claim"]["id"], t4["seeds"]) == ("others", "T4", 2)
    assert (t6["interaction"], t6["claim"]["id"], t6["seeds"]) == (
        ["growth-unlimited", "unlimited"],
        "T6",
        2,
    )
    for record in (t4, t6):  # two seeds: a change, no interval, no verdict
        assert record["change"] is not None and record["low"] is None
        assert record["verdict"] == "undetermined"
    text = report.read_text()
    claims = text[text.index("## Claims") : text.index("## Answers")]
    assert "T4" in claims and "T6" in claims and "+38" in claims
    assert "over every other measured client's" in text


def test_the_claims_table_says_what_a_contrast_of_changes_and_same_clients_read() -> None:
    from runner.analyses.answers import hypothesis_fields
    from runner.report.claims import reading_text

    assert reading_text(hypothesis_fields(T1)) == (
        "client_bandwidth, bulk's change over web's: at least 10% decrease"
    )
    assert reading_text(hypothesis_fields(T4)) == (
        "client_bandwidth, client-relay over others: at least 10% increase"
    )
    own = replace(T4, reference="limited", contrast=None, same_clients=True)
    assert hypothesis_fields(own)["same_clients"] is True
    assert "same_clients" not in hypothesis_fields(T4)  # answers of others read as before
    assert reading_text(hypothesis_fields(own)) == (
        "client_bandwidth, the same clients in limited: at least 10% increase"
    )
