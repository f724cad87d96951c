"""A failed check is a record (runner.checks.Failure): the report writes
its text, checks.json its fields, and --retry-failed finds its run by
(variant, seed), however it is worded."""

from __future__ import annotations

from runner.checks import Failure


def test_a_failure_reads_as_the_report_has_always_written_it() -> None:
    assert str(Failure("v", 1, "load", "idle")) == "v/seed-1: idle"
    assert str(Failure("v", 1, "conflux-legs", "no set", "client1")) == "v/seed-1 client1: no set"
    assert str(Failure("v", None, "keep-up", "slow over 5 seeds")) == "v: slow over 5 seeds"
    assert str(Failure(None, None, "experiment", "too few runs")) == "too few runs"


def test_only_a_failure_of_one_run_has_a_run() -> None:
    assert Failure("v", 2, "paths", "m").run == ("v", 2)
    assert Failure("v", None, "keep-up", "m").run is None
    assert Failure(None, None, "experiment", "m").run is None
