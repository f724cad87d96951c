"""An experiment resolved once (its spec, the seeds in use, where its results
live, its backend) and the steps of the pipeline on it, each returning its
exit status and what it found. Messages go to the experiment's Console.

The heavy modules (numpy, scipy, matplotlib, networkx) are imported by the
steps that use them, so that loading an experiment stays cheap.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from runner.console import Console
from runner.layout import Layout
from runner.network.backends import BACKENDS, Backend
from runner.workflow.backend_choice import backend_name
from runner.workflow.options import RunOptions
from runner.workflow.results import (
    AnalyzeResult,
    CollectResult,
    CompareResult,
    ExperimentResult,
    GenerateResult,
    PlanResult,
    RegressResult,
    RunResult,
    ValidateResult,
)

if TYPE_CHECKING:
    from runner.analyses.answers import Answer
    from runner.analyses.runs import StaleRun
    from runner.checks import Failure
    from runner.spec.model import Spec
    from runner.tables.collect import Collected


@dataclass(eq=False)
class Experiment:
    """One experiment: load it with ``Experiment.load``."""

    written: Spec  # the spec as its file gives it
    backend: Backend
    layout: Layout
    asked_backend: str | None = None  # the backend asked for (None: chosen)
    console: Console = field(default_factory=Console)
    # The command line that started this process: run records it in each
    # run's manifest, and the lock names it.
    argv: list[str] = field(default_factory=lambda: list(sys.argv))
    _in_use: Spec | None = field(default=None, repr=False)
    _told_beyond: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def load(
        cls,
        spec: str | Path,
        results: str | Path = "results",
        backend: str | None = None,
        *,
        reading: bool = False,
        console: Console | None = None,
        argv: Sequence[str] | None = None,
    ) -> Experiment:
        """The experiment of the spec file ``spec``, its runs under
        ``results``, on ``backend`` (shadow or local; None: Shadow where it
        is installed, else local, or, when ``reading`` runs already made, the
        backend their manifests name). A bad spec raises SpecError."""
        from runner.experiments import load_spec

        written = load_spec(Path(spec))
        root = Path(results).resolve()
        console = console or Console()
        chosen = BACKENDS[backend_name(written.name, root, backend, reading, console.out)]
        return cls(
            written,
            chosen,
            Layout(root, chosen.experiment_name(written.name)),
            backend,
            console,
            list(sys.argv if argv is None else argv),
        )

    @property
    def spec(self) -> Spec:
        """The spec, with the seeds its rounds ran if it runs seeds in rounds."""
        if self._in_use is None:
            from runner.planning.seed_rounds import narrowed_line, seeds_in_use

            self._in_use = seeds_in_use(self.written, self.layout)
            line = narrowed_line(self.written, self._in_use, self.layout)
            if line:
                self.console.out(line)
        return self._in_use

    def analysed_spec(self, spec: Spec | None = None) -> Spec:
        """``spec`` (the one in use) with the seeds the run store holds
        complete runs of its identity at beyond its own (a campaign's, or
        another clone's): the stages after collect read them too."""
        from runner.tables.sources import with_stored_seeds

        widened, extra = with_stored_seeds(spec or self.spec, self.layout)
        if extra and extra != self._told_beyond:
            self._told_beyond = extra
            listed = ", ".join(str(s) for s in extra)
            self.console.out(
                f"{len(extra)} stored seeds beyond the spec's ({listed}): analysed too"
            )
        return widened

    @property
    def command(self) -> list[str]:
        """This process's command line as a runner command."""
        return [Path(sys.executable).name, "-m", "runner", *self.argv[1:]]

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the experiment's lock (one writer at a time), or raise
        ExperimentBusy at once if another process holds it."""
        from runner.execute.lock import experiment_lock

        with experiment_lock(self.layout.experiment_dir, self.command):
            yield

    def check_fits(self, max_hosts: int | None = None, options: RunOptions | None = None) -> None:
        """Refuse (TooLarge), before anything is written, runs too large for
        this machine, placed here as ``options`` would place them."""
        from runner.execute.run_all import plan_placement
        from runner.network.capacity import check_capacity

        o = options or RunOptions()
        runs = len(self.written.runs())
        placement = plan_placement(self.written, self.backend, runs, o.jobs, o.threads, o.pinning)
        check_capacity(self.written, self.backend, placement.jobs, max_hosts)

    def validate(
        self, *, force: bool = False, max_hosts: int | None = None, expand: str | None = None
    ) -> ValidateResult:
        """Check the spec, and (unless ``force``) that it fits this machine
        as ``run`` would; ``expand`` writes it out as the runner reads it,
        the summary then going to ``err``: "yaml", a plain spec (extends,
        a matrix and defaults written out), "json", its canonical form."""
        spec = self.written
        if not force:  # refuse here what `run` would refuse on this machine
            self.check_fits(max_hosts)
        warnings = self.backend.warnings(spec)
        for warning in warnings:
            self.console.err(warning)
        if expand == "json":
            from runner.spec.canonical import canonical_json

            self.console.out(canonical_json(spec))
        elif expand:
            from runner.spec.dump import spec_yaml

            self.console.out(spec_yaml(spec.raw, width=100).removesuffix("\n"))
        say = self.console.err if expand else self.console.out
        say(_validated_line(spec))
        return ValidateResult(0, len(spec.runs()), list(warnings))

    def generate(self) -> GenerateResult:
        """Write every run's network (keys, configs) without running it."""
        from runner.execute.run_all import generate_experiment, resolve_tools

        spec, backend, layout = self.spec, self.backend, self.layout
        written, kept = generate_experiment(
            spec, layout, self.command, backend, resolve_tools(spec, backend)
        )
        for run_dir in written:
            self.console.out(f"generated {run_dir}")
        self.console.out(
            f"{len(written)} networks written, {kept} complete runs of the same identity kept "
            f"({backend.name} backend) under {layout.experiment_dir}"
        )
        return GenerateResult(0, written, kept)

    def run(self, options: RunOptions | None = None) -> RunResult:
        """Generate and simulate every run not yet complete."""
        return self._run(self.spec, options or RunOptions())

    def collect(self) -> CollectResult:
        """Parse every run's logs into the experiment's tables."""
        return self._collect(self.analysed_spec())

    def compare(self) -> CompareResult:
        """Analyze the collected tables and write the report from them."""
        return self._compare(self.analysed_spec())

    # compare's two halves, each on its own.
    def analyze(self) -> AnalyzeResult:
        """Each analysis's result as data: analyses/*.json, answers.json,
        checks.json (exit 1 when a check failed, as compare)."""
        from runner.analyses.analyze import analyze
        from runner.experiments import ANALYSES
        from runner.report.answers import answer_rows

        spec, layout = self.analysed_spec(), self.layout
        if not self._has_tables(spec, "analyze"):
            return AnalyzeResult(1, None)
        found = analyze(spec, layout, ANALYSES)
        self._tell_stale(spec, found.stale)
        self._tell_check_failures(found.failures)
        self.console.out(f"analyses: {layout.analyses_dir}/*.json")
        self.console.out(f"          {layout.data_json('answers')}")
        self.console.out(f"          {layout.data_json('checks')}")
        self._tell_answers(answer_rows(found.answers, found.cpu_hours))
        return AnalyzeResult(0 if found.checks_passed else 1, found)

    def report(self) -> CompareResult:
        """The report rendered from what analyze wrote, computing nothing:
        report/report.md and .html (exit 0 once written; analyze's exit says
        whether the checks passed)."""
        from runner.errors import NotAnalyzedError
        from runner.experiments import ANALYSES
        from runner.report.assemble import write_report

        try:
            result = write_report(self.analysed_spec(), self.layout, ANALYSES)
        except NotAnalyzedError as exc:
            self.console.err(f"error: {exc}")
            return CompareResult(1, None)
        self._tell_stale(self.spec, result.stale)
        self._tell_report(result.path, ([], []))
        return CompareResult(0, result)

    def experiment(
        self, options: RunOptions | None = None, new_design: bool = False
    ) -> ExperimentResult:
        """Run, collect and compare; a spec with seed rounds runs round after
        round until its hypotheses are answered (``new_design``: though
        recorded rounds ran under another design)."""
        o = options or RunOptions()
        if self.written.seed_rounds is not None:
            spec, run_code = self._run_in_rounds(o, new_design)
        else:
            spec, run_code = self.written, self._run(self.written, o).code
        spec = self.analysed_spec(spec)
        if self._collect(spec).code != 0:
            return ExperimentResult(1, spec, run_code, None)
        compared = self._compare(spec)
        return ExperimentResult(run_code or compared.code, spec, run_code, compared)

    def plan(
        self,
        pilot: int | None = None,
        cores: int = 16,
        pilot_from: str | Path | None = None,
        options: RunOptions | None = None,
    ) -> PlanResult:
        """Plan from a pilot: the runs in results, or seeds 1..``pilot`` run
        first; the seeds, CPU-hours and wall time a decisive answer needs,
        priced here and on ``cores`` cores. With ``pilot_from``, this
        experiment is planned from that (smaller) spec's pilot, scaled."""
        o = options or RunOptions()
        if pilot_from is None:
            return self._plan(pilot, cores, o, target=None)
        source = Experiment.load(
            pilot_from,
            self.layout.root,
            self.asked_backend,
            console=self.console,
            argv=self.argv,
        )
        return source._plan(pilot, cores, o, target=self.written)

    def regress(
        self,
        baseline: str | Path,
        *,
        write: bool = False,
        skip_run: bool = False,
        options: RunOptions | None = None,
        new_design: bool = False,
    ) -> RegressResult:
        """Run the experiment (unless ``skip_run``: its collected tables as
        they are) and check its metrics against ``baseline``, or ``write``
        the baseline from them."""
        path = Path(baseline)
        if not skip_run:
            done = self.experiment(options, new_design)
            if done.code != 0:
                self.console.err("regression: the experiment itself failed")
                return RegressResult(done.code, path)
        if not self._has_tables(self.written, "regress"):
            return RegressResult(1, path)
        return self._regress(path, write)

    def _regress(self, path: Path, write: bool) -> RegressResult:
        from runner.manifest import write_json_atomic
        from runner.tables.schema import TRANSFERS
        from runner.workflow import regress as policy

        rows = TRANSFERS.read(self.layout.transfers_csv)
        if write:
            write_json_atomic(path, policy.baseline(self.written, self.backend, rows))
            self.console.out(f"wrote {path}")
            return RegressResult(0, path, wrote=True)
        if not path.is_file():
            self.console.err(f"{path}: no such baseline (write one with --write)")
            return RegressResult(1, path)
        note, verdicts = policy.check(self.written, rows, path)
        if note:
            self.console.out(note)
        for v in verdicts:
            self.console.out(v.line())
        bad = [v for v in verdicts if not v.ok]
        self.console.out(
            f"regression: {len(verdicts) - len(bad)}/{len(verdicts)} metrics within tolerance"
        )
        return RegressResult(1 if bad else 0, path, verdicts)

    def _plan(
        self, pilot: int | None, cores: int, options: RunOptions, target: Spec | None
    ) -> PlanResult:
        from runner.workflow.plan import write_plan

        if pilot:
            spec = replace(self.written, seeds=tuple(range(1, pilot + 1)))
            if self._run(spec, options).code != 0:
                self.console.err("warning: some pilot runs failed; planning from the rest")
            if self._collect(spec).code != 0:
                return PlanResult(1)
        else:
            spec = self.analysed_spec()
        if not self._has_tables(spec, "plan"):
            return PlanResult(1)
        if not spec.hypotheses:
            self.console.err(
                f"error: {spec.path} states no hypotheses: there is nothing to plan for"
            )
            return PlanResult(1)
        planned = write_plan(spec, self.layout, target, cores)
        self.console.out(planned.text)
        return planned

    def _run(self, spec: Spec, options: RunOptions) -> RunResult:
        from runner.analyses.measured_params import measured_params
        from runner.execute.cluster.executors import make_executor
        from runner.execute.cluster.options import parse_executor
        from runner.execute.progress import outcome_line
        from runner.execute.run_all import run_experiment
        from runner.tables.collect import logged_rows

        o, layout = options, self.layout
        spec = self._skip_stored(spec)
        executor = make_executor(parse_executor(o.executor), o.pinning, o.threads)
        started = time.monotonic()
        outcomes = run_experiment(
            spec,
            layout,
            self.argv,
            jobs=o.jobs,
            backend=self.backend,
            threads=o.threads,
            pinning=o.pinning,
            executor=executor,
            keep_stale=o.keep_stale,
            retry_failed=o.retry_failed,
            measure_params=lambda variant, seed: measured_params(
                partial(logged_rows, layout), variant, seed
            ),
            console=self.console,
        )
        elapsed = time.monotonic() - started
        result = RunResult(0, outcomes, elapsed)
        for f in result.failed:
            self.console.err(f"FAILED {f.variant}/seed-{f.seed}: {f.error}")
        self.console.out(outcome_line([o.status for o in outcomes], elapsed))
        return replace(result, code=1 if result.failed else 0)

    def _skip_stored(self, spec: Spec) -> Spec:
        """``spec`` less the runs the store holds of its identity that no run
        directory here does (a fresh clone): they are not run again."""
        from runner.tables.sources import held_in_store, without_runs

        held = held_in_store(spec, self.layout)
        if held:
            self.console.out(
                f"{len(held)} runs taken from the store ({self.layout.store_dir}): not run again"
            )
        return without_runs(spec, held)

    def run_and_store(self, spec: Spec, options: RunOptions) -> RunResult:
        """Run ``spec``'s runs not yet complete, then parse each complete one
        and keep it in the run store, leaving the experiment's tables as they
        are (a campaign's step: its runs count once stored)."""
        from runner.experiments import TABLES
        from runner.tables.collect import Collected, parse_and_store, parsed_tables

        result = self._run(spec, options)
        stored = parse_and_store(spec, self.layout, parsed_tables(TABLES), console=self.console)
        self._tell_stored(Collected(0, {}, stored=stored))
        return result

    def _run_in_rounds(self, options: RunOptions, new_design: bool) -> tuple[Spec, int]:
        """Seed rounds until the hypotheses are answered; the spec with
        every seed that ran, and the worst exit status of the rounds' runs."""
        from runner.analyses.answers import answers
        from runner.planning.seed_rounds import check_design, run_in_rounds
        from runner.tables.schema import TRANSFERS

        layout = self.layout
        # Refused before any run: rounds that ran under another design.
        changes = check_design(self.written, layout, new_design)

        def answer_round(current: Spec) -> list[Answer]:
            self._collect(current)
            return answers(current, layout, TRANSFERS.read(layout.transfers_csv))

        spec, code = run_in_rounds(
            self.written,
            layout,
            lambda current: self._run(current, options).code,
            answer_round,
            changes,
            self.console,
        )
        self._in_use = spec
        return spec, code

    def _collect(self, spec: Spec) -> CollectResult:
        from runner.experiments import TABLES
        from runner.tables.collect import collect

        layout = self.layout
        result = collect(spec, layout, TABLES, self.console)
        if not result.runs and not result.from_store:
            self.console.err(
                f"error: no complete runs of {spec.path} under {layout.experiment_dir}: "
                f"run them first (`python -m runner run {spec.path}`, or `experiment`)"
            )
            return CollectResult(1, result)
        self.console.out(result.line(f"{layout.experiment_dir}/<table>.csv and .parquet"))
        self._tell_stored(result)
        return CollectResult(0, result)

    def _tell_stale(self, spec: Spec, found: Sequence[StaleRun]) -> None:
        """A stage that read stale runs (as analyze found them) says how
        many, on the console as in the report: their results are in every
        table."""
        from runner.analyses.runs import complete, read_spec_runs

        if not found:
            return
        rows = read_spec_runs(spec, self.layout)
        differ = sorted({part for run in found for part in run.changed})
        self.console.err(
            f"warning: {len(found)} of the {len(complete(rows))} complete runs read are stale: "
            f"made when {spec.path} gave another {', '.join(differ)}; their results are in "
            "every table (the report lists them); `runner run` makes them again"
        )

    def _tell_stored(self, result: Collected) -> None:
        """What collect added to the run store."""
        from runner.tables.collect import NOT_STORED
        from runner.tables.store import REPLACED, STORED

        store = self.layout.store_dir
        if result.stored.get(STORED):
            self.console.out(f"stored {len(result.stored[STORED])} new runs in {store}")
        for run in result.stored.get(REPLACED, []):
            self.console.err(
                f"warning: {run}: its logs now give other tables than the run store held; "
                f"replaced in {store}"
            )
        if result.stored.get(NOT_STORED):
            self.console.err(
                f"warning: {', '.join(result.stored[NOT_STORED])}: no identity recorded "
                "(made by an older runner): not stored"
            )

    def _has_tables(self, spec: Spec, command: str) -> bool:
        """Whether collect has written the tables ``command`` reads (with
        the stored runs the spec asks for: runs stored or imported since, or
        only the store in a fresh clone); says what to run if not."""
        from runner.experiments import TABLES
        from runner.tables.collect import parsed_tables
        from runner.tables.sources import refresh

        if refresh(spec, self.layout, parsed_tables(TABLES)):
            self.console.out(
                f"tables assembled from the run directories and the run store "
                f"({self.layout.store_dir}) -> {self.layout.experiment_dir}"
            )
        if self.layout.transfers_csv.is_file():
            return True
        self.console.err(
            f"error: {command} reads the tables `collect` writes, and "
            f"{self.layout.transfers_csv} does not exist: "
            f"run `python -m runner collect {spec.path}` first"
        )
        return False

    def _compare(self, spec: Spec) -> CompareResult:
        from runner.experiments import ANALYSES
        from runner.report.compare import compare

        if not self._has_tables(spec, "compare"):
            return CompareResult(1, None)
        result = compare(spec, self.layout, ANALYSES)
        self._tell_stale(spec, result.stale)
        self._tell_check_failures(result.failures)
        self._tell_report(result.path, result.answers)
        return CompareResult(0 if result.checks_passed else 1, result)

    def _tell_check_failures(self, failures: Sequence[Failure]) -> None:
        """Say each failed check (analyze recorded them in checks.json, which
        --retry-failed reads)."""
        for failure in failures:
            self.console.err(f"CHECK FAILED: {failure}")
        if any(failure.run is not None for failure in failures):
            self.console.err(
                "The runs whose checks failed are kept and reported; "
                "`run` or `experiment` with --retry-failed runs them again."
            )

    def _tell_report(self, path: Path, answers: tuple[list[str], list[list[str]]]) -> None:
        """The console ends with where the report is and what it answers."""
        html = path.with_suffix(".html")
        self.console.out(f"report: {path}")
        self.console.out(f"        {html}")
        self.console.out(f"        view it: xdg-open {html} (without a display: docs/running.md)")
        self._tell_answers(answers)

    def _tell_answers(self, answers: tuple[list[str], list[list[str]]]) -> None:
        header, rows = answers
        if rows:
            from runner.report.answers import console_lines

            self.console.out("\nAnswers:")
            self.console.out("\n".join(console_lines(header, rows)))


def _waited_for(spec: Spec) -> str:
    """What a spec's rounds wait for, in words."""
    from runner.analyses.family import layout_of

    shape = layout_of(spec.hypotheses)
    if not shape.claims:
        return f"its {len(spec.hypotheses)} hypotheses"
    confirmatory = sum(len(chain) for chain in shape.claims)
    return f"its {confirmatory} confirmatory hypotheses ({len(shape.claims)} claims)"


def _validated_line(spec: Spec) -> str:
    """What validate says of a spec that loads and fits."""
    if spec.seed_rounds is not None:
        r = spec.seed_rounds
        return (
            f"{spec.path}: ok ({len(spec.variants)} variants x {r.min} to {r.max} seeds, "
            f"{r.step} more a round"
            + (" of the variants they still need" if r.later == "hypotheses" else "")
            + (" of the family's variants alone" if r.later == "family" else "")
            + f" until {_waited_for(spec)} are decided or futile)"
        )
    runs = len(spec.variants) * len(spec.seeds)
    return (
        f"{spec.path}: ok ({len(spec.variants)} variants x {len(spec.seeds)} seeds = {runs} runs)"
    )
