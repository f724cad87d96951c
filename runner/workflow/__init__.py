"""One experiment, resolved once: its spec, the seeds in use, where its
results live and the backend it runs on, with each step of the pipeline
as a method that returns what it did (runner.workflow.pipeline).

    from runner.workflow import Experiment

    exp = Experiment.load("configs/ci-small.yaml", results="results")
    exp.run(); exp.collect(); exp.compare()

The command line (runner.cli) parses its arguments into the same calls.
"""

from runner.console import Console
from runner.workflow.options import RunOptions
from runner.workflow.pipeline import Experiment

__all__ = ["Console", "Experiment", "RunOptions"]
