"""One figure style for the whole book (every chapter).

Figures are drawn on an opaque white background with dark ink so that they read the same in
the light and the dark theme of the HTML book, with a colour-blind-safe palette (Okabe-Ito).
"""

from __future__ import annotations

import html

import matplotlib as mpl
import numpy as np

from .stats import mean_and_error

__all__ = [
    "PALETTE",
    "use_style",
    "errorbar_over_seeds",
    "log_ticks",
    "shared_legend",
    "Table",
    "MAX_WIDTH",
    "MIN_FONT_PT",
]


MAX_WIDTH = 7.5
"""Widest figure, in inches: the book's text column shows it at its nominal size (1:1)."""

MIN_FONT_PT = 9
"""Smallest text in a figure, in points at the nominal size (legends, ticks)."""

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
