"""The tests' one way to a spec made from configs/ci-small.yaml: its data
to edit, the spec of that data, or the data written to a file of its own.

Tests change ci-small where they need another spec (a variant left out,
one seed, a shorter measurement); each starts from ``ci_small_data``, edits
the dictionary, and hands it to ``spec_of`` or ``write_spec``, so that
how a spec is read (and under which name) is said here once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from runner.experiments import parse_spec
from runner.spec.model import Spec
from tests.conftest import CI_SMALL

SpecData = dict[str, Any]
NAME = CI_SMALL.name  # the name a spec parsed from data (no file of its own) is read as


def ci_small_data(text: str | None = None) -> SpecData:
    """configs/ci-small.yaml as data (or ``text``, an edited copy of it)."""
    data: SpecData = yaml.safe_load(CI_SMALL.read_text() if text is None else text)
    return data


def spec_of(data: SpecData, path: str | Path = NAME) -> Spec:
    """The spec of ``data``, read as the file ``path``."""
    return parse_spec(data, str(path))


def ci_small(edit: Callable[[SpecData], object] | None = None, path: str | Path = NAME) -> Spec:
    """ci-small's spec, changed first by ``edit`` (which edits the data in place)."""
    data = ci_small_data()
    if edit is not None:
        edit(data)
    return spec_of(data, path)


def write_spec(data: SpecData, where: Path, name: str = NAME) -> Path:
    """``data`` written as the spec file ``where/name``."""
    path = where / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def one_variant(data: SpecData, variant: str = "conflux-on") -> SpecData:
    """ci-small's data with ``variant`` alone, at one seed, as its own
    baseline (its hypotheses and claims, which name the others, dropped)."""
    data["seeds"] = [1]
    data["variants"] = {variant: data["variants"][variant]}
    data.pop("hypotheses", None)
    data.pop("claims", None)
    data["baseline"] = variant
    return data
