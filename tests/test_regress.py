import json
from pathlib import Path

import pytest

from runner.analyses.regress import check_against, make_baseline, provenance_note
from runner.tables.schema import TransferRow


def _rows(scale: float) -> list[TransferRow]:
    return [
        TransferRow(
            "v",
            1,
            "perfclient1exit",
            "perf",
            True,
            51200,
            300.0,
            0.2 * scale,
            0.5 * scale,
            True,
            "",
        )
        for _ in range(5)
    ]


def test_baseline_round_trip_passes_and_a_slowdown_fails(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", {})))
    assert all(v.ok for v in check_against(_rows(1.2), ["v"], path))
    verdicts = {v.key: v for v in check_against(_rows(2.0), ["v"], path)}
    assert not verdicts["v/perf/51200/ttlb_median"].ok
    assert "FAIL" in verdicts["v/perf/51200/ttlb_median"].line()


def test_a_metric_missing_from_the_results_fails(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", {})))
    verdicts = check_against([], ["v"], path)
    assert verdicts and not any(v.ok for v in verdicts)


def test_local_baselines_flag_only_gross_changes(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", {}, factor=4.0)))
    entry = json.loads(path.read_text())["metrics"]["v/perf/51200/ttlb_median"]
    assert (entry["low"], entry["high"]) == (0.0, 2.0)
    goodput = json.loads(path.read_text())["metrics"]["v/perf/51200/goodput_median"]
    assert goodput["high"] is None  # faster is no regression
    assert all(v.ok for v in check_against(_rows(3.0), ["v"], path))
    assert all(v.ok for v in check_against(_rows(0.1), ["v"], path))
    assert not all(v.ok for v in check_against(_rows(5.0), ["v"], path))


def test_local_time_bands_have_an_absolute_slack(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(make_baseline(_rows(0.02), ["v"], "x", {}, 4.0, slack_s=0.5)))
    entry = json.loads(path.read_text())["metrics"]["v/perf/51200/ttfb_median"]
    assert entry["high"] == pytest.approx(0.004 + 0.5)
    assert all(v.ok for v in check_against(_rows(0.05), ["v"], path))  # a few ms slower: fine


def test_a_baseline_from_another_spec_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ci-small.json"
    provenance = {"spec_sha256": "a" * 64, "backend": "shadow"}
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", provenance)))
    assert provenance_note(path, "a" * 64) is None
    assert provenance_note(path, "b" * 64) == (
        f"note: {path} was written from spec sha256 {'a' * 12}, the spec is now {'b' * 12}: "
        "`make baseline` rewrites it"
    )
    provenance["backend"] = "local"
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", provenance)))
    assert "`make baseline BACKEND=local` rewrites it" in str(provenance_note(path, "b" * 64))
    path.write_text(json.dumps(make_baseline(_rows(1.0), ["v"], "x", {})))
    assert provenance_note(path, "b" * 64) is None  # no provenance: nothing to compare
