"""Each table is defined once (runner.tables.definition): its row type gives its
columns, their types, its CSV and Parquet files and its reader; and
``runner.load`` hands an experiment's tables, answers and checks to pandas."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import runner
from runner.errors import TableError
from runner.experiments import TABLES
from runner.tables.definition import Table, column
from runner.tables.runs import RUNS
from runner.tables.schema import LOG_DAMAGE, TRANSFERS
from tests.conftest import ROOT, fixture_report, fixture_spec


@dataclass(frozen=True)
class Sample:
    variant: str
    seed: int
    measured: bool
    time: float = column("time_s", digits=3)
    rate: float | None = column()
    counts: tuple[int, ...] = column()
    flags: tuple[str, ...] = column(sep=" ")
    note: str = column(default="")


SAMPLE = Table("sample", Sample, lambda logs: [])
ROWS = [
    Sample("a", 1, True, 1.23456, None, (3, 0, 2), ("Exit", "Fast")),
    Sample("b", 2, False, 0.0, 2.5, (), (), "x"),
]


def test_every_registered_table_has_typed_unique_columns() -> None:
    for table in (*TABLES, LOG_DAMAGE, RUNS):
        names = table.columns
        assert len(names) == len(set(names)), table.name
        assert {"variant", "seed"} <= set(names), table.name


def test_a_table_round_trips_through_csv_and_parquet(tmp_path: Path) -> None:
    SAMPLE.write(tmp_path, ROWS)
    lines = (tmp_path / "sample.csv").read_text().splitlines()
    assert lines[0] == "variant,seed,measured,time_s,rate,counts,flags,note"
    assert lines[1] == "a,1,1,1.235,,3;0;2,Exit Fast,"
    back = SAMPLE.read(tmp_path / "sample.csv")
    assert back[0] == dataclasses.replace(ROWS[0], time=1.235)
    assert back[1] == ROWS[1]
    frame = pq.read_table(tmp_path / "sample.parquet").to_pandas()
    assert list(frame.columns) == SAMPLE.columns
    assert list(frame["counts"][0]) == [3, 0, 2]  # a real list, not "3;0;2"
    assert frame["rate"].isna()[0] and frame["measured"].dtype == bool
    assert frame["time_s"][0] == pytest.approx(1.235)


def test_an_older_table_without_a_defaulted_column_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "sample.csv"
    path.write_text("variant,seed,measured,time_s,rate,counts,flags\nc,3,0,1.0,,1,\n")
    assert SAMPLE.read(path) == [Sample("c", 3, False, 1.0, None, (1,), ())]


def test_a_bad_cell_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "sample.csv"
    path.write_text("variant,seed,measured,time_s,rate,counts,flags\nc,three,0,1.0,,1,\n")
    with pytest.raises(TableError, match=r"sample.csv: line 2: column seed: expected a int"):
        SAMPLE.read(path)
    path.write_text("variant,seed,measured,time_s,rate,counts,flags\nc,3,yes,1.0,,1,\n")
    with pytest.raises(TableError, match="column measured"):
        SAMPLE.read(path)


def test_a_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "transfers.csv"
    path.write_text("variant,seed,host\nv,1,h\n")
    with pytest.raises(TableError, match="transfers.csv: the transfers table has no column class"):
        TRANSFERS.read(path)


def test_a_row_type_with_an_unsupported_column_is_refused() -> None:
    @dataclass(frozen=True)
    class Bad:
        variant: str
        extra: dict[str, int]

    with pytest.raises(TypeError, match="column extra"):
        _ = Table("bad", Bad, lambda logs: []).columns


def test_load_gives_the_tables_answers_and_checks_to_pandas(tmp_path: Path) -> None:
    report = fixture_report("tortoise-small", tmp_path)
    experiment = report.parent.parent
    # The fixture's tables are CSV only: load reads them by their definitions.
    results = runner.load(experiment)
    assert isinstance(results.transfers, pd.DataFrame)
    assert list(results.transfers.columns) == TRANSFERS.columns
    assert results.transfers["success"].dtype == bool
    # The README's example: load, then one line per variant for a CDF.
    web = results.transfers.query("measured and success and `class` == 'web'")
    assert web.groupby("variant").ttlb_s.median().notna().all()
    answers = results.answers
    assert list(answers["hypothesis"]) == [
        h.name for h in fixture_spec("tortoise-small").hypotheses
    ]
    assert set(answers["verdict"]) <= {
        "supported",
        "contradicted",
        "no change that matters",
        "undetermined",
    }
    assert isinstance(results.checks["passed"], bool)
    assert [a["analysis"] for a in results.checks["analyses"]][0] == "transfers"
    transfers = results.analyses["transfers"]
    assert {c["variant"] for c in transfers["checks"]} == set(results.transfers["variant"])
    assert "client-bandwidth-and-rate-limits" in results.analyses
    with pytest.raises(AttributeError, match="no such table"):
        _ = results.no_such_table


def test_loaded_results_print_as_a_short_summary_naming_their_tables(tmp_path: Path) -> None:
    experiment = fixture_report("tortoise-small", tmp_path).parent.parent
    results = runner.load(experiment)
    text = repr(results)
    assert len(text) < 500, text
    assert text.startswith("<Results tortoise-small (") and "\n" not in text
    for name, table in results.tables.items():
        assert (f"{name} {len(table)}" if len(table) else name) in text, name
    assert f"transfers {len(results.transfers)}," in text and "checks failed" in text
    assert f"{len(results.answers)} answers; {len(results.analyses)} analyses>" in text
    assert "perfclient" not in text  # no rows


def test_the_table_reference_names_every_table_and_column() -> None:
    text = (ROOT / "docs" / "tables.md").read_text()
    for table in (*TABLES, LOG_DAMAGE, RUNS):
        assert table.name in text, table.name
        missing = [c for c in table.columns if f"`{c}`" not in text]
        assert missing == [], f"{table.name}: {missing}"
