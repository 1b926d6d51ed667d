"""One figure style for the whole book (every chapter).

Figures are drawn on an opaque white background with dark ink so that they read the same in
the light and the dark theme of the HTML book, with a colour-blind-safe palette (Okabe-Ito).

A figure of the book is at most :data:`MAX_WIDTH` wide, which a desktop column shows 1:1. A
phone's column is less than half as wide, which would shrink 9 pt text to 5 px. So, in a
notebook, every figure is also sent as a *phone variant* (:func:`phone_layout`: the same
panels one below the other, :data:`PHONE_WIDTH` wide) under the MIME type
:data:`PHONE_MIME`. Jupyter and Colab ignore that type and show the usual PNG; the book's
``phone_figures`` extension serves the variant to narrow screens.
"""

from __future__ import annotations

import html
import math
import textwrap
import warnings

import matplotlib as mpl
import numpy as np

from lecnotes.core.stats import mean_and_error

__all__ = [
    "PALETTE",
    "use_style",
    "errorbar_over_seeds",
    "log_ticks",
    "shared_legend",
    "Table",
    "MAX_WIDTH",
    "MIN_FONT_PT",
    "PHONE_WIDTH",
    "PHONE_MIME",
    "phone_layout",
]


MAX_WIDTH = 7.5
"""Widest figure, in inches: the book's text column shows it at its nominal size (1:1)."""

MIN_FONT_PT = 9
"""Smallest text in a figure, in points at the nominal size (legends, ticks)."""

PHONE_WIDTH = 3.4
"""Width of a figure's phone variant, in inches: at the style's 110 dpi it is 374 px, shown at
0.9 or more of its size in the 340 px column of a 390 px phone."""

PHONE_MIME = "application/vnd.lecnotes.phone+png"
"""MIME type of the phone variant of a figure in a notebook's outputs (base64 PNG)."""

PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
"""Okabe-Ito colours, distinguishable with the common colour-vision deficiencies."""


_STYLE = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.bbox": "tight",
    "axes.edgecolor": "#222222",
    "axes.labelcolor": "#222222",
    "text.color": "#222222",
    "xtick.color": "#222222",
    "ytick.color": "#222222",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "mathtext.fontset": "stixsans",   # DejaVu's \star is a dot at these sizes; STIX's is a star
}


def use_style() -> None:
    """Apply the book's figure style (call once at the top of a chapter).

    In a notebook, figures are also sent as "retina" PNGs: drawn at twice the pixel density
    and displayed at their nominal size, so that text stays sharp when the page scales a
    figure down (a phone, a narrow column).
    """
    mpl.rcParams.update(_STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing to configure
        return
    shell = get_ipython()
    if shell is not None and "IPKernelApp" in shell.config:   # a notebook kernel
        shell.run_line_magic("config", "InlineBackend.figure_formats = ['retina']")
        _register_phone_formatter(shell)


def _register_phone_formatter(shell) -> None:
    """Send every displayed figure's phone variant too (after its PNG, see the module).

    The formatter answers for figures itself rather than through ``for_type``: the inline
    backend drops every formatter's figure printer when pyplot is first imported.
    """
    from IPython.core.formatters import BaseFormatter
    from matplotlib.figure import Figure

    class PhoneFormatter(BaseFormatter):
        def __call__(self, obj):
            return _phone_png(obj) if isinstance(obj, Figure) else None

    formatters = shell.display_formatter.formatters
    if PHONE_MIME not in formatters:   # after image/png: the wide PNG is drawn first
        formatters[PHONE_MIME] = PhoneFormatter(parent=shell.display_formatter,
                                                format_type=PHONE_MIME)


def _phone_png(fig):
    """The phone variant of ``fig`` as base64 retina PNG, or None when it has no layout."""
    from IPython.core.pylabtools import retina_figure

    try:
        with warnings.catch_warnings():   # a layout warning belongs to no cell of the page
            warnings.simplefilter("ignore")
            laid_out, bbox = _phone_layout(fig, PHONE_WIDTH)
            if not laid_out:
                return None
            if bbox is None:              # the layout is not current: savefig redoes it
                return retina_figure(fig, base64=True)
            # the layout and its tight box are those of phone_layout's last pass: saved as
            # they are, without savefig's second layout pass and tight-box search (a third of
            # the variant's cost; the pixels agree with "tight" to within a pixel's rounding)
            engine = fig.get_layout_engine()
            fig.set_layout_engine("none")
            try:
                return retina_figure(fig, base64=True, bbox_inches=bbox)
            finally:
                fig.set_layout_engine(engine)
    except Exception:   # noqa: BLE001 - a figure without a phone variant is shown as it is
        return None


def phone_layout(fig, width: float = PHONE_WIDTH) -> bool:
    """Lay ``fig`` out again, in place, for a phone: its panels one below the other.

    The panels of a grid (twin axes and colour bars follow their panel; a panel spanning
    several cells becomes one) are stacked in reading order in one column ``width`` inches
    wide, each keeping its aspect within 1.8-2.5 in of height; tick labels hidden by a shared
    axis are shown again. Legends of the figure are redrawn below the panels in at most two
    columns (one, with wrapped labels, if two do not fit), and so is a panel's legend placed
    beside it or wider than 60 % of the width; long panel titles are wrapped. The canvas is
    narrowed until the saved PNG ("tight", with its padding) is at most ``width`` wide. A
    figure whose panels lie in several grids (nested grids) is left as it is.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure drawn with ``layout="constrained"`` (or with one panel).
    width : float
        Width of the phone variant, in inches.

    Returns
    -------
    bool
        Whether ``fig`` was laid out for the phone (False: no panel, or nested grids).
    """
    return _phone_layout(fig, width)[0]


def _phone_layout(fig, width: float):
    """:func:`phone_layout`, and the figure's padded tight box (inches) when its layout is
    current at the final size (None when the last narrowing was not laid out again)."""
    if not width > 0:
        raise ValueError(f"width must be positive, got {width}")
    panels = [ax for ax in fig.axes
              if ax.get_subplotspec() is not None and not hasattr(ax, "_colorbar")]
    if not panels:
        return False, None
    specs = [ax.get_subplotspec() for ax in panels]
    gs = specs[0].get_gridspec()
    rows, cols = gs.get_geometry()
    if cols > 1 and any(s.get_gridspec() is not gs for s in specs):
        return False, None
    engine = fig.get_layout_engine()
    if engine is None or "Constrained" not in type(engine).__name__:
        if len(panels) < len(fig.axes):    # colour bars laid out by another engine
            return False, None
        fig.set_layout_engine("constrained")
    old_w, old_h = fig.get_size_inches()
    panel_h = float(np.clip(width * (old_h / rows) / (old_w / cols), 1.8, 2.5))
    cells = sorted({(s.rowspan.start, s.colspan.start) for s in specs})
    if cols > 1:
        stack = fig.add_gridspec(len(cells), 1)
        for ax, s in zip(panels, specs, strict=True):
            ax.set_subplotspec(stack[cells.index((s.rowspan.start, s.colspan.start))])
        _label_shared_axes(panels)
    height = panel_h * (len(cells) if cols > 1 else rows)
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends)
    for ax in panels:     # a legend beside its panel, or as wide as it: below, on a phone
        legend = ax.get_legend()
        if legend is not None:
            box = legend.get_window_extent(renderer)
            if (box.x0 >= ax.get_window_extent(renderer).x1 - 1
                    or box.width > 0.6 * width * fig.dpi):
                legends.append(legend)
        if len(ax.get_title()) > 34:                   # 11 pt titles: about 34 characters
            ax.set_title(textwrap.fill(ax.get_title(), 34))
    for legend in legends:
        height += _narrow_legend(fig, legend, width, renderer)
    if fig.get_suptitle():
        height += 0.3
    fig.set_size_inches(width, height)
    # what the panels cannot shrink (long tick labels) widens the saved figure: narrow the
    # canvas by the excess so that the PNG, cut to its content plus savefig's 0.1 in padding
    # on each side ("tight"), is at most ``width`` wide
    pad = mpl.rcParams["savefig.pad_inches"]
    for _ in range(3):
        fig.draw_without_rendering()      # the constrained layout at the current size
        tight = fig.get_tightbbox(fig.canvas.get_renderer())
        if tight.width + 2 * pad <= width + 0.02:
            return True, tight.padded(pad)
        fig.set_size_inches(max(fig.get_size_inches()[0] - (tight.width + 2 * pad - width),
                                0.6 * width), height)
    return True, None


def _label_shared_axes(panels) -> None:
    """Stacked panels each show their shared axes' tick labels, and their label if unset."""
    for ax in panels:
        for axis, shared in (("x", ax.get_shared_x_axes()), ("y", ax.get_shared_y_axes())):
            siblings = shared.get_siblings(ax)
            if len(siblings) < 2 or getattr(ax, f"{axis}axis").get_label_position() not in (
                    "left", "bottom"):
                continue
            ax.tick_params(axis=axis, **{"labelleft" if axis == "y" else "labelbottom": True})
            get = f"get_{axis}label"
            if not getattr(ax, get)():
                label = next((getattr(s, get)() for s in siblings if getattr(s, get)()), "")
                getattr(ax, f"set_{axis}label")(label)


def _narrow_legend(fig, legend, width: float, renderer) -> float:
    """Draw a legend again below the panels, in two columns if they fit in ``width`` inches,
    else one (labels wrapped); return the height it needs (in)."""
    texts = [t.get_text() for t in legend.get_texts()]
    found = {}
    for ax in fig.axes:      # the original artists, so that error bars keep their caps
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(lab, h)
    handles = ([found[t] for t in texts] if all(t in found for t in texts)
               else legend.legend_handles)
    title = legend.get_title().get_text() or None
    legend.remove()
    for ncol in (min(2, len(texts)), 1):
        labels = texts if ncol > 1 else [textwrap.fill(t, 40) for t in texts]
        new = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, title=title)
        if ncol == 1 or new.get_window_extent(renderer).width <= width * fig.dpi:
            break
        new.remove()
    lines = sum(lab.count("\n") + 1 for lab in labels)
    return 0.2 * math.ceil(lines / ncol) + 0.15 * bool(title) + 0.1


def errorbar_over_seeds(ax, x, values, label=None, **kw):
    """Plot the mean over seeds (axis 0 of ``values``) with standard-error bars."""
    m, sem = mean_and_error(values, axis=0)
    kw.setdefault("marker", "o")
    kw.setdefault("capsize", 2)
    return ax.errorbar(np.asarray(x), m, yerr=sem, label=label, **kw)


def log_ticks(ax, ticks, axis: str = "x") -> None:
    """Label a logarithmic axis at the given values only, in plain numbers, no minor labels."""
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    ticks = [float(t) for t in ticks]
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xticks if axis == "x" else ax.set_yticks)(ticks, labels=[f"{t:g}" for t in ticks])
    target.set_minor_locator(mpl.ticker.NullLocator())


def shared_legend(fig, ncol: int = 2, **kw):
    """One legend for all panels of ``fig``, below them, outside the axes.

    The figure must use ``layout="constrained"`` (``plt.subplots(..., layout="constrained")``),
    which makes room for a legend placed ``"outside"``. Entries with the same label are shown
    once, in the order the panels first draw them.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure whose axes carry labelled artists.
    ncol : int
        Columns of the legend.
    **kw
        Passed to ``Figure.legend``.

    Returns
    -------
    matplotlib.legend.Legend
    """
    if fig.get_layout_engine() is None or "Constrained" not in type(
            fig.get_layout_engine()).__name__:
        raise ValueError('shared_legend needs a figure made with layout="constrained"')
    handles, labels = [], []
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not labels:
        raise ValueError("no labelled artist in the figure")
    kw.setdefault("loc", "outside lower center")
    return fig.legend(handles, labels, ncol=ncol, **kw)


class Table:
    """A small table of numbers for a notebook's output, instead of a printed numpy array.

    Shown as an HTML table in JupyterLab, Colab and the book (class ``dataframe``, which the
    book's theme styles in both its light and dark mode), and as aligned text elsewhere.

    Parameters
    ----------
    header : sequence of str
        Column titles; the first column usually names the rows.
    rows : sequence of sequences
        The cells, row by row; floats are formatted with ``digits`` significant digits.
    caption : str, optional
        A line above the table.
    digits : int
        Significant digits of the float cells.
    """

    def __init__(self, header, rows, caption: str | None = None, digits: int = 3):
        self.header = [str(h) for h in header]
        self.rows = [[self._cell(v, digits) for v in row] for row in rows]
        if any(len(r) != len(self.header) for r in self.rows):
            raise ValueError("every row needs one cell per column of the header")
        self.caption = caption

    @staticmethod
    def _cell(value, digits: int) -> str:
        if isinstance(value, (float, np.floating)):
            return f"{value:.{digits}g}"
        return str(value)

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
                       for r in self.rows)
        cap = f"<caption>{esc(self.caption)}</caption>" if self.caption else ""
        return (f'<table class="dataframe lecnotes-table">{cap}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def __repr__(self) -> str:
        cols = list(zip(self.header, *self.rows, strict=True))
        widths = [max(len(c) for c in col) for col in cols]
        lines = [self.caption] if self.caption else []
        for r in [self.header, *self.rows]:
            lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
        return "\n".join(lines)
