"""Tests of the static He_3 figure of chapter 3 (lecnotes.first_moment.explorer.he3_figure)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.first_moment import explorer, reduced_first_moment_overlaps  # noqa: E402
from lecnotes.first_moment.theory import optimal_preprocessing  # noqa: E402

CHAPTERS = (3,)


def _clip(y):
    return np.clip(y, -1, 1)


def test_he3_figure_draws_every_preprocessing_and_dimension():
    deltas, dims = np.array([1.0, 4.0]), [50, 100]
    pre = {"raw": None, "optimal": optimal_preprocessing("he3"), "clipped": _clip}
    sims = reduced_first_moment_overlaps("he3", dims, deltas, pre, replicates=5, rng=0)
    fig = explorer.he3_figure(deltas, sims, dims, pre, np.geomspace(1, 4, 5))
    ax = fig.axes[0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "optimal (theory)" in labels and "clipped (theory)" in labels
    assert "raw (theory)" not in labels  # raw labels have limit 0: no curve
    assert sum(lab.startswith("raw, d =") for lab in labels) == len(dims)
    assert len(ax.lines) >= 2 + len(dims)  # two limit curves, one floor per dimension
    plt.close(fig)


def test_he3_figure_bad_input():
    deltas, dims = np.array([1.0]), [50]
    pre = {"raw": None}
    sims = reduced_first_moment_overlaps("he3", dims, deltas, pre, replicates=3, rng=0)
    with pytest.raises(ValueError, match="same names"):
        explorer.he3_figure(deltas, sims, dims, {"other": None}, deltas)
    with pytest.raises(ValueError, match="shades"):
        explorer.he3_figure(deltas, sims, dims, pre, deltas, shades=(0.5, 1.0))
