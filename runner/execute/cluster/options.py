"""The ``--executor`` option: where an experiment's runs go.

local                      this machine's process pool (the default)
tcp://HOST:PORT            a running Dask scheduler (any Dask address)
slurm[:KEY=VALUE,...]      Dask workers started as Slurm jobs; keys:
                           queue, cores, memory, walltime, jobs, account
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runner.errors import RunError

DASK_SCHEMES = ("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")
SLURM_KEYS = ("queue", "cores", "memory", "walltime", "jobs", "account")
_WALLTIME = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")
_MEMORY = re.compile(r"^\d+(\.\d+)?\s*([KMGT]i?B)$", re.IGNORECASE)


@dataclass(frozen=True)
class SlurmOptions:
    queue: str | None = None  # partition; Slurm's default when absent
    cores: int = 1  # CPUs per worker job: one run at a time, this many Shadow threads
    memory: str = "4GiB"  # per worker job
    walltime: str = "01:00:00"  # per worker job
    jobs: int | None = None  # worker jobs at most (default: one per run to do)
    account: str | None = None


@dataclass(frozen=True)
class ExecutorChoice:
    kind: str  # local, dask, slurm
    address: str | None = None
    slurm: SlurmOptions | None = None


def _fail(text: str, why: str) -> RunError:
    return RunError(
        f"--executor {text!r}: {why}. Expected local, a Dask scheduler address such as "
        f"tcp://HOST:8786, or slurm[:{'=...,'.join(SLURM_KEYS)}=...]"
    )


def _positive(text: str, key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise _fail(text, f"{key} must be a whole number, got {value!r}") from None
    if number < 1:
        raise _fail(text, f"{key} must be at least 1, got {number}")
    return number


def parse_executor(text: str) -> ExecutorChoice:
    if text == "local":
        return ExecutorChoice("local")
    if text.startswith(DASK_SCHEMES):
        return ExecutorChoice("dask", address=text)
    if text != "slurm" and not text.startswith("slurm:"):
        raise _fail(text, "not an executor")
    fields: dict[str, str] = {}
    for item in filter(None, text.removeprefix("slurm").removeprefix(":").split(",")):
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise _fail(text, f"{item!r} is not KEY=VALUE")
        if key not in SLURM_KEYS:
            raise _fail(text, f"unknown key {key!r}")
        fields[key] = value
    if "walltime" in fields and not _WALLTIME.match(fields["walltime"]):
        raise _fail(text, f"walltime must look like HH:MM:SS, got {fields['walltime']!r}")
    if "memory" in fields and not _MEMORY.match(fields["memory"]):
        raise _fail(text, f"memory must look like 4GiB or 8GB, got {fields['memory']!r}")
    options = SlurmOptions(
        queue=fields.get("queue"),
        cores=_positive(text, "cores", fields["cores"]) if "cores" in fields else 1,
        memory=fields.get("memory", SlurmOptions.memory),
        walltime=fields.get("walltime", SlurmOptions.walltime),
        jobs=_positive(text, "jobs", fields["jobs"]) if "jobs" in fields else None,
        account=fields.get("account"),
    )
    return ExecutorChoice("slurm", slurm=options)
