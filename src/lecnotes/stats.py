r"""Statistics over seeds: means with standard errors, log-log slopes, crossings, collapses.

Chapter-independent helpers that read the claims of the book off repeated simulations: the
mean and standard error over seeds (seeds on axis 0), least-squares slopes in log-log
coordinates, the size at which a curve crosses a level, a bootstrap scaling exponent of the
crossing sizes and a chi-square measure of the collapse of curves (chapters 1-7).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import chi2

from . import _validate as V

__all__ = [
    "crossing_size",
    "scaling_exponent",
    "collapse_chi2",
    "mean_and_error",
    "loglog_slope",
]


def crossing_size(ns, rho2, level: float = 0.5) -> float:
    r"""Sample size at which the mean overlap curve first reaches ``level`` (chapter 5).

    Linear interpolation of the mean over seeds (first axis of ``rho2``) against
    :math:`\log n`, between the last point below ``level`` and the first point at or above
    it. ``nan`` when the curve starts above ``level`` or never reaches it.

    Parameters
    ----------
    ns : array_like (m,), increasing sample sizes
    rho2 : array_like (seeds, m) or (m,), squared overlaps
    level : float in (0, 1)

    Returns
    -------
    float
    """
    ns = V.finite_array(ns, "ns", ndim=1)
    r = V.finite_array(rho2, "rho2")
    if r.ndim == 2:
        r = r.mean(axis=0)
    if r.shape != ns.shape or ns.size < 2 or np.any(ns <= 0) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be positive and increasing, with one value per column of rho2")
    level = V.positive_float(level, "level")
    above = np.nonzero(r >= level)[0]
    if above.size == 0 or above[0] == 0:
        return math.nan
    j = int(above[0])
    la, lb = math.log(ns[j - 1]), math.log(ns[j])
    return math.exp(la + (level - r[j - 1]) * (lb - la) / (r[j] - r[j - 1]))


def scaling_exponent(runs: dict, level: float = 0.5, n_boot: int = 200, rng=0):
    r"""Exponent :math:`\kappa` of :math:`n_{\rm level}(d)\propto d^\kappa`, with a bootstrap error.

    Chapter 5: for each dimension the sample size at which the mean overlap reaches
    ``level`` (:func:`crossing_size`); :math:`\kappa` is the least-squares slope of
    :math:`\log n_{\rm level}` against :math:`\log d`. Its standard error is the standard
    deviation of the slope over ``n_boot`` resamplings of the seeds (with replacement,
    independently for each dimension); resamplings whose curve does not cross are dropped.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}`` with ``rho2`` of shape ``(seeds, len(ns))``; at least two ``d``.
    level : float
    n_boot : int
    rng : Generator, int or None

    Returns
    -------
    kappa : float
    se : float
    crossings : dict ``{d: n_level(d)}``
    """
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    rng = V.generator(rng)
    dims = np.array(sorted(runs), dtype=float)
    data = {d: (np.asarray(runs[d][0], float), np.atleast_2d(np.asarray(runs[d][1], float)))
            for d in sorted(runs)}

    def slope(cross):
        y = np.log([cross[d] for d in sorted(runs)])
        if not np.all(np.isfinite(y)):
            return math.nan
        return float(np.polyfit(np.log(dims), y, 1)[0])

    crossings = {d: crossing_size(ns, r, level) for d, (ns, r) in data.items()}
    kappa = slope(crossings)
    boots = []
    for _ in range(n_boot):
        cross = {}
        for d, (ns, r) in data.items():
            idx = rng.integers(0, r.shape[0], r.shape[0])
            cross[d] = crossing_size(ns, r[idx], level)
        boots.append(slope(cross))
    boots = np.asarray(boots)
    boots = boots[np.isfinite(boots)]
    se = float(np.std(boots, ddof=1)) if boots.size >= 2 else math.nan
    return kappa, se, crossings


def collapse_chi2(runs: dict, scale, window=(0.2, 1.0), rtol: float = 0.02):
    r"""Do overlap curves of several dimensions agree at equal values of a scaling variable?

    Chapter 5. Points of different dimensions whose scaling variable ``scale(d, n)``
    (e.g. :math:`n/d^2`) agrees to relative tolerance ``rtol`` are compared; for each such
    group with at least two dimensions and a pooled mean overlap inside ``window``,
    :math:`Q_g=\sum_d(m_d-\bar m)^2/s_d^2` (:math:`m_d` the mean over seeds, :math:`s_d` its
    standard error, :math:`\bar m` the inverse-variance weighted mean). If the curves agree
    up to seed noise, :math:`Q=\sum_gQ_g` is approximately :math:`\chi^2` with
    :math:`\sum_g(|g|-1)` degrees of freedom.

    Parameters
    ----------
    runs : dict ``{d: (ns, rho2)}`` as in :func:`scaling_exponent`
    scale : callable ``(d, n) -> x``
    window : (float, float)
        Groups are used when their pooled mean overlap lies in this interval.
    rtol : float

    Returns
    -------
    Q : float
    dof : int
    pvalue : float, :math:`P(\chi^2_{\rm dof}\ge Q)`
    """

    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    if not callable(scale):
        raise ValueError("scale must be a callable (d, n) -> x")
    rtol = V.positive_float(rtol, "rtol")
    pts = []  # (x, d, mean, se)
    for d in sorted(runs):
        ns, r = np.asarray(runs[d][0], float), np.atleast_2d(np.asarray(runs[d][1], float))
        if r.shape[0] < 2:
            raise ValueError("each run needs at least two seeds (for the standard errors)")
        m, se = r.mean(axis=0), r.std(axis=0, ddof=1) / math.sqrt(r.shape[0])
        pts += [(float(scale(d, n)), d, m[j], se[j]) for j, n in enumerate(ns)]
    pts.sort()
    groups, cur = [], [pts[0]]
    for p in pts[1:]:
        if p[0] <= cur[0][0] * (1 + rtol):
            cur.append(p)
        else:
            groups.append(cur)
            cur = [p]
    groups.append(cur)
    Q, dof = 0.0, 0
    for g in groups:
        if len({p[1] for p in g}) < 2:
            continue
        m = np.array([p[2] for p in g])
        se = np.maximum(np.array([p[3] for p in g]), 1e-12)
        if not window[0] <= m.mean() <= window[1]:
            continue
        w = 1 / se**2
        Q += float(np.sum(w * (m - np.sum(w * m) / np.sum(w)) ** 2))
        dof += len(g) - 1
    if dof == 0:
        raise ValueError("no group of points of different dimensions inside the window")
    return Q, dof, float(chi2.sf(Q, dof))


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
