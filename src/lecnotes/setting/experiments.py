r"""Chapter 0, the setting: the seed sweeps of its checks.

Single- and multi-index data come from :mod:`lecnotes.core.targets`, Hermite analysis from
:mod:`lecnotes.core.hermite` and the overlap from :mod:`lecnotes.core.overlaps`; the first-moment
vector :math:`v = \frac1n\sum_i y_ix_i` of chapter 0 is one matrix-vector product (its
preprocessed form is :func:`lecnotes.core.first_moment.first_moment`, chapter 3). This module runs
the chapter's loops over seeds: the overlap of a random direction, Stein's lemma on data, the
signal and noise of :math:`v` for :math:`u^2`, and the staircase (the sweep of the
first-moment overlap over sizes is
:func:`lecnotes.core.first_moment.simulate_first_moment_overlaps`). Every sweep returns a named
result with the seeds on axis 0, and draws seed ``s`` from the keyed stream
``stream(rng, s)`` of :mod:`lecnotes.core.validate`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.hermite import he
from lecnotes.core.overlaps import overlap
from lecnotes.core.targets import get_link, multi_index, single_index, staircase

__all__ = [
    "random_direction_overlaps",
    "sign_coefficients",
    "SteinResult",
    "stein_sweep",
    "quadratic_moment_sweep",
    "StaircaseResult",
    "staircase_sweep",
    "staircase_reduced",
    "SingleIndexReduced",
    "first_moment_reduced",
    "CoefficientDecayFit",
    "coefficient_decay_fit",
]


def random_direction_overlaps(d: int, draws: int, rng=None) -> np.ndarray:
    r""":math:`d\rho^2` for ``draws`` uniformly random directions in dimension ``d``.

    Checks {prf:ref}`lem-random-overlap` of chapter 0 (overlap of {prf:ref}`def-overlap`): a
    random direction has :math:`\mathbb E[\rho^2] = 1/d`. By rotation invariance
    :math:`w_\star = e_1`, and a random direction is a normalised standard Gaussian vector.

    Parameters
    ----------
    d : int
        Dimension.
    draws : int
        Number of random directions.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    ndarray (draws,)
        :math:`d\,\langle w, e_1\rangle^2/\|w\|^2` for each draw.
    """
    d = V.positive_int(d, "d")
    draws = V.positive_int(draws, "draws")
    W = V.generator(rng).standard_normal((draws, d))
    return d * (W[:, 0] / np.linalg.norm(W, axis=1)) ** 2


def sign_coefficients(kmax: int) -> np.ndarray:
    r"""Closed form of the normalised Hermite coefficients of :math:`\operatorname{sign}`.

    :math:`c_k = 2\varphi(0)\mathrm{He}_{k-1}(0)/\sqrt{k!}` for odd :math:`k` and 0 for even
    :math:`k` (chapter 0, {prf:ref}`def-hermite`, with :math:`\varphi` the standard
    Gaussian density).

    Parameters
    ----------
    kmax : int
        Largest degree.

    Returns
    -------
    ndarray (kmax + 1,)
        :math:`c_0, \dots, c_{k_{\max}}`.
    """
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    out = np.zeros(kmax + 1)
    for k in range(1, kmax + 1, 2):
        out[k] = 2 / math.sqrt(2 * math.pi) * he(k - 1, 0.0) / math.sqrt(math.factorial(k))
    return out


class SteinResult(NamedTuple):
    r"""Stein's lemma on data: per seed, the component of :math:`v` along and orthogonal to
    :math:`w_\star`."""

    along: np.ndarray
    """:math:`\\langle v, w_\\star\\rangle`, shape (seeds,)."""
    perp: np.ndarray
    """:math:`\\|v - \\langle v, w_\\star\\rangle w_\\star\\|^2`, shape (seeds,)."""


def stein_sweep(link, d: int, n: int, seeds: int, rng=None) -> SteinResult:
    r"""The vector :math:`v = \frac1n\sum_i y_ix_i` over seeds (chapter 0, {prf:ref}`lem-stein`).

    By Stein's lemma :math:`\mathbb E\langle v, w_\star\rangle = \mathbb E[\varphi'(G)]`, and
    the orthogonal part has :math:`\mathbb E\|v_\perp\|^2 = (d-1)\mathbb E[\varphi(G)^2]/n`.

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    d, n : int
        Dimension and number of samples.
    seeds : int
        Number of independent data sets.
    rng : Generator, int or None
        Random source (SPEC 7); seed index ``s`` draws its data from ``stream(rng, s)``.

    Returns
    -------
    SteinResult
        ``along`` and ``perp``, each of shape (seeds,).
    """
    seeds = V.positive_int(seeds, "seeds")
    d, n = V.positive_int(d, "d"), V.positive_int(n, "n")
    along, perp = np.empty(seeds), np.empty(seeds)
    for s in range(seeds):
        X, y, w = single_index(n, d, link, rng=V.stream(rng, s))
        v = X.T @ y / n
        along[s] = v @ w
        perp[s] = np.sum((v - (v @ w) * w) ** 2)
    return SteinResult(along, perp)


def quadratic_moment_sweep(d: int, n: int, reps: int, rng=None) -> SteinResult:
    r"""Signal and noise of :math:`v = \frac1n\sum_i y_ix_i` for the link :math:`u^2` (chapter 0).

    The mean of :math:`v` vanishes (:math:`c_1 = 0`), and the fluctuations set the overlap:
    :math:`n\,\mathbb E\langle v,w_\star\rangle^2 = \mathbb E[G^6] = 15` and
    :math:`n\,\mathbb E[v_j^2] = \mathbb E[G^4] = 3` for every orthogonal coordinate.

    Parameters
    ----------
    d, n : int
        Dimension and number of samples.
    reps : int
        Number of repetitions; repetition ``r`` draws from ``stream(rng, r)``.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    SteinResult
        ``along`` = :math:`n\langle v, w_\star\rangle^2` and ``perp`` =
        :math:`n\|v_\perp\|^2/(d-1)`, each of shape (reps,).
    """
    reps = V.positive_int(reps, "reps")
    d, n = V.positive_int(d, "d"), V.positive_int(n, "n")
    along, perp = np.empty(reps), np.empty(reps)
    for r in range(reps):
        X, y, w = single_index(n, d, "quadratic", rng=V.stream(rng, r))
        v = X.T @ y / n
        along[r] = n * (v @ w) ** 2
        perp[r] = n * np.sum((v - (v @ w) * w) ** 2) / (d - 1)
    return SteinResult(along, perp)


class StaircaseResult(NamedTuple):
    """First-moment overlaps with the two directions of the staircase, per seed."""

    first: np.ndarray
    r""":math:`\rho_1^2`, overlap with :math:`w_1`, shape (seeds,)."""
    second: np.ndarray
    r""":math:`(d-1)\rho_2^2`, overlap with :math:`w_2` scaled by the noise level, (seeds,)."""


def staircase_sweep(d: int, delta: int, seeds: int, rng=None) -> StaircaseResult:
    r"""The first-moment estimator on the staircase :math:`z_1 + z_1z_2` (chapter 0).

    Multi-index data ({prf:ref}`def-index-models`) with the two-level
    :func:`lecnotes.core.targets.staircase`: the estimator sees :math:`w_1` (:math:`c_1 = 1`) and
    only noise along :math:`w_2`.

    Parameters
    ----------
    d : int
        Dimension.
    delta : int
        Sample ratio, ``n = delta d``.
    seeds : int
        Number of seeds.
    rng : Generator, int or None
        Random source (SPEC 7); seed index ``s`` draws its data from ``stream(rng, s)``.

    Returns
    -------
    StaircaseResult
        ``first`` and ``second``, each of shape (seeds,).
    """
    seeds = V.positive_int(seeds, "seeds")
    d, delta = V.positive_int(d, "d", minimum=3), V.positive_int(delta, "delta")
    first, second = np.empty(seeds), np.empty(seeds)
    for s in range(seeds):
        X, y, W = multi_index(delta * d, d, staircase(2), k=2, rng=V.stream(rng, s))
        v = X.T @ y / X.shape[0]
        first[s] = overlap(v, W[0]) ** 2
        second[s] = (d - 1) * overlap(v, W[1]) ** 2
    return StaircaseResult(first, second)


def staircase_reduced(d: int, delta: int, reps: int, rng=None,
                      chunk: int = 500) -> StaircaseResult:
    r"""The first-moment estimator on the staircase by its exact reduction (chapter 0).

    {prf:ref}`prop-ch0-reduction`: with :math:`z_j = \langle w_j, x\rangle` and
    :math:`y = z_1 + z_1z_2`, the vector :math:`nv = \sum_iy_ix_i` has the coordinates
    :math:`A_1 = \sum_iy_iz_{1,i}` and :math:`A_2 = \sum_iy_iz_{2,i}` in the plane of
    :math:`w_1, w_2`, and, given the labels, an orthogonal part with squared norm
    :math:`S\chi^2_{d-2}`, :math:`S = \sum_iy_i^2`. Each replicate costs :math:`2n` Gaussian
    draws and one :math:`\chi^2` draw instead of :math:`nd`; the law of the overlaps is the
    same as for :func:`staircase_sweep`.

    Parameters
    ----------
    d : int
        Dimension (at least 3).
    delta : int
        Sample ratio, ``n = delta d``.
    reps : int
        Number of independent replicates.
    rng : Generator, int or None
        Random source (SPEC 7); block ``j`` of ``chunk`` replicates draws from
        ``stream(rng, j)``.
    chunk : int
        Replicates drawn at once (memory ``2 chunk n`` floats).

    Returns
    -------
    StaircaseResult
        ``first`` = :math:`\rho_1^2` and ``second`` = :math:`(d-1)\rho_2^2`, shape (reps,).
    """
    d = V.positive_int(d, "d", minimum=3)
    reps = V.positive_int(reps, "reps")
    n = V.positive_int(delta, "delta") * d
    chunk = V.positive_int(chunk, "chunk")
    first, second = np.empty(reps), np.empty(reps)
    for j, lo in enumerate(range(0, reps, chunk)):
        k = min(chunk, reps - lo)
        g = V.stream(rng, j)
        z1, z2 = g.standard_normal((2, k, n))
        y = z1 * (1.0 + z2)
        a1, a2, s = np.sum(y * z1, 1), np.sum(y * z2, 1), np.sum(y * y, 1)
        norm2 = a1**2 + a2**2 + s * g.chisquare(d - 2, size=k)
        first[lo:lo + k] = a1**2 / norm2
        second[lo:lo + k] = (d - 1) * a2**2 / norm2
    return StaircaseResult(first, second)


class SingleIndexReduced(NamedTuple):
    """First-moment overlaps of a single-index model by the exact reduction, per replicate."""

    rho2: np.ndarray
    r""":math:`\rho^2`, shape (reps, len(deltas))."""


def first_moment_reduced(link, d: int, deltas, reps: int, rng=None) -> SingleIndexReduced:
    r"""The overlap of :math:`v = \frac1n\sum_iy_ix_i` by the exact reduction (chapter 0).

    {prf:ref}`prop-ch0-reduction` for one direction: :math:`\rho^2 = A^2/(A^2 + S\chi^2_{d-1})`
    with :math:`A = \sum_i\varphi(G_i)G_i`, :math:`S = \sum_i\varphi(G_i)^2`, so a replicate
    costs :math:`n` Gaussian draws; the limit is {eq}`eq-ch0-first-moment-limit`.

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    d : int
        Dimension (at least 2).
    deltas : array_like
        Sample ratios; ``n = round(delta d)``.
    reps : int
        Replicates per ratio.
    rng : Generator, int or None
        Random source (SPEC 7); ratio index ``j`` draws from ``stream(rng, j)``.

    Returns
    -------
    SingleIndexReduced
    """
    f = get_link(link)
    d = V.positive_int(d, "d", minimum=2)
    reps = V.positive_int(reps, "reps")
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    out = np.empty((reps, deltas.size))
    for j, delta in enumerate(deltas):
        n = max(1, int(round(delta * d)))
        g = V.stream(rng, j)
        G = g.standard_normal((reps, n))
        y = f(G)
        a, s = np.sum(y * G, 1), np.sum(y * y, 1)
        out[:, j] = a**2 / (a**2 + s * g.chisquare(d - 1, size=reps))
    return SingleIndexReduced(out)


class CoefficientDecayFit(NamedTuple):
    r"""Least-squares fit of :math:`\log|c_k|` (see :func:`coefficient_decay_fit`)."""

    coef: np.ndarray
    """Fitted coefficients, in the order of the basis."""
    rms: float
    """Root-mean-square residual of the fit."""


def coefficient_decay_fit(c, ks, law: str = "sqrt") -> CoefficientDecayFit:
    r"""Fit the decay of Hermite coefficients :math:`|c_k|` over the degrees ``ks`` (chapter 0).

    ``law="sqrt"``: :math:`\log|c_k| = a\sqrt k + b\log k + c + e/\sqrt k`, the form for a
    link analytic in a strip (poles of :math:`\tanh` at :math:`\pm i\pi/2` give
    :math:`a = -\pi/2`, {prf:ref}`def-hermite`); ``law="geometric"``:
    :math:`\log|c_k| = ak + c`, the form for an entire link.

    Parameters
    ----------
    c : array_like
        Coefficients :math:`c_0, c_1, \dots`.
    ks : array_like of int
        Degrees to fit (non-zero coefficients).
    law : {"sqrt", "geometric"}

    Returns
    -------
    CoefficientDecayFit
    """
    c = V.finite_array(c, "c", ndim=1)
    ks_float = V.finite_array(ks, "ks", ndim=1)
    if np.any(ks_float != np.round(ks_float)):
        raise ValueError(f"ks must be integer degrees, got {ks!r}")
    ks = ks_float.astype(int)
    if ks.ndim != 1 or ks.size < 5 or ks.min() < 1 or ks.max() >= c.size:
        raise ValueError("ks must be at least 5 degrees in 1..len(c)-1")
    k = ks.astype(float)
    if law == "sqrt":
        A = np.c_[np.sqrt(k), np.log(k), np.ones_like(k), 1 / np.sqrt(k)]
    elif law == "geometric":
        A = np.c_[k, np.ones_like(k)]
    else:
        raise ValueError(f"law must be 'sqrt' or 'geometric', got {law!r}")
    y = np.log(np.abs(c[ks]))
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    return CoefficientDecayFit(coef, float(np.sqrt(np.mean((y - A @ coef) ** 2))))
