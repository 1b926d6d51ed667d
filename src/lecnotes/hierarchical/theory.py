r"""Closed forms of chapter 10: the single-index Gaussian hierarchical target and its stages.

The target ({prf:ref}`def-ch10-sight`) depends on :math:`x\in\mathbb R^d` through the
:math:`r` coordinates :math:`z = W_\star x` and only through :math:`s = \|z\|^2`, a
:math:`\chi^2_r` variable. Every expectation of the chapter is therefore one-dimensional:
a generalised Gauss-Laguerre rule for the :math:`\chi^2_r` law (:func:`chi2_rule`) evaluates
the moments of the feature (:func:`feature_law`), the spike of the second-moment matrix
(:func:`spike_strength`), the overlap of the spectral first stage
({prf:ref}`prop-ch10-stage-one`, :func:`stage_one_overlap`) and that of the quadratic second
stage ({prf:ref}`prop-ch10-stage-two`, :func:`stage_two_overlap`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import roots_genlaguerre

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite

__all__ = [
    "PREPROCESSINGS",
    "chi2_rule",
    "feature",
    "link",
    "FeatureLaw",
    "feature_law",
    "spike_strength",
    "stage_one_overlap",
    "spectral_law_overlap",
    "finite_size_overlap",
    "stage_one_crossing",
    "stage_two_overlap",
    "sample_exponents",
]

PREPROCESSINGS = {"tanh": np.tanh, "raw": lambda y: np.asarray(y, dtype=float)}
"""Label preprocessings of the first stage: ``"tanh"`` (bounded, the chapter's choice) and
``"raw"`` (T(y) = y, unbounded: chapter 4 says why it has no sharp threshold)."""

_RULES: dict = {}


def _rank(r):
    return V.positive_int(r, "r", minimum=2)


def _coef(c):
    try:
        out = float(c)
    except (TypeError, ValueError):
        raise TypeError(f"c must be a real number, got {type(c).__name__}") from None
    if not math.isfinite(out):
        raise ValueError(f"c must be a finite real number, got {c!r}")
    return out


def _preprocessing(T):
    if not isinstance(T, str):
        raise TypeError(f"T must be one of {sorted(PREPROCESSINGS)}, got {type(T).__name__}")
    if T not in PREPROCESSINGS:
        raise ValueError(f"T must be one of {sorted(PREPROCESSINGS)}, got {T!r}")
    return PREPROCESSINGS[T]


def chi2_rule(r, m=150):
    r"""Quadrature rule for :math:`\mathbb E[f(s)]`, :math:`s\sim\chi^2_r`, the law of
    :math:`\|W_\star x\|^2` in {prf:ref}`def-ch10-sight`.

    Generalised Gauss-Laguerre nodes for the weight :math:`u^{r/2-1}e^{-u}`, :math:`s = 2u`,
    weights normalised to sum to one (exact for polynomials of degree :math:`2m-1` in
    :math:`s`). Cached.

    Parameters
    ----------
    r : int
        Degrees of freedom, the latent dimension (>= 2).
    m : int
        Number of nodes (1..200; above, the rule's weights overflow).

    Returns
    -------
    (nodes, weights) : tuple of ndarray (m,)
    """
    r = _rank(r)
    m = V.positive_int(m, "m")
    if m > 200:
        raise ValueError(f"m must be an integer in 1..200, got {m}")
    if (r, m) not in _RULES:
        u, w = roots_genlaguerre(m, r / 2 - 1)
        keep = np.isfinite(w) & (w > 0)
        _RULES[(r, m)] = (2 * u[keep], w[keep] / w[keep].sum())
    return _RULES[(r, m)]


def feature(s, r):
    r"""The hierarchical feature :math:`h = (s - r)/\sqrt{2r}` of {eq}`eq-ch10-feature`.

    Parameters
    ----------
    s : array_like
        Values of :math:`\|W_\star x\|^2`.
    r : int
        Latent dimension (>= 2).

    Returns
    -------
    ndarray
        :math:`h`, of mean 0 and variance 1 under :math:`s\sim\chi^2_r`.
    """
    r = _rank(r)
    return (V.finite_array(s, "s") - r) / math.sqrt(2 * r)


def link(h, c):
    r"""The link :math:`g(h) = h + c\,(h^2 - 1)` of {eq}`eq-ch10-feature`.

    Parameters
    ----------
    h : array_like
        Feature values.
    c : float
        Strength of the quadratic part (any real).

    Returns
    -------
    ndarray
    """
    h = V.finite_array(h, "h")
    return h + _coef(c) * (h * h - 1)


class FeatureLaw(NamedTuple):
    r"""Moments of the label :math:`y = g(h)` ({prf:ref}`def-ch10-sight`), by quadrature."""

    mean: float
    r""":math:`\mathbb E y`."""
    var: float
    r""":math:`\operatorname{Var} y`."""
    mu1: float
    r""":math:`\mu_1 = \mathbb E[g(h)h]`, the degree-2 (in :math:`x`) part of :math:`y`."""
    skew: float
    r""":math:`\mathbb E h^3 = \sqrt{8/r}`: the feature is not Gaussian at finite :math:`r`."""
    kernel_floor: float
    r""":math:`1 - \mu_1^2/\operatorname{Var}y`, the normalised error of every predictor of
    degree at most 2 in :math:`x` ({prf:ref}`prop-ch10-shallow`)."""


def feature_law(r, c):
    r"""The moments of {prf:ref}`def-ch10-sight` at latent dimension ``r``.

    Parameters
    ----------
    r : int
        Latent dimension (>= 2).
    c : float
        Quadratic coefficient of the link.

    Returns
    -------
    FeatureLaw
    """
    s, w = chi2_rule(r)
    h = feature(s, r)
    y = link(h, c)
    mean = float(w @ y)
    var = float(w @ (y - mean) ** 2)
    mu1 = float(w @ (y * h))
    return FeatureLaw(mean, var, mu1, float(w @ h**3), 1 - mu1**2 / var)


def spike_strength(r, c, T="raw"):
    r"""The spike :math:`\lambda_T = \mathbb E[T(y)(z_1^2-1)]` of the second-moment matrix,
    {eq}`eq-ch10-spike`; for ``T="raw"`` it equals :math:`\sqrt{2/r}\,\mu_1`.

    Parameters
    ----------
    r : int
        Latent dimension (>= 2).
    c : float
        Quadratic coefficient of the link.
    T : str
        Preprocessing, a key of :data:`PREPROCESSINGS`.

    Returns
    -------
    float
        By symmetry :math:`\mathbb E[T(y) z_1^2] = \mathbb E[T(y)s]/r`.
    """
    f = _preprocessing(T)
    s, w = chi2_rule(r)
    t = f(link(feature(s, r), c))
    return float(w @ (t * (s - r))) / r


def _lu_li(t, g2, w, delta):
    """Lu-Li overlap for a discrete law of (T, G^2); chapter 4's formula, rank-r form (the
    grid scans vectorised over the law's nodes, the roots found on the scalar functions)."""
    top = float(t.max())
    psi = lambda lam: lam * (1 / delta + w @ (t / (lam - t)))  # noqa: E731
    phi = lambda lam: lam * (w @ (t * g2 / (lam - t)))  # noqa: E731
    dpsi = lambda lam: 1 / delta + w @ (t / (lam - t)) - lam * (w @ (t / (lam - t) ** 2))  # noqa: E731
    dphi = lambda lam: w @ (t * g2 / (lam - t)) - lam * (w @ (t * g2 / (lam - t) ** 2))  # noqa: E731
    grid = top + np.geomspace(1e-6, 1e3, 1500) * max(abs(top), 1.0)
    R = t / (grid[:, None] - t)  # (grid, nodes)
    dp = 1 / delta + R @ w - grid * ((R / (grid[:, None] - t)) @ w)
    lbar = grid[0] if dp[0] >= 0 else brentq(dpsi, grid[0], grid[np.argmax(dp > 0)])
    lc = np.maximum(grid, lbar)
    F = lc * (1 / delta + (t / (lc[:, None] - t)) @ w) - grid * ((R * g2) @ w)
    sign = np.where(np.sign(F[:-1]) != np.sign(F[1:]))[0]
    if len(sign) == 0:
        return 0.0
    i = sign[-1]
    lam = brentq(lambda v: psi(max(v, lbar)) - phi(v), grid[i], grid[i + 1])
    if lam <= lbar:
        return 0.0
    a, b = dpsi(lam), dphi(lam)
    return float(a / (a - b))


def spectral_law_overlap(t, g2, w, delta):
    r"""Chapter 4's limit of the squared overlap of a spectral estimator's top eigenvector
    with a spike direction, for a discrete law of the preprocessed label :math:`T` and of
    :math:`\mathbb E[G^2\mid T]` (:math:`G` the projection on the spike), at
    :math:`\delta = n/\dim`: the formula of {prf:ref}`prop-ch10-stage-one`, used by
    {prf:ref}`prop-ch10-might` in the space of quadratic forms.

    Parameters
    ----------
    t, g2, w : array_like (m,)
        Nodes of :math:`T` (bounded), :math:`\mathbb E[G^2\mid T]` there, weights summing
        to 1.
    delta : float
        :math:`n/\dim > 0`.

    Returns
    -------
    float
        In [0, 1]; 0 below the threshold.
    """
    t, g2, w = (V.finite_array(v, k, ndim=1) for v, k in ((t, "t"), (g2, "g2"), (w, "w")))
    if t.size == 0 or t.shape != g2.shape or t.shape != w.shape or np.any(w < 0):
        raise ValueError("t, g2 and w must be non-empty arrays of one shape, w >= 0")
    return _lu_li(t, g2, w, V.positive_float(delta, "delta"))


def stage_one_overlap(alpha, r, c, T="tanh"):
    r"""Limit of the subspace overlap :math:`q_1 = \|\hat U^\top U_\star\|_F^2/r` of the top
    :math:`r` eigenvectors of :math:`D_T` at :math:`n = \alpha d r`,
    {prf:ref}`prop-ch10-stage-one` (:math:`d\to\infty` at fixed :math:`r`).

    Chapter 4's formula with :math:`\delta = n/d = \alpha r` and :math:`G^2` replaced by
    :math:`z_1^2`, whose conditional mean given the label is :math:`s/r`.

    Parameters
    ----------
    alpha : float or array_like
        :math:`n/(dr) > 0`.
    r : int
        Latent dimension (>= 2).
    c : float
        Quadratic coefficient of the link.
    T : str
        Preprocessing, ``"tanh"`` (``"raw"`` has no bounded support, no formula).

    Returns
    -------
    ndarray
        :math:`q_1` for each ``alpha`` (0 below the threshold).
    """
    if T != "tanh":
        _preprocessing(T)
        raise ValueError("the formula needs a bounded preprocessing: T must be 'tanh'")
    a = np.atleast_1d(V.finite_array(alpha, "alpha"))
    if a.size == 0 or np.any(a <= 0):
        raise ValueError("alpha must hold positive numbers")
    r = _rank(r)
    s, w = chi2_rule(r)
    t = np.tanh(link(feature(s, r), c))
    return np.array([_lu_li(t, s / r, w, float(v) * r) for v in a.ravel()]).reshape(a.shape)


def finite_size_overlap(q, r, d):
    r"""The overlap of {prf:ref}`prop-ch10-stage-one` at finite :math:`d`:
    :math:`q + (1-q)\,r/d`, the part of the estimated subspace that is not signal being
    spread uniformly over :math:`\mathbb R^d` (the level :math:`r/d` of a random subspace).

    Parameters
    ----------
    q : float or array_like
        Limit overlap, in [0, 1].
    r, d : int
        Latent and input dimensions, ``2 <= r <= d``.

    Returns
    -------
    ndarray
    """
    q = V.finite_array(q, "q")
    if np.any((q < 0) | (q > 1)):
        raise ValueError("q must lie in [0, 1]")
    r = _rank(r)
    d = V.positive_int(d, "d", minimum=r)
    return q + (1 - q) * r / d


def stage_one_crossing(level, r, c):
    r""":math:`\alpha = n/(dr)` at which {prf:ref}`prop-ch10-stage-one` reaches ``level``.

    Parameters
    ----------
    level : float
        Overlap level, in (0, 0.99).
    r : int
        Latent dimension (>= 2).
    c : float
        Quadratic coefficient of the link.

    Returns
    -------
    float
    """
    level = V.positive_float(level, "level")
    if level >= 0.99:
        raise ValueError(f"level must lie in (0, 0.99), got {level}")
    f = lambda a: stage_one_overlap(a, r, c)[0] - level  # noqa: E731
    return float(brentq(f, 0.05, 100.0, xtol=1e-6))  # q(100) > 0.99 for c <= 2


def stage_two_overlap(beta, r, c):
    r"""Overlap :math:`|\mathrm{corr}(\hat h, h)|` of the quadratic second stage with the
    feature, {prf:ref}`prop-ch10-stage-two`, on the true latent coordinates, at
    :math:`n = \beta r^2`.

    :math:`A = \frac1n\sum_iy_i(z_iz_i^\top - I)` splits into :math:`(\operatorname{tr}A/r)I`
    and a traceless part :math:`A_0` that holds no signal and whose squared norm
    concentrates; :math:`\operatorname{tr}A` is a mean of :math:`n` terms, Gaussian in the
    limit. So :math:`|\mathrm{corr}| = |\tau|/\sqrt{\tau^2 + r\|A_0\|_F^2}` averaged over
    :math:`\tau\sim N(\mathbb E\operatorname{tr}A, \operatorname{Var}\operatorname{tr}A)`,
    {eq}`eq-ch10-stage-two`, with the moments by quadrature.

    Parameters
    ----------
    beta : float or array_like
        :math:`n/r^2 > 0`.
    r : int
        Latent dimension (>= 2).
    c : float
        Quadratic coefficient of the link.

    Returns
    -------
    ndarray
    """
    b = np.atleast_1d(V.finite_array(beta, "beta"))
    if b.size == 0 or np.any(b <= 0):
        raise ValueError("beta must hold positive numbers")
    r = _rank(r)
    s, w = chi2_rule(r)
    y = link(feature(s, r), c)
    lam = float(w @ (y * (s - r))) / r
    var_tr = float(w @ (y * (s - r)) ** 2) - (r * lam) ** 2
    frob = float(w @ (y**2 * (s * s - 2 * s + r))) - r * lam**2
    n = b * r * r
    a0 = (frob - var_tr / r) / n  # E||A_0||^2, the traceless part: no signal, concentrates
    g, wg = gauss_hermite(40)
    tau = r * lam + np.sqrt(var_tr / n)[:, None] * g[None, :]  # tr A, Gaussian
    out = np.abs(tau) / np.sqrt(tau**2 + r * a0[:, None])
    return out @ wg


def sample_exponents(eps, k=2, q=2):
    r"""The exponents of {prf:ref}`thm-ch10-layerwise` and {prf:ref}`prop-ch10-shallow`:
    the three-layer network learns with :math:`n = d^{\max(1+\varepsilon, k\varepsilon)}`
    (up to logarithms), a kernel needs :math:`d^{kq}` (the degree of the target in :math:`x`).

    Parameters
    ----------
    eps : float
        Latent exponent, :math:`r = d^\varepsilon`, in (0, 1).
    k : int
        Degree of the feature (2 for {eq}`eq-ch10-feature`).
    q : int
        Degree of the link.

    Returns
    -------
    (float, float)
        The deep and the kernel exponent.
    """
    eps = V.positive_float(eps, "eps")
    if eps >= 1:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    k = V.positive_int(k, "k")
    q = V.positive_int(q, "q")
    return max(1 + eps, k * eps), float(k * q)
