r"""The information-theoretic threshold of the sparse k-cluster mixture (chapter 11).

By the I-MMSE relation, the free entropy of one Gaussian channel of precision :math:`\hat mP`
is :math:`\Psi(\hat m) = \frac{k-1}2\int_0^{\hat m}m(s)\,ds`, with :math:`m` the overlap of the
Bayes denoiser ({eq}`eq-ch11-potential`). The free entropy {eq}`eq-ch11-free-entropy` of the
model therefore depends on it only through the two overlap functions :math:`m_u(q)` and
:math:`m_v(h)` of the state evolution {eq}`eq-ch11-se`. :func:`overlap_table` tabulates them once
on a grid, from one Monte-Carlo sample (Latin-hypercube draws, stratified over the supports of
the means' prior); every fixed point, its free entropy and :math:`\lambda_{\rm it}`
({prf:ref}`def-ch11-lambda-it`) are then deterministic functions of the table, and the fixed
points are exactly the stationary points of the tabulated potential.
:func:`small_rho_constant` is the small-density limit {prf:ref}`prop-ch11-small-rho`.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from lecnotes.core import validate as V
from lecnotes.mixtures.amp import cluster_denoiser, sparse_denoiser

__all__ = ["OverlapTable", "overlap_table", "FixedPoint", "informed_fixed_point",
           "ITResult", "it_threshold", "SmallRho", "small_rho_constant", "ITScaling",
           "it_scaling"]


def _lhs_normal(r, n, m):
    """Latin-hypercube standard normal draws (n, m): each column hits every 1/n quantile."""
    u = (np.argsort(r.random((m, n)), axis=1).T + r.random((n, m))) / n
    return ndtri(u)


class OverlapTable(NamedTuple):
    r"""The overlap functions of the state evolution {eq}`eq-ch11-se` on a grid."""

    k: int
    rho: float
    q: np.ndarray
    r"""Grid of the assignments' channel precision :math:`\hat m_u`."""
    m_u: np.ndarray
    r"""Overlap :math:`m_u(q)` of the cluster denoiser."""
    h: np.ndarray
    r"""Grid of the means' channel precision :math:`\hat m_v`."""
    m_v: np.ndarray
    r"""Overlap :math:`m_v(h)` of the sparse denoiser."""


def overlap_table(k, rho, alpha, lam_max, n_mc=2000, n_u=50_000, points=60,
                  rng=0) -> OverlapTable:
    r"""Tabulate :math:`m_u(q)` on :math:`[0, \lambda_{\max}]` and :math:`m_v(h)` on
    :math:`[0, 1.05\,\lambda_{\max}\alpha\,m_u(\lambda_{\max})]` (all that the state evolution
    {eq}`eq-ch11-se` visits for :math:`\lambda\le\lambda_{\max}`), on grids quadratic in the
    index (fine near 0). :math:`m_v` is estimated as :math:`\E[f_v^\top Pv]/(k-1)`, which is
    exact (zero) on the rows without support, with antithetic noise (:math:`\xi` and
    :math:`-\xi`, which removes the part of the estimate linear in the noise, dominant at
    small :math:`h`); :math:`m_u` as :math:`\E[f_u^\top f_u]/(k-1)` (Nishimori).

    Parameters
    ----------
    k : int
        Clusters, >= 2.
    rho : float
        Density of the means, in (0, 1].
    alpha : float
        Samples per dimension.
    lam_max : float
        Largest signal-to-noise ratio to be used with the table.
    n_mc : int
        Draws per support pattern of the means' prior (each used with both signs of the
        noise).
    n_u : int
        Draws of the assignments' channel.
    points : int
        Grid points of each function (>= 8).
    rng : Generator, int or None
        Random state of the sample (the same sample at every grid point).

    Returns
    -------
    OverlapTable
    """
    k = V.positive_int(k, "k", minimum=2)
    rho = V.positive_float(rho, "rho")
    if rho > 1:
        raise ValueError(f"rho must lie in (0, 1], got {rho}")
    alpha, lam_max = V.positive_float(alpha, "alpha"), V.positive_float(lam_max, "lam_max")
    n_mc, n_u = V.positive_int(n_mc, "n_mc", minimum=2), V.positive_int(n_u, "n_u", minimum=k)
    points = V.positive_int(points, "points", minimum=8)
    r = V.generator(rng)
    P = np.eye(k) - 1.0 / k
    pats = [np.array(s, dtype=bool) for s in itertools.product([0, 1], repeat=k)]
    pats = [S for S in pats if rho < 1 or S.all()]
    v = np.concatenate([S * _lhs_normal(r, n_mc, k) / math.sqrt(rho) for S in pats])
    xi_v = np.concatenate([_lhs_normal(r, n_mc, k) for _ in pats])
    v, xi_v = np.concatenate([v, v]), np.concatenate([xi_v, -xi_v])  # antithetic noise
    w = np.concatenate([np.full(n_mc, rho ** S.sum() * (1 - rho) ** (k - S.sum()) / n_mc)
                        for S in pats] * 2) / 2
    u = P[np.arange(n_u) % k]
    xi_u = _lhs_normal(r, n_u, k)
    t = np.linspace(0.0, 1.0, points) ** 2
    q = lam_max * t
    m_u = np.zeros(points)
    for i, x in enumerate(q[1:], start=1):
        f, _ = cluster_denoiser(x * P, (x * u + math.sqrt(x) * xi_u) @ P)
        m_u[i] = np.sum(f * f) / (n_u * (k - 1))
    h = 1.05 * lam_max * alpha * m_u[-1] * t
    vP = v @ P
    m_v = np.zeros(points)
    for i, x in enumerate(h[1:], start=1):
        f, _ = sparse_denoiser(x * P, x * vP + math.sqrt(x) * xi_v @ P, rho)
        m_v[i] = w @ np.sum((f @ P) * vP, axis=1) / (k - 1)
    return OverlapTable(k, float(rho), q, m_u, h, m_v)


def _cumint(grid, vals, x):
    """Integral from 0 to x of the piecewise-linear interpolant of vals on grid."""
    c = np.concatenate([[0.0], np.cumsum(0.5 * (vals[1:] + vals[:-1]) * np.diff(grid))])
    x = np.asarray(x, dtype=float)
    j = np.clip(np.searchsorted(grid, x) - 1, 0, grid.size - 2)
    return c[j] + 0.5 * (vals[j] + np.interp(x, grid, vals)) * (x - grid[j])


class FixedPoint(NamedTuple):
    """The fixed point of {eq}`eq-ch11-se` reached from the informed start."""

    m_v: float
    m_u: float
    phi: float
    """Its free entropy {eq}`eq-ch11-potential` (0 at the uninformative point)."""


def informed_fixed_point(table, lam, alpha, grid=4001) -> FixedPoint:
    r"""The largest fixed point :math:`m_v = m_v(\lambda\alpha\,m_u(\lambda m_v))` of the
    state evolution {eq}`eq-ch11-se` (the one the informed start :math:`m_v = 1` reaches, the
    map being increasing) and its free entropy {eq}`eq-ch11-potential`.

    Parameters
    ----------
    table : OverlapTable
        From :func:`overlap_table` (with ``lam_max >= lam``).
    lam : float
        Signal-to-noise ratio, > 0.
    alpha : float
        Samples per dimension.
    grid : int
        Points of the scan of :math:`m_v\in[0, 1]`.

    Returns
    -------
    FixedPoint
        Zeros if only the uninformative point is left.
    """
    if not isinstance(table, OverlapTable):
        raise TypeError("table must be an OverlapTable from overlap_table()")
    lam, alpha = V.positive_float(lam, "lam"), V.positive_float(alpha, "alpha")
    if lam > table.q[-1] * (1 + 1e-9):
        raise ValueError(f"lam = {lam} is beyond the table (lam_max = {table.q[-1]})")
    m = np.linspace(0.0, 1.0, V.positive_int(grid, "grid", minimum=11))
    g = np.interp(lam * alpha * np.interp(lam * m, table.q, table.m_u), table.h, table.m_v) - m
    idx = np.nonzero((g[:-1] > 0) & (g[1:] <= 0))[0]
    if idx.size == 0:
        return FixedPoint(0.0, 0.0, 0.0)
    i = idx[-1]
    mv = float(m[i] + g[i] * (m[i + 1] - m[i]) / (g[i] - g[i + 1]))
    mu = float(np.interp(lam * mv, table.q, table.m_u))
    phi = 0.5 * (table.k - 1) * (alpha * _cumint(table.q, table.m_u, lam * mv)
                                 + _cumint(table.h, table.m_v, lam * alpha * mu)
                                 - lam * alpha * mu * mv)
    return FixedPoint(mv, mu, float(phi))


class ITResult(NamedTuple):
    """The information-theoretic threshold ({prf:ref}`def-ch11-lambda-it`)."""

    lam_it: float
    m_v: float
    """Overlap of the means of the informed fixed point at the threshold."""
    m_u: float
    """Overlap of the assignments there."""


def it_threshold(k, rho, alpha, lo, hi, n_mc=2000, points=60, m_min=1e-3, tol=1e-4,
                 rng=0) -> ITResult:
    r"""The information-theoretic threshold {prf:ref}`def-ch11-lambda-it`: the smallest
    :math:`\lambda` in ``[lo, hi]`` at which the informed fixed point of {eq}`eq-ch11-se` has
    an overlap above ``m_min`` and a positive free entropy {eq}`eq-ch11-potential`, by a scan
    of 48 points and bisection, on one :func:`overlap_table`.

    Parameters
    ----------
    k : int
        Clusters.
    rho : float
        Density of the means.
    alpha : float
        Samples per dimension.
    lo, hi : float
        The bracket, 0 < lo < hi.
    n_mc, points : int
        As for :func:`overlap_table`.
    m_min : float
        Smallest overlap counted as informative.
    tol : float
        Relative width of the final bracket.
    rng : Generator, int or None
        Random state of the table.

    Returns
    -------
    ITResult
        NaN if the free entropy is positive at ``lo`` or never in the bracket.
    """
    lo, hi = V.positive_float(lo, "lo"), V.positive_float(hi, "hi")
    if hi <= lo:
        raise ValueError(f"need 0 < lo < hi, got lo = {lo}, hi = {hi}")
    m_min, tol = V.positive_float(m_min, "m_min"), V.positive_float(tol, "tol")
    table = overlap_table(k, rho, alpha, hi, n_mc, points=points, rng=rng)

    def ok(lam):
        fp = informed_fixed_point(table, lam, alpha)
        return fp.m_v > m_min and fp.phi > 0

    lams = np.linspace(lo, hi, 48)
    above = [j for j, x in enumerate(lams) if ok(x)]
    if not above or above[0] == 0:
        return ITResult(float("nan"), float("nan"), float("nan"))
    a, b = lams[above[0] - 1], lams[above[0]]
    while b - a > tol * b:
        mid = 0.5 * (a + b)
        a, b = (a, mid) if ok(mid) else (mid, b)
    fp = informed_fixed_point(table, b, alpha)
    return ITResult(float(b), fp.m_v, fp.m_u)


class SmallRho(NamedTuple):
    r"""The small-density limit {prf:ref}`prop-ch11-small-rho` of :math:`\lambda_{\rm it}`."""

    constant: float
    r""":math:`C_k` in :math:`\lambda_{\rm it}\simeq C_k\sqrt{\rho\log(1/\rho)/\alpha}`."""
    m_v: float
    r"""Overlap of the means at :math:`\lambda_{\rm it}`: :math:`F(1/x_\star)`."""
    x: float
    r""":math:`x_\star`, the root of :math:`\int_0^xF(1/y)\,dy = xF(1/x)/2`."""
    all_or_nothing: float
    r""":math:`2k\sqrt{k/(k-1)}`: the constant if the whole support were recovered at the
    threshold (non-zero entries of one fixed amplitude)."""


def _energy_above(t):
    """F(t) = E[a^2; a^2 > t] for a standard Gaussian a."""
    s = math.sqrt(t)
    return 2 * (s * math.exp(-0.5 * t) / math.sqrt(2 * math.pi) + ndtr(-s))


def small_rho_constant(k) -> SmallRho:
    r"""The constant of the small-density limit {prf:ref}`prop-ch11-small-rho`:
    :math:`C_k = k\sqrt{c\,x_\star/F(1/x_\star)}`, :math:`c = 2k/(k-1)`,
    :math:`F(t) = \E[a^2;a^2>t]`, :math:`x_\star` the positive root of
    :math:`\int_0^xF(1/y)\,dy = xF(1/x)/2`.

    Parameters
    ----------
    k : int
        Clusters, >= 2.

    Returns
    -------
    SmallRho
    """
    k = V.positive_int(k, "k", minimum=2)

    def gap(x):
        return quad(lambda y: _energy_above(1 / y), 0, x, limit=200)[0] \
            - 0.5 * x * _energy_above(1 / x)

    x = brentq(gap, 0.3, 3.0, xtol=1e-12)
    F = _energy_above(1 / x)
    c = 2 * k / (k - 1)
    return SmallRho(k * math.sqrt(c * x / F), F, x, 2 * k * math.sqrt(k / (k - 1)))


class ITScaling(NamedTuple):
    r""":math:`\lambda_{\rm it}` over densities ({prf:ref}`prop-ch11-small-rho`)."""

    rhos: np.ndarray
    lam_it: np.ndarray
    m_v: np.ndarray
    """Overlap of the means at the threshold."""
    ratio: np.ndarray
    r""":math:`\lambda_{\rm it}\sqrt\alpha/\sqrt{\rho\log(1/\rho)}`."""


def it_scaling(k, alpha, rhos, n_mc=1000, rng=0) -> ITScaling:
    r""":func:`it_threshold` at each density of ``rhos``, bracketed around the small-density
    limit {prf:ref}`prop-ch11-small-rho` (0.4 to 2.2 times it, at most 1.5 times
    :math:`\lambda_{\rm alg}`), one table per density from stream ``i`` of ``rng``.

    Parameters
    ----------
    k : int
        Clusters.
    alpha : float
        Samples per dimension.
    rhos : sequence of float
        Densities in (0, 1).
    n_mc : int
        As for :func:`overlap_table`.
    rng : Generator, int or None
        Parent random state.

    Returns
    -------
    ITScaling
    """
    k, alpha = V.positive_int(k, "k", minimum=2), V.positive_float(alpha, "alpha")
    rhos = np.array([V.positive_float(r, "rhos") for r in np.atleast_1d(rhos)])
    if np.any(rhos >= 1):
        raise ValueError("rhos must lie in (0, 1)")
    c = small_rho_constant(k).constant
    out = []
    for i, rho in enumerate(rhos):
        pred = c * math.sqrt(rho * math.log(1 / rho) / alpha)
        hi = min(2.2 * pred, 1.5 * k / math.sqrt(alpha))
        out.append(it_threshold(k, rho, alpha, 0.4 * pred, hi, n_mc=n_mc,
                                rng=V.stream(rng, i)))
    lam = np.array([r.lam_it for r in out])
    return ITScaling(rhos, lam, np.array([r.m_v for r in out]),
                     lam * math.sqrt(alpha) / np.sqrt(rhos * np.log(1 / rhos)))
