"""Errors the runner reports to users, each naming where the problem is."""

from __future__ import annotations


class SpecError(Exception):
    """A spec (or a generator's parameters) is not what the runner accepts.

    Rendered as ``file: key: what was expected`` so a user can jump to the line.
    """

    def __init__(self, path: str, key: str, expected: str) -> None:
        super().__init__(f"{path}: {key}: {expected}")
        self.path = path
        self.key = key
        self.expected = expected


class DataMissingError(SpecError):
    """A data file a spec names is not on this machine. Stages that only
    re-read stored runs go on without it, saying what they left out."""


class PrerequisiteError(Exception):
    """A program the runner needs is missing or of a version it cannot use."""


class RunError(Exception):
    """One (variant, seed) run failed; the others go on."""


class DataError(Exception):
    """A published data set is missing, differs from the published file, or
    does not read as that data set; the message names the file."""


class TableError(Exception):
    """A collected table does not read as its definition says; the message
    names the file, the line and the column."""


class NotAnalyzedError(Exception):
    """What ``analyze`` writes, which the report renders from, is missing
    or was written for another spec; the message names the file and says
    to run ``analyze``."""
