r"""Hermite tensors and their partial traces, matrix-free (chapter 5).

The empirical Hermite tensor of degree :math:`k` of the inputs, its partial traces applied to
a vector without ever forming a :math:`d^k` array (:func:`he4_partial_trace`,
:func:`he_partial_trace`), the degree-3 vector contraction and the Gram matrix of the
degree-3 unfolding. Conventions as in :mod:`lecnotes.core.hermite`.
"""

from __future__ import annotations

import numpy as np

from lecnotes.core import validate as V

__all__ = [
    "check_even_degree",
    "hermite_tensor",
    "he4_partial_trace",
    "he_partial_trace",
    "he3_vector_contraction",
    "he3_unfolding_gram",
]


def check_even_degree(k) -> int:
    """The degree ``k`` of an even partial trace, checked: 2 or 4 (chapter 5).

    Parameters
    ----------
    k : int

    Returns
    -------
    int
    """
    k = V.positive_int(k, "k")
    if k not in (2, 4):
        raise ValueError(
            f"k must be 2 or 4 (the even degrees implemented), got {k}; odd degrees are "
            "contracted to a vector or unfolded (he3_vector_contraction, he3_unfolding_gram)"
        )
    return k


def _sq_norms(X) -> np.ndarray:
    return np.einsum("ij,ij->i", X, X)


def _weighted_product(X, a, v) -> np.ndarray:
    """:math:`X^\\top(a\\odot Xv)` for ``v`` of shape (d,) or (d, r)."""
    Xv = X @ v
    return X.T @ (a[:, None] * Xv if v.ndim == 2 else a * Xv)


def hermite_tensor(x, k: int) -> np.ndarray:
    r"""The explicit Hermite tensor :math:`\mathrm{He}_k(x)\in(\mathbb R^d)^{\otimes k}`.

    {prf:ref}`def-ch5-hermite-tensor`, recursion {eq}`eq-ch5-hermite-recursion`:
    :math:`\mathrm{He}_{k+1}(x)_{i_0\dots i_k} = x_{i_0}\mathrm{He}_k(x)_{i_1\dots i_k} -
    \sum_{j=1}^{k}\delta_{i_0 i_j}\mathrm{He}_{k-1}(x)_{i_1\dots\hat{i_j}\dots i_k}`,
    so that :math:`\langle \mathrm{He}_k(x), w^{\otimes k}\rangle =
    \mathrm{He}_k(\langle w,x\rangle)` for unit ``w``. It has ``d**k`` entries: use it for
    teaching and tests with small ``d`` only ({prf:ref}`lem-ch5-hermite-tensor`);
    :func:`he4_partial_trace` contracts without forming it.

    Parameters
    ----------
    x : array_like, shape (d,)
    k : int, 0 <= k <= 6

    Returns
    -------
    ndarray of shape ``(d,) * k``.
    """
    x = V.finite_array(x, "x", ndim=1)
    k = V.positive_int(k, "k", minimum=0)
    d = x.shape[0]
    if d < 1:
        raise ValueError("x must have at least one entry")
    if k > 6 or d**k > 5_000_000:
        raise ValueError(
            f"hermite_tensor forms d**k = {d}**{k} entries; it is meant for small d and k <= 6"
        )
    eye = np.eye(d)
    prev, cur = np.ones(()), x.copy()
    if k == 0:
        return prev
    for m in range(1, k):
        # He_{m+1}[i0, i1..im] = x[i0] He_m[i1..im] - sum_j delta[i0, ij] He_{m-1}[rest]
        new = np.multiply.outer(x, cur)
        for j in range(m):
            term = np.multiply.outer(eye, prev)  # indices (i0, ij, rest...)
            term = np.moveaxis(term, 1, j + 1)
            new = new - term
        prev, cur = cur, new
    return cur


def he4_partial_trace(X, weights, v) -> np.ndarray:
    r"""Matrix-vector product with the partial trace of the degree-4 Hermite tensor (chapter 5).

    For :math:`M = \frac1n\sum_i T_i \sum_j \mathrm{He}_4(x_i)_{\cdot\cdot jj}` the identity
    :math:`\sum_j \mathrm{He}_4(x)_{abjj} = (\|x\|^2 - d - 4)x_ax_b - (\|x\|^2-d-2)\delta_{ab}`
    ({eq}`eq-ch5-trace-identity`, {prf:ref}`prop-ch5-degree4`) gives

    .. math:: Mv = \frac1n X^\top\big(T\odot(\|x_i\|^2-d-4)\odot Xv\big)
                   - \Big(\frac1n\sum_i T_i(\|x_i\|^2-d-2)\Big)v,

    two matrix-vector products, O(nd) time and memory, no :math:`d^4` array.

    Parameters
    ----------
    X : array_like, shape (n, d)
    weights : array_like, shape (n,)
        The preprocessed labels :math:`T(y_i)`.
    v : array_like, shape (d,) or (d, r)

    Returns
    -------
    ndarray shaped like ``v``.
    """
    X, weights = V.data_pair(X, weights)
    n, d = X.shape
    v = _check_vector(v, d)
    sq = _sq_norms(X)
    a = weights * (sq - d - 4.0) / n
    c = np.sum(weights * (sq - d - 2.0)) / n
    return _weighted_product(X, a, v) - c * v


def _check_vector(v, d):
    v = V.finite_array(v, "v")
    if v.ndim not in (1, 2) or v.shape[0] != d:
        raise ValueError(f"v must have shape ({d},) or ({d}, r), got {v.shape}")
    return v


def he_partial_trace(X, weights, v, k: int = 4) -> np.ndarray:
    r"""Product with the partial trace :math:`M_k` of the empirical Hermite tensor (chapter 5).

    {prf:ref}`def-ch5-partial-trace`, {eq}`eq-ch5-mk`:
    :math:`M_k=\frac1n\sum_iT_i\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]`,
    the degree-``k`` Hermite tensor with :math:`(k-2)/2` pairs of indices traced out, so that
    :math:`\mathbb E[M_k]=\mathbb E[T(Y)\mathrm{He}_k(G)]\,w_\star w_\star^\top`. For
    ``k = 2`` nothing is traced, :math:`\mathrm{He}_2(x)=xx^\top-I` and
    :math:`M_2v=\frac1nX^\top(T\odot Xv)-\bar T v`; for ``k = 4`` see
    :func:`he4_partial_trace`. Two products with ``X``: O(nd) time and memory, no
    :math:`d^k` array.

    Parameters
    ----------
    X : array_like, shape (n, d)
    weights : array_like, shape (n,)
        The preprocessed labels :math:`T(y_i)`.
    v : array_like, shape (d,) or (d, r)
    k : {2, 4}
        Even degree. (Odd degrees contract to a vector or are unfolded: see
        :func:`he3_vector_contraction` and :func:`he3_unfolding_gram`.)

    Returns
    -------
    ndarray shaped like ``v``.
    """
    if check_even_degree(k) == 4:
        return he4_partial_trace(X, weights, v)
    X, weights = V.data_pair(X, weights)
    n, d = X.shape
    v = _check_vector(v, d)
    return _weighted_product(X, weights / n, v) - float(np.mean(weights)) * v


def he3_vector_contraction(X, weights) -> np.ndarray:
    r"""The degree-3 Hermite tensor traced down to a vector, {eq}`eq-ch5-vector-contraction`.

    :math:`\sum_j\mathrm{He}_3(x)_{ajj}=(\|x\|^2-d-2)\,x_a`, so

    .. math:: v=\frac1n\sum_iT_i\,\mathrm{He}_3(x_i)[I]=\frac1n\sum_iT_i(\|x_i\|^2-d-2)\,x_i,

    whose mean is :math:`\mathbb E[T(Y)\mathrm{He}_3(G)]\,w_\star`. O(nd).

    Parameters
    ----------
    X : array_like, shape (n, d)
    weights : array_like, shape (n,)

    Returns
    -------
    ndarray, shape (d,)
    """
    X, weights = V.data_pair(X, weights)
    n, d = X.shape
    return X.T @ (weights * (_sq_norms(X) - d - 2.0)) / n


def he3_unfolding_gram(X, weights, diagonal: bool = False, block: int = 2048) -> np.ndarray:
    r"""Gram matrix of the :math:`d\times d^2` unfolding of the empirical degree-3 tensor.

    Chapter 5, {ref}`sec-ch5-odd-degree` (the unfolding). With
    :math:`\hat{\mathcal T}=\frac1n\sum_iT_i\mathrm{He}_3(x_i)`
    and :math:`\hat{\mathcal T}_{(1)}` its unfolding into a :math:`d\times d^2` matrix, returns
    :math:`U=\frac1{n^2}\sum_{i\neq j}T_iT_j\,A(x_i,x_j)` (the terms ``i = j`` are dropped
    unless ``diagonal``), where
    :math:`A(u,v)_{ab}=\sum_{c,e}\mathrm{He}_3(u)_{ace}\mathrm{He}_3(v)_{bce}`, that is

    .. math:: A(u,v)=\big(\langle u,v\rangle^2-\|u\|^2-\|v\|^2+d+4\big)uv^\top+2vu^\top
              -2\langle u,v\rangle(uu^\top+vv^\top)+2\langle u,v\rangle I .

    With ``diagonal=True`` it is :math:`\hat{\mathcal T}_{(1)}\hat{\mathcal T}_{(1)}^\top`.
    Its mean (without the diagonal) is :math:`\frac{n-1}n\lambda_3^2w_\star w_\star^\top`,
    :math:`\lambda_3=\mathbb E[T(Y)\mathrm{He}_3(G)]`. Computed through the kernel
    :math:`K=XX^\top` in blocks of rows: O(n^2 d) time, O(block n + d^2) memory, and no
    :math:`d^3` array.

    Parameters
    ----------
    X : array_like, shape (n, d)
    weights : array_like, shape (n,)
    diagonal : bool
        Keep the terms ``i = j`` (they add a large, nearly isotropic bias).
    block : int
        Rows of the kernel held at once.

    Returns
    -------
    ndarray, shape (d, d), symmetric.
    """
    X, t = V.data_pair(X, weights)
    block = V.positive_int(block, "block")
    n, d = X.shape
    sq = _sq_norms(X)
    m = X.T @ t
    S = np.zeros((d, d))  # X^T [ (t t^T) o (K^2 - s_i - s_j + d + 4) ] X
    kt = np.empty(n)  # (K t)_i
    for s0 in range(0, n, block):
        K = X[s0: s0 + block] @ X.T  # (b, n)
        kt[s0: s0 + block] = K @ t
        C = K * K
        C -= sq[s0: s0 + block, None]
        C -= sq[None, :]
        C += d + 4.0
        C *= t[s0: s0 + block, None] * t[None, :]
        S += X[s0: s0 + block].T @ (C @ X)
    U = S + 2.0 * np.outer(m, m)
    U -= 4.0 * (X.T @ ((t * kt)[:, None] * X))
    U += 2.0 * float(m @ m) * np.eye(d)
    if not diagonal:  # A(u, u) = (s^2 - 6 s + d + 6) u u^T + 2 s I
        U -= X.T @ ((t * t * (sq * sq - 6.0 * sq + d + 6.0))[:, None] * X)
        U -= 2.0 * float(np.sum(t * t * sq)) * np.eye(d)
    U /= n * n
    return 0.5 * (U + U.T)
