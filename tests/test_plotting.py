"""Tests of lecnotes.plotting."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes import (
    plotting,  # noqa: E402
    stats,
)


def test_style_sets_opaque_white_background():
    plotting.use_style()
    assert matplotlib.rcParams["savefig.facecolor"] == "white"
    assert matplotlib.rcParams["figure.facecolor"] == "white"


def test_mean_and_error():
    m, s = stats.mean_and_error(np.array([[1.0, 2.0], [3.0, 6.0]]))
    np.testing.assert_allclose(m, [2.0, 4.0])
    np.testing.assert_allclose(s, [np.sqrt(2) / np.sqrt(2), np.sqrt(8) / np.sqrt(2)])
    m, s = stats.mean_and_error(np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(s, 0)


def test_loglog_slope_recovers_a_power_law():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    slope, intercept, se = stats.loglog_slope(x, 3 * x**-0.5)
    assert slope == pytest.approx(-0.5)
    assert np.exp(intercept) == pytest.approx(3.0)
    assert se == pytest.approx(0.0, abs=1e-10)


def test_errorbar_over_seeds_draws():
    fig, ax = plt.subplots()
    plotting.errorbar_over_seeds(ax, [1, 2, 3], np.random.default_rng(0).random((4, 3)))
    assert len(ax.lines) >= 1
    plt.close(fig)


@pytest.mark.parametrize(
    "call",
    [
        lambda: stats.loglog_slope([1.0, 2.0], [1.0, -1.0]),
        lambda: stats.loglog_slope([1.0], [1.0]),
        lambda: stats.mean_and_error(np.array(1.0)),
        lambda: stats.mean_and_error([np.nan, 1.0]),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_log_ticks_labels_only_the_given_values():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lecnotes import plotting

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.log_ticks(ax, [100, 400, 1600])
    plotting.log_ticks(ax, [0.5, 2], axis="y")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["100", "400", "1600"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.5", "2"]
    assert len(ax.xaxis.get_minorticklocs()) == 0
    plt.close(fig)
