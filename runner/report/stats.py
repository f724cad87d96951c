"""The statistics the reports use, kept small and explicit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class Estimate:
    """A mean over independent samples (seeds) with a two-sided 95% t interval."""

    mean: float
    low: float | None  # None when there is a single sample
    high: float | None
    n: int

    def format(
        self, scale: float = 1.0, unit: str = "", digits: int = 1, signed: bool = True
    ) -> str:
        """``mean [low, high]``, signed as changes are unless ``signed`` is False."""
        if math.isnan(self.mean):
            return "n/a"
        sign = "+" if signed else ""
        text = f"{self.mean * scale:{sign}.{digits}f}{unit}"
        if self.low is None or self.high is None:
            return f"{text} (n={self.n}, no CI)"
        return f"{text} [{self.low * scale:{sign}.{digits}f}, {self.high * scale:{sign}.{digits}f}]"


def mean_ci(samples: Sequence[float], level: float = 0.95) -> Estimate:
    values = np.asarray([s for s in samples if not math.isnan(s)], dtype=float)
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), None, None, 0)
    mean = float(values.mean())
    if n == 1:
        return Estimate(mean, None, None, 1)
    sem = float(values.std(ddof=1)) / math.sqrt(n)
    half = float(scipy_stats.t.ppf(0.5 + level / 2, n - 1)) * sem
    return Estimate(mean, mean - half, mean + half, n)


def quantile(values: Sequence[float], q: float) -> float:
    if len(values) == 0:
        return float("nan")
    return float(np.quantile(np.asarray(values, dtype=float), q))


def ecdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and their cumulative fractions."""
    xs = np.sort(np.asarray(values, dtype=float))
    ys = np.arange(1, len(xs) + 1) / len(xs) if len(xs) else np.array([])
    return xs, ys


def dkw_epsilon(n: int, level: float = 0.95) -> float:
    """Half-width of the Dvoretzky-Kiefer-Wolfowitz confidence band of an ECDF."""
    if n == 0:
        return float("nan")
    return math.sqrt(math.log(2 / (1 - level)) / (2 * n))
