"""Shared test helpers: paths, and skips that say why."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.datasets import FOLDER, DataFile, data_dir
from runner.experiments import load_spec
from runner.layout import Layout
from runner.manifest import RunRecord, read_run, write_run
from runner.spec.hypotheses import Hypothesis
from runner.spec.matrix import expand_spec
from runner.spec.model import Spec
from runner.spec.parse import spec_data
from runner.tools.prereqs import find

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# A plain hypothesis the planning tests plan for: new at least 10% faster than old.
A_TENTH_FASTER = Hypothesis(
    name="h",
    variant="new",
    reference="old",
    metric="ttlb",
    expect="decrease",
    smallest_change=0.10,
    cls="perf",
)
CI_SMALL = ROOT / "configs" / "ci-small.yaml"


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run's manifest as the JSON holds it, to look into or change in a test."""
    return dict(read_run(run_dir).document)


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    write_run(run_dir, RunRecord(manifest))


def _missing(names: tuple[str, ...]) -> list[str]:
    return [f"{n} ({find(n).problem})" for n in names if not find(n).ok]


def _skip_unless(names: tuple[str, ...]) -> pytest.MarkDecorator:
    missing = _missing(names)
    return pytest.mark.skipif(bool(missing), reason="missing: " + "; ".join(missing))


needs_tor = _skip_unless(("tor", "tor-gencert", "faketime"))
needs_shadow = _skip_unless(("tor", "tor-gencert", "faketime", "shadow", "tgen", "oniontrace"))


def simulation_line(item: pytest.Item) -> str | None:
    """The line that says what a test marked ``simulation`` starts, printed
    as it begins (its ``what``); None for other tests and for one that its
    skip marks skip."""
    mark = item.get_closest_marker("simulation")
    if mark is None:
        return None
    for skip in item.iter_markers("skipif"):
        condition = skip.args[0] if skip.args else skip.kwargs.get("condition")
        if isinstance(condition, bool) and condition:
            return None
    what = mark.args[0] if mark.args else "a simulation"
    return f"{item.nodeid} starts {what}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A simulation takes minutes: say what it starts before it runs, on a
    line of its own (outside the captured output, without -s)."""
    line = simulation_line(item)
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    if line is None or reporter is None:
        return
    reporter.ensure_newline()
    if reporter._tw.width_of_current_line:  # -q: a line of progress dots
        reporter.line("")
    if reporter.showlongtestinfo or reporter.showfspath:
        reporter.write(line)  # the reporter starts the test's own line next
    else:
        reporter.write_line(line)


def needs_data(*files: DataFile) -> pytest.MarkDecorator:
    """Skip, saying which, unless the published data files are present."""
    folder = data_dir() / FOLDER
    missing = [f.name for f in files if not (folder / f.name).is_file()]
    return pytest.mark.skipif(
        bool(missing), reason=f"not in {folder} (set TORNET_DATA): {', '.join(missing)}"
    )


def run_experiment(
    data: dict[str, Any], tmp_path: Path, tolerated_checks: tuple[str, ...] = ()
) -> tuple[Path, str]:
    """Run the spec ``data`` (a loaded YAML config) with ``runner experiment``
    under ``tmp_path``; return its results directory and report, and fail
    with the output and report if it exits non-zero, unless every run
    completed and each failed check contains one of ``tolerated_checks``."""
    spec = tmp_path / f"{data['name']}.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "experiment", str(spec), "--results", str(results)]
        + ["--jobs", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    exp = results / data["name"]
    report = (exp / "report" / "report.md").read_text() if exp.exists() else ""
    failed_checks = [line for line in proc.stderr.splitlines() if line.startswith("CHECK FAILED: ")]
    tolerated = (
        proc.returncode == 1
        and bool(failed_checks)
        and all(any(t in line for t in tolerated_checks) for line in failed_checks)
        and all(not line.startswith("FAILED ") for line in proc.stderr.splitlines())
    )
    assert proc.returncode == 0 or tolerated, proc.stdout + proc.stderr + report
    return exp, report


def congestion_tree(comparisons: list[list[str]]) -> dict[str, Any]:
    """congestion-small's tree scenario, shortened for a Shadow test: seed 1,
    45 s of traffic, the variants ``comparisons`` name (the first's reference
    is the baseline). A 5 MiB download through the shared middle can take
    over 45 s, and which bulk client is slow depends on the seed's network;
    1 MiB downloads back to back still keep relay8middle's queues full.
    The config's completion and load checks are left out, and a client that
    finished nothing is tolerated (``TREE_TOLERATED``): in 45 s a tree client
    finishes 1-8 downloads, sometimes none, and a Shadow test asserts what
    its mechanism logged, not how well a shortened run went."""
    path = ROOT / "configs" / "congestion-small.yaml"
    raw = spec_data(path)
    # Marut on Vegas (0005) runs in the full config only: its level joins
    # the small one's mechanisms here.
    full = spec_data(ROOT / "configs" / "congestion.yaml")
    mechanisms = raw["matrix"]["factors"]["mechanism"]
    for level, body in full["matrix"]["factors"]["mechanism"].items():
        mechanisms.setdefault(level, body)
    # The matrix written out, so that variants can be picked by name.
    data: dict[str, Any] = expand_spec(raw, str(path))
    names = {name for pair in comparisons for name in pair}
    data["seeds"] = [1]
    data["duration"]["measure"] = "45 s"
    data["variants"] = {k: v for k, v in data["variants"].items() if k in names}
    data["baseline"] = comparisons[0][1]
    data["comparisons"] = comparisons
    data.pop("hypotheses", None)  # they name variants left out
    data.pop("claims", None)  # the claims they tested
    data["workloads"]["bulk"]["params"]["sizes"] = ["1 MiB"]
    data["checks"] = {"min_completion": 0.0}  # no load check: its variants are left out
    return data


def mctor_variants(names: dict[str, str]) -> dict[str, Any]:
    """configs/mctor.yaml (the full matrix: every N, both rules and the
    control; one path, as mctor-small's) shortened for a Shadow test: seed
    1, the variants ``names`` picks (short name -> matrix name), renamed to
    their short names, without hypotheses or comparisons; rounds are not
    counted (a test's runs are too short for 10 a phase), and the rounds
    are mctor-small's phases at 2 MiB downloads and 1 MiB uploads (the
    configs' sizes take seconds to minutes a round; a test checks the
    mechanism, not the steady rate)."""
    path = ROOT / "configs" / "mctor.yaml"
    data: dict[str, Any] = expand_spec(spec_data(path), str(path))
    small = yaml.safe_load((ROOT / "configs" / "mctor-small.yaml").read_text())
    data["workloads"] = small["workloads"]
    data["workloads"]["phases"]["params"]["phases"] = [
        "video: 16 x 128 KiB down",
        "upload: 6 x 1 MiB up",
        "download: 5 x 2 MiB down",
    ]
    # Two cycles: the clients end after them under Shadow (the stop the
    # configs' cycles use), well inside the test's 90 s.
    data["workloads"]["phases"]["params"]["cycles"] = 2
    data["seeds"] = [1]
    data["variants"] = {short: data["variants"][full] for short, full in names.items()}
    data["baseline"] = next(iter(names))
    data.pop("comparisons", None)
    data.pop("hypotheses", None)  # they name variants left out
    data.pop("claims", None)  # the claims they tested
    data["checks"]["min_rounds_per_phase"] = 0
    return data


# What congestion_tree's runs may fail: a client that finished nothing.
TREE_TOLERATED = ("finished no transfer",)


@pytest.fixture
def ci_small_text() -> str:
    return CI_SMALL.read_text()


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copy(FIXTURES / name, target)
    return target


def gunzip_fixture(path: Path, dest: Path) -> Path:
    """Unpack the gzipped fixture ``path`` (``<name>.gz``) into ``dest``."""
    out = dest / path.name.removesuffix(".gz")
    with gzip.open(path, "rb") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _patched_tor_problem() -> str:
    from runner.errors import PrerequisiteError
    from runner.tools.torbuild import patched_tor

    try:
        patched_tor()
    except PrerequisiteError as exc:
        return str(exc)
    return ""


needs_patched_tor = pytest.mark.skipif(
    bool(_patched_tor_problem()), reason=_patched_tor_problem() or "patched tor is built"
)


def fixture_spec(name: str) -> Spec:
    """The spec a committed results fixture was run with
    (``tests/fixtures/<name>/spec.yaml``): the config may have moved on
    since, and the tables describe the network of their own run."""
    return load_spec(FIXTURES / name / "spec.yaml")


# The tool versions a fixture's manifests record (the fixtures' own runs).
FIXTURE_VERSIONS = {"shadow": "3.3.0", "tor": "0.4.9.11", "tgen": "1.1.2", "oniontrace": "1.0.0"}


def _fixture_hosts(experiment: Path, variant: str, seed: int) -> dict[str, dict[str, Any]]:
    """A run's hosts as its tables name them: clients (with class and
    whether measured) from clients.csv, else from transfers.csv; relays
    from relay_load.csv."""
    hosts: dict[str, dict[str, Any]] = {}
    for table in ("clients", "transfers"):
        path = experiment / f"{table}.csv"
        if hosts or not path.is_file():
            continue
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if (row["variant"], int(row["seed"])) == (variant, seed):
                    hosts[row["host"]] = {
                        "role": "client",
                        "class": row["class"],
                        "measured": row["measured"] == "1",
                    }
    path = experiment / "relay_load.csv"
    if path.is_file():
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if (row["variant"], int(row["seed"])) == (variant, seed):
                    hosts[row["relay"]] = {"role": row["role"], "measured": False}
    return hosts


def fixture_results(name: str, root: Path, spec: Spec | None = None) -> tuple[Spec, Layout]:
    """A results folder under ``root`` made from a committed results fixture
    (``tests/fixtures/<name>``: a real run's tables): its tables, the ones
    it leaves out written empty, a complete manifest for each run with
    the hosts its tables name (or the fixture's own manifests, runs.json),
    and the runs table collect would write from those manifests.
    ``spec``: the fixture's spec changed where a run's identity does not
    look (its hypotheses, say), instead of the fixture's own."""
    from runner.experiments import TABLES
    from runner.manifest import STATUS_COMPLETE
    from runner.network.backends import SHADOW
    from runner.network.identity import run_identity
    from runner.tables.collect import tables
    from runner.tables.sources import run_sources, write_runs

    spec = spec or fixture_spec(name)
    layout = Layout(root, spec.name)
    layout.experiment_dir.mkdir(parents=True)
    for table in (FIXTURES / name).glob("*.csv.gz"):
        (layout.experiment_dir / table.name[:-3]).write_bytes(gzip.decompress(table.read_bytes()))
    for table in tables(TABLES):
        path = layout.table_csv(table.name)
        if not path.exists():
            table.write(layout.experiment_dir, [])
    recorded = FIXTURES / name / "runs.json"
    runs = json.loads(recorded.read_text()) if recorded.is_file() else []
    kept = {(r["variant"], int(r["seed"])): r for r in runs}
    for seed in spec.seeds:
        for variant in spec.variants:
            manifest = kept.get((variant.name, seed)) or {
                "variant": variant.name,
                "seed": seed,
                "status": STATUS_COMPLETE,
                "backend": "shadow",
                "phases": {"generate_s": 1.0, "simulate_s": 60.0, "collect_s": 1.0},
            }
            hosts = _fixture_hosts(layout.experiment_dir, variant.name, seed)
            for host, info in manifest.get("hosts", {}).items():
                hosts[host] = info | hosts.get(host, {})
            manifest |= {
                "hosts": hosts,
                "versions": FIXTURE_VERSIONS,
                "identity": run_identity(spec, variant, seed, SHADOW, FIXTURE_VERSIONS),
            }
            run_dir = layout.run_dir(variant.name, seed)
            run_dir.mkdir(parents=True)
            write_manifest(run_dir, manifest)
    # The runs table, as collect writes it, from those records.
    write_runs(layout, run_sources(spec, layout))
    return spec, layout


def fixture_report(name: str, root: Path, spec: Spec | None = None) -> Path:
    """The report of a committed results fixture, written under ``root``
    (``spec``: as fixture_results takes it)."""
    from runner.experiments import ANALYSES
    from runner.report.compare import compare

    spec, layout = fixture_results(name, root, spec)
    return compare(spec, layout, ANALYSES).path
