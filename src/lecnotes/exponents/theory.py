r"""Closed forms of chapter 2: where the exponents of the sample-complexity landscape come from.

The low-degree norm of the likelihood ratio of a single-index model against pure noise
(chapter 2, {eq}`eq-ch2-low-degree`), computed exactly from the numbers
:math:`\mathbb E[\zeta_k(Y)^2]` of {prf:ref}`def-ch2-generative-exponent` and the moments of
the overlap of two independent uniform directions, the drift of the overlap under online
SGD ({eq}`eq-ch2-sgd-drift`), and the spectral method on an unfolded noisy order-4 tensor
({eq}`eq-ch2-unfolding`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite_norms
from lecnotes.core.first_moment import raw_floor_limit  # shared with chapter 3
from lecnotes.core.hermite import he

__all__ = [
    "sphere_overlap_moments",
    "low_degree_norm",
    "low_degree_threshold",
    "sgd_escape_steps",
    "unfolded_spike_overlap",
    "unfolding_sweep",
    "stein_closed_forms",
    "LowDegreeThresholds",
    "low_degree_thresholds",
    "raw_floor_limit",
]


def sphere_overlap_moments(d: int, degree: int) -> np.ndarray:
    r"""Moments :math:`\mathbb E[\rho^j]`, :math:`j = 0..\mathrm{degree}`, of the overlap of two
    independent uniform unit vectors of :math:`\mathbb R^d` (chapter 2, {eq}`eq-ch2-low-degree`).

    :math:`\mathbb E[\rho^{2m}] = \prod_{i<m}(2i+1)/(d+2i)` and the odd moments vanish.

    Parameters
    ----------
    d : int
        Dimension, at least 2.
    degree : int
        Largest power.

    Returns
    -------
    ndarray (degree + 1,)
    """
    d = V.positive_int(d, "d", minimum=2)
    degree = V.positive_int(degree, "degree", minimum=0)
    out = np.zeros(degree + 1)
    out[0] = 1.0
    for j in range(2, degree + 1, 2):
        out[j] = out[j - 2] * (j - 1) / (d + j - 2)
    return out


def low_degree_norm(zeta_norms, n: float, d: int, degree: int) -> float:
    r"""Squared norm of the degree-:math:`\le D` part of the likelihood ratio minus one.

    Chapter 2, {eq}`eq-ch2-low-degree`: with :math:`a_k = \mathbb E[\zeta_k(Y)^2]`, the
    truncation to total degree :math:`\le D` in the inputs of
    :math:`\mathbb E_{\rho}\big[(1+\sum_k a_k\rho^k)^n\big] - 1`, expanded as
    :math:`\sum_{j\ge1}\binom nj(\sum_ka_k\rho^k)^j` and averaged with
    :func:`sphere_overlap_moments`.

    Parameters
    ----------
    zeta_norms : array_like (K,)
        :math:`a_1, \dots, a_K` (``conditional_hermite_norms``), K at least ``degree``
        or the missing ones taken as zero.
    n : float
        Number of samples (positive, need not be an integer).
    d : int
        Dimension.
    degree : int
        The degree :math:`D` of the truncation.

    Returns
    -------
    float
    """
    a = V.finite_array(zeta_norms, "zeta_norms", ndim=1)
    if np.any(a < 0):
        raise ValueError("zeta_norms are squared norms: they must be non-negative")
    n = V.positive_float(n, "n")
    degree = V.positive_int(degree, "degree")
    P = np.zeros(degree + 1)
    k = min(degree, a.size)
    P[1:k + 1] = a[:k]
    moments = sphere_overlap_moments(d, degree)
    power = np.zeros(degree + 1)
    power[0] = 1.0
    total, binom = 0.0, 1.0
    for j in range(1, degree + 1):
        power = np.convolve(power, P)[:degree + 1]
        binom *= (n - j + 1) / j
        if not power.any():
            break
        total += binom * float(power @ moments)
    return total


def low_degree_threshold(zeta_norms, d: int, degree: int, level: float = 1.0) -> float:
    r"""The sample size at which :func:`low_degree_norm` reaches ``level`` (chapter 2).

    The heuristic SQ / low-degree threshold of {eq}`eq-ch2-low-degree`, found by bracketing
    in :math:`\log n`.

    Parameters
    ----------
    zeta_norms : array_like (K,)
        :math:`\mathbb E[\zeta_k(Y)^2]`, k = 1..K.
    d : int
        Dimension.
    degree : int
        Degree of the truncation.
    level : float
        The value of the norm that defines the threshold.

    Returns
    -------
    float
    """
    level = V.positive_float(level, "level")

    def f(t):
        return math.log(low_degree_norm(zeta_norms, math.exp(t), d, degree) / level)

    lo, hi = 0.0, 5.0
    while f(hi) < 0:
        lo, hi = hi, hi + 5.0
        if hi > 200:
            raise ValueError("the norm does not reach the level: are all zeta_norms zero?")
    return math.exp(brentq(f, lo, hi, xtol=1e-12))


def sgd_escape_steps(k: int, d: int, eta: float, target: float = 0.5) -> float:
    r"""Steps of the drift ODE :math:`m' = \eta k m^{k-1}(1-m^2)` from :math:`d^{-1/2}` (chapter 2).

    Chapter 2, {eq}`eq-ch2-sgd-drift`: the number of online-SGD steps the population drift
    needs to take the overlap from its random initial size :math:`d^{-1/2}` to ``target``,
    :math:`\frac1{\eta k}\int_{d^{-1/2}}^{\mathrm{target}} m^{1-k}(1-m^2)^{-1}\,dm`, in closed
    form through the substitution :math:`x = m^2`.

    Parameters
    ----------
    k : int
        Information exponent, at least 1.
    d : int
        Dimension (the start :math:`d^{-1/2}` must lie below ``target``).
    eta : float
        Step size.
    target : float
        Final overlap, in (0, 1).

    Returns
    -------
    float
    """
    k = V.positive_int(k, "k")
    d = V.positive_int(d, "d", minimum=2)
    eta = V.positive_float(eta, "eta")
    if not d ** -0.5 < target < 1:
        raise ValueError("need d^(-1/2) < target < 1")
    val, _ = quad(lambda m: m ** (1 - k) / (1 - m * m), d ** -0.5, target, limit=200)
    return val / (eta * k)


def unfolded_spike_overlap(d: int, n: int, lam: float = 1.0, rng=None) -> float:
    r"""Squared overlap of the top singular vector of an unfolded noisy rank-one 4-tensor.

    Chapter 2, {eq}`eq-ch2-unfolding`: :math:`M = \lambda\,w_\star^{\otimes4} + Z/\sqrt n`
    with :math:`Z` a Gaussian tensor of independent standard entries, reshaped into the
    :math:`d^2\times d^2` matrix :math:`\lambda vv^\top + Z/\sqrt n`,
    :math:`v = \mathrm{vec}(w_\star w_\star^\top)`. With :math:`N = d^2` and
    :math:`\theta^2 = \lambda^2n/N`, the squared overlap of the top left singular vector with
    :math:`v` tends to :math:`\max(0, 1-1/\theta^2)` (square-matrix BBP transition).

    Parameters
    ----------
    d, n : int
        Dimension and number of samples (the noise level of each entry is :math:`n^{-1/2}`).
    lam : float
        Signal strength :math:`\lambda`.
    rng : Generator, int or None
        Random source (SPEC 7): :math:`w_\star`, then :math:`Z`.

    Returns
    -------
    float
    """
    d = V.positive_int(d, "d", minimum=2)
    n = V.positive_int(n, "n")
    lam = V.nonneg_float(lam, "lam")
    g = V.generator(rng)
    w = g.standard_normal(d)
    v = np.outer(w, w).ravel() / (w @ w)
    M = lam * np.outer(v, v) + g.standard_normal((d * d, d * d)) / np.sqrt(n)
    u = np.linalg.svd(M)[0][:, 0]
    return float((u @ v) ** 2)


def unfolding_sweep(dims, ratios, seeds: int, lam: float = 1.0, rng=None) -> np.ndarray:
    r""":func:`unfolded_spike_overlap` at :math:`n = \kappa d^2` for each ``d`` and ``kappa``.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    ratios : sequence of float
        Values of :math:`\kappa = n/d^2`.
    seeds : int
        Replicates.
    lam : float
        Signal strength.
    rng : Generator, int or None
        Random source (SPEC 7): replicate ``s`` at ``(d, j)`` from ``stream(rng, s, d, j)``.

    Returns
    -------
    ndarray (seeds, len(dims), len(ratios))
    """
    seeds = V.positive_int(seeds, "seeds")
    out = np.zeros((seeds, len(dims), len(ratios)))
    for i, d in enumerate(dims):
        for j, kappa in enumerate(ratios):
            n = max(1, round(V.positive_float(kappa, "kappa") * int(d) ** 2))
            for s in range(seeds):
                out[s, i, j] = unfolded_spike_overlap(int(d), n, lam, V.stream(rng, s, int(d), j))
    return out


def stein_closed_forms(kmax: int = 4) -> dict:
    r"""Closed-form :math:`\lambda_k = \mathbb E[\varphi(G)\mathrm{He}_k(G)]`, k = 0..kmax.

    Chapter 2, {prf:ref}`lem-ch2-stein-hermite`: for :math:`\lvert u\rvert`,
    :math:`\mathrm{ReLU}` and :math:`\mathrm{sign}` the jump and kink terms
    (:math:`2\mathrm{He}_{k-2}(0)\gamma(0)`, :math:`\mathrm{He}_{k-2}(0)\gamma(0)`,
    :math:`2\mathrm{He}_{k-1}(0)\gamma(0)`); for the polynomials the identities
    :math:`u^2 = \mathrm{He}_2+1`, :math:`u^3 = \mathrm{He}_3+3\mathrm{He}_1`.

    Parameters
    ----------
    kmax : int
        Largest degree, at least 2.

    Returns
    -------
    dict
        Catalogue name -> list of :math:`\lambda_0, \dots, \lambda_{k_{\max}}`.
    """
    kmax = V.positive_int(kmax, "kmax", minimum=2)
    g0 = 1 / np.sqrt(2 * np.pi)

    def he0(k):
        return float(he(k, 0.0))

    def poly(coef):
        return [coef.get(k, 0) for k in range(kmax + 1)]

    ks = range(2, kmax + 1)
    return {
        "quadratic": poly({0: 1, 2: 2}),
        "cubic": poly({1: 3, 3: 6}),
        "he3": poly({3: 6}),
        "he4": poly({4: 24}),
        "abs": [2 * g0, 0] + [2 * he0(k - 2) * g0 for k in ks],
        "relu": [g0, 0.5] + [he0(k - 2) * g0 for k in ks],
        "sign": [0] + [2 * he0(k - 1) * g0 for k in range(1, kmax + 1)],
    }


class LowDegreeThresholds(NamedTuple):
    """Low-degree thresholds over dimensions, per link, and their log-log slopes."""

    n_c: dict
    """Link name -> threshold :math:`n_c` at each dimension (ndarray)."""
    slopes: dict
    """Link name -> slopes of :math:`\\log n_c` between consecutive dimensions (ndarray)."""


def low_degree_thresholds(links, dims, degree: int = 12) -> LowDegreeThresholds:
    r""":func:`low_degree_threshold` for several links and dimensions (chapter 2).

    The growth of the threshold of {eq}`eq-ch2-low-degree` with :math:`d`, from the exact
    :math:`\mathbb E[\zeta_k(Y)^2]`, k = 1..degree.

    Parameters
    ----------
    links : sequence of str or callable
        The links, at least one.
    dims : sequence of int
        Dimensions, increasing, at least two of them.
    degree : int
        Degree :math:`D` of the truncation (at most 12).

    Returns
    -------
    LowDegreeThresholds
    """
    if isinstance(links, str) or len(links) == 0:
        raise ValueError("links must be a non-empty sequence of links")
    d = np.array([V.positive_int(x, "dims", minimum=2) for x in dims])
    if d.size < 2 or np.any(np.diff(d) <= 0):
        raise ValueError("dims must hold at least two increasing dimensions")
    degree = V.positive_int(degree, "degree")
    norms = {n: conditional_hermite_norms(n, degree) for n in links}
    n_c = {n: np.array([low_degree_threshold(norms[n], int(x), degree) for x in d])
           for n in links}
    slopes = {n: np.diff(np.log(v)) / np.diff(np.log(d)) for n, v in n_c.items()}
    return LowDegreeThresholds(n_c, slopes)
