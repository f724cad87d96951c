"""The command line on bad input: a clear error, a non-zero exit, nothing written."""

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT


def _runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_broken_spec_stops_before_anything_is_written(ci_small_text: str, tmp_path: Path) -> None:
    data = yaml.safe_load(ci_small_text)
    data["network"]["relays"]["guard"]["bandwidth"] = "fast"
    spec = tmp_path / "broken.yaml"
    spec.write_text(yaml.safe_dump(data))
    results = tmp_path / "results"
    for command in ("run", "experiment"):
        proc = _runner(command, str(spec), "--results", str(results))
        assert proc.returncode == 2
        assert proc.stderr.strip() == (
            f"error: {spec}: network.relays.guard.bandwidth: "
            "expected a bandwidth such as '100 Mbit', got 'fast'"
        )
        assert not results.exists()


def test_missing_spec_file(tmp_path: Path) -> None:
    proc = _runner("validate", str(tmp_path / "absent.yaml"))
    assert proc.returncode == 2
    assert "absent.yaml: (file): no such spec file" in proc.stderr


def test_validate_ok() -> None:
    proc = _runner("validate", "configs/ci-small.yaml")
    assert proc.returncode == 0
    assert "2 variants x 2 seeds = 4 runs" in proc.stdout
