"""Every plot's axis has labelled ticks, whatever its range."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from runner.report.axes import log_x_axis


def _labels(low: float, high: float) -> list[tuple[float, str]]:
    fig, ax = plt.subplots()
    ax.plot([low, high], [0, 1])
    log_x_axis(ax, low, high)
    fig.canvas.draw()
    shown = [
        (tick.get_position()[0], tick.get_text())
        for tick in ax.get_xticklabels()
        if tick.get_text() and low <= tick.get_position()[0] <= high
    ]
    plt.close(fig)
    return shown


@pytest.mark.parametrize(("low", "high"), [(1339, 4878), (0.8, 3.0), (12, 95000), (1.0, 1.5)])
def test_a_log_axis_has_numbers_within_its_range(low: float, high: float) -> None:
    shown = _labels(low, high)
    assert len(shown) >= 2, shown
    for position, text in shown:
        assert float(text.replace("\u2212", "-")) == pytest.approx(position)
