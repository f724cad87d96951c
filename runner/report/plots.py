"""CDF plots comparing variants, each with a 95% confidence band (DKW)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from runner.analyses.transfers import METRICS  # noqa: E402
from runner.report.stats import dkw_epsilon, ecdf  # noqa: E402
from runner.spec.units import human_size  # noqa: E402
from runner.tables.rows import TransferRow  # noqa: E402

LABELS = {
    "ttfb": "time to first byte (s)",
    "ttlb": "time to last byte (s)",
    "goodput": "goodput (Mbit/s)",
}


def draw_cdf(ax: Axes, values: list[float], label: str, alpha: float = 0.2) -> None:
    """One empirical CDF on ``ax``, with its 95% DKW confidence band."""
    xs, ys = ecdf(values)
    eps = dkw_epsilon(len(xs))
    line = ax.step(xs, ys, where="post", label=f"{label} (n={len(xs)})")[0]
    ax.fill_between(
        xs,
        np.clip(ys - eps, 0, 1),
        np.clip(ys + eps, 0, 1),
        step="post",
        alpha=alpha,
        color=line.get_color(),
        linewidth=0,
    )


def cdf_plot(
    rows: list[TransferRow], metric: str, title: str, variants: list[str], path: Path
) -> None:
    value_of = METRICS[metric]
    by_variant: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        value = value_of(row) if row.success else None
        if value is not None:
            by_variant[row.variant].append(value)
    fig, ax = plt.subplots(figsize=(6, 4))
    for variant in variants:
        values = by_variant.get(variant, [])
        if values:
            draw_cdf(ax, values, variant)
    ax.set_xlabel(LABELS[metric])
    ax.set_ylabel("cumulative fraction")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
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
