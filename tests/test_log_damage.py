"""Damaged logs: lines cut short, junk bytes, empty and missing logs are
skipped and counted; collection writes every table and the report shows
them. The logs are real ones (fixtures cut from runs), damaged here."""

import csv
import json
import shutil
from pathlib import Path

from runner.experiments import ANALYSES, TABLES
from runner.layout import Layout
from runner.logs.damage import LogDamage, clean_lines
from runner.logs.tgen import RECORD_MARKERS, parse_lines
from runner.report.compare import compare
from runner.tables.collect import collect
from tests.conftest import FIXTURES
from tests.specs import ci_small

TGEN = FIXTURES / "tgen-perfclient.stdout"
ONIONTRACE = FIXTURES / "oniontrace-conflux-client.stdout"


def _result_lines(path: Path) -> list[int]:
    text = path.read_text().splitlines()
    return [i for i, line in enumerate(text, start=1) if any(m in line for m in RECORD_MARKERS)]


def test_intact_log_reads_unchanged() -> None:
    damage = LogDamage("tgen", ("[stream-success]",))
    lines = list(clean_lines(TGEN, damage))
    assert lines == TGEN.read_text().splitlines(keepends=True)
    assert not damage.damaged


def test_cut_last_line_and_junk_bytes_are_skipped_and_counted(tmp_path: Path) -> None:
    data = TGEN.read_bytes()
    results = _result_lines(TGEN)
    lines = data.splitlines(keepends=True)
    # junk bytes in the middle of a result line; the last line cut mid-write
    junk_at = results[0]
    lines[junk_at - 1] = lines[junk_at - 1][:40] + b"\xff\xfe\x00junk" + lines[junk_at - 1][40:]
    lines[-1] = lines[-1][:200]  # past its [stream-success]: a transfer lost
    log = tmp_path / "tgen.1000.stdout"
    log.write_bytes(b"".join(lines))

    damage = LogDamage(log.name, ("[stream-success]", "[stream-error]"))
    transfers = list(parse_lines(clean_lines(log, damage), damage.skip))
    intact = list(parse_lines(TGEN.read_text().splitlines()))
    assert len(transfers) == len(intact) - 2
    assert damage.skipped == 2 and damage.lost == 2 and damage.matters
    assert damage.examples[0].startswith(f"line {junk_at}: bytes that are not text")
    assert damage.examples[1].startswith(f"line {len(lines)}: cut short")


def test_a_result_line_that_does_not_parse_is_skipped_not_fatal(tmp_path: Path) -> None:
    text = TGEN.read_text().splitlines(keepends=True)
    first = _result_lines(TGEN)[0]
    text[first - 1] = text[first - 1].split(" transport [")[0] + "\n"  # sections lost
    damage = LogDamage("tgen", RECORD_MARKERS)
    transfers = list(parse_lines(text, damage.skip))
    assert len(transfers) == len(_result_lines(TGEN)) - 1
    assert damage.lost == 1 and "without stream/bytes/times" in damage.examples[0]


def test_junk_outside_records_is_counted_but_does_not_matter(tmp_path: Path) -> None:
    log = tmp_path / "oniontrace.1001.stdout"
    log.write_bytes(ONIONTRACE.read_bytes()[:200] + b"\x00\x00\x00\n" + ONIONTRACE.read_bytes())
    damage = LogDamage(log.name, ("650 CIRC ",))
    assert len(list(clean_lines(log, damage))) == len(ONIONTRACE.read_text().splitlines()) + 2
    assert damage.skipped == 1 and damage.lost == 0 and not damage.matters


def test_empty_and_missing_logs_are_recorded(tmp_path: Path) -> None:
    empty = tmp_path / "empty.stdout"
    empty.write_bytes(b"")
    damage = LogDamage("empty")
    assert list(clean_lines(empty, damage)) == [] and damage.empty and damage.matters
    missing = LogDamage("missing")
    assert list(clean_lines(tmp_path / "none.stdout", missing)) == [] and missing.missing


def _client(cls: str) -> dict[str, object]:
    return {
        "role": "client",
        "class": cls,
        "measured": True,
        "bandwidth_down_bits": 10**8,
        "bandwidth_up_bits": 10**8,
    }


def _damaged_run(run_dir: Path) -> None:
    """A run of four clients whose logs are a copy of real ones: one intact,
    one with a line cut short and junk bytes, one empty, one missing."""
    hosts = run_dir / "shadow.data" / "hosts"
    names = ["perfclient1exit", "perfclient2exit", "perfclient3exit", "perfclient4exit"]
    for name in names:
        (hosts / name).mkdir(parents=True)
        shutil.copy(ONIONTRACE, hosts / name / "oniontrace.1001.stdout")
        shutil.copy(FIXTURES / "tor-mctor-guard.stdout", hosts / name / "tor.1000.stdout")
    shutil.copy(TGEN, hosts / names[0] / "tgen.1002.stdout")
    data = TGEN.read_bytes()
    (hosts / names[1] / "tgen.1002.stdout").write_bytes(
        data[:300] + b"\x9b\xff junk" + data[300:-40]
    )
    (hosts / names[2] / "tgen.1002.stdout").write_bytes(b"")
    manifest = {
        "variant": "conflux-on",
        "seed": 1,
        "status": "complete",
        "backend": "shadow",
        "clock_epoch": 946684800,
        "phases": {},
        "hosts": {name: _client("perf") for name in names},
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_collect_finishes_damaged_runs_and_the_report_shows_them(tmp_path: Path) -> None:
    spec = ci_small()
    layout = Layout(tmp_path / "results", spec.name)
    _damaged_run(layout.run_dir("conflux-on", 1))

    collected = collect(spec, layout, TABLES)
    assert collected.runs == 1
    for table in ("transfers", "circuits", "relays", "clients", "served", "log_damage"):
        assert (layout.experiment_dir / f"{table}.csv").is_file(), table
    with layout.log_damage_csv.open() as handle:
        damage = {row["log"]: row for row in csv.DictReader(handle)}
    cut = damage["shadow.data/hosts/perfclient2exit/tgen.1002.stdout"]
    assert cut["skipped_lines"] == "2" and int(cut["lost_records"]) >= 1
    assert damage["shadow.data/hosts/perfclient3exit/tgen.1002.stdout"]["empty"] == "1"
    assert damage["shadow.data/hosts/perfclient4exit/tgen.*.stdout"]["missing"] == "1"
    assert not any("perfclient1exit" in log for log in damage)
    assert collected.rows["transfers"] == 2 * len(_result_lines(TGEN)) - int(cut["lost_records"])

    result = compare(spec, layout, ANALYSES)
    report = result.path.read_text()
    assert "damaged log lines skipped" in report
    assert "| conflux-on | 1 | complete |" in report and "2 (2 logs missing or empty)" in report
    assert not result.checks_passed
    texts = [str(f) for f in result.failures]
    assert any("perfclient4exit/tgen.*.stdout: log missing" in f for f in texts)
    assert any("perfclient3exit/tgen.1002.stdout: log empty" in f for f in texts)
    assert any("perfclient2exit/tgen.1002.stdout: 2 damaged lines" in f for f in texts)
