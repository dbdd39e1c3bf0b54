"""Figures drawn from estimates whose rounding puts a point a hair outside its own interval."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from virtualcrime.analysis.figures import _errorbar


def test_a_point_a_rounding_error_outside_its_interval_is_drawn() -> None:
    # What a model-role matrix gave: every turn rated alike, so the rate and both bounds are 0.92, summed in
    # different orders (0.9199999999999997 in [0.9199999999999998, 0.9200000000000002]).
    fig, ax = plt.subplots()
    _errorbar(ax, 0.9199999999999997, 0.5, (0.9199999999999998, 0.9200000000000002), (0.4, 0.6))
    [bars] = ax.containers
    assert bars is not None
    plt.close(fig)
