"""A refused spec costs no heavy import: `runner validate` reads the spec
with each experiment's light ``expect:`` keys (runner.experiments) and
imports the analyses (numpy, scipy, matplotlib, pandas) only when a step
runs them; docs/running.md promises a refusal under a second."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

HEAVY = ("scipy", "matplotlib", "pandas", "pyarrow", "runner.experiments.registry")
PROBE = """
import json, sys
from runner.cli import main
code = main(["validate", sys.argv[1]])
print(json.dumps({"code": code, "heavy": [m for m in %r if m in sys.modules]}))
"""


def test_a_refused_spec_imports_no_analysis(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nseeds: 2\nnot_a_key: 1\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "not_a_key" in done.stderr, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 2, "heavy": []}


def test_the_registry_still_hands_out_the_analyses() -> None:
    import runner.experiments as experiments

    assert experiments.ANALYSES and experiments.TABLES
    assert experiments.tables_of(experiments.ANALYSES) == experiments.TABLES
