r"""Locating the thresholds of chapter 11 in simulations, and PCA on the sparse mixture.

:func:`crossing` and :func:`jackknife_crossing` locate the algorithmic threshold
{prf:ref}`prop-ch11-lambda-alg` on a grid of signal strengths; :func:`pca_overlap` is the
limit of PCA ({prf:ref}`prop-ch11-pca`) and :func:`subspace_cosine` its measurement.
"""

from __future__ import annotations

import math

import numpy as np

from lecnotes.core import validate as V
from lecnotes.mixtures.amp import centring, check_k, cluster_denoiser

__all__ = ["crossing", "jackknife_crossing", "gaussian_prior_fixed_point", "pca_overlap",
           "realised_pca_overlap",
           "subspace_cosine"]


def crossing(lams, overlaps, level):
    r"""The first :math:`\lambda` at which a curve of overlaps crosses ``level`` upwards, by
    linear interpolation (the location of {prf:ref}`prop-ch11-lambda-alg` in a simulation).

    Parameters
    ----------
    lams : sequence of float
        Increasing grid.
    overlaps : sequence of float
        The curve on the grid.
    level : float
        The level, > 0.

    Returns
    -------
    float
        NaN if the curve never crosses.
    """
    x = V.finite_array(lams, "lams", ndim=1)
    y = V.finite_array(overlaps, "overlaps", ndim=1)
    level = V.positive_float(level, "level")
    if x.shape != y.shape or x.size < 2 or np.any(np.diff(x) <= 0):
        raise ValueError("lams must be increasing and as long as overlaps (>= 2 points)")
    above = np.nonzero(y >= level)[0]
    if above.size == 0:
        return float("nan")
    j = int(above[0])
    if j == 0:
        return float(x[0])
    return float(x[j - 1] + (level - y[j - 1]) * (x[j] - x[j - 1]) / (y[j] - y[j - 1]))


def pca_overlap(lam, k, alpha) -> float:
    r"""Squared cosine between a top eigenvector of the sample covariance and the span of the
    centred means, in the limit ({prf:ref}`prop-ch11-pca`): with :math:`\theta = \lambda/k`
    and :math:`\gamma = 1/\alpha`, :math:`(1 - \gamma/\theta^2)/(1 + \gamma/\theta)` above
    :math:`\theta = \sqrt\gamma` (that is, :math:`\lambda = k/\sqrt\alpha`), zero below.

    Parameters
    ----------
    lam : float
        Signal-to-noise ratio, >= 0.
    k : int
        Clusters.
    alpha : float
        Samples per dimension.

    Returns
    -------
    float
    """
    lam, k = V.nonneg_float(lam, "lam"), V.positive_int(k, "k", minimum=2)
    gam = 1.0 / V.positive_float(alpha, "alpha")
    theta = lam / k
    if theta * theta <= gam:
        return 0.0
    return float((1 - gam / theta**2) / (1 + gam / theta))


def _bbp(theta, gam):
    return np.where(theta * theta > gam, (1 - gam / np.maximum(theta, 1e-300) ** 2)
                    / (1 + gam / np.maximum(theta, 1e-300)), 0.0)


def realised_pca_overlap(Vm, lam, alpha, divisor=None) -> float:
    r"""The limit of {prf:ref}`prop-ch11-pca` at the spikes of one draw of the means: the
    population covariance given :math:`V` is :math:`I + \frac\lambda{kd}VPV^\top`, whose
    :math:`k-1` spikes are :math:`\theta_j = \frac\lambda k\,\mathrm{eig}_j(PV^\top VP/d)`
    (not exactly :math:`\lambda/k`: for sparse means :math:`V^\top V/d` fluctuates by
    :math:`O((\rho d)^{-1/2})`); the mean over :math:`j` of
    :math:`(1-\gamma/\theta_j^2)/(1+\gamma/\theta_j)`.

    Parameters
    ----------
    Vm : ndarray (d, k)
        The means.
    lam : float
        Signal-to-noise ratio, >= 0.
    alpha : float
        Samples per dimension.
    divisor : float, optional
        Spikes :math:`\lambda/` ``divisor`` instead of :math:`\lambda/k` (e.g. :math:`k-1`, a
        competing normalisation).

    Returns
    -------
    float
    """
    Vm = V.finite_array(Vm, "Vm", ndim=2)
    d, k = Vm.shape
    if k < 2:
        raise ValueError("Vm needs k >= 2 columns")
    lam, gam = V.nonneg_float(lam, "lam"), 1.0 / V.positive_float(alpha, "alpha")
    div = float(k) if divisor is None else V.positive_float(divisor, "divisor")
    P = np.eye(k) - 1.0 / k
    theta = lam / div * np.linalg.eigvalsh(P @ (Vm.T @ Vm / d) @ P)[1:]
    return float(np.mean(_bbp(theta, gam)))


def subspace_cosine(E, Vm) -> float:
    r"""Mean squared cosine between the columns of an orthonormal ``E`` (d, k-1) and the span
    of the centred means :math:`VP` ({prf:ref}`prop-ch11-pca`).

    Parameters
    ----------
    E : ndarray (d, k - 1)
        Orthonormal columns.
    Vm : ndarray (d, k)
        The means.

    Returns
    -------
    float
    """
    E = V.finite_array(E, "E", ndim=2)
    Vm = V.finite_array(Vm, "Vm", ndim=2)
    k = Vm.shape[1]
    if E.shape != (Vm.shape[0], k - 1):
        raise ValueError(f"E must have shape ({Vm.shape[0]}, {k - 1})")
    Q = np.linalg.svd(Vm @ (np.eye(k) - 1.0 / k), full_matrices=False)[0][:, : k - 1]
    return float(np.sum((E.T @ Q) ** 2) / (k - 1))


def jackknife_crossing(lams, overlaps, level):
    r"""Crossing of ``level`` by the mean curve over seeds (:func:`crossing`) and its jackknife
    standard error over the seeds (the location of {prf:ref}`prop-ch11-lambda-alg`).

    Parameters
    ----------
    lams : sequence of float
        Increasing grid.
    overlaps : ndarray (seeds, len(lams))
        One curve per seed (at least two seeds).
    level : float
        The level, > 0.

    Returns
    -------
    crossing, stderr : float
        NaN if the mean curve, or a leave-one-out mean, never crosses.
    """
    curves = V.finite_array(overlaps, "overlaps", ndim=2)
    s = curves.shape[0]
    if s < 2:
        raise ValueError("overlaps needs at least two seeds on axis 0")
    full = crossing(lams, curves.mean(axis=0), level)
    loo = np.array([crossing(lams, np.delete(curves, i, axis=0).mean(axis=0), level)
                    for i in range(s)])
    se = math.sqrt((s - 1) / s * np.sum((loo - loo.mean()) ** 2))
    return full, float(se)


def gaussian_prior_fixed_point(k, lam, alpha, iterations=60, n_mc=40000, rng=0) -> float:
    r"""The overlap :math:`m_v` that AMP with a Gaussian prior on the means reaches from the
    informed start: the state evolution {eq}`eq-ch11-se` with :math:`m_v(h) = h/(1+h)` in
    closed form (the posterior of a Gaussian vector under the channel :math:`hP`) and
    :math:`m_u` by Monte Carlo over ``n_mc`` draws (common random numbers).

    Parameters
    ----------
    k : int
        Clusters.
    lam, alpha : float
        Signal-to-noise ratio and samples per dimension.
    iterations : int
        Iterations from :math:`m_v = 1`.
    n_mc : int
        Draws of the assignments and the noise.
    rng : Generator, int or None
        Random state.

    Returns
    -------
    float
    """
    k, lam = check_k(k), V.nonneg_float(lam, "lam")
    alpha = V.positive_float(alpha, "alpha")
    r = V.generator(rng)
    P = centring(k)
    u = P[r.integers(0, k, V.positive_int(n_mc, "n_mc"))]
    xi = r.standard_normal(u.shape) @ P
    mv = 1.0
    for _ in range(V.positive_int(iterations, "iterations")):
        q = lam * mv
        f, _ = cluster_denoiser(q * P, q * u + math.sqrt(q) * xi)
        h = lam * alpha * float(np.sum(f * f)) / (len(u) * (k - 1))
        mv = h / (1 + h)
    return mv
