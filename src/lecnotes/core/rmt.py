r"""Random-matrix laws: Marchenko-Pastur, the rectangular spiked model, bulk edges and outliers.

One Marchenko-Pastur law, of :math:`\frac1nX^\top X` in :math:`\delta=n/d` (chapter 4,
{prf:ref}`prop-bulk-law`), from which the singular-value law of a :math:`p\times d` Gaussian
matrix (chapters 6, 7) is derived; the weighted Wishart law of chapter 4
(:func:`weighted_wishart_density`); the top singular pair of a rank-one perturbation
(Benaych-Georges and Nadakuditi); and the estimation of a bulk edge from a spectrum with
outlier counts against it (chapter 7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from lecnotes.core import validate as V

__all__ = [
    "marchenko_pastur_edges",
    "marchenko_pastur_density",
    "gaussian_singular_value_edges",
    "gaussian_singular_value_density",
    "gaussian_singular_value_cdf",
    "weighted_wishart_density",
    "spiked_rectangular",
    "BulkEdge",
    "fit_bulk_edge",
    "marchenko_pastur_edge",
    "null_margin",
    "count_outliers",
    "outlier_counts",
    "localisation",
]


def marchenko_pastur_edges(delta) -> tuple[float, float]:
    r"""Edges :math:`(1\mp\delta^{-1/2})^2` of the Marchenko-Pastur law (chapter 4).

    The one parametrisation of the law in the package: the limiting spectrum of
    :math:`\frac1nX^\top X`, :math:`X\in\mathbb R^{n\times d}` with i.i.d. standard entries,
    :math:`n/d\to\delta` (Marchenko & Pastur 1967); the case :math:`T\equiv1` of
    {prf:ref}`prop-bulk-law`. The singular-value form of chapters 6 and 7 is derived from it
    (:func:`gaussian_singular_value_edges`).

    Parameters
    ----------
    delta : float
        :math:`\delta = n/d > 0`.

    Returns
    -------
    (float, float)
        The lower and upper edge.
    """
    delta = V.positive_float(delta, "delta")
    r = 1 / math.sqrt(delta)
    return (1 - r) ** 2, (1 + r) ** 2


def marchenko_pastur_density(x, delta) -> np.ndarray:
    r"""Density of the Marchenko-Pastur law of :math:`\frac1nX^\top X`, :math:`n/d=\delta`.

    {prf:ref}`prop-bulk-law` with :math:`T\equiv1` (chapter 4):
    :math:`\rho(x)=\frac{\delta\sqrt{(b-x)(x-a)}}{2\pi x}` on :math:`[a,b]`,
    :math:`a,b=(1\mp\delta^{-1/2})^2`; for :math:`\delta<1` there is in addition an atom of
    mass :math:`1-\delta` at 0 (not included: the density integrates to
    :math:`\min(1,\delta)`).

    Parameters
    ----------
    x : array_like
        Points.
    delta : float
        :math:`n/d > 0`.

    Returns
    -------
    ndarray shaped like ``x``.
    """
    delta = V.positive_float(delta, "delta")
    x = V.finite_array(x, "x")
    a, b = marchenko_pastur_edges(delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        dens = delta * np.sqrt(np.clip((b - x) * (x - a), 0, None)) / (2 * np.pi * x)
    return np.where((x > a) & (x < b), dens, 0.0)


def _singular_value_scale(p, d, variance):
    r"""A p x d matrix with :math:`N(0,v/d)` entries is :math:`\sqrt t\,Z/\sqrt p`, Z standard.

    So its squared singular values are :math:`t` times the eigenvalues of
    :math:`\frac1pZ^\top Z`: Marchenko-Pastur with :math:`\delta=p/d`, scale
    :math:`t=vp/d`. Returns ``(delta, t)``.
    """
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    return p / d, v * p / d


def gaussian_singular_value_edges(p: int, d: int, variance: float = 1.0):
    r"""Edges of the singular values of a p x d matrix with i.i.d. :math:`N(0,v/d)` entries.

    Derived from :func:`marchenko_pastur_edges` with :math:`\delta=p/d` and scale
    :math:`t=vp/d`: :math:`\sqrt{t\,a},\sqrt{t\,b}`, that is
    :math:`\sqrt v\,|\sqrt{p/d}\mp1|` (the bulk of {prf:ref}`prop-ch6-spike-bulk`). For
    :math:`W_0` (rows :math:`N(0,I_d/d)`), :math:`v = 1`.

    Parameters
    ----------
    p, d : int
        Shape of the matrix.
    variance : float
        :math:`v`, the entries have variance :math:`v/d`.

    Returns
    -------
    (float, float)
        The smallest and largest non-zero singular value of the bulk.
    """
    delta, t = _singular_value_scale(p, d, variance)
    a, b = marchenko_pastur_edges(delta)
    return math.sqrt(t * a), math.sqrt(t * b)


def gaussian_singular_value_density(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Density of the :math:`\min(p,d)` non-zero singular values of a Gaussian p x d matrix.

    Derived from :func:`marchenko_pastur_density`: with :math:`\delta=p/d` and
    :math:`t=vp/d` the squared singular values :math:`\lambda=s^2` have density
    :math:`\rho_{MP}(\lambda/t;\delta)/(t\min(1,\delta))` (the atom at 0 of the
    :math:`\max(p,d)-\min(p,d)` zero singular values left out), so
    :math:`s` has density :math:`2s\,\rho_{MP}(s^2/t;\delta)/(t\min(1,\delta))`, which
    integrates to one (the bulk of {prf:ref}`prop-ch6-spike-bulk`).

    Parameters
    ----------
    s : array_like
        Points.
    p, d : int
    variance : float

    Returns
    -------
    ndarray shaped like ``s``.
    """
    s = V.finite_array(s, "s")
    delta, t = _singular_value_scale(p, d, variance)
    rho = marchenko_pastur_density(s * s / t, delta) / (t * min(1.0, delta))
    return np.where(s > 0, 2 * s * rho, 0.0)


def gaussian_singular_value_cdf(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Distribution function of :func:`gaussian_singular_value_density` (chapters 6, 7).

    Used for the Kolmogorov-Smirnov distance between the bulk of :math:`W_1` and the
    Marchenko-Pastur law of {prf:ref}`prop-ch6-spike-bulk` (integrated numerically on a fine
    grid, accurate to about 1e-6).

    Parameters
    ----------
    s : array_like
        Points.
    p, d : int
    variance : float

    Returns
    -------
    ndarray shaped like ``s``, in [0, 1].
    """
    s = V.finite_array(s, "s")
    lo, hi = gaussian_singular_value_edges(p, d, variance)
    # the substitution s = mid + half * sin(t) removes the square-root edges
    t = np.linspace(-np.pi / 2, np.pi / 2, 20001)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    grid = mid + half * np.sin(t)
    dens = gaussian_singular_value_density(grid, p, d, variance) * half * np.cos(t)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(t))])
    cdf /= cdf[-1]
    return np.interp(s, grid, cdf, left=0.0, right=1.0)


def weighted_wishart_density(x, delta, expect, scale: float = 1.0, eta: float = 1e-9):
    r"""Density of the spectrum of :math:`P=\frac1n\sum_iT_iz_iz_i^\top` (chapter 4).

    The generalised Marchenko-Pastur law of {prf:ref}`prop-bulk-law`: :math:`z_i\sim N(0,I_d)`
    independent of the i.i.d. weights :math:`T_i` (bounded above), :math:`n/d\to\delta`. The
    Stieltjes transform :math:`m(z)=\lim\frac1d\operatorname{tr}(P-z)^{-1}` solves
    {eq}`eq-ch4-stieltjes`, :math:`z=-\frac1m+\mathbb E\big[\frac{T}{1+Tm/\delta}\big]`
    (:math:`\Im z>0`, :math:`\Im m>0`), and the density is :math:`\Im m(x+i0)/\pi`. Solved by
    Newton's method in :math:`\lambda=-\delta/m` (where the equation reads
    :math:`z=\lambda(1/\delta+\mathbb E[T/(\lambda-T)])`), continued from :math:`\Im z` of
    the order of ``scale`` down to ``eta``, all points at once. The atom at 0 (mass
    :math:`1-\delta\,\mathbb P(T\ne0)` when fewer than ``d`` samples have a non-zero weight)
    is removed. With :math:`T\equiv1` this is :func:`marchenko_pastur_density`.

    Parameters
    ----------
    x : ndarray (k,)
        Points of the real line.
    delta : float
        :math:`n/d`.
    expect : callable
        ``f -> E[f(T)]`` for ``f`` mapping an array of weights ``t`` (shape (q,)) to an array
        (q, r); returns the (r,) expectations (a quadrature over the law of :math:`T`).
    scale : float
        A scale of the weights (where the continuation starts).
    eta : float
        Final distance to the real axis.

    Returns
    -------
    ndarray (k,)
    """
    def moments(lam):
        # E[S], E[S^2] for complex lambda, S = lambda/(lambda - T) - 1; stacked re/im parts
        def f(t):
            s = lam[None, :] / (lam[None, :] - t[:, None]) - 1.0
            return np.concatenate([s.real, s.imag, (s * s).real, (s * s).imag], axis=1)

        r = expect(f)
        k = lam.size
        return r[:k] + 1j * r[k: 2 * k], r[2 * k: 3 * k] + 1j * r[3 * k:]

    lam = None
    scale = max(scale, float(np.max(np.abs(x))) if x.size else 1.0, 1.0)
    etas = np.concatenate([scale * np.array([1.0, 0.1, 1e-2, 1e-3]), [1e-5 * scale, eta]])
    for e in etas:
        z = x + 1j * e
        if lam is None:
            m0 = -1.0 / z  # large-|z| behaviour of the Stieltjes transform
            lam = -delta / m0
        for _ in range(30):
            es, es2 = moments(lam)
            F = lam * (1 / delta + es) - z
            dF = 1 / delta - es2
            step = F / dF
            new = lam - step
            # stay in the upper half plane (Im m > 0  <=>  Im lambda > 0)
            bad = new.imag <= 0
            new[bad] = lam[bad].real - step[bad].real + 1j * lam[bad].imag * 0.5
            lam = new
            if np.max(np.abs(step) / np.maximum(np.abs(lam), 1e-300)) < 1e-12:
                break
    m = -delta / lam
    # atom at 0 of mass 1 - delta P(T != 0) (fewer than d samples with a non-zero weight):
    # its Lorentzian p0 eta / (x^2 + eta^2) is removed from Im m
    p_nonzero = float(expect(lambda t: (t != 0).astype(float)))
    p0 = max(0.0, 1.0 - delta * p_nonzero)
    im = m.imag - p0 * eta / (x**2 + eta**2)
    dens = np.maximum(im, 0.0) / np.pi
    return dens


def spiked_rectangular(theta: float, p: int, d: int, variance: float = 1.0):
    r"""Top singular value and overlaps of :math:`X+\theta\,u v^\top` (chapter 6).

    The spike of {prf:ref}`prop-ch6-spike-bulk` ({eq}`eq-ch6-spike-bulk`).

    :math:`X` is p x d with i.i.d. :math:`N(0,v/d)` entries, :math:`u\in\mathbb R^p`,
    :math:`v\in\mathbb R^d` unit vectors. In units where the entries of the larger-side
    normalisation are :math:`N(0,1/\max(p,d))` (scale :math:`t^{1/2}`, :math:`t=v\max(p,d)/d`,
    :math:`c=\min(p,d)/\max(p,d)`, :math:`\tilde\theta=\theta/\sqrt t`), Benaych-Georges and
    Nadakuditi (2012) give, for :math:`\tilde\theta>c^{1/4}`,

    .. math:: s_1 = \sqrt t\,\frac{\sqrt{(1+\tilde\theta^2)(c+\tilde\theta^2)}}{\tilde\theta},\quad
        \rho_{\min}^2 = 1-\frac{c(1+\tilde\theta^2)}{\tilde\theta^2(\tilde\theta^2+c)},\quad
        \rho_{\max}^2 = 1-\frac{c+\tilde\theta^2}{\tilde\theta^2(\tilde\theta^2+1)},

    for the singular vectors on the smaller and larger side; below the threshold the top
    singular value sticks to the bulk edge (:func:`gaussian_singular_value_edges`) and the
    overlaps vanish.

    Parameters
    ----------
    theta : float
        Strength of the rank-one part, :math:`\ge0`.
    p, d : int
        Shape of :math:`X`.
    variance : float
        The entries of :math:`X` have variance ``variance / d``.

    Returns
    -------
    s1 : float
    rho_right2 : float
        Squared overlap of the top right singular vector (in :math:`\mathbb R^d`) with `v`.
    rho_left2 : float
        Squared overlap of the top left singular vector (in :math:`\mathbb R^p`) with `u`.
    """
    theta = V.nonneg_float(theta, "theta")
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    c = min(p, d) / max(p, d)
    t = v * max(p, d) / d
    th = theta / math.sqrt(t)
    if th <= c**0.25:
        return gaussian_singular_value_edges(p, d, v)[1], 0.0, 0.0
    s1 = math.sqrt(t) * math.sqrt((1 + th**2) * (c + th**2)) / th
    small = 1 - c * (1 + th**2) / (th**2 * (th**2 + c))
    large = 1 - (c + th**2) / (th**2 * (th**2 + 1))
    right, left = (small, large) if d <= p else (large, small)
    return float(s1), float(right), float(left)


@dataclass(frozen=True)
class BulkEdge:
    """An estimated right edge of the bulk of singular values (chapter 7).

    The bulk edge against which the outliers of {prf:ref}`thm-ch7-two-step-outliers` are
    counted.

    Attributes
    ----------
    edge : float
        Estimated edge :math:`s_+`.
    scale : float
        Spacing scale of the largest bulk singular values (of order :math:`N^{-2/3}` times the
        edge): margins are stated in this unit.
    method : str
    """

    edge: float
    scale: float
    method: str

    def threshold(self, margin: float = 0.0) -> float:
        """``edge + margin * scale``: singular values above it are counted as outliers.

        Parameters
        ----------
        margin : float
            In units of ``scale``.

        Returns
        -------
        float
        """
        return float(self.edge + float(margin) * self.scale)


def _sorted_spectrum(s, need: int) -> np.ndarray:
    s = V.finite_array(s, "s", ndim=1)
    if np.any(s < 0):
        raise ValueError("singular values must be non-negative")
    if s.size < need:
        raise ValueError(f"need at least {need} singular values, got {s.size}")
    return np.sort(s)[::-1]


def fit_bulk_edge(s, fit_range: tuple[int, int] = (10, 50)) -> BulkEdge:
    r"""Estimate the bulk edge by fitting the square-root edge law (chapter 7).

    For the outlier counts of {prf:ref}`thm-ch7-two-step-outliers`.

    Near a soft edge :math:`s_+` the density of singular values vanishes like
    :math:`\sqrt{s_+-s}`, so the number of singular values above :math:`s` grows like
    :math:`(s_+-s)^{3/2}` and the :math:`k`-th largest bulk value is
    :math:`s_{(k)}\approx s_+ - A\,k^{2/3}`. Least squares on
    :math:`k\in` ``fit_range`` (1-based ranks, to be chosen beyond the possible outliers)
    give :math:`s_+` and the scale :math:`A`. Outliers move the bulk down the ranking, so the
    fit uses :math:`k-m` with :math:`m` the number of values above the fitted edge, found by a
    fixed-point iteration (at most ``lo - 1``). The law holds for Marchenko-Pastur as for the
    deformed bulks of trained weights and features, so the edge is estimated from the
    spectrum itself, not assumed. On :math:`N\times N` Gaussian matrices it is accurate to
    about 0.5% at :math:`N = 400`-:math:`800` (tests).

    Parameters
    ----------
    s : array_like
        Singular values (any order).
    fit_range : (int, int)
        First and last rank used, ``1 <= lo < hi``, ``hi - lo >= 4``.

    Returns
    -------
    BulkEdge
    """
    if (not isinstance(fit_range, Sequence) or len(fit_range) != 2):
        raise ValueError(f"fit_range must be a pair (lo, hi), got {fit_range!r}")
    lo = V.positive_int(fit_range[0], "fit_range[0]")
    hi = V.positive_int(fit_range[1], "fit_range[1]")
    if hi - lo < 4:
        raise ValueError(f"fit_range must span at least 5 ranks, got {fit_range!r}")
    s = _sorted_spectrum(s, hi)
    k = np.arange(lo, hi + 1, dtype=float)
    shift = 0
    for _ in range(8):  # outliers push the bulk down the ranking: fit against k - shift
        A = np.vstack([np.ones_like(k), (k - shift) ** (2.0 / 3.0)]).T
        (edge, slope), *_ = np.linalg.lstsq(A, s[lo - 1:hi], rcond=None)
        new = min(int(np.sum(s > edge)), lo - 1)
        if new == shift:
            break
        shift = new
    return BulkEdge(float(edge), float(max(-slope, 0.0)), "square-root edge fit")


def marchenko_pastur_edge(s, p: int, d: int) -> BulkEdge:
    r"""Marchenko-Pastur edge with the variance fitted on the median singular value (chapter 7).

    For a :math:`p\times d` matrix with i.i.d. entries of variance :math:`v/d` (the law of
    :math:`W_0` with :math:`v = 1`), the median of the squared singular values is :math:`v`
    times the median :math:`m_{MP}` of the Marchenko-Pastur law; :math:`\hat v =
    \mathrm{median}(s^2)/m_{MP}` is insensitive to a few outliers. The edge is
    :math:`\sqrt{\hat v}(1+\sqrt{p/d})` (:func:`gaussian_singular_value_edges`, the bulk of
    {prf:ref}`prop-ch6-spike-bulk`) and the scale
    :math:`\sqrt{\hat v}\,(1+\sqrt{p/d})\,\min(p,d)^{-2/3}`.

    Parameters
    ----------
    s : array_like
        All :math:`\min(p, d)` singular values.
    p, d : int
        Shape of the matrix.

    Returns
    -------
    BulkEdge
    """

    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    m = min(p, d)
    s = _sorted_spectrum(s, m)
    if s.size != m:
        raise ValueError(f"expected all min(p, d) = {m} singular values, got {s.size}")
    lo, hi = gaussian_singular_value_edges(p, d, 1.0)
    med_s = brentq(lambda x: gaussian_singular_value_cdf(np.array([x]), p, d)[0] - 0.5,
                   max(lo, 1e-9), hi)
    v = float(np.median(s**2)) / med_s**2
    if v <= 0:
        raise ValueError("the median singular value is zero: no bulk to fit")
    edge = gaussian_singular_value_edges(p, d, v)[1]
    return BulkEdge(float(edge), float(edge * m ** (-2.0 / 3.0)), "Marchenko-Pastur fit")


def null_margin(null_spectra: Sequence, fit_range: tuple[int, int] = (10, 50),
                n_sd: float = 4.0) -> float:
    r"""Outlier margin calibrated on spectra without spikes (chapter 7).

    For each null spectrum (e.g. of :math:`W_0`, or of the features at initialisation) the
    largest singular value is compared with the fitted edge: :math:`z = (s_1-\hat s_+)/\hat A`.
    Returns :math:`\bar z + n_{sd}\,\mathrm{sd}(z)`, so that a bulk singular value exceeds
    :math:`\hat s_+ + m\hat A` with small probability (Tracy-Widom fluctuations); the margin
    of the outlier counts of {prf:ref}`thm-ch7-two-step-outliers`.

    Parameters
    ----------
    null_spectra : sequence of array_like
        At least two spectra without spikes.
    fit_range : (int, int)
        As in :func:`fit_bulk_edge`.
    n_sd : float
        Number of standard deviations.

    Returns
    -------
    float
        The margin, in units of the fitted scale.
    """
    if not isinstance(null_spectra, Sequence) or len(null_spectra) < 2:
        raise ValueError("null_spectra must be a sequence of at least two spectra")
    n_sd = V.nonneg_float(n_sd, "n_sd")
    z = []
    for s in null_spectra:
        b = fit_bulk_edge(s, fit_range)
        if b.scale <= 0:
            raise ValueError("a null spectrum has no spread near its edge")
        z.append((np.max(s) - b.edge) / b.scale)
    z = np.asarray(z)
    return float(z.mean() + n_sd * z.std(ddof=1))


def count_outliers(s, bulk: BulkEdge, margin: float = 0.0) -> int:
    """Number of singular values above ``bulk.threshold(margin)`` (chapter 7).

    The outlier count of {prf:ref}`thm-ch7-two-step-outliers` for one spectrum (the one rule
    is :func:`outlier_counts`).

    Parameters
    ----------
    s : array_like (k,)
        Singular values.
    bulk : BulkEdge
    margin : float
        In units of ``bulk.scale``.

    Returns
    -------
    int
    """
    s = V.finite_array(s, "s", ndim=1)
    if not isinstance(bulk, BulkEdge):
        raise ValueError(f"bulk must be a BulkEdge, got {bulk!r}")
    return int(outlier_counts(s, np.float64(bulk.edge), np.float64(bulk.scale), margin))


def outlier_counts(s, edge, scale, margin: float = 0.0) -> np.ndarray:
    r"""Vectorised :func:`count_outliers` for many spectra at once (chapter 7).

    ``s`` has shape (..., k) (the k largest singular values of each matrix), ``edge`` and
    ``scale`` shape (...) (the fitted :class:`BulkEdge` of each); returns the (...) array of
    the numbers of values above ``edge + margin * scale``. Counts saturate at ``k``.

    Parameters
    ----------
    s : array_like (..., k)
    edge, scale : array_like (...)
    margin : float

    Returns
    -------
    ndarray of int, shape (...)
    """
    s = V.finite_array(s, "s")
    edge = V.finite_array(edge, "edge")
    scale = V.finite_array(scale, "scale")
    if s.ndim < 1 or edge.shape != s.shape[:-1] or scale.shape != edge.shape:
        raise ValueError(f"s must have shape (..., k) and edge, scale shape (...); got "
                         f"{s.shape}, {edge.shape}, {scale.shape}")
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError("margin must be finite")
    return np.sum(s > (edge + margin * scale)[..., None], axis=-1)


def localisation(v) -> float:
    r"""Participation ratio :math:`(\sum_iv_i^2)^2/\sum_iv_i^4` of a vector (chapter 7).

    Between 1 (one coordinate) and the length (flat). A spike carried by a handful of
    neurons has a small participation ratio (chapter 7, {prf:ref}`thm-ch7-one-step-spikes`).

    Parameters
    ----------
    v : array_like (k,)

    Returns
    -------
    float
    """
    v = V.finite_array(v, "v", ndim=1)
    q = np.sum(v**4)
    if q == 0:
        raise ValueError("the participation ratio of a zero vector is undefined")
    return float(np.sum(v**2) ** 2 / q)
