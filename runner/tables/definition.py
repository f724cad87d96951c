"""A table, defined once: its row type (a frozen dataclass whose fields are
its columns, in order) and how one run's logs give its rows. From that
definition come its CSV writer and reader and its Parquet writer, so a
column is named, typed and formatted in one place.

Column types: ``str``, ``int``, ``float``, ``bool`` (``1``/``0`` in CSV),
those or ``None`` (an empty CSV cell, a null in Parquet), and tuples of
``int`` or ``str`` (joined with ``;``, or the column's separator, in CSV; a
real list in Parquet).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from runner.errors import TableError
from runner.layout import Layout
from runner.logs.run_logs import RunLogs

R = TypeVar("R")
_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
}


def column(
    name: str | None = None,
    *,
    digits: int | None = None,
    sep: str = ";",
    default: Any = dataclasses.MISSING,
) -> Any:
    """A field's column: its CSV name where it differs from the field's,
    the decimals a float is written with, the separator of a tuple's items,
    and a default (a column that older tables may lack)."""
    return field(default=default, metadata={"column": name, "digits": digits, "sep": sep})


@dataclass(frozen=True)
class Column:
    """One column of a table, read from its row type's field."""

    name: str  # in the CSV and Parquet files and the DataFrame
    attribute: str  # the row type's field
    kind: type  # str, int, float, bool or tuple
    item: type | None  # a tuple's items: int or str
    optional: bool  # None is allowed (an empty cell)
    digits: int | None
    sep: str
    has_default: bool

    def text(self, value: Any) -> str:
        if value is None:
            return ""
        if self.kind is bool:
            return "1" if value else "0"
        if self.kind is float and self.digits is not None:
            return f"{value:.{self.digits}f}"
        if self.kind is tuple:
            return self.sep.join(map(str, value))
        return str(value)

    def value(self, value: Any) -> Any:
        """The value as the CSV holds it (floats to their digits), for Parquet."""
        if value is not None and self.kind is float and self.digits is not None:
            return round(float(value), self.digits)
        return list(value) if self.kind is tuple else value

    def parse(self, text: str) -> Any:
        if self.kind is tuple:
            assert self.item is not None
            # "a:b" items keep their last part (older placements: connection:count)
            return tuple(self.item(x.rpartition(":")[2]) for x in text.split(self.sep) if x)
        if text == "" and (self.optional or self.kind is not str):
            if self.optional:
                return None
            raise ValueError("empty")
        if self.kind is bool:
            if text not in ("0", "1"):
                raise ValueError(f"{text!r} is not 0 or 1")
            return text == "1"
        return self.kind(text)

    @property
    def arrow_type(self) -> pa.DataType:
        if self.kind is tuple:
            assert self.item is not None
            return pa.list_(_SCALARS[self.item])
        return _SCALARS[self.kind]


def _column(f: dataclasses.Field[Any], hint: Any) -> Column:
    optional = False
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        (hint,) = rest
        args = typing.get_args(hint)
    item = None
    kind = typing.get_origin(hint) or hint
    if kind is tuple:
        item = args[0]
    if kind not in (*_SCALARS, tuple) or (kind is tuple and item not in (int, str)):
        raise TypeError(f"column {f.name}: unsupported type {hint!r}")
    meta = f.metadata
    has_default = (
        f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    )
    return Column(
        name=meta.get("column") or f.name,
        attribute=f.name,
        kind=kind,
        item=item,
        optional=optional,
        digits=meta.get("digits"),
        sep=meta.get("sep", ";"),
        has_default=has_default,
    )


@dataclass(frozen=True)
class Table(Generic[R]):
    """A tidy table, ``<experiment>/<name>.csv`` and ``.parquet``: ``rows``
    gives one run's rows; ``tor_markers``: the tor log lines it reads (a
    line holding one carries a record, for the damaged-line accounting)."""

    name: str
    row: type[R]
    rows: Callable[[RunLogs], Iterable[R]] = field(compare=False)
    tor_markers: tuple[str, ...] = ()

    @cached_property
    def schema(self) -> list[Column]:
        hints = typing.get_type_hints(self.row)
        return [_column(f, hints[f.name]) for f in dataclasses.fields(self.row)]  # type: ignore[arg-type]

    @property
    def columns(self) -> list[str]:
        return [c.name for c in self.schema]

    def csv_text(self, rows: Sequence[R]) -> str:
        """The rows as ``<name>.csv`` holds them, header first."""
        handle = io.StringIO(newline="")
        writer = csv.writer(handle)
        writer.writerow(self.columns)
        for row in rows:
            writer.writerow(self.texts(row))
        return handle.getvalue()

    def texts(self, row: R) -> list[str]:
        """A row's cells as the CSV writes them."""
        return [c.text(getattr(row, c.attribute)) for c in self.schema]

    def write(self, directory: Path, rows: Sequence[R]) -> None:
        """``<name>.csv`` and ``<name>.parquet`` in ``directory``, each
        written whole beside its place and then renamed into it."""
        csv_path = directory / f"{self.name}.csv"
        tmp = csv_path.with_name(f".{csv_path.name}.tmp")
        with tmp.open("w", newline="") as handle:
            handle.write(self.csv_text(rows))
        parquet_path = directory / f"{self.name}.parquet"
        parquet_tmp = parquet_path.with_name(f".{parquet_path.name}.tmp")
        arrays = {
            c.name: pa.array([c.value(getattr(r, c.attribute)) for r in rows], type=c.arrow_type)
            for c in self.schema
        }
        pq.write_table(pa.table(arrays), parquet_tmp)
        os.replace(tmp, csv_path)
        os.replace(parquet_tmp, parquet_path)

    def read(self, path: Path) -> list[R]:
        """The rows of a CSV written by ``write`` (or by an older runner,
        whose tables may lack the columns that have defaults)."""
        with path.open(newline="") as handle:
            return self.read_csv(handle, str(path))

    def read_csv(self, handle: Iterable[str], where: str) -> list[R]:
        """The rows of CSV text as ``write`` writes it; ``where``: what the
        errors name (its file)."""
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c.name for c in self.schema if c.name not in header and not c.has_default]
        if missing:
            raise TableError(
                f"{where}: the {self.name} table has no column {', '.join(missing)} "
                f"(expected the columns {', '.join(self.columns)})"
            )
        present = [c for c in self.schema if c.name in header]
        return [
            self.parse_row(record, present, f"{where}: line {number}")
            for number, record in enumerate(reader, start=2)
        ]

    def parse_row(
        self, record: Mapping[str, str | None], present: Sequence[Column], where: str
    ) -> R:
        """A row from its cells' texts by column name (``present``: the
        columns the record has; the others take their defaults)."""
        values = {}
        for c in present:
            try:
                values[c.attribute] = c.parse(record[c.name] or "")
            except (TypeError, ValueError) as exc:
                raise TableError(
                    f"{where}: column {c.name}: expected "
                    f"{'an empty cell or ' if c.optional else ''}a {c.kind.__name__}, "
                    f"got {record[c.name]!r} ({exc})"
                ) from exc
        return self.row(**values)

    def read_from(self, layout: Layout) -> list[R]:
        """The experiment's rows of this table; none where it was never collected."""
        return self.read_if_present(layout.table_csv(self.name))

    def read_if_present(self, path: Path) -> list[R]:
        """The rows, or none where the table was never collected."""
        return self.read(path) if path.is_file() else []
