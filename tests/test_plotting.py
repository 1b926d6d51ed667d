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


def test_shared_legend_is_one_legend_below_the_panels():
    fig, axes = plt.subplots(1, 2, figsize=(7, 3), layout="constrained")
    axes[0].plot([0, 1], [0, 1], label="a")
    axes[1].plot([0, 1], [1, 0], label="a")
    axes[1].plot([0, 1], [1, 1], label="b")
    leg = plotting.shared_legend(fig)
    assert [t.get_text() for t in leg.get_texts()] == ["a", "b"]
    assert fig.legends == [leg] and all(ax.get_legend() is None for ax in axes)
    plt.close(fig)
    fig, ax = plt.subplots()
    ax.plot([0, 1], label="x")
    with pytest.raises(ValueError):
        plotting.shared_legend(fig)     # not constrained: no room outside
    plt.close(fig)


def test_style_text_is_at_least_the_minimum_size():
    plotting.use_style()
    for key in ("legend.fontsize", "xtick.labelsize", "ytick.labelsize", "axes.labelsize"):
        size = matplotlib.rcParams[key]
        if isinstance(size, str):
            size = matplotlib.font_manager.FontProperties(size=size).get_size_in_points()
        assert size >= plotting.MIN_FONT_PT, key
    assert matplotlib.rcParams["figure.figsize"][0] <= plotting.MAX_WIDTH


def test_table_formats_cells_and_renders_html_and_text():
    t = plotting.Table(["d", "cos^2"], [[128, 0.123456], [256, np.float64(2e-5)]],
                       caption="a <caption>")
    assert "<td>0.123</td>" in t._repr_html_() and "<td>2e-05</td>" in t._repr_html_()
    assert "&lt;caption&gt;" in t._repr_html_() and 'class="dataframe' in t._repr_html_()
    assert repr(t).splitlines()[1].split() == ["d", "cos^2"]
    with pytest.raises(ValueError):
        plotting.Table(["a", "b"], [[1]])
