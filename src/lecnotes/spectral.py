r"""Chapter 4, spectral estimators: second-moment estimators, matrix-free.

The spectral estimator with preprocessing :math:`T` (chapter 4, eq. (D_T)) is the top
eigenvector of

.. math:: D_T = \frac1n\sum_{i=1}^n T(y_i)\,x_ix_i^\top = \frac1n X^\top\mathrm{diag}(T(y))X,

whose mean is :math:`\mathbb E[T(Y)]\,I + \mathbb E[T(Y)\mathrm{He}_2(G)]\,w_\star w_\star^\top`.
A product :math:`D_Tv = \frac1nX^\top(T\odot Xv)` costs O(nd) and :math:`D_T` is never
formed, unless ``d`` is small (dense path: one BLAS-3 product and LAPACK).

The eigenpair comes from :func:`lecnotes.linalg.top_eigenpair` (matrix-free Lanczos with
fallbacks), the preprocessings from :mod:`lecnotes.preprocessing`, the exact asymptotics from
:mod:`lecnotes.spectral_theory`. Chapter 5's estimators are in :mod:`lecnotes.partial_trace`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from . import _validate as V
from .linalg import DENSE_FALLBACK_MAX_D, DENSE_MAX_D, top_eigenpair, weighted_gram
from .preprocessing import is_family, label_weights, resolve_preprocessing
from .spectral_theory import mean_matrix_coefficients
from .targets import get_link

__all__ = [
    "SPREAD_LIMIT",
    "spectral_matrix",
    "spectral_estimator",
    "spectrum",
    "simulate_spectral",
    "davis_kahan",
]


SPREAD_LIMIT = 1.0e3
"""If the negative part of the spectrum reaches beyond SPREAD_LIMIT times its positive scale,
Lanczos needs of order sqrt(spread/gap) products (e.g. T = 1 - 1/y, whose most negative values
grow like n^2): ``method="auto"`` then goes dense directly."""


def spectral_matrix(X, y, T=None) -> np.ndarray:
    r"""The dense matrix :math:`D_T=\frac1nX^\top\mathrm{diag}(T(y))X` (chapter 4, eq. (D_T)).

    For small ``d`` (O(nd^2) time, d^2 memory); rows are accumulated in blocks so that no
    second n x d array is allocated. ``T`` as in :func:`spectral_estimator`.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    t = label_weights(y, T, n / d)
    return weighted_gram(X, t)


def _heavy(t, delta) -> bool:
    """Is the negative tail of the spectrum too long for Lanczos (see SPREAD_LIMIT)?"""
    pos = max(float(np.max(t)), 0.0)
    neg = max(-float(np.min(t)), 0.0) / delta
    return neg > SPREAD_LIMIT * max(pos, 1e-300)


def spectral_estimator(X, y, T=None, *, method: str = "auto", tol: float = 1e-8, rng=None,
                       return_info: bool = False):
    r"""Spectral estimator: top eigenvector and eigenvalue of :math:`D_T` (chapter 4).

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
        :data:`PREPROCESSINGS`, a family is evaluated at ``delta = n/d``.
    method : {"auto", "lanczos", "dense"}
    tol : float
        Lanczos tolerance (relative residual).
    rng : Generator, int or None
        Starting vector of Lanczos (default: seed 0, reproducible).
    return_info : bool
        Also return the :class:`EigenInfo`.

    Returns
    -------
    w_hat : ndarray (d,), unit norm (sign: largest entry positive; only the direction matters)
    top : float, the largest eigenvalue of :math:`D_T`
    info : EigenInfo, if ``return_info``
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

    val, vec, info = top_eigenpair(
        matvec, d, dense_matrix=lambda: weighted_gram(X, t), method=method, tol=tol, rng=rng
    )
    return (vec, val, info) if return_info else (vec, val)


def spectrum(X, y, T=None) -> np.ndarray:
    """All eigenvalues of :math:`D_T` in increasing order (dense; for histograms, chapter 4)."""
    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"spectrum is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    t = label_weights(y, T, n / d)
    return sla.eigvalsh(weighted_gram(X, t))


def simulate_spectral(preprocessings, deltas, d, seeds, link="quadratic", rng=0):
    r"""Squared overlap and top eigenvalue of :math:`D_T` over seeds and sample ratios (chapter 4).

    For each seed one data set with :math:`n_{\max}=\max\delta\cdot d` samples is drawn
    (:math:`w_\star=e_1` by rotation invariance) and the estimators at smaller ``delta`` use
    its first :math:`n=\delta d` rows (nested samples). For a fixed preprocessing and
    ``d <= 2000`` the matrices are accumulated block by block, so the whole sweep costs one
    product of size :math:`n_{\max}d^2`; families (:math:`T_\delta`) and larger ``d`` use
    :func:`spectral_estimator` at each ``delta``.

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

    Returns
    -------
    dict ``{label: {"rho2": (seeds, len(deltas)), "top": (seeds, len(deltas))}}``
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
    out = {k: {"rho2": np.empty((seeds, ns.size)), "top": np.empty((seeds, ns.size))}
           for k in preprocessings}
    for s in range(seeds):
        X = rng.standard_normal((ns[-1], d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for label, T in preprocessings.items():
            res = out[label]
            if not is_family(T) and d <= 2000:
                t = label_weights(y, T, None)
                heavy = _heavy(t, ns[0] / d)
                D = np.zeros((d, d))
                prev = 0
                for j, n in enumerate(ns):
                    B = X[prev:n]
                    D += B.T @ (t[prev:n, None] * B)
                    prev = n
                    A = 0.5 * (D + D.T) / n
                    top, vec, _ = top_eigenpair(
                        lambda v, A=A: A @ v, d, dense_matrix=lambda A=A: A,
                        method="dense" if heavy else "lanczos", rng=s,
                    )
                    res["rho2"][s, j] = vec[0] ** 2
                    res["top"][s, j] = top
            else:
                for j, n in enumerate(ns):
                    v, top = spectral_estimator(X[:n], y[:n], T, rng=s)
                    res["rho2"][s, j] = v[0] ** 2
                    res["top"][s, j] = top
    return out


def davis_kahan(X, y, T, w_star, link="quadratic") -> dict:
    r"""The Davis-Kahan bound against the actual overlap, on one data set (chapter 4).

    With :math:`\Delta=D_T-\mathbb E[D_T]`, :math:`\mathbb E[D_T]=\mathbb E[T]I+\beta
    w_\star w_\star^\top` (:func:`lecnotes.spectral_theory.mean_matrix_coefficients`), the
    :math:`\sin\theta` theorem gives :math:`\sin\theta\le\|\Delta\|/(\beta-\|\Delta\|)`
    for the top eigenvector when :math:`\|\Delta\|<\beta` (chapter 4, proposition
    "Davis-Kahan"), i.e. :math:`\rho^2\ge1-\|\Delta\|^2/(\beta-\|\Delta\|)^2`, and nothing
    when :math:`\|\Delta\|\ge\beta/2`. Dense (``d <= 2000``): one eigendecomposition.

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing (as in :func:`spectral_estimator`; its mean must exist)
    w_star : array (d,)
    link : str or callable, used for the population mean

    Returns
    -------
    dict with ``norm`` (:math:`\|\Delta\|_{op}`), ``beta``, ``mean_T``, ``bound`` (the lower
    bound on :math:`\rho^2`, 0 when vacuous) and ``rho2`` (the actual squared overlap).
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
    mean_T, beta = mean_matrix_coefficients(Tc, link)
    D = weighted_gram(X, label_weights(y, Tc, n / d))
    ev, vec = sla.eigh(D)
    rho2 = float((vec[:, -1] @ w) ** 2)
    Delta = D - mean_T * np.eye(d) - beta * np.outer(w, w)
    dev = sla.eigvalsh(Delta)
    norm = float(max(abs(dev[0]), abs(dev[-1])))
    if 2 * norm < beta:
        bound = 1.0 - (norm / (beta - norm)) ** 2
    else:
        bound = 0.0
    return {"norm": norm, "beta": beta, "mean_T": mean_T, "bound": float(bound), "rho2": rho2}
