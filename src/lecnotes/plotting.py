"""One figure style for the whole book (every chapter).

Figures are drawn on an opaque white background with dark ink so that they read the same in
the light and the dark theme of the HTML book, with a colour-blind-safe palette (Okabe-Ito).
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

from . import _validate as V

__all__ = ["PALETTE", "use_style", "mean_and_error", "errorbar_over_seeds", "loglog_slope"]

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
}


def use_style() -> None:
    """Apply the book's figure style (call once at the top of a chapter)."""
    mpl.rcParams.update(_STYLE)


def mean_and_error(values, axis: int = 0):
    """Mean and standard error of the mean over seeds along ``axis`` (error bars of the book).

    Returns ``(mean, sem)``; with a single seed the error is 0.
    """
    a = V.finite_array(values, "values")
    if a.ndim == 0 or a.shape[axis] < 1:
        raise ValueError("values must have at least one entry along the seed axis")
    m = a.mean(axis=axis)
    s = a.shape[axis]
    sem = a.std(axis=axis, ddof=1) / np.sqrt(s) if s > 1 else np.zeros_like(m)
    return m, sem


def errorbar_over_seeds(ax, x, values, label=None, **kw):
    """Plot the mean over seeds (axis 0 of ``values``) with standard-error bars."""
    m, sem = mean_and_error(values, axis=0)
    kw.setdefault("marker", "o")
    kw.setdefault("capsize", 2)
    return ax.errorbar(np.asarray(x), m, yerr=sem, label=label, **kw)


def loglog_slope(x, y):
    """Least-squares slope and intercept of ``log y`` against ``log x`` (scaling laws).

    Returns ``(slope, intercept, slope_stderr)``.
    """
    x = V.finite_array(x, "x", ndim=1)
    y = V.finite_array(y, "y", ndim=1)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("x and y must be 1-d of the same length >= 2")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("log-log fit needs positive x and y")
    lx, ly = np.log(x), np.log(y)
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, res, *_ = np.linalg.lstsq(A, ly, rcond=None)
    if x.size > 2:
        resid = ly - A @ coef
        s2 = resid @ resid / (x.size - 2)
        se = float(np.sqrt(s2 / np.sum((lx - lx.mean()) ** 2)))
    else:
        se = float("nan")
    return float(coef[0]), float(coef[1]), se
