r"""Chapter 4, the spectral estimator: second-moment estimators on data, matrix-free.

The spectral estimator with preprocessing :math:`T` (chapter 4,
{prf:ref}`def-spectral-estimator`, {eq}`eq-ch4-dt`) is the top eigenvector of

.. math:: D_T = \frac1n\sum_{i=1}^n T(y_i)\,x_ix_i^\top = \frac1n X^\top\mathrm{diag}(T(y))X,

whose mean is :math:`\mathbb E[T(Y)]\,I + \mathbb E[T(Y)\mathrm{He}_2(G)]\,w_\star w_\star^\top`.
A product :math:`D_Tv = \frac1nX^\top(T\odot Xv)` costs O(nd) and :math:`D_T` is never
formed, unless ``d`` is small (dense path: one BLAS-3 product and LAPACK).

This module holds what acts on one data set (the matrix, its top eigenpair, its spectrum, the
Davis-Kahan bound) and the basic simulation over seeds and sample ratios at one dimension
(:func:`simulate_spectral`); the sweeps over sizes that the notebook's figures and claims
read are in :mod:`lecnotes.spectral.experiments`. The eigenpair comes from
:func:`lecnotes.core.linalg.top_eigenpair` (matrix-free Lanczos with fallbacks), the
preprocessings from :mod:`lecnotes.core.preprocessing`, the exact asymptotics from
:mod:`lecnotes.spectral.theory`. Chapter 5's estimators are in
:mod:`lecnotes.partial_trace.experiments`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk as _syrk

from lecnotes.core import validate as V
from lecnotes.core.linalg import (
    DENSE_FALLBACK_MAX_D,
    DENSE_MAX_D,
    EigenResult,
    top_eigenpair,
)
from lecnotes.core.preprocessing import (
    is_family,
    label_weights,
    resolve_family,
    resolve_preprocessing,
)
from lecnotes.core.targets import get_link
from lecnotes.spectral.theory import mean_matrix_coefficients

__all__ = [
    "SPREAD_LIMIT",
    "spectral_matrix",
    "spectral_estimator",
    "spectrum",
    "simulate_spectral",
    "SpectralSimulation",
    "davis_kahan",
    "DavisKahanResult",
]


SPREAD_LIMIT = 1.0e3
"""If the negative part of the spectrum reaches beyond SPREAD_LIMIT times its positive scale,
Lanczos needs of order sqrt(spread/gap) products (e.g. T = 1 - 1/y, whose most negative values
grow like n^2): ``method="auto"`` then goes dense directly."""


def spectral_matrix(X, y, T=None) -> np.ndarray:
    r"""The dense matrix :math:`D_T=\frac1nX^\top\mathrm{diag}(T(y))X` of {eq}`eq-ch4-dt`.

    For small ``d`` (O(nd^2) time, d^2 memory); rows are accumulated in blocks so that no
    second n x d array is allocated.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    T : None, str, callable or PreprocessingFamily
        As in :func:`spectral_estimator`.

    Returns
    -------
    ndarray (d, d), symmetric.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    t = label_weights(y, T, n / d)
    return _gram(X, t)


def _heavy(t, delta) -> bool:
    """Is the negative tail of the spectrum too long for Lanczos (see SPREAD_LIMIT)?"""
    pos = max(float(np.max(t)), 0.0)
    neg = max(-float(np.min(t)), 0.0) / delta
    return neg > SPREAD_LIMIT * max(pos, 1e-300)


def spectral_estimator(X, y, T=None, *, method: str = "auto", tol: float = 1e-8,
                       v0=None) -> EigenResult:
    r"""Spectral estimator: top eigenvector and eigenvalue of :math:`D_T` (chapter 4).

    Implements {prf:ref}`def-spectral-estimator` with {eq}`eq-ch4-dt`.

    :math:`D_T=\frac1n\sum_iT(y_i)x_ix_i^\top`, used through the product
    :math:`v\mapsto\frac1nX^\top(T(y)\odot Xv)` (O(nd) per product, :math:`D_T` never formed)
    and :func:`top_eigenpair` (Lanczos with restarts and fallbacks). Dense path for
    ``d <= DENSE_MAX_D``, and also when the preprocessed labels have a negative tail so long
    that Krylov methods are hopeless (``SPREAD_LIMIT``; e.g. ``T(y) = 1 - 1/y``).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs (rows).
    y : array_like (n,)
        Labels.
    T : None, str, callable or PreprocessingFamily
        Preprocessing; ``None`` uses the raw labels, a name is looked up in
        :data:`lecnotes.core.preprocessing.PREPROCESSINGS`, a family is evaluated at ``delta =
        n/d``.
    method : {"auto", "lanczos", "dense"}
    tol : float
        Lanczos tolerance (relative residual).
    v0 : array_like, optional
        Starting vector of Lanczos (default :func:`lecnotes.core.linalg.lanczos_start`).

    Returns
    -------
    EigenResult
        ``(vector, value, info)``: :math:`\hat w` (unit norm, sign by
        :func:`lecnotes.core.linalg.canonical_sign`; only the direction matters), the largest
        eigenvalue of :math:`D_T` and the :class:`lecnotes.core.linalg.EigenInfo`.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    t = label_weights(y, T, n / d)
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    if method == "auto":
        heavy = _heavy(t, n / d) and d <= DENSE_FALLBACK_MAX_D
        method = "dense" if (d <= DENSE_MAX_D or heavy) else "lanczos"

    def matvec(v):
        return X.T @ ((t[:, None] if v.ndim == 2 else t) * (X @ v)) / n

    return top_eigenpair(
        matvec, d, dense_matrix=lambda: _gram(X, t), method=method, tol=tol, v0=v0
    )


def spectrum(X, y, T=None) -> np.ndarray:
    """All eigenvalues of :math:`D_T` in increasing order (dense; for histograms, chapter 4).

    The spectrum whose bulk {prf:ref}`prop-bulk-law` describes.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    T : None, str, callable or PreprocessingFamily
        As in :func:`spectral_estimator`.

    Returns
    -------
    ndarray (d,)
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"spectrum is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    t = label_weights(y, T, n / d)
    return sla.eigvalsh(_gram(X, t))


def simulate_spectral(preprocessings, deltas, d, seeds, link="quadratic", rng=None,
                      first_seed: int = 0) -> dict:
    r"""Squared overlap and top eigenvalue of :math:`D_T` over seeds and sample ratios (chapter 4).

    The simulations that {prf:ref}`thm-spectral-asymptotics` is compared with.

    For each seed one data set with :math:`n_{\max}=\max\delta\cdot d` samples is drawn
    (:math:`w_\star=e_1` by rotation invariance) and the estimators at smaller ``delta`` use
    its first :math:`n=\delta d` rows (nested samples). For a fixed preprocessing,
    ``d <= 2000`` and :math:`n_{\max}\ge d` the matrices are accumulated block by block, so the
    whole sweep costs one product of size :math:`n_{\max}d^2`; families (:math:`T_\delta`),
    larger ``d`` and fewer samples than dimensions use :func:`spectral_estimator` at each
    ``delta`` (matrix-free, O(nd) per product).

    Parameters
    ----------
    preprocessings : dict
        ``{label: T}`` with ``T`` as in :func:`spectral_estimator`.
    deltas : array_like
        Increasing sample ratios (``n = round(delta * d)``).
    d : int
        Dimension (>= 2).
    seeds : int
        Number of independent data sets.
    link : str or callable
    rng : Generator, int or None
        Seed ``s`` draws its data set from ``V.stream(rng, s)`` (Lanczos starts from
        :func:`lecnotes.core.linalg.lanczos_start`).
    first_seed : int
        The first seed ``s`` (default 0): seeds ``first_seed .. first_seed + seeds - 1``, so that
        a sweep can extend another one without recomputing its seeds.

    Returns
    -------
    dict
        ``{label: SpectralSimulation}``; a family :math:`T_\delta` is simulated only at the
        ``deltas >= delta_min`` where it is defined (its ``deltas`` attribute says which).
    """
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict {label: T}")
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if deltas.size == 0 or np.any(deltas <= 0) or np.any(np.diff(deltas) <= 0):
        raise ValueError("deltas must be positive and increasing")
    d = V.positive_int(d, "d", minimum=2)
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    rng = V.generator(rng)
    ns = np.maximum(1, np.round(deltas * d).astype(int))
    where = {k: np.nonzero(deltas >= resolve_family(T).delta_min)[0] if is_family(T)
             else np.arange(ns.size) for k, T in preprocessings.items()}
    if any(idx.size == 0 for idx in where.values()):
        raise ValueError("a family T_delta is defined at none of the deltas")
    rho2 = {k: np.empty((seeds, idx.size)) for k, idx in where.items()}
    tops = {k: np.empty((seeds, idx.size)) for k, idx in where.items()}
    first_seed = V.positive_int(first_seed, "first_seed", minimum=0)
    for i_s, s in enumerate(range(first_seed, first_seed + seeds)):
        X = V.stream(rng, s).standard_normal((ns[-1], d))  # seed s: its own stream
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for label, T in preprocessings.items():
            if not is_family(T) and d <= 2000 and ns[-1] >= d:
                t = label_weights(y, T, None)
                heavy = _heavy(t, ns[0] / d)
                D = np.zeros((d, d), order="F")  # upper triangle of n D_T, by blocks
                prev = 0
                for j, n in enumerate(ns):
                    _add_weighted_gram(D, X[prev:n], t[prev:n])
                    prev = n
                    A = _symmetric(D) / n
                    vec, top, _ = top_eigenpair(
                        lambda v, A=A: A @ v, d, dense_matrix=lambda A=A: A,
                        method="dense" if heavy else "lanczos",
                    )
                    rho2[label][i_s, j], tops[label][i_s, j] = vec[0] ** 2, top
            else:  # Lanczos warm-started from the previous (nested) sample size's vector
                v = None
                for i, j in enumerate(where[label]):
                    v, top, _ = spectral_estimator(X[:ns[j]], y[:ns[j]], T, v0=v)
                    rho2[label][i_s, i], tops[label][i_s, i] = v[0] ** 2, top
    return {k: SpectralSimulation(deltas[where[k]], rho2[k], tops[k]) for k in preprocessings}


def _add_weighted_gram(D, B, t):
    r"""Add the upper triangle of :math:`B^\top\mathrm{diag}(t)B` to ``D`` (Fortran order):
    two symmetric rank-k updates (BLAS ``syrk``, half the products of a general one), on the
    rows of positive and of negative weight scaled by :math:`\sqrt{|t|}`."""
    for sign in (1.0, -1.0):
        rows = sign * t > 0
        if np.any(rows):
            C = np.sqrt(sign * t[rows])[:, None] * B[rows]
            _syrk(sign, C.T, beta=1.0, c=D, overwrite_c=1)  # D += sign C^T C (in place)


def _gram(X, t):
    r""":math:`\frac1nX^\top\mathrm{diag}(t)X`, exactly symmetric, by blocks of rows (no second
    n x d array) and symmetric rank-k updates (:func:`_add_weighted_gram`)."""
    n, d = X.shape
    D = np.zeros((d, d), order="F")
    step = max(1, min(n, 2**22 // max(d, 1)))
    for s in range(0, n, step):
        _add_weighted_gram(D, X[s: s + step], t[s: s + step])
    return _symmetric(D) / n


def _symmetric(U):
    """The symmetric matrix whose upper triangle is that of ``U``."""
    A = np.triu(U)
    return A + np.triu(A, 1).T


class DavisKahanResult(NamedTuple):
    r"""The Davis-Kahan bound on one data set (:func:`davis_kahan`): ``norm``
    :math:`=\|D_T-\mathbb E[D_T]\|_{op}`, the coefficients ``beta`` and ``mean_T`` of
    :math:`\mathbb E[D_T]`, the lower ``bound`` on :math:`\rho^2` (0 when vacuous) and the
    actual ``rho2``."""

    norm: float
    beta: float
    mean_T: float
    bound: float
    rho2: float


class SpectralSimulation(NamedTuple):
    """One preprocessing in :func:`simulate_spectral`: the ``deltas`` simulated, and arrays
    (seeds, len(deltas)) of the squared overlap ``rho2`` and the top eigenvalue ``top``."""

    deltas: np.ndarray
    rho2: np.ndarray
    top: np.ndarray


def davis_kahan(X, y, T, w_star, link="quadratic") -> DavisKahanResult:
    r"""The Davis-Kahan bound against the actual overlap, on one data set (chapter 4).

    With :math:`\Delta=D_T-\mathbb E[D_T]`, :math:`\mathbb E[D_T]=\mathbb E[T]I+\beta
    w_\star w_\star^\top` (:func:`lecnotes.spectral.theory.mean_matrix_coefficients`), the
    :math:`\sin\theta` theorem gives :math:`\sin\theta\le\|\Delta\|/(\beta-\|\Delta\|)`
    for the top eigenvector when :math:`\|\Delta\|<\beta` ({prf:ref}`prop-davis-kahan`,
    {eq}`eq-ch4-davis-kahan`), i.e. :math:`\rho^2\ge1-\|\Delta\|^2/(\beta-\|\Delta\|)^2`,
    and nothing when :math:`\|\Delta\|\ge\beta/2`. Dense (``d <= 2000``): one eigendecomposition.

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing (as in :func:`spectral_estimator`; its mean must exist)
    w_star : array (d,)
    link : str or callable, used for the population mean

    Returns
    -------
    DavisKahanResult
    """

    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > 2000:
        raise ValueError(f"davis_kahan is dense: d must be <= 2000, got {d}")
    w = V.finite_array(w_star, "w_star", ndim=1)
    if w.shape != (d,) or not np.any(w):
        raise ValueError(f"w_star must be a non-zero vector of shape ({d},)")
    w = w / np.linalg.norm(w)
    Tc = resolve_preprocessing(T, n / d)
    mean_T, beta = mean_matrix_coefficients(link, Tc)
    D = _gram(X, label_weights(y, Tc, n / d))
    ev, vec = sla.eigh(D)
    rho2 = float((vec[:, -1] @ w) ** 2)
    Delta = D - mean_T * np.eye(d) - beta * np.outer(w, w)
    dev = sla.eigvalsh(Delta)
    norm = float(max(abs(dev[0]), abs(dev[-1])))
    if 2 * norm < beta:
        bound = 1.0 - (norm / (beta - norm)) ** 2
    else:
        bound = 0.0
    return DavisKahanResult(norm, beta, mean_T, float(bound), rho2)
