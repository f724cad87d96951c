"""CDF plots comparing variants with seeds as the unit.

Each seed (one sampled network) is drawn as a thin ECDF in which every
measured client weighs the same; the thick line is the geometric mean over
seeds of each quantile, and the band a 95% t interval across seeds at each
quantile, taken on the log scale so that it never passes zero (a linear
one where values can be zero). Transfers within a seed are not independent
(they share the network and the client's path), so no band comes from
pooling them; under 3 seeds there is no band.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from scipy import stats as scipy_stats  # noqa: E402

from runner.analyses.stats import ClientValues, client_ecdf, ecdf_quantiles  # noqa: E402
from runner.analyses.transfers import METRICS  # noqa: E402
from runner.tables.schema import TransferRow  # noqa: E402
from runner.units import human_size  # noqa: E402

LABELS = {
    "ttfb": "time to first byte (s)",
    "ttlb": "time to last byte (s)",
    "goodput": "goodput (Mbit/s)",
}
BAND_MIN_SEEDS = 3
LEVELS = np.linspace(0.01, 0.99, 99)


def save_figure(
    fig: Figure, ax: Axes, path: Path, labels: tuple[str, str, str], legend: str = "best"
) -> None:
    """Label ``ax`` (x, y, title), grid it, give it a legend when it has
    lines, and write ``fig`` to ``path``."""
    xlabel, ylabel, title = labels
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc=legend, fontsize="x-small")  # type: ignore[call-overload]
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def seed_band(
    per_seed: Mapping[int, ClientValues], levels: np.ndarray = LEVELS
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The centre line and the 95% band across seeds at each of ``levels``:
    (centre, low, high); no band (None) under BAND_MIN_SEEDS seeds."""
    rows = []
    for by_client in per_seed.values():
        xs, ys = client_ecdf(by_client)
        if len(xs):
            rows.append(ecdf_quantiles(xs, ys, levels))
    if not rows:
        return np.array([]), None, None
    quantiles = np.vstack(rows)
    positive = bool((quantiles > 0).all())
    scaled = np.log(quantiles) if positive else quantiles
    centre = scaled.mean(axis=0)
    n = len(rows)
    back = np.exp if positive else (lambda a: a)
    if n < BAND_MIN_SEEDS:
        return back(centre), None, None
    half = float(scipy_stats.t.ppf(0.975, n - 1)) * scaled.std(axis=0, ddof=1) / math.sqrt(n)
    low, high = back(centre - half), back(centre + half)
    if not positive:
        low = np.maximum(low, 0.0)
    return back(centre), low, high


def draw_cdf(
    ax: Axes,
    per_seed: Mapping[int, ClientValues],
    label: str,
    alpha: float = 0.2,
    colour: Any = None,
) -> None:
    """One variant on ``ax``: each seed's client-weighted ECDF (thin), the
    centre across seeds (thick) and its band across seeds."""
    seeds = {s: v for s, v in per_seed.items() if any(len(x) for x in v.values())}
    if not seeds:
        return
    clients = sum(sum(1 for x in v.values() if len(x)) for v in seeds.values())
    centre, low, high = seed_band(seeds)
    line = ax.step(
        centre,
        LEVELS,
        where="post",
        linewidth=1.8,
        color=colour,
        label=f"{label} ({len(seeds)} seed{'s' if len(seeds) != 1 else ''}, {clients} clients)",
    )[0]
    colour = line.get_color()
    for by_client in seeds.values():
        xs, ys = client_ecdf(by_client)
        ax.step(xs, ys, where="post", linewidth=0.6, alpha=0.45, color=colour)
    if low is not None and high is not None:
        ax.fill_betweenx(LEVELS, low, high, alpha=alpha, color=colour, linewidth=0)


def per_seed_clients(rows: list[TransferRow], metric: str) -> dict[str, dict[int, ClientValues]]:
    """variant -> seed -> measured client -> its values of ``metric``."""
    value_of = METRICS[metric]
    found: dict[str, dict[int, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for row in rows:
        value = value_of(row) if row.success else None
        if value is not None:
            found[row.variant][row.seed][row.host].append(value)
    return {v: dict(seeds) for v, seeds in found.items()}


MANY_VARIANTS = 6  # more lines than this and the legend goes beside the axes


def variant_colours(count: int) -> list[Any]:
    """A colour per line: matplotlib's own cycle (None) up to its 10
    colours, then tab20's, so that no two of 20 variants share one."""
    if count <= 10:
        return [None] * count
    palette = list(plt.get_cmap("tab20").colors)  # type: ignore[attr-defined]
    return [palette[k % len(palette)] for k in range(count)]


def cdf_plot(
    rows: list[TransferRow], metric: str, title: str, variants: list[str], path: Path
) -> None:
    by_variant = per_seed_clients(rows, metric)
    drawn = [v for v in variants if v in by_variant]
    many = len(drawn) > MANY_VARIANTS
    fig, ax = plt.subplots(figsize=(9, 4) if many else (6, 4))
    for variant, colour in zip(drawn, variant_colours(len(drawn)), strict=True):
        draw_cdf(ax, by_variant[variant], variant, colour=colour)
    ax.set_xlabel(LABELS[metric])
    ax.set_ylabel("cumulative fraction (each client weighs the same)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if many:  # beside the axes, where it hides no line
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="x-small")
    elif drawn:
        ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_all(rows: list[TransferRow], variants: list[str], out: Path) -> list[Path]:
    """One TTLB and one TTFB CDF per (class, size), one goodput CDF per class."""
    measured = [r for r in rows if r.measured]
    groups: dict[tuple[str, int], list[TransferRow]] = defaultdict(list)
    classes: dict[str, list[TransferRow]] = defaultdict(list)
    for row in measured:
        groups[(row.cls, row.size)].append(row)
        classes[row.cls].append(row)
    written = []
    for (cls, size), members in sorted(groups.items()):
        for metric in ("ttlb", "ttfb"):
            path = out / f"{metric}-{cls}-{size}.png"
            cdf_plot(
                members, metric, f"{cls}, {human_size(size)}: {metric.upper()}", variants, path
            )
            written.append(path)
    for cls, members in sorted(classes.items()):
        path = out / f"goodput-{cls}.png"
        cdf_plot(members, "goodput", f"{cls}: goodput per transfer", variants, path)
        written.append(path)
    return written
