r"""Chapter 5, surrogates of the partial trace: a spike added to a given noise matrix.

What part of the finite-size lag of the half-point :math:`n_{1/2}/d^2` the noise of
:math:`M_4` explains: the spike :math:`\lambda_4e_1e_1^\top` of {prf:ref}`prop-ch5-limit` is
added to noise matrices that have (i) the Wigner heuristic's entry variance, (ii) the exact
one, or (iii) the measured noise of :math:`M_4` itself (the minor orthogonal to
:math:`w_\star`, :func:`lecnotes.partial_trace.theory.noise_structure`), and the half-point of
each surrogate is read off as in the simulations (:func:`surrogate_half_point`). The noise is
rescaled to other sample sizes by :math:`\sqrt{n_0/n}` (its entries have variance exactly
proportional to :math:`1/n`, :func:`lecnotes.partial_trace.theory.entry_variance`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from lecnotes.core import stats
from lecnotes.core import validate as V

__all__ = ["goe_noise", "SurrogateHalfPoint", "surrogate_half_point", "half_point"]


def goe_noise(m, variance, seeds, rng=None) -> np.ndarray:
    r"""Symmetric Gaussian (GOE) noise matrices, the Wigner model of {prf:ref}`prop-ch5-limit`.

    Off-diagonal entries of variance ``variance``, diagonal ones of variance twice that; the
    semicircle edges are :math:`\pm2\sqrt{m\,v}`.

    Parameters
    ----------
    m : int
        Size, at least 2.
    variance : float
        Off-diagonal entry variance, positive.
    seeds : int
        Number of matrices; seed ``s`` uses ``V.stream(rng, s)``.
    rng : Generator, int or None

    Returns
    -------
    ndarray (seeds, m, m)
    """
    m = V.positive_int(m, "m", minimum=2)
    variance = V.positive_float(variance, "variance")
    seeds = V.positive_int(seeds, "seeds")
    base = V.generator(rng)
    out = np.empty((seeds, m, m))
    for s in range(seeds):
        G = V.stream(base, s).standard_normal((m, m))
        out[s] = np.sqrt(variance / 2) * (G + G.T)
    return out


class SurrogateHalfPoint(NamedTuple):
    """:func:`surrogate_half_point`: ``half_point`` :math:`n_{1/2}/d^2`, its bootstrap standard
    error ``se`` over the noise matrices, the sample sizes ``n`` and the overlaps ``rho2``
    (seeds, len(n))."""

    half_point: float
    se: float
    n: np.ndarray
    rho2: np.ndarray


def half_point(ns, rho2, d, n_boot: int = 200, rng=None) -> tuple[float, float]:
    r""":math:`n_{1/2}/d^2` of an overlap curve, with a bootstrap error over seeds (chapter 5).

    The half-point of {prf:ref}`prop-ch5-limit`, read off as in
    :func:`lecnotes.core.stats.crossing_size` (linear interpolation of the mean over seeds).

    Parameters
    ----------
    ns : array_like of int
        Increasing sample sizes.
    rho2 : array_like (seeds, len(ns))
        Squared overlaps, at least 2 seeds.
    d : int
        The dimension that scales ``n``.
    n_boot : int
        Bootstrap resamples of the seeds, at least 2.
    rng : Generator, int or None

    Returns
    -------
    tuple of float
        ``(half_point, se)``; the error ignores resamples whose mean never reaches 1/2.
    """
    rho2 = V.finite_array(rho2, "rho2", ndim=2)
    ns = np.asarray(ns)
    if rho2.shape[0] < 2 or ns.shape != (rho2.shape[1],):
        raise ValueError("rho2 must be (seeds >= 2, len(ns))")
    d = V.positive_int(d, "d")
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    gen = V.generator(rng)
    k = rho2.shape[0]
    boots = [stats.crossing_size(ns, rho2[gen.integers(0, k, k)]) for _ in range(n_boot)]
    return (float(stats.crossing_size(ns, rho2)) / d**2,
            float(np.nanstd(boots, ddof=1)) / d**2)


def surrogate_half_point(noise, n0, lambda4, alphas, d, n_boot: int = 200,
                         rng=None) -> SurrogateHalfPoint:
    r"""Half-point of a spike :math:`\lambda_4e_1e_1^\top` added to given noise (chapter 5).

    For each noise matrix :math:`N` (measured at ``n0`` samples) and each :math:`\alpha`, the
    surrogate :math:`\lambda_4e_1e_1^\top+\sqrt{n_0/n}\,N` with :math:`n=\alpha d^2` is
    diagonalised and its eigenvector of largest modulus gives :math:`\rho^2=v_1^2`, as the
    estimator of {prf:ref}`def-ch5-partial-trace` does; the half-point is that of
    :func:`half_point`.

    Parameters
    ----------
    noise : array_like (seeds, m, m)
        Symmetric noise matrices, at least 2.
    n0 : int
        The sample size at which ``noise`` was measured.
    lambda4 : float
        The spike, non-zero.
    alphas : array_like
        Increasing :math:`n/d^2`.
    d : int
        The dimension that scales ``n`` (the simulation's ``d``).
    n_boot : int
    rng : Generator, int or None
        For the bootstrap.

    Returns
    -------
    SurrogateHalfPoint
    """
    noise = V.finite_array(noise, "noise", ndim=3)
    if noise.shape[0] < 2 or noise.shape[1] != noise.shape[2] or noise.shape[1] < 2:
        raise ValueError(f"noise must be (seeds >= 2, m, m), got shape {noise.shape}")
    n0 = V.positive_int(n0, "n0")
    lambda4 = float(lambda4)
    if lambda4 == 0 or not np.isfinite(lambda4):
        raise ValueError(f"lambda4 must be finite and non-zero, got {lambda4}")
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be positive and increasing")
    d = V.positive_int(d, "d")
    ns = np.round(alphas * d * d).astype(int)
    spike = np.zeros(noise.shape[1:])
    spike[0, 0] = lambda4
    rho2 = np.empty((noise.shape[0], ns.size))
    for s, N in enumerate(noise):
        for j, n in enumerate(ns):
            w, vec = sla.eigh(spike + np.sqrt(n0 / n) * N)
            i = -1 if abs(w[-1]) >= abs(w[0]) else 0
            rho2[s, j] = vec[0, i] ** 2
    hp, se = half_point(ns, rho2, d, n_boot, rng)
    return SurrogateHalfPoint(hp, se, ns, rho2)
