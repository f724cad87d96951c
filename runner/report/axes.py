"""Axes whose ticks always carry numbers."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter


def _number(value: float, _position: object = None) -> str:
    return f"{value:g}"


def log_x_axis(ax: Axes, low: float, high: float) -> None:
    """A log x axis over [low, high] whose ticks are labelled with plain
    numbers whatever the range: over a decade or more, at 1, 2 and 5 times
    powers of ten; within one, at about five round values of the range."""
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ticks = [t for t in LogLocator(base=10, subs=(1.0, 2.0, 5.0)).tick_values(low, high)]
    inside = [t for t in ticks if low <= t <= high]
    if len(inside) < 3:  # within a decade: round values of the range itself
        inside = [t for t in MaxNLocator(nbins=5).tick_values(low, high) if low <= t <= high]
    ax.xaxis.set_major_locator(FixedLocator(inside))
    ax.xaxis.set_major_formatter(FuncFormatter(_number))
