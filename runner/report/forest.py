"""The claims forest plot: per experiment a panel, per hypothesis that tests
a published claim a row (its claim id and name), the paper's number as a
diamond, the project's change as a point with its interval as a bar, and
the verdict and the seeds behind it as coloured text. The x axis is the
change on the log-ratio scale (-50% and +100% lie as far from 0 on either
side), labelled in percent. Written as SVG that is the same bytes for the
same rows (no date, fixed ids), so that docs/claims.svg is stable in git;
each row is a group whose id starts ``forest-row-``."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

from runner.analyses.answers import CONTRADICTED, NO_CHANGE, SUPPORTED  # noqa: E402
from runner.report.forest_rows import NOT_RUN, ForestRow  # noqa: E402

ROW_ID = "forest-row-"
# A verdict's colour; any other (undetermined, too few seeds, not run) is grey.
COLOURS = {SUPPORTED: "#1a7f37", CONTRADICTED: "#cf222e", NO_CHANGE: "#0969da"}
OTHER = "#6e7781"
PAPER = "#000000"
# Ticks as ratios of the variant's value to the reference's, each pair one
# log step either side of 1 (x 1/2 and x 2 are -50% and +100%), in the order
# they are kept where two would crowd each other.
TICK_RATIOS = (1.0, 0.5, 2.0, 0.25, 4.0, 0.1, 10.0, 0.8, 1.25, 0.01, 100.0)
TICK_SPACING = 0.09  # the least gap between two ticks, as a share of the axis
SVG_RC: dict[str, Any] = {"svg.hashsalt": "tornet-experiments-claims", "svg.fonttype": "none"}
METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}

Panel = tuple[str, Sequence[ForestRow]]


def _log_ratio(change: float) -> float:
    return math.log1p(max(change, -0.999))


def _percent(x: float, _position: object = None) -> str:
    change = math.expm1(x) * 100
    return "0" if abs(change) < 0.05 else f"{change:+.0f}%"


def _limits(rows: Sequence[ForestRow]) -> tuple[float, float]:
    """A panel's x range: its points, intervals and paper numbers, 0 and
    ±10%, with a margin."""
    values = [0.0, _log_ratio(-0.1), _log_ratio(0.1)]
    for row in rows:
        values += [_log_ratio(v) for v in (row.paper, row.change, row.low, row.high) if v]
    low, high = min(values), max(values)
    margin = 0.08 * (high - low)
    return low - margin, high + margin


def _ticks(limits: tuple[float, float]) -> list[float]:
    """The ticks within ``limits``, none crowding one kept before it."""
    low, high = limits
    kept: list[float] = []
    for x in (math.log(r) for r in TICK_RATIOS):
        if low <= x <= high and all(abs(x - k) >= TICK_SPACING * (high - low) for k in kept):
            kept.append(x)
    return sorted(kept)


def _seeds_text(row: ForestRow) -> str:
    if row.seeds is None:  # a published table from before the seeds were printed
        return row.verdict if row.verdict == NOT_RUN else f"{row.verdict}, seeds not recorded"
    return f"{row.verdict}, {row.seeds} seed{'s' if row.seeds != 1 else ''}"


def _draw_row(ax: Axes, y: int, row: ForestRow, slug: str) -> None:
    """One row: its interval, change and paper number, and its verdict and
    seeds beside the axes (the group with id forest-row-<slug>)."""
    colour = COLOURS.get(row.verdict, OTHER)
    artists = []
    if row.low is not None and row.high is not None:
        low, high = _log_ratio(row.low), _log_ratio(row.high)
        artists += ax.plot([low, high], [y, y], color=colour, linewidth=2.2)
    if row.change is not None:
        artists += ax.plot([_log_ratio(row.change)], [y], "o", color=colour, markersize=6)
    if row.paper is not None:
        artists += ax.plot([_log_ratio(row.paper)], [y], "D", color=PAPER, markersize=5, mfc="none")
    text = ax.text(1.01, y, _seeds_text(row), color=colour, va="center", fontsize=8)
    text.set_transform(ax.get_yaxis_transform())
    # The row's id on its text, which every row has; its marks numbered after it.
    text.set_gid(f"{ROW_ID}{slug}")
    for k, artist in enumerate(artists):
        artist.set_gid(f"forest-{slug}-{k}")


def _slug(panel: str, row: ForestRow) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", f"{panel}-{row.claim}-{row.hypothesis}")


def _draw_panel(ax: Axes, name: str, rows: Sequence[ForestRow]) -> None:
    """One experiment's panel on its own x range."""
    ax.axvline(0.0, color="#444444", linewidth=0.9)
    for y, row in enumerate(rows):
        _draw_row(ax, y, row, _slug(name, row))
    ax.set_yticks(range(len(rows)), [row.label for row in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    limits = _limits(rows)
    ax.set_xlim(*limits)
    ax.xaxis.set_major_locator(FixedLocator(_ticks(limits)))
    ax.xaxis.set_major_formatter(FuncFormatter(_percent))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(name, loc="left", fontsize=10)


def forest_svg(panels: Sequence[Panel]) -> str:
    """The plot of ``panels`` (an experiment's name and its rows; panels
    with no rows are left out) as SVG text; no panel: an empty string."""
    drawn = [(name, rows) for name, rows in panels if rows]
    if not drawn:
        return ""
    heights = [len(rows) + 1.6 for _, rows in drawn]
    with plt.rc_context(SVG_RC):  # type: ignore[arg-type]
        fig, axes = plt.subplots(
            len(drawn),
            1,
            figsize=(10, 0.32 * sum(heights) + 0.8),
            gridspec_kw={"height_ratios": heights},
            squeeze=False,
        )
        for ax, (name, rows) in zip(axes[:, 0], drawn, strict=True):
            _draw_panel(ax, name, rows)
        axes[-1, 0].set_xlabel(
            "change against the reference, log-ratio scale (diamond: the paper's number; "
            "point and bar: the project's change and interval)",
            fontsize=8,
        )
        fig.tight_layout()
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata=METADATA, bbox_inches="tight")
        plt.close(fig)
    return out.getvalue()
