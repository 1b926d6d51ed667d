r"""Chapter 5, the estimators beyond second moments.

The partial trace of the empirical Hermite tensor (:func:`partial_trace_estimator`,
matrix-free, ``k = 2, 4``, on the Lanczos engine :func:`lecnotes.core.linalg.top_eigenpair`;
:func:`partial_trace_matrix` for small ``d``), and the odd-degree vector contraction and
degree-3 unfolding (:func:`vector_contraction_estimator`, :func:`unfolding_estimator`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import get_blas_funcs

from lecnotes.core import validate as V
from lecnotes.core.hermite_tensors import (
    check_even_degree,
    he3_unfolding_gram,
    he3_vector_contraction,
    he_partial_trace,
)
from lecnotes.core.linalg import (
    DENSE_FALLBACK_MAX_D,
    DENSE_MAX_D,
    EigenInfo,
    EigenResult,
    canonical_sign,
    top_eigenpair,
    weighted_gram,
)
from lecnotes.core.preprocessing import label_weights

__all__ = [
    "gram_upper",
    "symmetric_from_upper",
    "extreme_eigenpair",
    "partial_trace_matrix",
    "partial_trace_estimator",
    "VectorEstimate",
    "vector_contraction_estimator",
    "unfolding_estimator",
]


def gram_upper(C, B, w):
    r"""``C`` plus the upper triangle of :math:`B^\top\mathrm{diag}(w)B` (chapter 5's sweeps).

    Two symmetric rank-k updates (BLAS ``syrk``, in the precision of ``B``), for the rows
    with :math:`w>0` and, subtracted, :math:`w<0`, each row scaled by :math:`\sqrt{|w|}`:
    fewer operations than a general product. Only the upper triangle of the result holds.

    Parameters
    ----------
    C : ndarray (d, d), Fortran order, the dtype of ``B``
        The accumulated upper triangle (updated in place when possible).
    B : ndarray (k, d)
    w : ndarray (k,)

    Returns
    -------
    ndarray (d, d)
    """
    syrk = get_blas_funcs("syrk", (B,))
    for sign, rows in ((1.0, w > 0), (-1.0, w < 0)):
        if np.any(rows):
            P = B[rows] * np.sqrt(np.abs(w[rows])).astype(B.dtype)[:, None]
            C = syrk(sign, P.T, beta=1.0, c=C, trans=0, lower=0, overwrite_c=1)
    return C


def symmetric_from_upper(U):
    """The symmetric matrix whose upper triangle is that of ``U`` (after :func:`gram_upper`).

    Parameters
    ----------
    U : ndarray (d, d)

    Returns
    -------
    ndarray (d, d)
    """
    return np.triu(U) + np.triu(U, 1).T


def _tensor_weights(y, T, delta) -> np.ndarray:
    """Chapter 5 default: ``T = None`` centres the labels by their sample mean."""
    if T is None:
        return y - float(np.mean(y))
    return label_weights(y, T, delta)


def _partial_trace_dense(X, t, k) -> np.ndarray:
    n, d = X.shape
    if k == 2:
        return weighted_gram(X, t) - float(np.mean(t)) * np.eye(d)
    sq = np.einsum("ij,ij->i", X, X)
    M = weighted_gram(X, t * (sq - d - 4.0))
    M -= float(np.mean(t * (sq - d - 2.0))) * np.eye(d)
    return M


def extreme_eigenpair(A, which: str = "magnitude") -> tuple[float, np.ndarray]:
    r"""An extreme eigenpair of a symmetric matrix: largest modulus, top or bottom (chapter 5).

    The eigenvector that defines the partial-trace estimator ({prf:ref}`def-ch5-partial-trace`):
    the sign of :math:`\lambda_k(T)` is not known in advance, so by default the eigenvalue of
    largest modulus is chosen. Dense (``scipy.linalg.eigh`` of the symmetric part).

    Parameters
    ----------
    A : array_like (d, d)
        A finite square matrix (symmetrised before the eigendecomposition).
    which : {"magnitude", "top", "bottom"}
        Eigenvalue of largest modulus, largest, or smallest.

    Returns
    -------
    tuple
        ``(value, vector)``: the eigenvalue (float) and a unit eigenvector.
    """
    A = V.finite_array(A, "A", ndim=2)
    if A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"A must be a non-empty square matrix, got shape {A.shape}")
    if which not in ("magnitude", "top", "bottom"):
        raise ValueError(f"which must be 'magnitude', 'top' or 'bottom', got {which!r}")
    w, Vec = sla.eigh(0.5 * (A + A.T))
    j = {"top": -1, "bottom": 0}.get(which, -1 if abs(w[-1]) >= abs(w[0]) else 0)
    return float(w[j]), Vec[:, j]


def partial_trace_matrix(X, y, k: int = 4, T=None) -> np.ndarray:
    r"""The dense partial-trace matrix :math:`M_k` of {eq}`eq-ch5-mk`, for small ``d``.

    :math:`M_k=\frac1n\sum_iT(y_i)\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]`
    ({prf:ref}`def-ch5-partial-trace`); for ``k = 4`` ({eq}`eq-ch5-m4`),
    :math:`M_4=\frac1n\sum_iT_i\big[(\|x_i\|^2-d-4)x_ix_i^\top-(\|x_i\|^2-d-2)I\big]`.
    O(nd^2) time, d^2 memory (use :func:`partial_trace_estimator` for large ``d``).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    k : {2, 4}
    T : None, str or callable
        As in :func:`partial_trace_estimator` (``None``: centred labels).

    Returns
    -------
    ndarray (d, d), symmetric.
    """
    X, y = V.data_pair(X, y)
    k = check_even_degree(k)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"partial_trace_matrix is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    return _partial_trace_dense(X, _tensor_weights(y, T, n / d), k)


def partial_trace_estimator(X, y, k: int = 4, T=None, *, which: str = "magnitude",
                            method: str = "auto", tol: float = 1e-8) -> EigenResult:
    r"""Partial-trace estimator: an extreme eigenvector of :math:`M_k` (chapter 5).

    Implements {prf:ref}`def-ch5-partial-trace` ({eq}`eq-ch5-mk`; ``k = 4``: {eq}`eq-ch5-m4`).

    :math:`M_k=\frac1n\sum_iT(y_i)\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]` has mean
    :math:`\lambda_k(T)\,w_\star w_\star^\top` with :math:`\lambda_k(T)=\mathbb
    E[T(Y)\mathrm{He}_k(G)]` ({prf:ref}`prop-ch5-mean`), whose sign is not known in advance: by
    default the eigenvector of the eigenvalue of largest modulus is returned. The matrix is
    never formed for large ``d``: Lanczos (:func:`top_eigenpair`) runs on the product of
    :func:`lecnotes.core.hermite_tensors.he_partial_trace`, two products with ``X``, O(nd) time and
    memory per product and no :math:`d^k` array ({ref}`sec-ch5-scale`). ``k = 2`` is the
    second-moment matrix of chapter 4 minus :math:`\bar T I`.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    k : {2, 4}
        Even Hermite degree (the generative exponent of the link, for the best rate).
    T : None, str, callable or PreprocessingFamily
        Label preprocessing; ``None`` (default) centres the labels,
        :math:`T(y)=y-\bar y` (centring removes the variance of :math:`\mathbb E[T]` times a
        mean-zero tensor and leaves :math:`\lambda_k(T)` unchanged).
    which : {"magnitude", "top", "bottom"}
        Eigenvalue of largest modulus, largest, or smallest.
    method : {"auto", "lanczos", "dense"}
        ``"auto"`` is dense for ``d <= DENSE_MAX_D``.
    tol : float
        Lanczos tolerance.

    Returns
    -------
    EigenResult
        ``(vector, value, info)``: :math:`\hat w` (unit norm, sign by
        :func:`lecnotes.core.linalg.canonical_sign`), the chosen eigenvalue of :math:`M_k` (signed)
        and the :class:`lecnotes.core.linalg.EigenInfo` of the chosen end of the spectrum (Lanczos
        starts from :func:`lecnotes.core.linalg.lanczos_start`).
    """
    X, y = V.data_pair(X, y)
    k = check_even_degree(k)
    if which not in ("magnitude", "top", "bottom"):
        raise ValueError(f"which must be 'magnitude', 'top' or 'bottom', got {which!r}")
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    n, d = X.shape
    if d < 2:
        raise ValueError("the partial-trace estimator needs d >= 2")
    t = _tensor_weights(y, T, n / d)
    if method == "auto":
        method = "dense" if d <= DENSE_MAX_D else "lanczos"
    dense_matrix = functools.cache(lambda: _partial_trace_dense(X, t, k))
    if method == "dense":
        val, vec = extreme_eigenpair(dense_matrix(), which)
        info = EigenInfo(method="dense", matvecs=0, residual=0.0, attempts=["dense"])
        return EigenResult(canonical_sign(vec), val, info)

    results = []
    for sign in ([1.0] if which == "top" else [-1.0] if which == "bottom" else [1.0, -1.0]):
        vec, val, info = top_eigenpair(
            lambda v, s=sign: s * he_partial_trace(X, t, v, k), d,
            dense_matrix=lambda s=sign: s * dense_matrix(), method="lanczos", tol=tol,
        )
        results.append(EigenResult(vec, sign * val, info))
    return max(results, key=lambda r: abs(r.value))


class VectorEstimate(NamedTuple):
    """``vector`` (unit, sign by :func:`lecnotes.core.linalg.canonical_sign`) and the ``norm`` of
    the contraction before normalisation (:func:`vector_contraction_estimator`)."""

    vector: np.ndarray
    norm: float


def vector_contraction_estimator(X, y, T=None) -> VectorEstimate:
    r"""The odd-degree (k = 3) partial trace down to a vector, {eq}`eq-ch5-vector-contraction`.

    :math:`v=\frac1n\sum_iT(y_i)(\|x_i\|^2-d-2)\,x_i`
    (:func:`lecnotes.core.hermite_tensors.he3_vector_contraction`), with mean
    :math:`\lambda_3(T)w_\star`; its noise has squared norm about :math:`2d^2\,\mathbb
    E[T^2]/n`, so it needs :math:`n` of order :math:`d^2` ({eq}`eq-ch5-vector-limit`). O(nd).

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing as in :func:`partial_trace_estimator` (default: centred labels)

    Returns
    -------
    VectorEstimate
        ``(vector, norm)``: the unit direction (sign by
        :func:`lecnotes.core.linalg.canonical_sign`) and the norm of ``v``.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    v = he3_vector_contraction(X, _tensor_weights(y, T, n / d))
    norm = float(np.linalg.norm(v))
    if norm == 0:
        raise ValueError("the contraction vanishes (constant preprocessed labels?)")
    return VectorEstimate(canonical_sign(v / norm), norm)


def unfolding_estimator(X, y, T=None, *, diagonal: bool = False) -> EigenResult:
    r"""Degree-3 tensor unfolding: top left singular vector of the unfolding (chapter 5).

    The unfolding estimator of {ref}`sec-ch5-odd-degree`.

    The empirical tensor :math:`\hat{\mathcal T}=\frac1n\sum_iT(y_i)\mathrm{He}_3(x_i)`,
    unfolded into a :math:`d\times d^2` matrix, has mean :math:`\lambda_3w_\star(w_\star\otimes
    w_\star)^\top`; its top left singular vector is the top eigenvector of the Gram matrix
    :math:`\hat{\mathcal T}_{(1)}\hat{\mathcal T}_{(1)}^\top`, computed without the terms
    ``i = j`` (:func:`lecnotes.core.hermite_tensors.he3_unfolding_gram`; they add a bias of norm
    of order
    :math:`d^2/n`). This is the spectral method of tensor PCA (Montanari-Richard; Hopkins et al.):
    it needs :math:`n` of order :math:`d^{3/2}`, against :math:`d^2` for the vector
    contraction. O(n^2 d) time; dense eigensolver (``d <= DENSE_FALLBACK_MAX_D``).

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing as in :func:`partial_trace_estimator` (default: centred labels)
    diagonal : bool
        Keep the terms ``i = j`` (for comparison).

    Returns
    -------
    EigenResult
        ``(vector, value, info)``: the unit direction (sign by
        :func:`lecnotes.core.linalg.canonical_sign`), the top eigenvalue of the Gram matrix and a
        dense :class:`lecnotes.core.linalg.EigenInfo`.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"unfolding_estimator is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    U = he3_unfolding_gram(X, _tensor_weights(y, T, n / d), diagonal=diagonal)
    w, Vec = sla.eigh(U, subset_by_index=[d - 1, d - 1])
    info = EigenInfo(method="dense", matvecs=0, residual=0.0, attempts=["dense"])
    return EigenResult(canonical_sign(Vec[:, 0]), float(w[0]), info)
