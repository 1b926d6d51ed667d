r"""Linear algebra: top eigenpairs (matrix-free), singular pairs, one sign rule.

:func:`top_eigenpair` is the engine of every spectral estimator (chapters 4, 5): the largest
eigenpair of a symmetric operator given by its matrix-vector product (implicitly restarted
Lanczos, ARPACK, through :func:`scipy.sparse.linalg.eigsh` on a ``LinearOperator``), with
restarts and dense fallbacks so that non-convergence never reaches the reader.
:func:`weighted_gram` forms :math:`\frac1nX^\top\mathrm{diag}(t)X` by blocks,
:func:`top_singular` and :func:`singular_values` are the singular pairs of chapters 6 and 7.
Sign convention of eigenvectors: :func:`canonical_sign` (largest entry in absolute value
positive).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh, svds

from . import _validate as V

__all__ = [
    "DENSE_MAX_D",
    "DENSE_FALLBACK_MAX_D",
    "EigenInfo",
    "canonical_sign",
    "top_eigenpair",
    "weighted_gram",
    "top_singular",
    "singular_values",
    "top_singular_vectors",
]


DENSE_MAX_D = 300
"""Below this dimension ``method="auto"`` forms D_T and calls LAPACK (faster than Lanczos)."""


DENSE_FALLBACK_MAX_D = 8000
"""Largest ``d`` for which a dense fallback is attempted (the d x d matrix takes 8 d^2 bytes)."""


@dataclass
class EigenInfo:
    """How :func:`top_eigenpair` got its answer.

    Attributes
    ----------
    method : str
        ``"dense"``, ``"lanczos"`` or ``"lanczos-restarted"``, or ``"...-unconverged"``.
    matvecs : int
        Number of operator applications (columns count one each).
    residual : float
        :math:`\\|Av-\\lambda v\\|` of the returned pair (computed with one extra product).
    attempts : list of str
        What was tried, in order (failures included).
    """

    method: str
    matvecs: int = 0
    residual: float = math.nan
    attempts: list = field(default_factory=list)


def canonical_sign(v: np.ndarray) -> np.ndarray:
    i = int(np.argmax(np.abs(v)))
    return v if v[i] >= 0 else -v


def top_eigenpair(
    matvec: Callable[[np.ndarray], np.ndarray],
    d: int,
    *,
    dense_matrix: Callable[[], np.ndarray] | None = None,
    method: str = "auto",
    tol: float = 1e-8,
    ncv: int | None = None,
    maxiter: int | None = None,
    v0=None,
    rng=None,
    warn: bool = True,
):
    r"""Largest eigenvalue and its unit eigenvector of a symmetric operator (chapters 4, 5).

    The engine behind :func:`spectral_estimator` and the partial-trace estimator of chapter 5:
    implicitly restarted Lanczos (ARPACK via :func:`scipy.sparse.linalg.eigsh` on a
    ``LinearOperator``) for the top eigenpair. If ARPACK does not converge
    (:class:`~scipy.sparse.linalg.ArpackNoConvergence`: typically a cluster of nearly equal top
    eigenvalues, as below a spectral threshold) or fails, it restarts from the best Ritz
    vector asking for the top three eigenpairs jointly in a Krylov space three times larger
    (a cluster converges jointly where one member alone can stall); if that fails too it
    falls back to the dense matrix (``dense_matrix()``, or ``d`` products with the identity)
    when ``d <= DENSE_FALLBACK_MAX_D``; as a last resort it returns the best Ritz pair and
    warns with its residual. No ARPACK exception reaches the caller.

    Parameters
    ----------
    matvec : callable
        ``v -> A v`` for ``v`` of shape ``(d,)`` (and, if possible, ``(d, r)``).
    d : int
        Dimension.
    dense_matrix : callable, optional
        Returns the dense ``d x d`` matrix (faster than ``d`` products when available).
    method : {"auto", "lanczos", "dense"}
        ``"auto"`` is dense for ``d <= DENSE_MAX_D`` (when possible) and Lanczos otherwise.
    tol : float
        ARPACK relative tolerance :math:`\|Av-\theta v\|\le\mathrm{tol}\,|\theta|`.
    ncv, maxiter : int, optional
        Krylov-space size (default 20) and maximal number of ARPACK restarts (default 40) of
        the first attempt; the second uses ``3 * ncv`` and the same ``maxiter``.
    v0 : array_like, optional
        Starting vector; by default a Gaussian vector from ``rng``.
    rng : Generator, int or None
        For the starting vector (``None``: seed 0, so that results are reproducible).
    warn : bool
        Warn (``RuntimeWarning``) if only an unconverged pair could be obtained.

    Returns
    -------
    value : float
    vector : ndarray (d,), unit norm, sign fixed so that its largest entry is positive
    info : EigenInfo
    """
    d = V.positive_int(d, "d")
    if not callable(matvec):
        raise ValueError("matvec must be a callable v -> A v")
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    tol = V.positive_float(tol, "tol")
    rng = V.generator(0 if rng is None else rng)
    info = EigenInfo(method="")
    count = [0]

    def mv(v):
        v = np.asarray(v, dtype=float)
        count[0] += 1 if v.ndim == 1 else v.shape[1]
        return np.asarray(matvec(v), dtype=float)

    def mm(V_):
        V_ = np.asarray(V_, dtype=float)
        try:
            out = mv(V_)
            if out.shape == V_.shape:
                return out
        except (ValueError, TypeError):
            pass
        return np.column_stack([mv(V_[:, j]) for j in range(V_.shape[1])])

    def dense():
        A = dense_matrix() if dense_matrix is not None else mm(np.eye(d))
        A = np.asarray(A, dtype=float)
        if A.shape != (d, d):
            raise ValueError(f"dense_matrix() must return shape ({d}, {d}), got {A.shape}")
        A = 0.5 * (A + A.T)
        w, Vec = sla.eigh(A, subset_by_index=[d - 1, d - 1], driver="evr")
        return float(w[0]), Vec[:, 0]

    def finish(val, vec, label):
        vec = vec / np.linalg.norm(vec)
        r = mv(vec) - val * vec
        info.method = label
        info.residual = float(np.linalg.norm(r))
        info.matvecs = count[0]
        return float(val), canonical_sign(vec), info

    if method == "dense" or d <= 5 or (method == "auto" and d <= DENSE_MAX_D):
        info.attempts.append("dense")
        val, vec = dense()
        return finish(val, vec, "dense")

    x0 = rng.standard_normal(d) if v0 is None else V.finite_array(v0, "v0", ndim=1)
    if x0.shape != (d,) or not np.any(x0):
        raise ValueError(f"v0 must be a non-zero vector of shape ({d},)")
    op = LinearOperator((d, d), matvec=mv, matmat=mm, dtype=float)
    # first the top eigenpair alone (fast when it is separated), then, if ARPACK stalls on
    # a near-degenerate top, the top three jointly in a larger Krylov space, from the best
    # Ritz vector; the iteration budgets keep the number of products below about 40 ncv
    ncv0 = min(d - 1, max(ncv or 20, 4))
    it0 = maxiter or 40
    best = None  # (value, vector) of the best Ritz pair seen
    plans = [(1, ncv0, it0, "lanczos"),
             (min(3, d - 2), min(d - 1, 3 * ncv0), it0, "lanczos-restarted")]
    for k, ncv_, maxiter_, label in plans:
        info.attempts.append(f"{label} (k={k}, ncv={ncv_}, maxiter={maxiter_})")
        try:
            w, Vec = eigsh(op, k=k, which="LA", ncv=ncv_, tol=tol, maxiter=maxiter_, v0=x0)
            j = int(np.argmax(w))
            return finish(w[j], Vec[:, j], label)
        except ArpackNoConvergence as err:
            info.attempts[-1] += ": no convergence"
            if err.eigenvalues is not None and len(err.eigenvalues):
                j = int(np.argmax(err.eigenvalues))
                best = (float(err.eigenvalues[j]), err.eigenvectors[:, j])
                x0 = best[1]
        except ArpackError as err:  # pragma: no cover - rare ARPACK internal errors
            info.attempts[-1] += f": {err}"
    if d <= DENSE_FALLBACK_MAX_D:
        info.attempts.append("dense fallback")
        val, vec = dense()
        return finish(val, vec, "dense-fallback")
    vec = x0 if best is None else best[1]
    vec = vec / np.linalg.norm(vec)
    val, vec, info = finish(float(vec @ mv(vec)), vec, "lanczos-unconverged")  # Rayleigh q.
    if warn:
        warnings.warn(
            f"top_eigenpair: Lanczos did not converge in dimension {d}; returning the best Ritz "
            f"pair (residual {info.residual:.2e}).",
            RuntimeWarning,
            stacklevel=2,
        )
    return val, vec, info


def weighted_gram(X, t):
    n, d = X.shape
    D = np.zeros((d, d))
    step = max(1, min(n, 2**22 // max(d, 1)))
    for s in range(0, n, step):
        B = X[s: s + step]
        D += B.T @ (t[s: s + step, None] * B)
    D /= n
    return 0.5 * (D + D.T)


def top_singular(W, k: int = 1):
    r"""The ``k`` largest singular values of ``W`` and their right singular vectors (chapter 6).

    Dense LAPACK for small matrices, Lanczos (``scipy.sparse.linalg.svds``, deterministic
    start) otherwise. Signs are fixed so that the largest entry of each vector is positive.

    Returns
    -------
    s : ndarray (k,), decreasing; V : ndarray (k, d), orthonormal rows.
    """
    W = V.finite_array(W, "W", ndim=2)
    k = V.positive_int(k, "k")
    if k > min(W.shape):
        raise ValueError(f"k = {k} exceeds min(W.shape) = {min(W.shape)}")
    if min(W.shape) <= 256 or k >= min(W.shape) - 1:
        _, s, Vt = np.linalg.svd(W, full_matrices=False)
        s, Vt = s[:k], Vt[:k]
    else:

        v0 = np.ones(min(W.shape)) / math.sqrt(min(W.shape))
        _, s, Vt = svds(W, k=k, v0=v0, tol=1e-10)
        order = np.argsort(s)[::-1]
        s, Vt = s[order], Vt[order]
    idx = np.argmax(np.abs(Vt), axis=1)
    Vt = Vt * np.sign(Vt[np.arange(k), idx])[:, None]
    return s, Vt


def singular_values(M) -> np.ndarray:
    """All singular values of a matrix, decreasing (dense LAPACK; chapter 7)."""
    M = V.finite_array(M, "M", ndim=2)
    if min(M.shape) < 1:
        raise ValueError(f"M must be non-empty, got shape {M.shape}")
    return np.linalg.svd(M, compute_uv=False)


def top_singular_vectors(M, k):
    """Top ``k`` left and right singular vectors (Lanczos, deterministic start)."""

    v0 = np.ones(min(M.shape)) / math.sqrt(min(M.shape))
    U, s, Vt = svds(M, k=k, v0=v0, tol=1e-8)
    order = np.argsort(s)[::-1]
    return U[:, order], Vt[order]
