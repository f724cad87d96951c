"""The report-writing benchmark: it writes the report of collected results
and adds one row per call to its section of the benchmarks table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.bench.report import SECTION, main
from runner.planning.seed_rounds import ROUNDS_FILE
from tests.conftest import FIXTURES, fixture_results


def test_a_row_per_report_written_under_its_own_section(tmp_path: Path) -> None:
    spec, layout = fixture_results("mctor-small", tmp_path / "results")
    out = tmp_path / "bench.md"
    out.write_text("# Benchmarks\n\n## Runs at once\n\n| a |\n|---|\n| 1 |\n")
    argv = [str(FIXTURES / "mctor-small" / "spec.yaml"), "--results", str(tmp_path / "results")]
    assert main([*argv, "--out", str(out)]) == 0
    assert (layout.report_dir / "report.md").is_file()
    assert main([*argv, "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count(SECTION) == 1 and text.count("| 1 |") == 1  # the other table kept
    rows = [line for line in text[text.index(SECTION) :].splitlines() if "| mctor-small |" in line]
    assert len(rows) == 2
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert int(cells[3]) == len(list(spec.runs()))  # every run of the fixture
    assert int(cells[4]) > 0 and float(cells[5]) > 0 and float(cells[7]) > 0


def test_results_not_collected_are_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.md"
    argv = [str(FIXTURES / "mctor-small" / "spec.yaml"), "--results", str(tmp_path)]
    assert main([*argv, "--out", str(out)]) == 1
    assert "transfers.csv: no collected transfers" in capsys.readouterr().err
    assert not out.exists()


def test_the_report_is_of_the_seeds_the_rounds_ran(tmp_path: Path) -> None:
    spec, layout = fixture_results("conflux-small-pilot", tmp_path / "results")
    assert spec.seed_rounds is not None and len(spec.seeds) > 3
    rounds = {
        "rounds": [{"seeds": [1, 2, 3], "verdicts": {}, "intervals": {}, "runs": 0}],
        "variant_seeds": {},
        "stopped": "a record of one round",
    }
    (layout.experiment_dir / ROUNDS_FILE).write_text(json.dumps(rounds))
    out = tmp_path / "bench.md"
    spec_path = FIXTURES / "conflux-small-pilot" / "spec.yaml"
    assert main([str(spec_path), "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    assert "- seeds: 1, 2, 3;" in (layout.report_dir / "report.md").read_text()
    row = next(line for line in out.read_text().splitlines() if f"| {spec.name} |" in line)
    assert int(row.strip("|").split("|")[3]) == 3 * len(spec.variants)


def test_shadow_options_compares_hosts_logs_without_the_runs_own_path(tmp_path: Path) -> None:
    from runner.bench.shadow_options import _logs_digest

    digests = []
    for name, line in (("a", "same"), ("b", "same"), ("c", "other")):
        run_dir = tmp_path / name
        host = run_dir / "shadow.data" / "hosts" / "relay1"
        host.mkdir(parents=True)
        (host / "tor.1000.stdout").write_text(f"Read {run_dir}/torrc\n{line}\n")
        (host / "tor.1000.shimlog").write_text(f"{name} differs, and is no log of the host's\n")
        digests.append(_logs_digest(run_dir))
    assert digests[0] == digests[1] != digests[2]
