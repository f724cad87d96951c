"""Command line: ``python -m runner <command> configs/<exp>.yaml``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from runner.errors import DataError, PrerequisiteError, RunError, SpecError, TableError
from runner.execute.cpus import OWN_CPUS, PINNING_MODES
from runner.execute.lock import check_not_busy, experiment_lock
from runner.network.backends import BACKENDS, Backend

# The heavy modules (numpy, scipy, matplotlib, networkx) are imported by the
# commands that use them, so that a second runner on a busy experiment, or on
# a machine kept busy by Shadow, is told at once.
if TYPE_CHECKING:
    from runner.analyses.answers import Answer
    from runner.checks import Failure
    from runner.layout import Layout
    from runner.spec.model import Spec

# --backend's choices, in the order the command line and its messages list them.
BACKEND_NAMES = tuple(sorted(BACKENDS))


def _layout(spec: Spec, args: argparse.Namespace) -> Layout:
    """Runs of each backend land apart: results/<exp>/ and results/<exp>-local/."""
    from runner.layout import Layout

    return Layout(Path(args.results).resolve(), _backend(args, spec).experiment_name(spec.name))


# Commands that only read an experiment's runs: their backend is the one
# the runs were made with, whatever this machine has installed.
READERS = ("collect", "compare", "analyze", "report")


def _backend_name(args: argparse.Namespace, name: str) -> str:
    """The backend a command works on: the one asked for; for a reader, the
    one the runs' manifests name; else Shadow when it is installed."""
    if getattr(args, "backend", None):
        return str(args.backend)
    if args.command in READERS:
        from runner.manifest import backends_with_runs

        root = Path(args.results).resolve()
        found = backends_with_runs(
            {b: root / BACKENDS[b].experiment_name(name) for b in BACKEND_NAMES}
        )
        if len(found) > 1:
            raise SpecError(
                args.spec,
                "(backend)",
                f"runs of this experiment exist for both backends ({', '.join(found)}): "
                "say which with --backend",
            )
        if found:
            return found[0]
    from runner.tools.prereqs import default_backend

    return default_backend().name


def cmd_check(args: argparse.Namespace) -> int:
    from runner.network.backends import SHADOW
    from runner.tools.prereqs import report as prereq_report

    found = prereq_report(patched_configs(Path(getattr(args, "configs", "configs"))))
    print(found.text)
    usable = SHADOW.name in found.backends if args.shadow else bool(found.backends)
    if not usable:
        what = "The Shadow backend cannot" if args.shadow else "No backend can"
        print(f"\n{what} run here; see README.md, {README_SECTIONS}.")
    return 0 if usable else 1


def patched_configs(configs: Path) -> list[str]:
    """The configs in ``configs`` with a variant that runs the patched tor
    (``tor: patched``), by name; one that does not load is named with why."""
    from runner.experiments import load_spec

    names = []
    for path in sorted(configs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as exc:
            names.append(f"{path.name} (does not load: {exc})")
            continue
        if any(v.tor == "patched" for v in spec.variants):
            names.append(spec.name)
    return names


# Where README.md explains the prerequisites (a test checks that these sections exist).
README_SECTIONS = "'Set up' and 'Shadow, tgen and oniontrace'"


def cmd_validate(args: argparse.Namespace) -> int:
    from runner.experiments import load_spec

    spec = load_spec(Path(args.spec))
    if not args.force:  # refuse here what `run` would refuse on this machine
        from runner.execute.run import plan_placement
        from runner.network.capacity import check_capacity

        backend = _backend(args, spec)
        runs = len(spec.runs())
        placement = plan_placement(spec, backend, runs)
        check_capacity(spec, backend, placement.jobs, args.max_hosts)
    for warning in _backend(args, spec).warnings(spec):
        print(warning, file=sys.stderr)
    if args.expand:
        from runner.spec.dump import spec_yaml

        # The spec as the runner reads it: a matrix written out as variants.
        print(spec_yaml(spec.raw, width=100), end="")
    out = sys.stderr if args.expand else sys.stdout
    if spec.seed_rounds is not None:
        r = spec.seed_rounds
        print(
            f"{spec.path}: ok ({len(spec.variants)} variants x {r.min} to {r.max} seeds, "
            f"{r.step} more a round"
            + (" of the variants they still need" if r.later == "hypotheses" else "")
            + f" until its {len(spec.hypotheses)} hypotheses are decisive)",
            file=out,
        )
        return 0
    runs = len(spec.variants) * len(spec.seeds)
    print(
        f"{spec.path}: ok ({len(spec.variants)} variants x {len(spec.seeds)} seeds = {runs} runs)",
        file=out,
    )
    return 0


def _backend(args: argparse.Namespace, spec: Spec) -> Backend:
    return BACKENDS[_backend_name(args, spec.name)]


def _spec(args: argparse.Namespace) -> Spec:
    """The spec, with the seeds its rounds ran if it runs seeds in rounds."""
    from runner.analyses.seed_rounds import seeds_in_use
    from runner.experiments import load_spec

    spec = load_spec(Path(args.spec))
    return seeds_in_use(spec, _layout(spec, args))


def _run(spec: Spec, args: argparse.Namespace) -> int:
    from runner.analyses.measured_params import measured_params
    from runner.execute.cluster.executors import make_executor
    from runner.execute.cluster.options import parse_executor
    from runner.execute.progress import outcome_line
    from runner.execute.run import run_experiment
    from runner.tables.collect import logged_rows

    layout = _layout(spec, args)
    executor = make_executor(
        parse_executor(args.executor), args.pinning, getattr(args, "threads", None)
    )
    started = time.monotonic()
    outcomes = run_experiment(
        spec,
        layout,
        sys.argv,
        jobs=args.jobs,
        backend=_backend(args, spec),
        threads=args.threads,
        pinning=args.pinning,
        executor=executor,
        keep_stale=args.keep_stale,
        retry_failed=args.retry_failed,
        measure_params=lambda variant, seed: measured_params(
            partial(logged_rows, layout), variant, seed
        ),
    )
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"FAILED {o.variant}/seed-{o.seed}: {o.error}", file=sys.stderr)
    sys.stderr.flush()
    print(outcome_line([o.status for o in outcomes], time.monotonic() - started), flush=True)
    return 1 if failed else 0


def _collect(spec: Spec, args: argparse.Namespace) -> int:
    from runner.experiments import TABLES
    from runner.tables.collect import collect

    layout = _layout(spec, args)
    result = collect(spec, layout, TABLES)
    if not result.runs:
        print(
            f"error: no complete runs of {spec.path} under {layout.experiment_dir}: "
            f"run them first (`python -m runner run {spec.path}`, or `experiment`)",
            file=sys.stderr,
        )
        return 1
    print(result.line(f"{layout.experiment_dir}/<table>.csv and .parquet"))
    return 0


def _has_tables(layout: Layout, spec: Spec, command: str) -> bool:
    """Whether collect has written the tables ``command`` reads; says what to run if not."""
    if layout.transfers_csv.is_file():
        return True
    print(
        f"error: {command} reads the tables `collect` writes, and {layout.transfers_csv} "
        f"does not exist: run `python -m runner collect {spec.path}` first",
        file=sys.stderr,
    )
    return False


def _compare(spec: Spec, args: argparse.Namespace) -> int:
    """Analyze, then the report: the console says what failed, where the
    report is and what it answers."""
    from runner.experiments import ANALYSES
    from runner.report.compare import compare
    from runner.tables.runs import write_runs

    layout = _layout(spec, args)
    if not _has_tables(layout, spec, "compare"):
        return 1
    # The report reads the runs as the run directories hold them now.
    write_runs(spec, layout)
    result = compare(spec, layout, ANALYSES)
    _record_check_failures(spec, layout, result.failures)
    _print_report_paths(result.path)
    _print_answers(*result.answers)
    return 0 if result.checks_passed else 1


def _analyze(spec: Spec, args: argparse.Namespace) -> int:
    """``runner analyze``: the JSON files the report renders from; exit 1
    when a check failed, as compare."""
    from runner.analyses.analyze import analyze
    from runner.experiments import ANALYSES
    from runner.report.answers import answer_rows
    from runner.tables.runs import write_runs

    layout = _layout(spec, args)
    if not _has_tables(layout, spec, "analyze"):
        return 1
    # Analyze reads the runs as the run directories hold them now.
    write_runs(spec, layout)
    found = analyze(spec, layout, ANALYSES)
    _record_check_failures(spec, layout, found.failures)
    print(f"analyses: {layout.analyses_dir}/*.json")
    print(f"          {layout.data_json('answers')}")
    print(f"          {layout.data_json('checks')}")
    _print_answers(*answer_rows(found.answers, found.cpu_hours))
    return 0 if found.checks_passed else 1


def _report(spec: Spec, args: argparse.Namespace) -> int:
    """``runner report``: the report from what analyze wrote (exit 0 once
    it is written; analyze's exit says whether the checks passed)."""
    from runner.errors import NotAnalyzedError
    from runner.experiments import ANALYSES
    from runner.report.assemble import write_report

    try:
        result = write_report(spec, _layout(spec, args), ANALYSES)
    except NotAnalyzedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    _print_report_paths(result.path)
    return 0


def _record_check_failures(spec: Spec, layout: Layout, failures: list[Failure]) -> None:
    """Print each failed check and record it in its run's manifest, for --retry-failed."""
    from runner.manifest import record_check_failures
    from runner.tables.runs import write_runs

    for failure in failures:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    runs = {(v.name, s): layout.run_dir(v.name, s) for v, s in spec.runs()}
    marked = record_check_failures(runs, failures)
    write_runs(spec, layout)  # with the checks each run failed
    if marked:
        print(
            "The runs whose checks failed are kept and reported; "
            "`run` or `experiment` with --retry-failed runs them again.",
            file=sys.stderr,
        )
    sys.stderr.flush()


def _print_report_paths(path: Path) -> None:
    """Where the report is: the console's end, with the answers after it."""
    html = path.with_suffix(".html")
    print(f"report: {path}")
    print(f"        {html}")
    print(f"        view it: xdg-open {html} (without a display: docs/running.md)")


def _print_answers(header: list[str], rows: list[list[str]]) -> None:
    if rows:
        from runner.report.answers import console_lines

        print("\nAnswers:")
        print("\n".join(console_lines(header, rows)))


def cmd_generate(args: argparse.Namespace) -> int:
    from runner.execute.run import generate_experiment, resolve_tools

    spec = _spec(args)
    backend = _backend(args, spec)
    layout = _layout(spec, args)
    command = [Path(sys.executable).name, "-m", "runner", *sys.argv[1:]]
    written, kept = generate_experiment(
        spec, layout, command, backend, resolve_tools(spec, backend)
    )
    for run_dir in written:
        print(f"generated {run_dir}")
    print(
        f"{len(written)} networks written, {kept} complete runs of the same identity kept "
        f"({backend.name} backend) under {layout.experiment_dir}"
    )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    return _run(_spec(args), args)


def cmd_collect(args: argparse.Namespace) -> int:
    return _collect(_spec(args), args)


def cmd_compare(args: argparse.Namespace) -> int:
    return _compare(_spec(args), args)


def cmd_analyze(args: argparse.Namespace) -> int:
    return _analyze(_spec(args), args)


def cmd_report(args: argparse.Namespace) -> int:
    return _report(_spec(args), args)


def cmd_experiment(args: argparse.Namespace) -> int:
    from runner.experiments import load_spec

    spec = load_spec(Path(args.spec))
    run_code = 0
    if spec.seed_rounds is not None:
        from runner.analyses.answers import answers
        from runner.analyses.seed_rounds import check_design, run_in_rounds
        from runner.tables.schema import TRANSFERS

        layout = _layout(spec, args)
        # Refused before any run: rounds that ran under another design.
        changes = check_design(spec, layout, getattr(args, "new_design", False))

        def answer_round(current: Spec) -> list[Answer]:
            _collect(current, args)
            return answers(current, layout, TRANSFERS.read(layout.transfers_csv))

        spec, run_code = run_in_rounds(
            spec, layout, lambda current: _run(current, args), answer_round, changes
        )
    else:
        run_code = _run(spec, args)
    if _collect(spec, args) != 0:
        return 1
    compare_code = _compare(spec, args)
    return run_code or compare_code


def cmd_plan(args: argparse.Namespace) -> int:
    """Plan from a pilot: the runs in results, or ``--pilot N`` seeds run first."""
    from dataclasses import replace

    from runner.analyses.client_bandwidth import per_client
    from runner.analyses.seed_plan import make_plan, plan_data
    from runner.execute.cpus import usable_cpus
    from runner.experiments import load_spec
    from runner.manifest import write_json_atomic
    from runner.report.seed_plan import render
    from runner.tables.runs import write_runs
    from runner.tables.schema import CLIENTS, RELAY_LOAD, TRANSFERS

    target = None
    if args.pilot_from:
        # Plan args.spec from another, smaller experiment's pilot.
        target = load_spec(Path(args.spec))
        args.spec = args.pilot_from
    spec = load_spec(Path(args.spec))
    layout = _layout(spec, args)
    if args.pilot:
        spec = replace(spec, seeds=tuple(range(1, args.pilot + 1)))
        if _run(spec, args) != 0:
            print("warning: some pilot runs failed; planning from the rest", file=sys.stderr)
        if _collect(spec, args) != 0:
            return 1
    else:
        spec = _spec(args)
    if not _has_tables(layout, spec, "plan"):
        return 1
    if not spec.hypotheses:
        print(
            f"error: {spec.path} states no hypotheses: there is nothing to plan for",
            file=sys.stderr,
        )
        return 1
    write_runs(spec, layout)  # the pilot's costs, as its run directories hold them now
    transfers = TRANSFERS.read(layout.transfers_csv)
    clients = CLIENTS.read_from(layout)
    plan = make_plan(
        spec,
        layout,
        transfers,
        per_client(transfers, clients),
        RELAY_LOAD.read_from(layout),
        target=target,
    )
    text = "\n".join(render(plan, len(usable_cpus()), args.cores))
    print(text)
    # Beside the pilot's tables; a plan for another spec is named after it.
    stem = f"plan-{target.name}" if target else "plan"
    (layout.experiment_dir / f"{stem}.md").write_text(text + "\n")
    write_json_atomic(layout.experiment_dir / f"{stem}.json", plan_data(plan))
    return 0


def cmd_regress(args: argparse.Namespace) -> int:
    from runner.analyses.regress import (
        LOCAL_ABSOLUTE_SLACK_S,
        LOCAL_FACTOR_BAND,
        check_against,
        make_baseline,
        provenance_note,
    )
    from runner.execute.run import resolve_tools
    from runner.experiments import load_spec
    from runner.manifest import write_json_atomic
    from runner.tables.schema import TRANSFERS

    spec = load_spec(Path(args.spec))
    layout = _layout(spec, args)
    if not args.skip_run:
        code = cmd_experiment(args)
        if code != 0:
            print("regression: the experiment itself failed", file=sys.stderr)
            return code
    if not _has_tables(layout, spec, "regress"):
        return 1
    rows = TRANSFERS.read(layout.transfers_csv)
    variants = [v.name for v in spec.variants]
    baseline = Path(args.baseline)
    if args.write:
        backend = _backend(args, spec)
        tools = resolve_tools(spec, backend)
        # Real-time (not simulated) timings have no network model and depend
        # on the host: only gross changes count there; the experiment's own
        # checks still apply.
        factor = None if backend.simulated else LOCAL_FACTOR_BAND
        slack_s = 0.0 if backend.simulated else LOCAL_ABSOLUTE_SLACK_S
        provenance = {
            "spec_sha256": spec.sha256,
            "backend": backend.name,
            "versions": tools.versions,
        }
        write_json_atomic(
            baseline, make_baseline(rows, variants, spec.name, provenance, factor, slack_s)
        )
        print(f"wrote {baseline}")
        return 0
    if not baseline.is_file():
        print(f"{baseline}: no such baseline (write one with --write)", file=sys.stderr)
        return 1
    note = provenance_note(baseline, spec.sha256)
    if note:
        print(note)
    verdicts = check_against(rows, variants, baseline)
    for v in verdicts:
        print(v.line())
    bad = [v for v in verdicts if not v.ok]
    print(f"regression: {len(verdicts) - len(bad)}/{len(verdicts)} metrics within tolerance")
    return 1 if bad else 0


def _answers_files(results: Path, name: str) -> list[Path]:
    """Where each backend's collect and compare leave the experiment's
    answers: results/<name>/answers.json and results/<name>-local/."""
    from runner.layout import Layout

    return [
        Layout(results, BACKENDS[backend].experiment_name(name)).data_json("answers")
        for backend in BACKEND_NAMES
    ]


def cmd_claims(args: argparse.Namespace) -> int:
    """Write the page of every config's claims beside the project's answers."""
    import json

    from runner.analyses.answers import spec_records
    from runner.experiments import load_spec
    from runner.report.claims import claims_page

    results = Path(args.results)
    experiments = []
    for path in sorted(Path(args.configs).glob("*.yaml")):
        spec = load_spec(path)
        candidates = _answers_files(results, spec.name)
        present = [c for c in candidates if c.is_file()]
        # The latest collected results, of either backend.
        latest = max(present, key=lambda c: c.stat().st_mtime) if present else None
        found = None
        source = "not run (no " + " or ".join(f"`{c}`" for c in candidates) + ")"
        if latest is not None:
            try:
                found = json.loads(latest.read_text())
                source = f"`{latest}`"
            except (OSError, ValueError) as exc:
                source = f"not run ({latest} does not read as JSON: {exc})"
        experiments.append((spec.name, str(path), spec.claims, spec_records(spec, found), source))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")  # renamed into place: never half a page
    tmp.write_text(claims_page(experiments))
    os.replace(tmp, out)
    answered = sum(1 for e in experiments if not e[4].startswith("not run"))
    print(f"wrote {out}: {len(experiments)} experiments, {answered} with collected answers")
    return 0


def _size_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-hosts",
        type=int,
        default=None,
        help="most hosts a run may have (default: TORNET_MAX_HOSTS, else 5000 under "
        "Shadow and 200 locally)",
    )
    p.add_argument(
        "--force", action="store_true", help="run even if the size check says it won't fit"
    )


# What add_subparsers gives (generic only to the type checker).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="runner", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    # The commands in the order --help lists them.
    _add_check(sub)
    _add_validate(sub)
    _with_spec(
        sub, "generate", "write every run's network (keys, configs) without running it"
    ).set_defaults(func=cmd_generate)
    _add_running_commands(sub)
    _with_spec(sub, "collect", "parse logs into transfers.csv and circuits.csv").set_defaults(
        func=cmd_collect
    )
    _with_spec(sub, "compare", "write the report from the collected tables").set_defaults(
        func=cmd_compare
    )
    _add_analyze_and_report(sub)
    _add_claims(sub)
    return parser


def _add_analyze_and_report(sub: Subcommands) -> None:
    """compare's two steps, each on its own."""
    _with_spec(
        sub,
        "analyze",
        "from the collected tables, each analysis's result, the answers and the checks as JSON",
    ).set_defaults(func=cmd_analyze)
    _with_spec(
        sub, "report", "render the report from what analyze wrote, computing nothing"
    ).set_defaults(func=cmd_report)


def _with_spec(sub: Subcommands, name: str, help_text: str) -> argparse.ArgumentParser:
    """A command on one experiment: its spec, the results root and the backend."""
    p = sub.add_parser(name, help=help_text)
    p.add_argument("spec", help="experiment spec, e.g. configs/ci-small.yaml")
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument(
        "--backend",
        choices=BACKEND_NAMES,
        default=None,
        help="shadow, or local (real processes on this machine); default: shadow if "
        "installed, else local",
    )
    return p


def _add_check(sub: Subcommands) -> None:
    check = sub.add_parser(
        "check",
        help="report which prerequisites are present and which backends can run "
        "(exit 1 when not even the local one can)",
    )
    check.add_argument(
        "--shadow", action="store_true", help="exit 1 unless the Shadow backend can run"
    )
    check.add_argument(
        "--configs",
        default="configs",
        help="the specs whose need of the patched tor to report (default: configs)",
    )
    check.set_defaults(func=cmd_check)


def _add_validate(sub: Subcommands) -> None:
    validate = _with_spec(sub, "validate", "check a spec and exit")
    validate.add_argument(
        "--expand",
        action="store_true",
        help="print the spec as the runner reads it, a matrix written out as plain variants",
    )
    _size_options(validate)
    validate.set_defaults(func=cmd_validate)


def _add_running_commands(sub: Subcommands) -> None:
    """The commands that run an experiment's runs (here or elsewhere), with
    the options of where and how they run and each one's own."""
    for name, func, text in (
        ("run", cmd_run, "generate and simulate every run not yet complete"),
        ("experiment", cmd_experiment, "run, collect and compare"),
        (
            "regress",
            cmd_regress,
            "run the experiment (its complete runs reused, only missing or stale ones run) "
            "and check it against a baseline",
        ),
        (
            "plan",
            cmd_plan,
            "from a pilot's runs, the spread between seeds and its parts, and the seeds, "
            "CPU-hours and wall time a decisive answer needs, per design",
        ),
    ):
        p = _with_spec(sub, name, text)
        _placement_options(p)
        p.set_defaults(func=func)
        if name == "regress":
            p.add_argument("--baseline", required=True, help="baseline JSON file")
            p.add_argument("--write", action="store_true", help="write the baseline instead")
            p.add_argument("--skip-run", action="store_true", help="use the collected tables")
        if name in ("experiment", "regress"):
            p.add_argument(
                "--new-design",
                action="store_true",
                help="run seed rounds under the spec's seeds {min, max, step} though recorded "
                "rounds ran under another (the report then says their error rates do not hold)",
            )
        if name == "plan":
            _plan_options(p)
        _size_options(p)
        _rerun_options(p)
        p.set_defaults(runs=True)


def _placement_options(p: argparse.ArgumentParser) -> None:
    """Where runs go and how many at once, with how many threads, on which CPUs."""
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="runs at once here (default: one per core, as far as the runs to do and memory allow)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="Shadow threads per run (default: the cores left over, shared out)",
    )
    p.add_argument(
        "--pinning",
        choices=PINNING_MODES,
        default=OWN_CPUS,
        help="own-cpus (default): each run its own CPUs, Shadow pins inside them; off: "
        "Shadow does not pin; shared: Shadow's own pinning over every CPU (runs at once "
        "collide)",
    )
    p.add_argument(
        "--executor",
        default=os.environ.get("TORNET_EXECUTOR", "local"),
        help="where runs go: local (default; TORNET_EXECUTOR), a Dask scheduler "
        "address (tcp://HOST:8786), or slurm[:queue=Q,cores=N,memory=4GiB,"
        "walltime=01:00:00,jobs=N,account=A]",
    )


def _plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pilot",
        type=int,
        default=None,
        help="run seeds 1..N first (those not yet complete) and plan from them",
    )
    p.add_argument("--cores", type=int, default=16, help="a larger machine to price (default: 16)")
    p.add_argument(
        "--pilot-from",
        default=None,
        metavar="SPEC",
        help="plan this spec from the runs of another (smaller) spec with the same "
        "hypotheses, scaled by its clients, relays and durations",
    )


def _rerun_options(p: argparse.ArgumentParser) -> None:
    """What becomes of complete runs whose checks failed or whose identity changed."""
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="run again the complete runs whose checks failed in the last report",
    )
    p.add_argument(
        "--keep-stale",
        action="store_true",
        help="keep complete runs whose identity differs from what the spec now gives "
        "(the report lists them as stale) instead of running them again",
    )


def _add_claims(sub: Subcommands) -> None:
    claims = sub.add_parser(
        "claims",
        help="write docs/claims.md: per config, the published claim each hypothesis tests, "
        "the paper's number beside the project's latest answers",
    )
    claims.add_argument("--configs", default="configs", help="the specs (default: configs)")
    claims.add_argument("--results", default="results", help="results root (default: results)")
    claims.add_argument("--out", default="docs/claims.md", help="default: docs/claims.md")
    claims.set_defaults(func=cmd_claims)


# Commands that write into an experiment's results: one at a time per experiment.
WRITERS = (
    "generate",
    "run",
    "experiment",
    "regress",
    "collect",
    "compare",
    "analyze",
    "report",
    "plan",
)


def _early_experiment_dir(args: argparse.Namespace) -> Path | None:
    """results/<name>[-local] from the spec's ``name`` alone, without loading
    the spec or the modules that check it (by the rule _layout follows);
    None if that name is not plain."""
    import yaml

    try:
        name = yaml.safe_load(Path(args.spec).read_text()).get("name")
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    if not isinstance(name, str) or not name:
        return None
    return Path(args.results).resolve() / BACKENDS[_backend_name(args, name)].experiment_name(name)


def _dispatch(args: argparse.Namespace) -> int:
    """Stop at once if another runner holds the experiment; check the size
    (before anything is written); take the experiment's lock; run."""
    if args.command not in WRITERS:
        code: int = args.func(args)
        return code
    early = _early_experiment_dir(args)
    if early is not None:
        check_not_busy(early)
    from runner.execute.cluster.options import parse_executor
    from runner.execute.run import plan_placement
    from runner.experiments import load_spec
    from runner.network.capacity import check_capacity

    spec = load_spec(Path(args.spec))
    runs_here = getattr(args, "runs", False) and parse_executor(args.executor).kind == "local"
    if runs_here and not args.force and not getattr(args, "skip_run", False):
        backend = _backend(args, spec)
        runs = len(spec.variants) * len(spec.seeds)
        placement = plan_placement(spec, backend, runs, args.jobs, args.threads, args.pinning)
        check_capacity(spec, backend, placement.jobs, args.max_hosts)
    command = [Path(sys.executable).name, "-m", "runner", *sys.argv[1:]]
    with experiment_lock(_layout(spec, args).experiment_dir, command):
        code = args.func(args)
    return code


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # A terminated runner stops its runs the same way as an interrupted one;
    # SIGINT too where the shell started it ignoring SIGINT (a background job).
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        return _dispatch(args)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (PrerequisiteError, DataError, TableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
