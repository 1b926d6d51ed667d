r"""A multi-index hierarchical target of chapter 10 ({prf:ref}`def-ch10-might`) and its second
stage: the span of two quadratic features of the latent coordinates.

The label is :math:`y = h_1 + c\,(h_2^2 - 1)` with :math:`h_1` the radial feature of
{prf:ref}`def-ch10-sight` and :math:`h_2` the signed feature {eq}`eq-ch10-signed` (``r`` even).
A quadratic form of :math:`z\sim N(0, I_r)` is a linear function of the vectorised forms
:math:`u(z)\in\mathbb R^D`, :math:`D = r(r+1)/2`, with coordinates
:math:`(z_j^2-1)/\sqrt2` and :math:`z_jz_k` (:math:`j<k`), whose covariance is the identity
(:func:`form_coordinates`); :math:`h_1 = \langle e_1, u\rangle`,
:math:`h_2 = \langle e_2, u\rangle` for two orthonormal vectors (:func:`feature_directions`).
The second stage is then a multi-index problem in dimension :math:`D`: the first moment
:math:`\frac1n\sum_iy_iu_i` (chapter 3) points at :math:`e_1` only, since
:math:`\mathbb E[yh_2] = 0` (swapping the odd and even latent coordinates flips :math:`h_2` and
leaves :math:`y`). Once :math:`h_1` is known, the spectral matrix
:math:`\frac1n\sum_i\tanh(y_i - h_{1,i})\bar u_i\bar u_i^\top` of the normalised forms
:math:`\bar u = \sqrt D\,u/\|u\|` (chapter 4, the chapter's stage 1 in the space of forms)
has its spike on :math:`e_2` ({prf:ref}`prop-ch10-might`): a staircase inside the second stage.
The data of rank ``r`` and seed ``s`` come from
``validate.stream(rng, r, s, 51)``, nested in :math:`n`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.numerics import top_eigenvectors

__all__ = ["form_coordinates", "feature_directions", "sample_might", "MightLaw", "might_law",
           "first_moment_overlap", "spectral_overlap", "spectral_crossing", "MightSweep",
           "might_sweep"]


def _even_rank(r):
    r = V.positive_int(r, "r", minimum=2)
    if r % 2:
        raise ValueError(f"r must be even (the signed feature balances its signs), got {r}")
    return r


def form_coordinates(Z):
    r"""Vectorised quadratic forms :math:`u(z)` of {prf:ref}`def-ch10-might`: the
    :math:`(z_j^2-1)/\sqrt2` then the :math:`z_jz_k`, :math:`j<k`; orthonormal coordinates
    (:math:`\mathrm{Cov}\,u = I_D` for :math:`z\sim N(0, I_r)`).

    Parameters
    ----------
    Z : ndarray (n, r)
        Latent coordinates.

    Returns
    -------
    ndarray (n, r(r+1)/2)
    """
    Z = V.finite_array(Z, "Z", ndim=2)
    j, k = np.triu_indices(Z.shape[1], 1)
    return np.concatenate([(Z * Z - 1) / math.sqrt(2), Z[:, j] * Z[:, k]], axis=1)


def feature_directions(r):
    r"""The unit vectors :math:`e_1` (radial feature) and :math:`e_2` (signed feature) of
    {prf:ref}`def-ch10-might` in the coordinates of :func:`form_coordinates`.

    Parameters
    ----------
    r : int
        Latent dimension (even, >= 2).

    Returns
    -------
    ndarray (r(r+1)/2, 2)
    """
    r = _even_rank(r)
    E = np.zeros((r * (r + 1) // 2, 2))
    E[:r, 0] = 1 / math.sqrt(r)
    E[:r, 1] = np.where(np.arange(r) % 2 == 1, -1.0, 1.0) / math.sqrt(r)
    return E


def sample_might(r, n, c, rng=None):
    r"""``n`` latent samples of {prf:ref}`def-ch10-might`: :math:`z\sim N(0, I_r)` and
    :math:`y = h_1 + c(h_2^2-1)`.

    Parameters
    ----------
    r, n : int
        Latent dimension (even, >= 2) and number of samples.
    c : float
        Coefficient of :math:`h_2^2 - 1`.
    rng : Generator, int or None
        Random state.

    Returns
    -------
    Z : ndarray (n, r)
    y : ndarray (n,)
    """
    r, n = _even_rank(r), V.positive_int(n, "n")
    c = float(V.finite_array(c, "c", ndim=0))
    Z = V.generator(rng).standard_normal((n, r))
    h = form_coordinates(Z)[:, :r] @ feature_directions(r)[:r]
    return Z, h[:, 0] + c * (h[:, 1] ** 2 - 1)


class MightLaw(NamedTuple):
    r"""The moments of {prf:ref}`def-ch10-might` that {prf:ref}`prop-ch10-might` needs."""

    mu: float
    r""":math:`\mathbb E[yh_1]`, the first moment along :math:`e_1`."""
    var1: float
    r""":math:`\operatorname{Var}(yh_1)`."""
    noise: float
    r""":math:`\mathbb E[y^2(\|u\|^2 - h_1^2)]`, the first moment's noise off :math:`e_1`
    (times :math:`n`)."""
    t: np.ndarray
    r"""Nodes of the law of :math:`T = \tanh(y - h_1)` (means of quantile bins)."""
    g2: np.ndarray
    r""":math:`\mathbb E[\langle\bar u, e_2\rangle^2\mid T]` at the nodes,
    :math:`\bar u = \sqrt D\,u/\|u\|`."""
    w: np.ndarray
    """Weights of the nodes."""


def might_law(r, c, samples=400_000, bins=400, gaussian=False):
    r"""Monte Carlo law of {prf:ref}`def-ch10-might` at latent dimension ``r`` (a fixed
    stream of its own), or with ``gaussian`` the :math:`r\to\infty` law (:math:`h_1, h_2`
    independent standard Gaussians, :math:`\|u\|^2` replaced by its mean :math:`D`). The
    spectral part is the law of :math:`T = \tanh(y - h_1)` and of the projection on
    :math:`e_2` of the normalised form :math:`\bar u = \sqrt D\,u/\|u\|`.

    Parameters
    ----------
    r : int
        Latent dimension (even, >= 2).
    c : float
        Coefficient of :math:`h_2^2 - 1`.
    samples : int
        Monte Carlo draws.
    bins : int
        Quantile bins of :math:`\tanh y` for the spectral formula (>= 2).
    gaussian : bool
        The Gaussian-feature limit instead of the finite-``r`` law.

    Returns
    -------
    MightLaw
    """
    r, samples = _even_rank(r), V.positive_int(samples, "samples")
    bins = V.positive_int(bins, "bins", minimum=2)
    g = np.random.default_rng([5151, r, int(bool(gaussian))])  # the same at every seed root
    if gaussian:
        h1, h2 = g.standard_normal((2, samples))
        u2 = np.full(samples, r * (r + 1) / 2)
    else:
        Z2 = g.standard_normal((samples, r)) ** 2
        s = Z2.sum(axis=1)
        h1 = (s - r) / math.sqrt(2 * r)
        h2 = (Z2[:, 0::2].sum(axis=1) - Z2[:, 1::2].sum(axis=1)) / math.sqrt(2 * r)
        u2 = (s * s - 2 * s + r) / 2  # ||z z^T - I||_F^2 / 2
    cc = float(V.finite_array(c, "c", ndim=0))
    y = h1 + cc * (h2**2 - 1)
    t = np.tanh(y - h1)  # the label with the first feature's part removed
    g2 = h2**2 * (r * (r + 1) / 2) / u2  # the projection of the normalised form on e_2
    parts = np.array_split(np.argsort(t), bins)
    return MightLaw(float(np.mean(y * h1)), float(np.var(y * h1)),
                    float(np.mean(y**2 * (u2 - h1**2))),
                    np.array([t[p].mean() for p in parts]),
                    np.array([np.mean(g2[p]) for p in parts]),
                    np.array([len(p) / samples for p in parts]))


def _deltas(delta):
    a = np.atleast_1d(V.finite_array(delta, "delta"))
    if a.size == 0 or np.any(a <= 0):
        raise ValueError("delta must hold positive numbers")
    return a


def first_moment_overlap(delta, law, r):
    r"""Squared overlap :math:`\langle\hat a, e_1\rangle^2` of the first moment
    :math:`\hat a\propto\frac1n\sum_iy_iu_i` with :math:`e_1` at :math:`n = \delta D`
    ({prf:ref}`prop-ch10-might`): :math:`\mathbb E_\tau[\tau^2/(\tau^2 + N/n)]`,
    :math:`\tau\sim N(\mu, \operatorname{Var}(yh_1)/n)`, :math:`N` the noise of ``law``.

    Parameters
    ----------
    delta : float or array_like
        :math:`n/D > 0`.
    law : MightLaw
        From :func:`might_law`.
    r : int
        Latent dimension (even, >= 2).

    Returns
    -------
    ndarray
    """
    a, D = _deltas(delta), _even_rank(r) * (r + 1) // 2
    x, w = gauss_hermite(40)
    n = a[:, None] * D
    tau = law.mu + np.sqrt(law.var1 / n) * x[None, :]
    return (tau**2 / (tau**2 + law.noise / n)) @ w


def spectral_overlap(delta, law):
    r"""Squared overlap :math:`\langle\hat v, e_2\rangle^2` of the top eigenvector of
    :math:`\frac1n\sum_i\tanh(y_i - h_{1,i})\bar u_i\bar u_i^\top` at :math:`n = \delta D`
    ({prf:ref}`prop-ch10-might`): chapter 4's formula with the law of
    :math:`(T, \langle\bar u, e_2\rangle^2)` of :func:`might_law` (0 below the threshold).

    Parameters
    ----------
    delta : float or array_like
        :math:`n/D > 0`.
    law : MightLaw
        From :func:`might_law`.

    Returns
    -------
    ndarray
    """
    a = _deltas(delta)
    return np.array([T.spectral_law_overlap(law.t, law.g2, law.w, float(v)) for v in a])


def spectral_crossing(level, law):
    r""":math:`\delta = n/D` at which :func:`spectral_overlap` reaches ``level``
    ({prf:ref}`prop-ch10-might`; a small ``level`` gives the threshold).

    Parameters
    ----------
    level : float
        In (0, 0.95).
    law : MightLaw
        From :func:`might_law`.

    Returns
    -------
    float
    """
    level = V.positive_float(level, "level")
    if level >= 0.95:
        raise ValueError(f"level must lie in (0, 0.95), got {level}")
    f = lambda v: spectral_overlap(v, law)[0] - level  # noqa: E731
    return float(brentq(f, 0.05, 200.0, xtol=1e-6))


class MightSweep(NamedTuple):
    r"""Second stage of {prf:ref}`def-ch10-might` on the true latent coordinates, arrays
    ``[seed, rank, delta]`` of squared overlaps ({prf:ref}`prop-ch10-might`)."""

    ranks: np.ndarray
    deltas: np.ndarray
    first: np.ndarray
    r"""First moment with :math:`e_1`."""
    first_e2: np.ndarray
    r"""First moment with :math:`e_2` (the feature it cannot see)."""
    spectral: np.ndarray
    r"""Top eigenvector of the spectral matrix (normalised forms, label with the true
    :math:`h_1` part removed) with :math:`e_2`."""
    span: np.ndarray
    r"""Overlap :math:`\|P_{\hat S}E\|_F^2/2` of the span :math:`\hat S` of the two estimates
    with that of :math:`e_1, e_2`."""
    span_first: np.ndarray
    r"""The same for the first moment alone (one direction): at most 1/2."""
    spectral_est: np.ndarray
    r"""The spectral estimator with the first feature's part removed as the first moment
    estimates it (:math:`\hat h_1 = \langle\hat a, u\rangle`, fitted on the same samples),
    with :math:`e_2`; at the even grid points only (NaN at the others)."""


def might_sweep(ranks, deltas, seeds, c, rng=None):
    r"""The second stage of {prf:ref}`def-ch10-might` at :math:`n = \delta D`, nested in
    :math:`\delta`: the first moment and the spectral matrix with :math:`T = \tanh`
    ({prf:ref}`prop-ch10-might`).

    Parameters
    ----------
    ranks : array_like of int
        Even latent dimensions (>= 2).
    deltas : array_like
        Increasing values of :math:`n/D`, :math:`D = r(r+1)/2`.
    seeds : int
        Number of seeds.
    c : float
        Coefficient of :math:`h_2^2 - 1`.
    rng : Generator, int or None
        Parent random state (streams ``(r, seed, 51)``).

    Returns
    -------
    MightSweep
    """
    ranks = V.finite_array(ranks, "ranks", ndim=1)
    if ranks.size == 0 or np.any(ranks != np.round(ranks)):
        raise ValueError("ranks must hold even integers >= 2")
    ranks = np.array([_even_rank(int(r)) for r in ranks])
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if deltas.size == 0 or np.any(deltas <= 0) or np.any(np.diff(deltas) <= 0):
        raise ValueError("deltas must hold increasing positive numbers")
    seeds = V.positive_int(seeds, "seeds")
    out = np.zeros((6, seeds, len(ranks), len(deltas)))
    for j, r in enumerate(ranks):
        E, D = feature_directions(int(r)), int(r) * (int(r) + 1) // 2
        ns = np.maximum(np.round(deltas * D).astype(int), 2)
        for s in range(seeds):
            Z, y = sample_might(int(r), int(ns[-1]), c, V.stream(rng, int(r), s, 51))
            U = form_coordinates(Z)
            Ub = U * np.sqrt(D / np.einsum("ij,ij->i", U, U))[:, None]  # normalised forms
            t = np.tanh(y - U @ E[:, 0])  # the first feature's part removed
            a, M, start = np.zeros(D), np.zeros((D, D)), 0
            for i, n in enumerate(ns):
                a += U[start:n].T @ y[start:n]
                M += (Ub[start:n] * t[start:n, None]).T @ Ub[start:n]
                start = n
                a1 = a / np.linalg.norm(a)
                v = top_eigenvectors(M / n, 1)[:, 0]
                ve = np.full(D, np.nan)
                if i % 2 == 0:  # every other grid point (a matrix of its own per n)
                    h1 = U[:n] @ a1  # the first feature as the first moment estimates it
                    te = np.tanh(y[:n] - (h1 @ y[:n]) / (h1 @ h1) * h1)
                    ve = top_eigenvectors((Ub[:n] * te[:, None]).T @ Ub[:n] / n, 1)[:, 0]
                Q = np.linalg.qr(np.stack([a1, v], axis=1))[0]
                pa, pv = E.T @ a1, E.T @ v
                out[:, s, j, i] = (pa[0] ** 2, pa[1] ** 2, pv[1] ** 2,
                                   np.sum((Q.T @ E) ** 2) / 2, np.sum(pa**2) / 2,
                                   (E[:, 1] @ ve) ** 2)
    return MightSweep(ranks, deltas, *out)

