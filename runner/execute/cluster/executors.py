"""The executor an ``--executor`` option names, made from its parsed form
(runner.execute.cluster.options); the cluster libraries are imported only
when asked for. Kept apart from the options so that ``slurm`` can read its
options without the options module knowing the executors.
"""

from __future__ import annotations

from typing import Any

from runner.errors import PrerequisiteError
from runner.execute.cluster.options import ExecutorChoice


def make_executor(choice: ExecutorChoice, pinning: str, threads: int | None) -> Any:
    """The executor for ``choice`` (None: this machine's pool); the cluster
    libraries are imported only when asked for."""
    if choice.kind == "local":
        return None
    try:
        if choice.kind == "dask":
            from runner.execute.cluster.dask import DaskExecutor

            assert choice.address is not None
            return DaskExecutor(choice.address, pinning, threads)
        from runner.execute.cluster.slurm import SlurmExecutor

        assert choice.slurm is not None
        return SlurmExecutor(choice.slurm, pinning)
    except ImportError as exc:
        raise PrerequisiteError(
            f"--executor {choice.kind}: {exc.name or exc} is not installed; install the "
            "project with its cluster extra: pip install -e '.[cluster]'"
        ) from None
