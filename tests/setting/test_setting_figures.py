"""Tests of the figures of chapter 0 (lecnotes.setting.figures): what they draw, bad input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.core.hermite import hermite_coefficients  # noqa: E402
from lecnotes.core.targets import LINKS  # noqa: E402
from lecnotes.setting import figures as F  # noqa: E402

CHAPTERS = (0,)


def test_hermite_decay_figure_draws_the_coefficients():
    fig = F.hermite_decay_figure(["relu", "he3"], kmax=8)
    left, right = fig.axes
    relu = left.lines[0]
    c = hermite_coefficients(LINKS["relu"], 8)
    nz = c**2 > 1e-28
    np.testing.assert_allclose(relu.get_ydata(), c[nz] ** 2)
    assert len(left.lines[1].get_xdata()) == 1  # He_3: a single coefficient
    # the Parseval tail of He_3 vanishes above degree 3: drawn up to degree 2 only
    assert right.lines[1].get_xdata().max() == 2
    plt.close(fig)


def test_first_moment_figure_one_curve_per_dimension():
    deltas = np.array([0.5, 1.0, 2.0])
    relu = np.random.default_rng(0).uniform(0.1, 0.9, (4, 2, 3))
    fig = F.first_moment_figure(deltas, [10, 40], relu, relu / 10)
    left, right = fig.axes
    assert len(left.containers) == 2 and len(right.containers) == 2
    np.testing.assert_allclose(left.containers[0].lines[0].get_ydata(), relu[:, 0].mean(0))
    assert [ln.get_ydata()[0] for ln in right.lines if ln.get_linestyle() == "--"] == [
        5 / 9, 5 / 39]
    plt.close(fig)


@pytest.mark.parametrize("kw", [dict(kmax=0), dict(kmax=1.5), dict(links=["nope"]),
                                dict(links=[]), dict(links="relu")])
def test_hermite_decay_figure_bad_input(kw):
    with pytest.raises(ValueError):
        F.hermite_decay_figure(**kw)


def test_first_moment_figure_bad_input():
    ok = np.ones((2, 1, 2)) * 0.5
    with pytest.raises(ValueError, match="deltas"):
        F.first_moment_figure([0.0, 1.0], [10], ok, ok)
    with pytest.raises(ValueError, match="dims"):
        F.first_moment_figure([1.0, 2.0], [1], ok, ok)
    with pytest.raises(ValueError, match="relu"):
        F.first_moment_figure([1.0, 2.0], [10, 20], ok, ok)
    with pytest.raises(ValueError, match="quadratic"):
        F.first_moment_figure([1.0, 2.0], [10], ok, ok * np.nan)
