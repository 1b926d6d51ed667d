"""Tests of lecnotes.book.plotting."""

import base64
import hashlib

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.book import plotting
from lecnotes.core import stats


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

    from lecnotes.book import plotting

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


def _three_panels(sharey=True):
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.8), layout="constrained", sharey=sharey)
    for i, ax in enumerate(axes):
        ax.plot([0, 1], [0, i], label="simulation")
        ax.errorbar([0, 1], [i, 0], yerr=[0.1, 0.1], label="theory")
        ax.set_title(f"panel {i}")
    axes[0].set_ylabel("overlap")
    plotting.shared_legend(fig, ncol=4)
    return fig, axes


def test_phone_layout_stacks_the_panels_in_reading_order():
    plotting.use_style()
    fig, axes = _three_panels()
    assert plotting.phone_layout(fig)
    fig.canvas.draw()
    assert 0.8 * plotting.PHONE_WIDTH < fig.get_size_inches()[0] <= plotting.PHONE_WIDTH
    boxes = [ax.get_position() for ax in axes]
    assert all(abs(b.x0 - boxes[0].x0) < 1e-6 for b in boxes)     # one column
    assert boxes[0].y0 > boxes[1].y0 > boxes[2].y0                 # panel 0 on top
    # the shared y axis is labelled on every panel once they are no longer side by side
    assert all(ax.get_ylabel() == "overlap" for ax in axes)
    assert all(t.get_visible() for t in axes[2].get_yticklabels() if t.get_text())
    (legend,) = fig.legends                                        # one legend, 2 columns
    assert legend._ncols == 2
    assert [t.get_text() for t in legend.get_texts()] == ["simulation", "theory"]
    # every panel and the legend fit in the phone's width
    width = fig.get_size_inches()[0] * fig.dpi
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).width < width
    plt.close(fig)


def test_phone_layout_of_one_panel_spanning_panels_nested_grids_and_side_legends():
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot([0, 1], [0, 1])
    assert plotting.phone_layout(fig)
    assert 0.8 * plotting.PHONE_WIDTH < fig.get_size_inches()[0] <= plotting.PHONE_WIDTH
    plt.close(fig)
    fig = plt.figure(figsize=(7.5, 5), layout="constrained")
    grid = fig.add_gridspec(2, 2)
    top, left = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0])
    assert plotting.phone_layout(fig)                 # the spanning panel becomes one cell
    fig.canvas.draw()
    assert top.get_position().y0 > left.get_position().y0
    plt.close(fig)
    fig = plt.figure(layout="constrained")
    outer = fig.add_gridspec(1, 2)
    fig.add_subplot(outer[0])
    fig.add_subplot(outer[1].subgridspec(2, 1)[0])
    assert not plotting.phone_layout(fig)             # nested grids are left as they are
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a label long enough to widen the figure")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))   # beside the panel
    ax.set_title("a panel title far too long for the width of a phone's column")
    assert plotting.phone_layout(fig)
    extent = fig.get_tightbbox(fig.canvas.get_renderer()).width
    assert extent <= plotting.PHONE_WIDTH - 0.15
    assert ax.get_legend() is None and len(fig.legends) == 1   # moved below the panel
    assert "\n" in ax.get_title()
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7.5, 3), layout="constrained")
    for m in (16, 64, 256):                         # two columns of these do not fit
        ax.plot([0, 1], [0, m], label=f"full network, m = {m}")
        ax.plot([0, 1], [m, 0], "--", label=f"reduced, m = {m}")
    plotting.shared_legend(fig, ncol=3)
    assert plotting.phone_layout(fig)
    assert fig.legends[0]._ncols == 1
    assert fig.get_tightbbox(fig.canvas.get_renderer()).width <= plotting.PHONE_WIDTH - 0.15
    plt.close(fig)
    with pytest.raises(ValueError, match="width"):
        plotting.phone_layout(plt.figure(), width=0)


def test_phone_variant_is_sent_beside_the_png_in_a_kernel():
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    plotting._register_phone_formatter(shell)
    plotting._register_phone_formatter(shell)                      # idempotent
    fig, _ = _three_panels()
    data, metadata = shell.display_formatter.format(fig)
    png = base64.b64decode(data[plotting.PHONE_MIME])
    assert png.startswith(b"\x89PNG")
    assert metadata[plotting.PHONE_MIME]["width"] <= 374           # 3.4 in at 110 dpi
    fig, ax = plt.subplots(figsize=(6.5, 4))                       # chapter 6's wide legend
    for j in range(6):
        ax.plot([1, 4], [1, 10 * j + 1], label=f"asymmetric, d = {128 * 2 ** j}")
    ax.legend(ncol=2)
    data, metadata = shell.display_formatter.format(fig)
    assert metadata[plotting.PHONE_MIME]["width"] <= 374
    assert ax.get_legend() is None and len(fig.legends) == 1
    assert shell.display_formatter.format(object())[0].get(plotting.PHONE_MIME) is None
    plt.close(fig)


def test_the_book_serves_the_phone_variant_below_the_breakpoint():
    from pathlib import Path

    import nbformat
    from _tools import load_tool

    ext = load_tool("phone_figures", Path(__file__).resolve().parents[2] / "book" / "_ext")
    wide, phone = b"\x89PNG wide", b"\x89PNG phone"
    name = hashlib.sha256(wide).hexdigest() + ".png"
    output = nbformat.v4.new_output("display_data", data={
        "image/png": base64.b64encode(wide).decode(),
        plotting.PHONE_MIME: base64.b64encode(phone).decode(),
        "text/plain": "<Figure>"})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[output])])
    assert ext.phone_variants(nb) == {name: phone}
    page = (f'<p>x</p><img alt="A figure" src="../_images/{name}" style="width: 837px;" />'
            f'<img alt="other" src="../_images/{"0" * 64}.png" />')
    html, count = ext.wrap_images(page, {name: "../_images/phone/p.png"})
    assert count == 1
    assert (f'<picture class="lecnotes-phone"><source media="{ext.BREAKPOINT}" '
            f'srcset="../_images/phone/p.png 2x" /><img alt="A figure"') in html
    assert html.endswith(f'<img alt="other" src="../_images/{"0" * 64}.png" />')
