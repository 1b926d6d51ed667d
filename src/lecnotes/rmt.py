r"""Random-matrix laws: Marchenko-Pastur, the rectangular spiked model, bulk edges and outliers.

The Marchenko-Pastur law of :math:`\frac1nX^\top X` (chapter 4, in :math:`\delta=n/d`) and
of the singular values of a :math:`p\times d` Gaussian matrix (chapters 6, 7), the top singular
pair of a rank-one perturbation (Benaych-Georges and Nadakuditi), and the estimation of a bulk
edge from a spectrum with outlier counts against it (chapter 7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from . import _validate as V

__all__ = [
    "marchenko_pastur_edges",
    "marchenko_pastur_density",
    "gaussian_singular_value_edges",
    "gaussian_singular_value_density",
    "gaussian_singular_value_cdf",
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

    The limiting spectrum of :math:`\frac1n X^\top X`, :math:`X\in\mathbb R^{n\times d}`,
    :math:`d/n\to1/\delta` (Marchenko & Pastur 1967).
    """
    delta = V.positive_float(delta, "delta")
    r = 1 / math.sqrt(delta)
    return (1 - r) ** 2, (1 + r) ** 2


def marchenko_pastur_density(x, delta) -> np.ndarray:
    r"""Density of the Marchenko-Pastur law of :math:`\frac1nX^\top X` with :math:`d/n=1/\delta`.

    Chapter 4, eq. (MP):
    :math:`\rho(x)=\frac{\delta\sqrt{(b-x)(x-a)}}{2\pi x}` on :math:`[a,b]`,
    :math:`a,b=(1\mp\delta^{-1/2})^2`; for :math:`\delta<1` there is in addition an atom of
    mass :math:`1-\delta` at 0 (not included).
    """
    delta = V.positive_float(delta, "delta")
    x = V.finite_array(x, "x")
    a, b = marchenko_pastur_edges(delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        dens = delta * np.sqrt(np.clip((b - x) * (x - a), 0, None)) / (2 * np.pi * x)
    return np.where((x > a) & (x < b), dens, 0.0)


def gaussian_singular_value_edges(p: int, d: int, variance: float = 1.0):
    r"""Edges of the singular values of a p x d matrix with i.i.d. :math:`N(0,v/d)` entries.

    Chapter 6, eq. (MP): :math:`\sqrt v\,|\sqrt{p/d}\mp1|` (Marchenko & Pastur 1967). For
    :math:`W_0` (rows :math:`N(0,I_d/d)`), :math:`v = 1`.
    """
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    r = math.sqrt(p / d)
    return math.sqrt(v) * abs(r - 1), math.sqrt(v) * (r + 1)


def gaussian_singular_value_density(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Density of the :math:`\min(p,d)` non-zero singular values of a Gaussian p x d matrix.

    Chapter 6, eq. (MP). Entries :math:`N(0,v/d)`, :math:`r = p/d`. The squared singular values
    :math:`\lambda` follow the Marchenko-Pastur law with ratio
    :math:`c=\min(p,d)/\max(p,d)` and scale :math:`t = v\max(p,d)/d`,
    :math:`\rho(\lambda) = \frac{\sqrt{(\lambda_+-\lambda)(\lambda-\lambda_-)}}{2\pi c\,t\lambda}`
    on :math:`[\lambda_-,\lambda_+] = t(1\mp\sqrt c)^2`; the density of :math:`s=\sqrt\lambda`
    is :math:`2s\rho(s^2)`. Integrates to one over the singular values.
    """
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    s = V.finite_array(s, "s")
    c = min(p, d) / max(p, d)
    t = v * max(p, d) / d
    lo, hi = t * (1 - math.sqrt(c)) ** 2, t * (1 + math.sqrt(c)) ** 2
    lam = s * s
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.sqrt(np.clip((hi - lam) * (lam - lo), 0, None)) / (2 * np.pi * c * t * lam)
    return np.where((lam > lo) & (lam < hi) & (s > 0), 2 * s * rho, 0.0)


def gaussian_singular_value_cdf(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Distribution function of :func:`gaussian_singular_value_density` (chapter 6, eq. (MP)).

    Used for the Kolmogorov-Smirnov distance between the bulk of :math:`W_1` and the
    Marchenko-Pastur law (integrated numerically on a fine grid, accurate to about 1e-6).
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


def spiked_rectangular(theta: float, p: int, d: int, variance: float = 1.0):
    r"""Top singular value and overlaps of :math:`X+\theta\,u v^\top` (chapter 6, eq. (BBP)).

    :math:`X` is p x d with i.i.d. :math:`N(0,v/d)` entries, :math:`u\in\mathbb R^p`,
    :math:`v\in\mathbb R^d` unit vectors. In units where the entries of the larger-side
    normalisation are :math:`N(0,1/\max(p,d))` (scale :math:`t^{1/2}`, :math:`t=v\max(p,d)/d`,
    :math:`c=\min(p,d)/\max(p,d)`, :math:`\tilde\theta=\theta/\sqrt t`), Benaych-Georges and
    Nadakuditi (2012) give, for :math:`\tilde\theta>c^{1/4}`,

    .. math:: s_1 = \sqrt t\,\frac{\sqrt{(1+\tilde\theta^2)(c+\tilde\theta^2)}}{\tilde\theta},\quad
        \rho_{\min}^2 = 1-\frac{c(1+\tilde\theta^2)}{\tilde\theta^2(\tilde\theta^2+c)},\quad
        \rho_{\max}^2 = 1-\frac{c+\tilde\theta^2}{\tilde\theta^2(\tilde\theta^2+1)},

    for the singular vectors on the smaller and larger side; below the threshold the top
    singular value sticks to the bulk edge and the overlaps vanish.

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
        return math.sqrt(t) * (1 + math.sqrt(c)), 0.0, 0.0
    s1 = math.sqrt(t) * math.sqrt((1 + th**2) * (c + th**2)) / th
    small = 1 - c * (1 + th**2) / (th**2 * (th**2 + c))
    large = 1 - (c + th**2) / (th**2 * (th**2 + 1))
    right, left = (small, large) if d <= p else (large, small)
    return float(s1), float(right), float(left)


@dataclass(frozen=True)
class BulkEdge:
    """An estimated right edge of the bulk of singular values (chapter 7).

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
        """``edge + margin * scale``: singular values above it are counted as outliers."""
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
    :math:`\sqrt{\hat v}(1+\sqrt{p/d})` (:func:`lecnotes.networks.gaussian_singular_value_edges`)
    and the scale :math:`\sqrt{\hat v}\,(1+\sqrt{p/d})\,\min(p,d)^{-2/3}`. Needs all
    :math:`\min(p, d)` singular values.
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
    :math:`\hat s_+ + m\hat A` with small probability (Tracy-Widom fluctuations). Needs at
    least two null spectra.
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
    """Number of singular values above ``bulk.threshold(margin)`` (chapter 7)."""
    s = V.finite_array(s, "s", ndim=1)
    if not isinstance(bulk, BulkEdge):
        raise ValueError(f"bulk must be a BulkEdge, got {bulk!r}")
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError("margin must be finite")
    return int(np.sum(s > bulk.threshold(margin)))


def outlier_counts(s, edge, scale, margin: float = 0.0) -> np.ndarray:
    r"""Vectorised :func:`count_outliers` for many spectra at once (chapter 7).

    ``s`` has shape (..., k) (the k largest singular values of each matrix), ``edge`` and
    ``scale`` shape (...) (the fitted :class:`BulkEdge` of each); returns the (...) array of
    the numbers of values above ``edge + margin * scale``. Counts saturate at ``k``.
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
    neurons has a small participation ratio (:func:`effective_neurons`).
    """
    v = V.finite_array(v, "v", ndim=1)
    q = np.sum(v**4)
    if q == 0:
        raise ValueError("the participation ratio of a zero vector is undefined")
    return float(np.sum(v**2) ** 2 / q)
