"""Regression: compare an experiment's metrics with a committed baseline.

The baseline file lists metrics with tolerance bands; a metric outside its
band (or missing) fails the regression. ``make_baseline`` writes one from
the current results, with the default bands below.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.analyses.transfers import summarize
from runner.tables.schema import TransferRow

DEFAULT_RELATIVE = {"ttfb_median": 0.5, "ttlb_median": 0.5, "goodput_median": 0.5}
DEFAULT_ERROR_RATE_SLACK = 0.05
# Local runs measure wall-clock time on whatever host runs them: the same
# ci-small median (5 MiB TTLB) was 1.28 s on one 2-core host and 3.05 s on
# another, and a faster host is no regression. So local bands are one-sided
# and a factor wide, flagging only breakage.
LOCAL_FACTOR_BAND = 4.0
# Local times are milliseconds on loopback, where one slow first byte doubles
# a median: there a time also passes within this many seconds of the baseline.
LOCAL_ABSOLUTE_SLACK_S = 0.5


@dataclass(frozen=True)
class Verdict:
    key: str
    value: float | None
    expected: float
    band: tuple[float, float]
    ok: bool

    def line(self) -> str:
        shown = "missing" if self.value is None else f"{self.value:.4g}"
        word = "ok  " if self.ok else "FAIL"
        return (
            f"{word} {self.key}: {shown} (baseline {self.expected:.4g}, "
            f"band [{self.band[0]:.4g}, {self.band[1]:.4g}])"
        )


def current_metrics(rows: list[TransferRow], variants: list[str]) -> dict[str, float]:
    metrics = {}
    for g in summarize(rows, variants):
        prefix = f"{g.variant}/{g.cls}/{g.size}"
        metrics[f"{prefix}/ttfb_median"] = g.ttfb_median
        metrics[f"{prefix}/ttlb_median"] = g.ttlb_median
        metrics[f"{prefix}/goodput_median"] = g.goodput_median
        metrics[f"{prefix}/error_rate"] = g.error_rate
    return metrics


def _band(name: str, value: float, factor: float | None, slack_s: float) -> tuple[float, float]:
    if name == "error_rate":
        return 0.0, min(1.0, value + DEFAULT_ERROR_RATE_SLACK)
    if factor is None:
        rel = DEFAULT_RELATIVE[name]
        low, high = max(0.0, value * (1 - rel)), value * (1 + rel)
    elif name == "goodput_median":
        low, high = value / factor, math.inf
    else:
        low, high = 0.0, value * factor
    if name in ("ttfb_median", "ttlb_median"):
        high = max(high, value + slack_s)
    return low, high


def _bound(value: float) -> float | None:
    return None if math.isinf(value) else round(value, 6)


def make_baseline(
    rows: list[TransferRow],
    variants: list[str],
    experiment: str,
    provenance: dict[str, Any],
    factor: float | None = None,
    slack_s: float = 0.0,
) -> dict[str, Any]:
    """Metrics with bands: DEFAULT_RELATIVE on times and goodput, or within
    ``factor`` of slowing down when given; a few points of slack on error rates.
    An unbounded side is written as null."""
    metrics = {}
    for key, value in sorted(current_metrics(rows, variants).items()):
        if math.isnan(value):
            continue
        low, high = _band(key.rsplit("/", 1)[1], value, factor, slack_s)
        metrics[key] = {"value": round(value, 6), "low": round(low, 6), "high": _bound(high)}
    return {"experiment": experiment, "provenance": provenance, "metrics": metrics}


def check_against(
    rows: list[TransferRow], variants: list[str], baseline_path: Path
) -> list[Verdict]:
    baseline = json.loads(baseline_path.read_text())
    current = current_metrics(rows, variants)
    verdicts = []
    for key, entry in sorted(baseline["metrics"].items()):
        value = current.get(key)
        high = math.inf if entry["high"] is None else float(entry["high"])
        band = (float(entry["low"]), high)
        ok = value is not None and not math.isnan(value) and band[0] <= value <= band[1]
        verdicts.append(Verdict(key, value, float(entry["value"]), band, ok))
    return verdicts


def provenance_note(baseline_path: Path, spec_sha256: str) -> str | None:
    """A line saying so when the baseline was written from another version of the
    spec than ``spec_sha256`` (its metrics may then differ for that reason alone)."""
    provenance = json.loads(baseline_path.read_text()).get("provenance") or {}
    written = provenance.get("spec_sha256")
    if not written or written == spec_sha256:
        return None
    rewrite = "make baseline" + (" BACKEND=local" if provenance.get("backend") == "local" else "")
    return (
        f"note: {baseline_path} was written from spec sha256 {written[:12]}, the spec is now "
        f"{spec_sha256[:12]}: `{rewrite}` rewrites it"
    )
