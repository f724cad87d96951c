"""The registry: every analysis the runner knows, the ones every experiment
has and each experiment's own (one folder each), in the order the report
shows them. It sits above the stages: the command line hands it to
collection (``runner.tables.collect``), to analyze
(``runner.analyses.analyze``) and to the report
(``runner.report.assemble``), which know no experiment by name.

Validating a spec needs only each experiment's ``expect:`` keys, declared
in its package's light ``__init__``; the analyses (``ANALYSES``, ``TABLES``,
``tables_of``: runner.experiments.registry) are imported the first time a
step asks for them, so that a refused spec costs no numpy, scipy or
matplotlib import.

A new experiment is a folder here and one entry in the registry's lists
(docs/extending.md).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.experiments import conflux, mctor
from runner.spec import model, parse
from runner.spec.expect import ExpectKey

if TYPE_CHECKING:
    from runner.experiments.registry import ANALYSES, TABLES, tables_of

__all__ = ["ANALYSES", "EXPECT_KEYS", "TABLES", "load_spec", "parse_spec", "tables_of"]
_REGISTRY = ("ANALYSES", "TABLES", "tables_of")

# The keys a variant's ``expect:`` may give: each experiment's own.
EXPECT_KEYS: tuple[ExpectKey, ...] = (*conflux.EXPECT_KEYS, *mctor.EXPECT_KEYS)


def __getattr__(name: str) -> Any:
    """The registry's analyses and tables, imported when first asked for."""
    if name in _REGISTRY:
        return getattr(importlib.import_module("runner.experiments.registry"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_spec(path: Path) -> model.Spec:
    """A spec, validated with what the registered experiments know."""
    return parse.load_spec_file(path, EXPECT_KEYS)


def parse_spec(data: Any, path: str, sha256: str = "") -> model.Spec:
    """Already-loaded YAML, validated with what the registered experiments know."""
    return parse.parse_spec(data, path, sha256, EXPECT_KEYS)
