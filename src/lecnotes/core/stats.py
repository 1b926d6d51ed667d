r"""Statistics over seeds: the seeds themselves, means with standard errors, slopes, collapses.

Chapter-independent helpers that read the claims of the book off repeated simulations: the
mean and standard error over seeds (seeds on axis 0), least-squares slopes in log-log
coordinates, the size at which a curve crosses a level, a bootstrap scaling exponent of the
crossing sizes, a chi-square measure of the collapse of curves, Student-t factors for a few
seeds, per-seed slopes and a Kolmogorov distance to a limiting density (chapters 0-7).

The seeds: a notebook never calls ``numpy.random.default_rng`` itself; it passes an integer
seed to a ``lecnotes`` function, or draws with :func:`generator` (``generator(3)`` is
``default_rng(3)`` in the published book) and :func:`stream` (an independent stream named by
integer keys). Both combine the seed with the book-wide root ``LECNOTES_SEED``
(:func:`seed_root`), so ``make robustness`` can re-execute the book with independent draws.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import chi2
from scipy.stats import t as student_t

from lecnotes.core import validate as V
from lecnotes.core.validate import generator, seed_root, stream, streams

__all__ = [
    "generator",
    "stream",
    "streams",
    "seed_root",
    "crossing_size",
    "scaling_exponent",
    "collapse_chi2",
    "mean_and_error",
    "loglog_slope",
    "t_factor",
    "slopes_over_seeds",
    "max_abs_z",
    "ks_distance",
    "inverse_d_intercepts",
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


def scaling_exponent(runs: dict, level: float = 0.5, n_boot: int = 200, rng=None):
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

    Parameters
    ----------
    values : array_like
        Repetitions along ``axis`` (seeds on axis 0 by the book's convention).
    axis : int
        The seed axis.

    Returns
    -------
    mean, sem : ndarray or float
        The mean and the standard error of the mean (``std(ddof=1) / sqrt(k)``); with a
        single seed the error is 0.
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

    Parameters
    ----------
    x, y : array_like, shape (p,)
        Positive values, at least two points.

    Returns
    -------
    slope, intercept, slope_stderr : float
        The fit of ``log y = slope * log x + intercept`` and the standard error of the slope
        from the residuals (``nan`` for two points).
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


CLAIM_LEVEL = 0.999
"""Default coverage of a claim's statistical interval: a false failure rate of 1e-3 per claim,
so that a book of ~200 claims fails falsely somewhere in about one execution in five, and
each claim still holds under almost every seed root (``make robustness``)."""


def t_factor(n_seeds: int, level: float = CLAIM_LEVEL) -> float:
    """Student-t factor of a two-sided ``level`` interval for a mean over ``n_seeds`` seeds.

    The half-width of the interval is ``t_factor(k) * sem`` with ``k - 1`` degrees of freedom.
    At the default level 0.999 it is 8.61 for k = 5, 4.78 for k = 10 and 3.88 for k = 20
    (3.29 for a normal law): with few seeds the interval is wide, so power comes from more
    seeds, not from a lower level.

    Parameters
    ----------
    n_seeds : int
        Number of independent repetitions (at least 2).
    level : float
        Coverage of the interval, in (0, 1).

    Returns
    -------
    float
    """
    n_seeds = V.positive_int(n_seeds, "n_seeds", minimum=2)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return float(student_t.ppf(0.5 + level / 2, n_seeds - 1))


def slopes_over_seeds(x, values):
    """Mean and standard error over seeds of the log-log slope of each seed's curve.

    Parameters
    ----------
    x : array_like, shape (p,)
        Positive abscissae (sizes, step sizes, ...).
    values : array_like, shape (n_seeds, p)
        One positive curve per seed (seeds on axis 0).

    Returns
    -------
    mean, sem : float
        Mean of the per-seed slopes and its standard error (0 for a single seed).
    """
    values = V.finite_array(values, "values", ndim=2)
    slopes = np.array([loglog_slope(x, row)[0] for row in values])
    m, sem = mean_and_error(slopes)
    return float(m), float(sem)


def max_abs_z(samples, target) -> float:
    """Largest ``|mean - target| / sem`` over the entries of a quantity sampled over seeds.

    Parameters
    ----------
    samples : array_like, shape (n_seeds, ...)
        Repetitions on axis 0 (at least 2).
    target : array_like
        The predicted value of each entry, broadcastable to ``samples.shape[1:]``.

    Returns
    -------
    float
        The largest deviation in standard errors; compare with a family-wise normal quantile.
    """
    a = V.finite_array(samples, "samples")
    if a.ndim < 1 or a.shape[0] < 2:
        raise ValueError("samples need at least two repetitions on axis 0")
    m, sem = mean_and_error(a)
    dev = np.abs(m - np.asarray(target, dtype=float))
    if np.any(sem <= 0):
        raise ValueError("an entry has zero spread over the repetitions")
    return float(np.max(dev / sem))


def ks_distance(samples, grid, density) -> float:
    """Kolmogorov distance between the empirical law of ``samples`` and a tabulated density.

    The limiting distribution function is the trapezoidal integral of ``density`` on ``grid``
    (the grid must cover the support, e.g. a Marchenko-Pastur bulk); the distance is the
    largest gap between the two distribution functions at the grid points.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Observed values (e.g. eigenvalues).
    grid : array_like, shape (p,)
        Increasing points covering the support of the limit.
    density : array_like, shape (p,)
        The limiting density at the grid points.

    Returns
    -------
    float
    """
    samples = V.finite_array(samples, "samples", ndim=1)
    grid = V.finite_array(grid, "grid", ndim=1)
    density = V.finite_array(density, "density", ndim=1)
    if grid.shape != density.shape or grid.size < 2 or np.any(np.diff(grid) <= 0):
        raise ValueError("grid must be increasing and of the same length as density")
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(grid))])
    emp = np.searchsorted(np.sort(samples), grid, side="right") / samples.size
    return float(np.max(np.abs(cdf - emp)))


def inverse_d_intercepts(dims, values) -> np.ndarray:
    r"""Per-seed extrapolation to :math:`d\to\infty` of a curve with :math:`O(1/d)` corrections.

    Least-squares fit of ``values[s, j] = C_s + B_s / dims[j]`` for each seed ``s``; returns
    the intercepts :math:`C_s`, one independent number per seed (so a Student-t interval over
    them uses the real number of seeds).

    Parameters
    ----------
    dims : array_like, shape (m,)
        At least two distinct positive dimensions.
    values : array_like, shape (seeds, m)

    Returns
    -------
    ndarray (seeds,)
    """
    dims = V.finite_array(dims, "dims", ndim=1)
    values = V.finite_array(values, "values", ndim=2)
    if values.shape[1] != dims.size or np.unique(dims).size < 2 or np.any(dims <= 0):
        raise ValueError("need values of shape (seeds, len(dims)) and two distinct dims > 0")
    design = np.column_stack([np.ones(dims.size), 1.0 / dims])
    return np.linalg.lstsq(design, values.T, rcond=None)[0][0]
