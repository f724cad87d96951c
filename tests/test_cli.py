"""The command line on bad input: a clear error, a non-zero exit, nothing written."""

import argparse
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.specs import ci_small_data, write_spec


def _runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_broken_spec_stops_before_anything_is_written(ci_small_text: str, tmp_path: Path) -> None:
    data = ci_small_data(ci_small_text)
    data["network"]["relays"]["guard"]["bandwidth"] = "fast"
    spec = write_spec(data, tmp_path, "broken.yaml")
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


def test_an_experiment_is_named_by_path_or_by_name_and_a_misspelling_lists_the_names() -> None:
    from runner.cli import main

    assert main(["validate", "ci-small"]) == 0  # configs/ci-small.yaml
    proc = _runner("validate", "ci-smal")
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "error: ci-smal: (file): no such spec file; did you mean ci-small "
        "(configs/ci-small.yaml)? the experiments in configs/: ci-small, conflux, "
    )
    names = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert f"configs/: {', '.join(names)} (give a path" in proc.stderr


def test_help_texts_speak_to_users() -> None:
    from runner.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    texts = {"runner": parser.format_help()}
    texts |= {name: p.format_help() for name, p in sub.choices.items()}
    for name, text in texts.items():
        assert "``" not in text, name  # no RST markup
    assert texts["runner"].split("\n\n")[1].startswith("Experiments on tor:")
    flat = {name: " ".join(text.split()) for name, text in texts.items()}
    assert "circuits.csv" not in flat["runner"]
    assert "collect parse every run's logs into the experiment's tables" in flat["runner"]
    for reader in ("collect", "analyze", "report", "compare"):
        assert "whose runs to read" in flat[reader], reader
        assert "real tor processes" not in flat[reader], reader
    assert "real tor processes on this machine" in flat["experiment"]


def _holder(experiment_dir: Path) -> subprocess.Popen[str]:
    """Another runner: a process that holds the experiment's lock until killed."""
    code = (
        "import time; from pathlib import Path\n"
        "from runner.execute.lock import experiment_lock\n"
        f"with experiment_lock(Path({str(experiment_dir)!r}), ['runner', 'experiment', 'x']):\n"
        "    print('locked', flush=True); time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_runner_stops_at_once_and_touches_nothing(tmp_path: Path) -> None:
    results = tmp_path / "results"
    experiment = results / "ci-small-local"
    holder = _holder(experiment)
    try:
        before = sorted((p.name, p.stat().st_mtime_ns) for p in experiment.iterdir())
        for command in ("run", "experiment", "collect", "compare", "regress"):
            extra = ["--baseline", str(tmp_path / "b.json")] if command == "regress" else []
            started = time.monotonic()
            proc = _runner(
                command, "configs/ci-small.yaml", "--results", str(results),
                "--backend", "local", *extra,
            )  # fmt: skip
            assert time.monotonic() - started < 10  # the interpreter's start included
            assert proc.returncode == 1, proc.stderr
            assert f"{experiment} is in use by another runner (pid {holder.pid}: " in proc.stderr
            assert "runner experiment x" in proc.stderr
        after = sorted((p.name, p.stat().st_mtime_ns) for p in experiment.iterdir())
        assert after == before
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the killed holder's lock: the next runner gets it.
    from runner.execute.lock import experiment_lock

    with experiment_lock(experiment, ["next"]):
        assert (experiment / ".lock").read_text().startswith(f"pid {os.getpid()}: next")


def test_an_experiment_too_large_for_the_machine_stops_before_writing(tmp_path: Path) -> None:
    from runner.experiments import load_spec
    from runner.network.backends import LOCAL, SHADOW
    from runner.network.capacity import TooLarge, check_capacity

    tortoise = load_spec(ROOT / "configs" / "tortoise.yaml")
    with pytest.raises(TooLarge, match=r"1 run at once needs about .* GiB .*try fewer --jobs"):
        check_capacity(tortoise, SHADOW, runs_at_once=1, memory_mib=8 * 1024)
    size = check_capacity(tortoise, SHADOW, runs_at_once=1, memory_mib=128 * 1024)
    assert size.hosts > 900 and size.tors["client"] > 900 and size.tors["authority"] == 3
    small = load_spec(ROOT / "configs" / "ci-small.yaml")
    assert check_capacity(small, LOCAL, runs_at_once=1, memory_mib=2048).hosts == 12
    with pytest.raises(TooLarge, match="a run has 12 hosts, more than the local backend's ceiling"):
        check_capacity(small, LOCAL, runs_at_once=1, max_hosts=10, memory_mib=2048)

    results = tmp_path / "results"
    proc = _runner(
        "run", "configs/ci-small.yaml", "--results", str(results), "--backend", "local",
        "--max-hosts", "10",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "too large for this machine" in proc.stderr and "--force" in proc.stderr
    assert not results.exists()


def test_forty_million_clients_are_refused_by_validate_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.cli import main

    huge = tmp_path / "huge.yaml"
    text = (ROOT / "configs" / "ci-small.yaml").read_text()
    huge.write_text(text.replace("perf: {count: 4,", "perf: {count: 40000000,"))
    tracemalloc.start()
    started = time.monotonic()
    code = main(["validate", str(huge), "--backend", "shadow"])
    elapsed = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 1
    assert "a run has 40000008 hosts, more than the shadow backend's ceiling" in (
        capsys.readouterr().err
    )
    assert elapsed < 1.0 and peak < 100 * 2**20
    # --force validates it anyway, still without building its network.
    assert main(["validate", str(huge), "--backend", "shadow", "--force"]) == 0


def test_sizes_counted_from_the_spec_match_the_networks_built() -> None:
    from runner.experiments import load_spec
    from runner.network.backends import SHADOW
    from runner.network.capacity import counted_size
    from runner.network.mixing import variant_plan

    for name in ("tortoise-small", "mctor-small", "congestion-small"):
        spec = load_spec(ROOT / "configs" / f"{name}.yaml")
        for variant in spec.variants:
            plan = variant_plan(spec, variant, spec.seeds[0])
            assert counted_size(spec, variant, SHADOW, 1).hosts == len(plan.hosts), variant.name


def test_commands_run_out_of_order_say_what_to_run_first(tmp_path: Path) -> None:
    results = str(tmp_path / "results")
    spec = "configs/ci-small.yaml"
    proc = _runner("compare", spec, "--results", results, "--backend", "local")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "run `python -m runner collect configs/ci-small.yaml` first" in proc.stderr
    proc = _runner("collect", spec, "--results", results, "--backend", "local")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no complete runs of configs/ci-small.yaml" in proc.stderr
    assert not list((tmp_path / "results").rglob("*.csv"))


def test_compare_ends_with_the_report_paths_and_the_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.cli import main
    from tests.conftest import FIXTURES, fixture_report

    fixture_report("tortoise-small", tmp_path)
    capsys.readouterr()
    spec = FIXTURES / "tortoise-small" / "spec.yaml"
    main(["compare", str(spec), "--results", str(tmp_path), "--backend", "shadow"])
    out = capsys.readouterr().out.strip().splitlines()
    html = tmp_path / "tortoise-small" / "report" / "report.html"
    assert out[1].strip() == str(html) and html.is_file()
    assert out[2].strip().startswith(f"view it: xdg-open {html} ")
    assert out[4] == "Answers:"
    assert out[5].startswith("limit-slows-bulk: limit-100 vs unlimited")
    assert out[-1].startswith("  verdict: ")


def test_analyze_then_report_write_the_report_compare_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report before analyze names the file it lacks; analyze writes the
    JSON files and no report; report then renders compare's report."""
    from runner.cli import main
    from tests.conftest import FIXTURES, fixture_results
    from tests.test_report_golden import PLACEHOLDER

    name = "conflux-small-pilot"
    experiment = fixture_results(name, tmp_path)[1].experiment_dir
    spec = str(FIXTURES / name / "spec.yaml")
    args = [spec, "--results", str(tmp_path), "--backend", "shadow"]
    capsys.readouterr()

    assert main(["report", *args]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: the report renders what `analyze` writes, and {experiment / 'checks.json'} "
        f"does not exist: run `python -m runner analyze {spec}` first"
    )
    assert not (experiment / "report").exists()

    code = main(["analyze", *args])
    printed = capsys.readouterr()
    assert code == (1 if "CHECK FAILED: " in printed.err else 0)
    assert printed.out.splitlines()[:3] == [
        f"analyses: {experiment / 'analyses'}/*.json",
        f"          {experiment / 'answers.json'}",
        f"          {experiment / 'checks.json'}",
    ]
    assert (experiment / "analyses" / "transfers.json").is_file()
    assert not (experiment / "report").exists()

    assert main(["report", *args]) == 0
    report = experiment / "report" / "report.md"
    assert capsys.readouterr().out.splitlines()[0] == f"report: {report}"
    expected = (FIXTURES / name / "report.md").read_text()
    assert report.read_text().replace(str(FIXTURES), PLACEHOLDER) == expected
