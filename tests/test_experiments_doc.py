"""docs/experiments.md's table of configs says what the configs say: each
number it gives of a config (variants, seeds, seed rounds, relays, the
limits' multiples, growth) is checked against the config as it loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.experiments import load_spec
from runner.spec.model import Spec

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "experiments.md"
_ROW = re.compile(r"^\| `configs/([a-z0-9-]+)\.yaml` \|(.*)$", re.MULTILINE)


def _rows() -> dict[str, str]:
    return {name: text for name, text in _ROW.findall(DOC.read_text())}


def _stated(text: str, spec: Spec) -> list[tuple[str, object, object]]:
    """(what, the doc's number, the config's) for each number ``text`` gives."""
    found: list[tuple[str, object, object]] = []
    rounds = spec.seed_rounds
    for low, high in re.findall(r"(\d+) to (\d+) seeds in rounds", text):
        found.append(("seed rounds", (int(low), int(high)), rounds and (rounds.min, rounds.max)))
    for high in re.findall(r"seed rounds up to (\d+)", text):
        found.append(("most seeds", int(high), rounds and rounds.max))
    text = re.sub(r"(\d+) to (\d+) seeds in rounds|seed rounds up to \d+( seeds)?", "", text)
    for count in re.findall(r"(\d+) variants", text):
        found.append(("variants", int(count), len(spec.variants)))
    for count in re.findall(r"(\d+) seeds", text):
        found.append(("seeds (of the first round)", int(count), len(spec.seeds)))
    # The size column's first count of relays (the first column may cite a paper's);
    # a network of drawn circuits has as many as its circuits' distinct relays.
    relays = re.findall(r"(\d+) relays", text.split("|")[-3])
    if relays:
        found.append(("relays", int(relays[0]), sum(g.count for g in spec.network.relays)))
    circuits = spec.network.circuits
    for count in re.findall(r"(\d+) circuits a seed", text):
        found.append(("circuits a seed", int(count), circuits and circuits.count))
    times = {float(x) for x in re.findall(r"(\d+(?:\.\d+)?)x\b", text)}
    measured = {m.times for v in spec.variants for m in v.consensus_from.values()}
    if times:
        found.append(("limits' multiples", sorted(times), sorted(measured)))
    for share in re.findall(r"(\d+)% more clients", text):
        grown = sorted({round(v.extra_clients * 100) for v in spec.variants if v.extra_clients})
        found.append(("growth", [int(share)], grown))
    return found


def test_every_config_has_a_row() -> None:
    assert sorted(_rows()) == sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(_rows()))
def test_the_numbers_of_a_row_are_its_configs(name: str) -> None:
    spec = load_spec(ROOT / "configs" / f"{name}.yaml")
    wrong = [
        (what, doc, config) for what, doc, config in _stated(_rows()[name], spec) if doc != config
    ]
    assert wrong == [], f"docs/experiments.md's row of {name}: (what, doc, config)"
