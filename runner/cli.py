"""Command line: ``python -m runner <command> configs/<exp>.yaml``.

It parses the arguments; the work is the Experiment's (runner.workflow),
the tools' builds (runner.tools) and the benchmarks' (runner.bench)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import TypeAlias

from runner.console import TERMINAL, Console
from runner.errors import (
    DataError,
    NotAnalyzedError,
    PrerequisiteError,
    RunError,
    SpecError,
    TableError,
)
from runner.execute.lock import check_not_busy
from runner.execute.placement import OWN_CPUS, PINNING_MODES
from runner.workflow import Experiment, RunOptions
from runner.workflow.backend_choice import BACKEND_NAMES, backend_name, experiment_dir

# The heavy modules (numpy, scipy, matplotlib, networkx) are imported by the
# steps that use them, so that a second runner on a busy experiment, or on
# a machine kept busy by Shadow, is told at once.


# Commands that only read an experiment's runs: their backend is the one
# the runs were made with, whatever this machine has installed.
READERS = ("collect", "compare", "analyze", "report")


def _experiment(args: argparse.Namespace) -> Experiment:
    """The experiment a command works on, loaded once; a reader takes the
    backend its runs were made with, whatever this machine has installed."""
    return Experiment.load(args.spec, args.results, args.backend, reading=args.command in READERS)


def _run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(
        jobs=args.jobs,
        threads=args.threads,
        pinning=args.pinning,
        executor=args.executor,
        keep_stale=args.keep_stale,
        retry_failed=args.retry_failed,
    )


def cmd_check(args: argparse.Namespace) -> int:
    from runner.configs import built_tor_configs
    from runner.network.backends import SHADOW
    from runner.tools.prereqs import report as prereq_report

    found = prereq_report(built_tor_configs(Path(getattr(args, "configs", "configs"))))
    TERMINAL.out(found.text)
    usable = SHADOW.name in found.backends if args.shadow else bool(found.backends)
    if not usable:
        what = "The Shadow backend cannot" if args.shadow else "No backend can"
        TERMINAL.out(f"\n{what} run here; see README.md, {README_SECTIONS}.")
    return 0 if usable else 1


# Where README.md explains the prerequisites (a test checks that these sections exist).
README_SECTIONS = "'Set up' and 'Shadow, tgen and oniontrace'"


def cmd_validate(args: argparse.Namespace) -> int:
    return (
        _experiment(args)
        .validate(force=args.force, max_hosts=args.max_hosts, expand=args.expand)
        .code
    )


# The commands below get the experiment _dispatch loaded and locked.
def cmd_generate(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.generate().code


def cmd_run(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.run(_run_options(args)).code


def cmd_collect(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.collect().code


def cmd_compare(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.compare().code


def cmd_analyze(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.analyze().code


def cmd_report(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.report().code


def cmd_experiment(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.experiment(_run_options(args), args.new_design).code


def cmd_plan(exp: Experiment, args: argparse.Namespace) -> int:
    """Plan from a pilot: the runs in results, or ``--pilot N`` seeds run first."""
    return exp.plan(args.pilot, args.cores, args.pilot_from, _run_options(args)).code


def cmd_regress(exp: Experiment, args: argparse.Namespace) -> int:
    return exp.regress(
        args.baseline,
        write=args.write,
        skip_run=args.skip_run,
        options=_run_options(args),
        new_design=args.new_design,
    ).code


def cmd_claims(args: argparse.Namespace) -> int:
    """Write the page of every config's claims beside the project's answers."""
    from runner.configs import write_claims_page

    console = Console()
    page = write_claims_page(Path(args.configs), Path(args.results), Path(args.out), console)
    console.out(
        f"wrote {page.path}: {page.experiments} experiments, {page.answered} with collected "
        f"answers in {args.results}"
    )
    for name, why in page.kept:
        here = why.replace("not run", "not run here", 1)
        console.out(f"{name}: {here}; kept its published section of {page.path} as it was")
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


DESCRIPTION = (
    "Experiments on tor: `python -m runner <command> configs/<exp>.yaml` (or the "
    "experiment's name, e.g. ci-small). `make experiment EXP=<name>` runs, collects and "
    "compares; the other commands are its steps and the tools around them. Each command's "
    "--help lists its options; README.md gives the order."
)


def plain_text(doc: str | None) -> str | None:
    """A module's docstring as --help prints it: `code`, not RST's ``code``."""
    return None if doc is None else doc.replace("``", "`")


# What add_subparsers gives (generic only to the type checker).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="runner", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    # The commands in the order --help lists them.
    _add_check(sub)
    _add_validate(sub)
    _with_spec(
        sub, "generate", "write every run's network (keys, configs) without running it"
    ).set_defaults(func=cmd_generate)
    _add_running_commands(sub)
    _with_spec(
        sub,
        "collect",
        "parse every run's logs into the experiment's tables (transfers, circuits, relay "
        "load and the rest: results/<exp>/*.csv and .parquet)",
    ).set_defaults(func=cmd_collect)
    _with_spec(sub, "compare", "write the report from the collected tables").set_defaults(
        func=cmd_compare
    )
    _add_analyze_and_report(sub)
    _add_claims(sub)
    _add_campaign(sub)
    _add_store(sub)
    _add_builds(sub)
    _add_bench(sub)
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
    p.add_argument(
        "spec", help="experiment spec, e.g. configs/ci-small.yaml, or its name: ci-small"
    )
    p.add_argument("--results", default="results", help="results root (default: results)")
    if name in READERS:
        backend_help = (
            "whose runs to read: shadow (results/<exp>/) or local (results/<exp>-local/); "
            "default: the backend the runs were made with, and where runs of both exist the "
            "one `make experiment` runs here (shadow if installed, else local)"
        )
    else:
        backend_help = (
            "shadow, or local (real tor processes on this machine); default: shadow if "
            "installed, else local"
        )
    p.add_argument("--backend", choices=BACKEND_NAMES, default=None, help=backend_help)
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
        nargs="?",
        const="yaml",
        choices=("yaml", "json"),
        help="print the spec as the runner reads it: yaml (the default), a plain spec that "
        "loads the same (extends, matrices and defaults written out); json, the canonical "
        "form of everything it loads to (tests/fixtures/expanded/ holds each config's)",
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
        "the paper's number beside the project's latest answers; and its forest plot "
        "beside it (docs/claims.svg)",
    )
    claims.add_argument("--configs", default="configs", help="the specs (default: configs)")
    claims.add_argument("--results", default="results", help="results root (default: results)")
    claims.add_argument(
        "--out", default="docs/claims.md", help="default: docs/claims.md (the plot: its .svg)"
    )
    claims.set_defaults(func=cmd_claims)


def cmd_campaign(args: argparse.Namespace) -> int:
    """Run the seeds that bring open claims nearest a verdict, within ``--budget`` CPU-hours."""
    from runner.workflow.campaign_run import campaign

    if args.budget <= 0:
        Console().err(f"error: --budget {args.budget}: expected CPU-hours above 0")
        return 2
    specs = args.specs or sorted(str(p) for p in Path(args.configs).glob("*.yaml"))
    wanted = frozenset(n.strip() for n in (args.claims or "").split(",") if n.strip())
    if wanted:
        from runner.experiments import load_spec
        from runner.workflow.campaign import unknown_claims

        unknown = unknown_claims([load_spec(Path(s)) for s in specs], wanted)
        if unknown:
            Console().err(
                f"error: --claims {args.claims}: {', '.join(unknown)} is no hypothesis of "
                "these specs, nor a claim one tests (expected a claim id such as T1, or a "
                "hypothesis name)"
            )
            return 2
    options = _run_options(args)

    def fits(exp: Experiment) -> None:
        if options.runs_here() and not args.force:
            exp.check_fits(args.max_hosts, options)

    result = campaign(
        specs, args.budget, args.results, args.backend, options, Console(), fits, wanted
    )
    return result.code


def _add_campaign(sub: Subcommands) -> None:
    p = sub.add_parser(
        "campaign",
        help="from the answers today, run the seeds that bring the most open confirmatory "
        "claims closest to a verdict per CPU-hour, each stored as it completes, stopping "
        "before the budget",
    )
    p.add_argument("specs", nargs="*", help="experiment specs (default: every spec in --configs)")
    p.add_argument(
        "--budget", type=float, required=True, metavar="CPU_HOURS", help="CPU-hours to spend"
    )
    p.add_argument("--configs", default="configs", help="the specs (default: configs)")
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument(
        "--claims",
        default=None,
        metavar="IDS",
        help="run only for these open claims: claim ids (T1,T2) or hypothesis names, "
        "comma-separated (default: every open confirmatory claim)",
    )
    p.add_argument(
        "--backend",
        choices=BACKEND_NAMES,
        default=None,
        help="shadow, or local; default: shadow if installed, else local",
    )
    _placement_options(p)
    _size_options(p)
    p.set_defaults(func=cmd_campaign, keep_stale=False, retry_failed=False)


def cmd_store(args: argparse.Namespace) -> int:
    """``runner store import PATH`` or ``runner store list [EXP]``."""
    from runner.workflow.store import import_store, list_store

    results = Path(args.results)
    if args.action == "import":
        return import_store(Path(args.path), Path(args.configs), results, Console())
    return list_store(results, args.experiment, Console())


def _add_store(sub: Subcommands) -> None:
    store = sub.add_parser(
        "store",
        help="the run store (results/store/, docs/store.md): import runs made elsewhere, "
        "list what is stored",
    )
    actions = store.add_subparsers(dest="action", required=True)
    imports = actions.add_parser(
        "import",
        help="add the complete runs of a results folder (or a .tar/.tar.gz of one) to the "
        "store; refuses runs of no spec here, of another identity, or whose tables differ "
        "from the stored run of the same identity",
    )
    imports.add_argument("path", help="a results folder, an experiment's folder, or an archive")
    imports.add_argument("--configs", default="configs", help="the specs (default: configs)")
    listing = actions.add_parser("list", help="the stored runs: seeds, variants, bytes")
    listing.add_argument("experiment", nargs="?", help="one experiment's folder name")
    for p in (imports, listing):
        p.add_argument("--results", default="results", help="results root (default: results)")
        p.set_defaults(func=cmd_store)


def _add_builds(sub: Subcommands) -> None:
    """``runner tools`` and ``runner tor``: the programs' builds, with the
    verbs and options of their modules' own command lines."""
    from runner.tools import toolbuild, torbuild

    for name, module, text in (
        (
            "tools",
            toolbuild,
            "build the tested Shadow, tgen and oniontrace; install the Python tools",
        ),
        (
            "tor",
            torbuild,
            "build the patched tor (pinned source + tor-patches/series) or, with --staged, "
            "the staged one (+ tor-patches/staged/series); run its tests",
        ),
    ):
        p = sub.add_parser(
            name,
            help=text,
            description=plain_text(module.__doc__),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(func=module.run)


def _add_bench(sub: Subcommands) -> None:
    """``runner bench <benchmark>``: each with its module's own options."""
    import runner.bench
    from runner.bench import profile, report, runs_cpu, scaling, shadow_options, speed

    bench = sub.add_parser(
        "bench",
        help="measure the runner on this machine -> bench/results.md",
        description=plain_text(runner.bench.__doc__),
    )
    benchmarks = bench.add_subparsers(dest="benchmark", required=True)
    for name, module, text in (
        ("speed", speed, "time and memory of each phase of an experiment, one run at a time"),
        ("report", report, "time writing an experiment's report from its collected tables"),
        (
            "shadow-options",
            shadow_options,
            "one run's CPU under Shadow's defaults and the project's options",
        ),
        ("scaling", scaling, "the experiment at 1, 2, 4, ... runs at once, per CPU pinning"),
        ("profile", profile, "where each Shadow run's CPU went, beside its native cost"),
        ("runs", runs_cpu, "the CPU each run of an experiment's design recorded, per run"),
    ):
        p = benchmarks.add_parser(name, help=text, description=plain_text(module.__doc__))
        module.add_arguments(p)
        p.set_defaults(func=module.run)


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
    the spec or the modules that check it (by the rule Experiment.load
    follows); None if that name is not plain."""
    import yaml

    try:
        name = yaml.safe_load(Path(args.spec).read_text()).get("name")
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    if not isinstance(name, str) or not name:
        return None
    results = Path(args.results).resolve()
    reading = args.command in READERS
    return experiment_dir(name, results, backend_name(name, results, args.backend, reading))


def _dispatch(args: argparse.Namespace) -> int:
    """Stop at once if another runner holds the experiment; load it; check
    the size (before anything is written); take the experiment's lock; run."""
    if getattr(args, "spec", None) is not None:
        from runner.configs import spec_path

        args.spec = str(spec_path(args.spec))
    if args.command not in WRITERS:
        code: int = args.func(args)
        return code
    early = _early_experiment_dir(args)
    if early is not None:
        check_not_busy(early)
    exp = _experiment(args)
    if getattr(args, "runs", False):
        options = _run_options(args)
        if options.runs_here() and not args.force and not getattr(args, "skip_run", False):
            exp.check_fits(args.max_hosts, options)
    with exp.lock():
        code = args.func(exp, args)
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
        TERMINAL.err(f"error: {exc}")
        return 2
    except (PrerequisiteError, DataError, TableError, NotAnalyzedError) as exc:
        TERMINAL.err(f"error: {exc}")
        return 3
    except RunError as exc:
        TERMINAL.err(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        TERMINAL.err("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
