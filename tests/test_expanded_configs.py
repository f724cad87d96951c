"""Every config loads to what it loaded to before it was rewritten: the
same canonical form (variants, torrc, consensus, network, workloads, seeds,
checks, hypotheses, claims), the same run identities and the same
statistics rule. tests/fixtures/expanded/ holds each config's snapshot,
taken before the configs were written with ``extends:``, unions of grids
and defaults; a change to what a config says is a new snapshot, written
on purpose (``write_snapshots``), and shown in its diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.experiments import load_spec
from runner.network.backends import SHADOW
from runner.network.identity import run_identity
from runner.spec.canonical import canonical_form
from runner.spec.model import Spec
from runner.spec.rule import rule_fingerprint
from tests.conftest import FIXTURE_VERSIONS

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
SNAPSHOTS = Path(__file__).resolve().parent / "fixtures" / "expanded"


def _identities(spec: Spec) -> dict[str, str]:
    """Each run's fingerprint, by variant/seed, with fixed tool versions."""
    return {
        f"{variant.name}/{seed}": run_identity(spec, variant, seed, SHADOW, FIXTURE_VERSIONS)[
            "fingerprint"
        ]
        for variant, seed in spec.runs()
    }


def snapshot(path: Path) -> dict[str, Any]:
    """What the config at ``path`` loads to, its runs' identities and its rule."""
    spec = load_spec(path)
    return {
        "spec": canonical_form(spec),
        "runs": _identities(spec),
        "rule": rule_fingerprint(spec),
    }


def write_snapshots() -> None:
    """Write every config's snapshot (only when a config is meant to say
    something else)."""
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for path in sorted(CONFIGS.glob("*.yaml")):
        text = json.dumps(snapshot(path), sort_keys=True, indent=1, ensure_ascii=False)
        (SNAPSHOTS / f"{path.stem}.json").write_text(text + "\n")


def _differences(old: Any, new: Any, at: str = "") -> list[str]:
    """Where ``new`` differs from ``old``, as key paths (the first few)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = [f"{at}.{k}" for k in old.keys() ^ new.keys()]
        for k in old.keys() & new.keys():
            found += _differences(old[k], new[k], f"{at}.{k}")
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            d
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for d in _differences(a, b, f"{at}[{i}]")
        ]
    return [] if old == new else [at or "(whole)"]


CONFIG_NAMES = sorted(p.stem for p in CONFIGS.glob("*.yaml"))


def test_every_config_has_a_snapshot() -> None:
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.json")) == CONFIG_NAMES


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_a_config_loads_to_its_snapshot(name: str) -> None:
    expected = json.loads((SNAPSHOTS / f"{name}.json").read_text())
    got = json.loads(json.dumps(snapshot(CONFIGS / f"{name}.yaml")))
    assert _differences(expected["spec"], got["spec"])[:10] == []
    assert got["runs"] == expected["runs"]
    assert got["rule"] == expected["rule"]


def test_validate_expand_json_prints_the_canonical_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from runner.cli import main

    path = CONFIGS / "tortoise-small.yaml"
    assert main(["validate", "--expand", "json", "--force", str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(canonical_form(load_spec(path))))
    assert printed["variants"][0]["name"] == "unlimited"
