"""The run store (runner/tables/store.py): real runs' tables (the committed
results fixtures) stored and read back, the stages reading it, and
``runner store import`` adding runs from elsewhere and refusing what does
not belong."""

from __future__ import annotations

import json
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import runner.experiments
from runner.analyses.analyze import analyze
from runner.errors import TableError
from runner.layout import Layout
from runner.spec.model import Spec
from runner.tables.collect import parsed_tables
from runner.tables.runs import RUNS
from runner.tables.schema import TRANSFERS
from runner.tables.sources import refresh, run_sources
from runner.tables.store import RUN_BUDGET_BYTES, gzip_bytes, stored_runs
from runner.tables.store_import import import_runs
from tests.conftest import FIXTURES, fixture_results

NAMES = ("conflux-small-pilot", "congestion-small", "mctor-small", "tortoise-small")
TABLES = parsed_tables(runner.experiments.TABLES)


def by_run(rows: list[Any]) -> dict[tuple[str, int], list[Any]]:
    """Rows by their run, in their order (the tables hold runs in the spec's
    order; a fixture may hold them in the order of the spec it ran)."""
    found: dict[tuple[str, int], list[Any]] = {}
    for row in rows:
        found.setdefault((row.variant, row.seed), []).append(row)
    return found


def store_fixture(name: str, tmp_path: Path) -> tuple[Spec, Layout, Layout]:
    """A fixture's results (``source``) and a second results folder with no
    run directories and no tables, whose store holds the fixture's runs."""
    spec, source = fixture_results(name, tmp_path / "source")
    target = Layout(tmp_path / "clone", source.experiment)
    done = import_runs(source.root, {spec.name: spec}, target.root, TABLES)
    assert not done.refused, done.refused
    assert len(done.added) == len(spec.runs())
    return spec, source, target


@pytest.mark.parametrize("name", NAMES)
def test_a_store_alone_gives_back_every_table_and_the_answers(name: str, tmp_path: Path) -> None:
    spec, source, target = store_fixture(name, tmp_path)
    assert not target.experiment_dir.exists()
    assert refresh(spec, target, TABLES)
    assert all(s.stored is not None for s in run_sources(spec, target))
    # The runs table is assembled with the tables.
    for table in [*TABLES, RUNS]:
        assert by_run(table.read_from(target)) == by_run(table.read_from(source)), table.name
    analyze(spec, source, runner.experiments.ANALYSES)
    analyze(spec, target, runner.experiments.ANALYSES)
    for name_ in ("answers", "checks"):
        got = target.data_json(name_).read_text()
        assert got == source.data_json(name_).read_text()
    # A second refresh with nothing new stored leaves the tables alone.
    assert not refresh(spec, target, TABLES)


@pytest.mark.parametrize("name", NAMES)
def test_every_stored_fixture_run_is_within_the_size_budget(name: str, tmp_path: Path) -> None:
    _, _, target = store_fixture(name, tmp_path)
    sizes = [s.size_bytes for s in stored_runs(target.store_dir)]
    assert sizes and max(sizes) <= RUN_BUDGET_BYTES, (max(sizes), RUN_BUDGET_BYTES)


def test_the_same_runs_stored_twice_are_the_same_bytes(tmp_path: Path) -> None:
    _, _, first = store_fixture("mctor-small", tmp_path / "a")
    _, _, second = store_fixture("mctor-small", tmp_path / "b")
    files = sorted(p.relative_to(first.store_dir) for p in first.store_dir.rglob("*.*"))
    assert files
    for path in files:
        assert (first.store_dir / path).read_bytes() == (second.store_dir / path).read_bytes()
    assert gzip_bytes("a,b\r\n") == gzip_bytes("a,b\r\n")


def _half(source: Layout, seeds: set[int], dest: Path) -> Path:
    """A results folder holding ``source``'s collected runs of ``seeds`` alone."""
    out = dest / source.experiment
    out.mkdir(parents=True)
    for table in [*TABLES, RUNS]:
        rows = [r for r in table.read_from(source) if r.seed in seeds]
        table.write(out, rows)
    return dest


def test_a_round_split_between_two_clones_gives_the_answers_of_one(tmp_path: Path) -> None:
    spec, source = fixture_results("conflux-small-pilot", tmp_path / "one")
    analyze(spec, source, runner.experiments.ANALYSES)
    seeds = sorted(spec.seeds)
    first, second = set(seeds[::2]), set(seeds[1::2])
    merged = Layout(tmp_path / "merged", source.experiment)
    for half, folder in ((first, "a"), (second, "b")):
        done = import_runs(
            _half(source, half, tmp_path / folder), {spec.name: spec}, merged.root, TABLES
        )
        assert not done.refused and done.added
    refresh(spec, merged, TABLES)
    analyze(spec, merged, runner.experiments.ANALYSES)
    assert merged.data_json("answers").read_text() == source.data_json("answers").read_text()


def test_an_archive_of_a_results_folder_imports_as_the_folder(tmp_path: Path) -> None:
    spec, source = fixture_results("mctor-small", tmp_path / "src")
    archive = tmp_path / "runs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source.root, arcname="results")
    target = tmp_path / "clone"
    done = import_runs(archive, {spec.name: spec}, target, TABLES)
    assert not done.refused and len(done.added) == len(spec.runs())
    again = import_runs(archive, {spec.name: spec}, target, TABLES)
    assert not again.added and len(again.present) == len(spec.runs())


def test_import_refuses_a_run_whose_experiment_or_identity_is_unknown(tmp_path: Path) -> None:
    spec, source = fixture_results("mctor-small", tmp_path / "src")
    target = tmp_path / "clone"
    done = import_runs(source.root, {}, target, TABLES)
    assert done.refused and not done.added
    assert "experiment 'mctor-small' has no spec here" in done.refused[0]
    assert not (target / "store").exists()
    changed = replace(spec, duration=replace(spec.duration, measure=spec.duration.measure + 1))
    done = import_runs(source.root, {spec.name: changed}, target, TABLES)
    assert done.refused and not done.added
    assert "differs in duration" in done.refused[0]
    assert str(source.experiment_dir / "runs.csv") in done.refused[0]


def test_import_of_a_folder_with_no_run_names_it_and_what_was_expected(tmp_path: Path) -> None:
    spec, source = fixture_results("mctor-small", tmp_path / "src")
    (source.experiment_dir / "runs.csv").unlink()
    with pytest.raises(TableError, match="no run found") as caught:
        import_runs(source.experiment_dir, {spec.name: spec}, tmp_path / "clone", TABLES)
    assert str(source.experiment_dir) in str(caught.value) and "store/" in str(caught.value)
    assert not (tmp_path / "clone").exists()


def _edit_first_transfer(experiment_dir: Path) -> tuple[str, int]:
    """Change the first transfer's time to last byte; its run."""
    rows = TRANSFERS.read(experiment_dir / "transfers.csv")
    rows[0] = replace(rows[0], ttlb=rows[0].ttlb + 1.0)
    TRANSFERS.write(experiment_dir, rows)
    return rows[0].variant, rows[0].seed


def test_import_refuses_tables_that_differ_from_the_stored_run_naming_both(
    tmp_path: Path,
) -> None:
    spec, source, target = store_fixture("mctor-small", tmp_path)
    variant, seed = _edit_first_transfer(source.experiment_dir)
    done = import_runs(source.root, {spec.name: spec}, target.root, TABLES)
    assert len(done.refused) == 1 and not done.added
    why = done.refused[0]
    assert f"{variant}/seed-{seed}" in why and "transfers" in why
    assert str(source.experiment_dir / "runs.csv") in why and str(target.store_dir) in why


def test_a_stored_run_of_another_identity_is_never_mixed_in(tmp_path: Path) -> None:
    spec, _, target = store_fixture("mctor-small", tmp_path)
    changed = replace(spec, duration=replace(spec.duration, measure=spec.duration.measure + 1))
    assert not any(s.stored for s in run_sources(changed, target))
    assert not refresh(changed, target, TABLES)
    # Once the tables took runs from the store, a spec that no longer asks
    # for them drops their rows.
    assert refresh(spec, target, TABLES)
    assert refresh(changed, target, TABLES)
    assert TRANSFERS.read_from(target) == []


def test_a_run_in_both_places_with_one_identity_is_taken_once(tmp_path: Path) -> None:
    spec, source = fixture_results("mctor-small", tmp_path / "src")
    done = import_runs(source.root, {spec.name: spec}, source.root, TABLES)
    assert len(done.added) == len(spec.runs())
    sources = run_sources(spec, source)
    assert all(s.stored is not None and s.stored.key.endswith(s.row.identity) for s in sources)
    before = TRANSFERS.read_from(source)
    refresh(spec, source, TABLES)
    assert by_run(TRANSFERS.read_from(source)) == by_run(before)
    assert len(TRANSFERS.read_from(source)) == len(before)


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_a_stored_run_records_identity_versions_cpu_and_its_tables(tmp_path: Path) -> None:
    spec, _, target = store_fixture("conflux-small-pilot", tmp_path)
    run = stored_runs(target.store_dir)[0]
    record = _json(run.path / "run.json")
    assert record["identity"]["fingerprint"] in run.key
    assert record["versions"]["tor"] and record["cpu_s"] is not None
    assert record["tables"]["transfers"]["rows"] > 0
    assert {p.name for p in run.path.iterdir()} == {"run.json"} | {
        f"{name}.csv.gz" for name in record["tables"]
    }
    shutil.rmtree(target.store_dir / run.key)
    assert len(stored_runs(target.store_dir)) == len(spec.runs()) - 1


def _seeds_yaml(spec_file: Path, seeds: str, dest: Path) -> Path:
    """A copy of a spec file with its ``seeds:`` line replaced."""
    lines = spec_file.read_text().splitlines()
    text = "\n".join(f"seeds: {seeds}" if line.startswith("seeds:") else line for line in lines)
    dest.write_text(text + "\n")
    return dest


def test_stored_seeds_beyond_the_spec_are_analysed_too(tmp_path: Path) -> None:
    from runner.tables.sources import with_stored_seeds
    from runner.workflow import Console, Experiment

    spec, _, target = store_fixture("conflux-small-pilot", tmp_path)
    # A stored run whose identity is another seed's is never mixed in.
    seed_one = next(s for s in stored_runs(target.store_dir) if s.run == ("plain", 1))
    forged = target.store_dir / seed_one.key.replace("-seed-1-", "-seed-9-")
    shutil.copytree(seed_one.path, forged)
    record = json.loads((forged / "run.json").read_text())
    record["run"]["seed"] = "9"
    (forged / "run.json").write_text(json.dumps(record))

    fewer = replace(spec, seeds=(1, 2, 3), seed_rounds=None)
    widened, extra = with_stored_seeds(fewer, target)
    assert extra == [4, 5]
    assert sorted((v.name, s) for v, s in widened.runs()) == sorted(
        (v.name, s) for v, s in spec.runs()
    )
    lines: list[str] = []
    spec_file = _seeds_yaml(
        FIXTURES / "conflux-small-pilot" / "spec.yaml", "[1, 2, 3]", tmp_path / "spec.yaml"
    )
    exp = Experiment.load(spec_file, target.root, "shadow", console=Console(lines.append))
    found = exp.analyze().analyzed
    assert found is not None
    assert {a.estimate.n for a in found.answers} == {5}
    assert "2 stored seeds beyond the spec's (4, 5): analysed too" in lines


def test_claims_in_a_fresh_clone_come_from_the_store_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.cli import main

    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(FIXTURES / "conflux-small-pilot" / "spec.yaml", configs / "conflux-small.yaml")
    spec, source = fixture_results("conflux-small-pilot", tmp_path / "one" / "results")
    analyze(spec, source, runner.experiments.ANALYSES)
    clone = tmp_path / "two" / "results"
    assert import_runs(source.root, {spec.name: spec}, clone, TABLES).added
    assert not (clone / spec.name).exists()
    pages = []
    for where in ("one", "two"):
        monkeypatch.chdir(tmp_path / where)
        out = tmp_path / where / "claims.md"
        argv = ["claims", "--configs", str(configs), "--results", "results", "--out", str(out)]
        assert main(argv) == 0
        pages.append(out.read_text())
    assert "Results: `results/conflux-small/answers.json`." in pages[1]
    assert pages[1] == pages[0]


def test_run_in_a_fresh_clone_takes_the_stored_runs_and_runs_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.execute.run_all
    from runner.workflow import Console, Experiment

    spec, _, target = store_fixture("conflux-small-pilot", tmp_path)
    missing = next(s for s in stored_runs(target.store_dir) if s.run == ("conflux", 3))
    shutil.rmtree(missing.path)
    asked: list[list[tuple[str, int]]] = []

    def fake_run_experiment(spec: Spec, *args: Any, **kwargs: Any) -> list[Any]:
        asked.append([(v.name, s) for v, s in spec.runs()])
        return []

    monkeypatch.setattr(runner.execute.run_all, "run_experiment", fake_run_experiment)
    lines: list[str] = []
    exp = Experiment.load(
        FIXTURES / "conflux-small-pilot" / "spec.yaml",
        target.root,
        "shadow",
        console=Console(lines.append, lines.append),
    )
    assert exp.run().code == 0
    assert asked == [[("conflux", 3)]]
    assert f"{len(spec.runs()) - 1} runs taken from the store ({target.store_dir}): " in "\n".join(
        lines
    )
