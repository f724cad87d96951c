"""Real cluster engines for the tests: a Dask scheduler with worker processes,
and a single-node Slurm (.ci/slurm-single-node); plus stand-ins for Shadow,
tgen and oniontrace that workers find through TORNET_* variables, so the
executors are tested wherever tor is installed. Each fixture stops what it
started and checks that nothing it started is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

STAND_IN_SHADOW = """#!{python}
# Stands in for Shadow: reports progress, sleeps STANDIN_SLEEP seconds
# (STANDIN_SLOW_SLEEP in runs whose path has STANDIN_SLOW), fails in
# conflux-on runs when STANDIN_FAIL is set.
import os, sys, time
if sys.argv[1:] == ["--version"]:
    print("Shadow v3.3.0 (stand-in)")
    sys.exit(0)
here = os.getcwd()
print("Progress: 10% - simulated: 00:01:00.000/00:15:00", file=sys.stderr, flush=True)
slow = os.environ.get("STANDIN_SLOW")
time.sleep(float(os.environ.get(
    "STANDIN_SLOW_SLEEP" if slow and slow in here else "STANDIN_SLEEP", "1")))
if os.environ.get("STANDIN_FAIL") and "conflux-on" in here:
    print("tor exited with code 1", file=sys.stderr)
    sys.exit(1)
print("Progress: 100% - simulated: 00:15:00.000/00:15:00", file=sys.stderr, flush=True)
os.makedirs("shadow.data/hosts", exist_ok=True)
"""
STAND_IN_VERSIONS = {"tgen": "TGen v1.1.2 (stand-in)", "oniontrace": "OnionTrace v1.0.0 (stand-in)"}


def stand_ins(directory: Path) -> dict[str, str]:
    """Write the stand-ins; return the TORNET_* variables that name them."""
    directory.mkdir(parents=True, exist_ok=True)
    shadow = directory / "shadow"
    shadow.write_text(STAND_IN_SHADOW.format(python=sys.executable))
    env = {"TORNET_SHADOW": str(shadow)}
    for name, version in STAND_IN_VERSIONS.items():
        path = directory / name
        path.write_text(f"#!/bin/sh\necho '{version}'\n")
        env[f"TORNET_{name.upper()}"] = str(path)
    for path in directory.iterdir():
        path.chmod(0o755)
    return env


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{proc.name}: {cmdline.strip()}")
    return found


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@dataclass
class DaskCluster:
    address: str
    scheduler_file: Path
    workers: subprocess.Popen[bytes]


def start_dask(directory: Path, env: dict[str, str], workers: int = 2) -> Iterator[DaskCluster]:
    """A scheduler and ``workers`` worker processes (one thread each, under a
    nanny), as separate processes; stopped and checked for leftovers after."""
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from distributed import Client

    directory.mkdir(parents=True, exist_ok=True)
    scheduler_file = directory / "scheduler.json"
    env = {**os.environ, **env, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    common = {"cwd": ROOT, "env": env, "start_new_session": True}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
        + ["--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
        stdout=(directory / "scheduler.log").open("wb"),
        stderr=subprocess.STDOUT,
        **common,  # type: ignore[call-overload]
    )
    pool = None
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            if scheduler.poll() is not None:
                log = (directory / "scheduler.log").read_text()[-500:]
                pytest.skip(f"the Dask scheduler did not start: {log}")
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        pool = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file"]
            + [str(scheduler_file), "--nworkers", str(workers), "--nthreads", "1"]
            + ["--no-dashboard", "--local-directory", str(directory / "workers")],
            stdout=(directory / "workers.log").open("wb"),
            stderr=subprocess.STDOUT,
            **common,  # type: ignore[call-overload]
        )
        with Client(address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=90)
        yield DaskCluster(address, scheduler_file, pool)
    finally:
        if pool is not None:
            _stop_group(pool)
        _stop_group(scheduler)
    left = processes_mentioning(str(scheduler_file)) + processes_mentioning(str(directory))
    assert not left, f"left running after the Dask cluster stopped: {left}"


def start_slurm(directory: Path) -> Iterator[dict[str, str]]:
    """A single-node Slurm on localhost; yields the environment its clients need."""
    script = ROOT / ".ci" / "slurm-single-node"
    started = subprocess.run([str(script), "start", str(directory)], capture_output=True, text=True)
    if started.returncode != 0:
        pytest.skip(f"single-node Slurm did not start: {started.stderr.strip()[-400:]}")
    env = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
    try:
        yield env
    finally:
        subprocess.run([str(script), "stop", str(directory)], check=True)
    left = processes_mentioning(str(directory))
    assert not left, f"left running after Slurm stopped: {left}"
