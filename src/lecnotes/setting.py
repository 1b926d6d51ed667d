r"""Chapter 0, the setting: the seed sweeps of its checks.

Single- and multi-index data come from :mod:`lecnotes.targets`, Hermite analysis from
:mod:`lecnotes.hermite` and the overlap from :mod:`lecnotes.overlaps`; the first-moment
vector :math:`v = \frac1n\sum_i y_ix_i` of chapter 0 is one matrix-vector product (its
preprocessed form is :func:`lecnotes.first_moment.first_moment`, chapter 3). This module runs
the chapter's loops over seeds: the overlap of a random direction, Stein's lemma on data, the
signal and noise of :math:`v` for :math:`u^2`, and the staircase (the sweep of the
first-moment overlap over sizes is
:func:`lecnotes.first_moment.simulate_first_moment_overlaps`). Every sweep returns a named
result with the seeds on axis 0, and draws seed ``s`` from the keyed stream
``stream(rng, s)`` of :mod:`lecnotes._validate`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import _validate as V
from .hermite import he
from .overlaps import overlap
from .targets import multi_index, single_index, staircase

__all__ = [
    "random_direction_overlaps",
    "sign_coefficients",
    "SteinResult",
    "stein_sweep",
    "quadratic_moment_sweep",
    "StaircaseResult",
    "staircase_sweep",
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
    :func:`lecnotes.targets.staircase`: the estimator sees :math:`w_1` (:math:`c_1 = 1`) and
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
    first, second = np.empty(seeds), np.empty(seeds)
    for s in range(seeds):
        X, y, W = multi_index(delta * d, d, staircase(2), k=2, rng=V.stream(rng, s))
        v = X.T @ y / X.shape[0]
        first[s] = overlap(v, W[0]) ** 2
        second[s] = (d - 1) * overlap(v, W[1]) ** 2
    return StaircaseResult(first, second)
