"""Tests of the figures of chapter 1 (lecnotes.mean_field_vs_ntk.figures): data drawn, bad input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.mean_field_vs_ntk import figures as F  # noqa: E402
from lecnotes.mean_field_vs_ntk.experiments import BUDGET_KEYS  # noqa: E402

CHAPTERS = (1,)
RNG = np.random.default_rng(0)


def test_reduced_figure_gap_and_laws():
    widths = np.array([16, 32, 64])
    risks = RNG.uniform(0.1, 1.0, (3, 3, 2, 5))
    fig = F.reduced_figure(widths, risks, dt=0.5)
    left, right = fig.axes
    assert len(left.lines) == 6  # full and reduced at three widths
    np.testing.assert_allclose(left.lines[0].get_xdata(), 0.5 * np.arange(5))
    gap = np.abs(risks[:, :, 0] - risks[:, :, 1]).max(-1)
    np.testing.assert_allclose(right.containers[0].lines[0].get_ydata(), gap.mean(0))
    one_over_m = [ln for ln in right.lines if ln.get_label() == "$1/m$"][0]
    np.testing.assert_allclose(one_over_m.get_ydata(), gap[:, 0].mean() * 16 / widths)
    plt.close(fig)


def test_rademacher_budget_barrier_payoff_figures_draw():
    ns = np.array([10, 30])
    fig = F.rademacher_figure(ns, {5: np.ones((2, 4)), 50: np.ones((2, 4)) / 2})
    assert len(fig.axes[0].containers) == 2
    plt.close(fig)
    budget = {k: RNG.uniform(0.5, 2.0, (3, 2)) for k in BUDGET_KEYS}
    fig = F.budget_figure(ns, budget, eps=0.1, extra=(np.array([1.0, 2.0]), "prediction"))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "prediction" in labels and any(lab.startswith("MF path norm") for lab in labels)
    plt.close(fig)
    barrier = {8: (np.array([8, 16]), RNG.uniform(0.1, 1, (2, 2, 2)))}
    fig = F.barrier_figure(barrier)
    assert len(fig.axes) == 4
    plt.close(fig)
    risk = RNG.uniform(0.1, 1, (4, 2, 3))
    fig = F.payoff_figure([16, 32], risk)
    np.testing.assert_allclose(fig.axes[0].containers[2].lines[0].get_ydata(),
                               risk[:, :, 2].mean(0))
    plt.close(fig)


def test_figures_refuse_bad_input():
    with pytest.raises(ValueError, match="widths"):
        F.reduced_figure([0, 16], np.ones((1, 2, 2, 3)))
    with pytest.raises(ValueError, match="risks"):
        F.reduced_figure([8, 16], np.ones((1, 3, 2, 3)))
    with pytest.raises(ValueError, match="dt"):
        F.reduced_figure([8, 16], np.ones((1, 2, 2, 3)), dt=float("nan"))
    with pytest.raises(ValueError, match="values"):
        F.rademacher_figure([10, 20], {})
    with pytest.raises(ValueError, match="values"):
        F.rademacher_figure([10, 20], {3: np.ones((3, 4))})
    with pytest.raises(ValueError, match="budget"):
        F.budget_figure([10, 20], {"P": np.ones((2, 2))})
    with pytest.raises(ValueError, match="barrier"):
        F.barrier_figure({})
    with pytest.raises(ValueError, match="risk"):
        F.payoff_figure([16, 32], np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="dims"):
        F.payoff_figure([16, -32], np.ones((2, 2, 3)))
