r"""Hermite polynomials, Gaussian expectations and Hermite coefficients (chapters 0, 2, 5).

Conventions (book, *Notation*): :math:`G\sim N(0,1)`; the probabilists' Hermite polynomials
:math:`\mathrm{He}_k` satisfy :math:`\mathbb E[\mathrm{He}_j(G)\mathrm{He}_k(G)] = k!\,[j=k]`;
the normalised ones are :math:`h_k = \mathrm{He}_k/\sqrt{k!}`, an orthonormal basis of
:math:`L^2(\gamma)`. A function :math:`f\in L^2(\gamma)` expands as

.. math:: f = \sum_k c_k h_k = \sum_k \frac{\lambda_k}{k!}\mathrm{He}_k,\qquad
          c_k = \mathbb E[f(G) h_k(G)],\quad \lambda_k = \mathbb E[f(G)\mathrm{He}_k(G)]
          = \sqrt{k!}\,c_k.

Gaussian expectations are computed by adaptive Gauss-Legendre quadrature on a truncated line
(:func:`gaussian_expectation`): the panels are bisected until two rules agree, so jumps of a
discontinuous link (``sign``, indicators) are located automatically and integrated to about
1e-10; known break points can be passed to skip the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from . import _validate as V

__all__ = [
    "hermite_polys",
    "he",
    "h",
    "gaussian_expectation",
    "hermite_coefficients",
    "hermite_tensor",
    "he4_partial_trace",
    "he_partial_trace",
    "he3_vector_contraction",
    "he3_unfolding_gram",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def hermite_polys(x, kmax: int, normalized: bool = False) -> np.ndarray:
    r"""All Hermite polynomials of degree 0..kmax at ``x`` by the three-term recurrence.

    Chapter 0, eq. (Hermite recurrence): :math:`\mathrm{He}_{k+1}(x) = x\,\mathrm{He}_k(x) -
    k\,\mathrm{He}_{k-1}(x)`, and for the normalised family
    :math:`h_{k+1} = (x h_k - \sqrt{k}\,h_{k-1})/\sqrt{k+1}` (stable: no factorials).

    Parameters
    ----------
    x : array_like
        Points, any shape.
    kmax : int
        Highest degree, ``kmax >= 0``.
    normalized : bool
        ``False`` for :math:`\mathrm{He}_k`, ``True`` for :math:`h_k`.

    Returns
    -------
    ndarray of shape ``(kmax + 1,) + x.shape``.
    """
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    x = V.finite_array(x, "x")
    out = np.empty((kmax + 1,) + x.shape)
    out[0] = 1.0
    if kmax >= 1:
        out[1] = x
    for k in range(1, kmax):
        if normalized:
            out[k + 1] = (x * out[k] - math.sqrt(k) * out[k - 1]) / math.sqrt(k + 1)
        else:
            out[k + 1] = x * out[k] - k * out[k - 1]
    return out


def he(k: int, x) -> np.ndarray:
    r"""Probabilists' Hermite polynomial :math:`\mathrm{He}_k(x)` (chapter 0)."""
    k = V.positive_int(k, "k", minimum=0)
    return hermite_polys(x, k)[k]


def h(k: int, x) -> np.ndarray:
    r"""Normalised Hermite polynomial :math:`h_k = \mathrm{He}_k/\sqrt{k!}` (chapter 0)."""
    k = V.positive_int(k, "k", minimum=0)
    return hermite_polys(x, k, normalized=True)[k]


# ---------------------------------------------------------------------------------------
# Gaussian expectations by adaptive Gauss-Legendre quadrature
# ---------------------------------------------------------------------------------------
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)


def _as_callable(f, name="f") -> Callable:
    if not callable(f):
        raise ValueError(f"{name} must be a callable (vectorised in its argument), got {f!r}")
    return f


def _eval_vectorised(f: Callable, x: np.ndarray) -> np.ndarray:
    """Evaluate ``f`` on a 1-d array, returning shape (m,) + value shape; checks finiteness."""
    val = np.asarray(f(x), dtype=float)
    if val.shape[: 1] != x.shape:
        if val.ndim == 0:  # a constant function written as ``lambda u: 1.0``
            val = np.full(x.shape, float(val))
        else:
            raise ValueError(
                f"the function must be vectorised: called on {x.shape[0]} points it returned "
                f"shape {val.shape}"
            )
    if not np.all(np.isfinite(val)):
        raise ValueError("the function returned NaN or infinite values on the integration grid")
    return val


def _panel_rule(a: np.ndarray, b: np.ndarray):
    """Gauss-Legendre nodes and weights on many panels [a_i, b_i] (arrays of equal length)."""
    half = 0.5 * (b - a)
    mid = 0.5 * (b + a)
    nodes = mid[:, None] + half[:, None] * _GL_NODES[None, :]
    weights = half[:, None] * _GL_WEIGHTS[None, :]
    return nodes, weights


def gaussian_expectation(
    f: Callable,
    *,
    breakpoints: Sequence[float] = (),
    cutoff: float = 14.0,
    tol: float = 1e-11,
    max_depth: int = 60,
) -> np.ndarray:
    r""":math:`\mathbb E[f(G)]` for :math:`G\sim N(0,1)` by adaptive Gauss-Legendre quadrature.

    Used throughout (chapters 0-4) wherever a closed form is an expectation over one Gaussian.
    The line is cut at ``|g| <= cutoff`` (the Gaussian mass outside 14 is below 1e-44), split
    at ``breakpoints`` and into unit panels; every panel whose 20-point rule disagrees with the
    rule on its two halves by more than ``tol`` (scaled by the panel's share of the line) is
    bisected, up to ``max_depth`` times. Jumps are thus found without being announced.

    Parameters
    ----------
    f : callable
        Vectorised: called with a 1-d array of points it returns an array whose first axis
        matches (extra trailing axes are allowed and integrated component-wise).
    breakpoints : sequence of float
        Known points of non-smoothness (optional; speeds up and sharpens the integral).
    cutoff, tol, max_depth : float, float, int
        Truncation, absolute tolerance, maximal bisection depth.

    Returns
    -------
    ndarray (0-d for a scalar function) holding the expectation.
    """
    f = _as_callable(f)
    cutoff = V.positive_float(cutoff, "cutoff")
    tol = V.positive_float(tol, "tol")
    max_depth = V.positive_int(max_depth, "max_depth", minimum=1)
    cuts = np.unique(
        np.concatenate(
            [
                np.arange(-math.ceil(cutoff), math.ceil(cutoff) + 1, 1.0),
                [b for b in np.asarray(breakpoints, dtype=float).ravel() if abs(b) < cutoff],
            ]
        )
    )
    cuts = cuts[(cuts >= -cutoff) & (cuts <= cutoff)]
    a, b = cuts[:-1], cuts[1:]
    total = None
    length = 2.0 * cutoff

    def integrate(a, b):
        nodes, weights = _panel_rule(a, b)
        flat = nodes.ravel()
        vals = _eval_vectorised(f, flat)
        dens = np.exp(-0.5 * flat**2) / _SQRT_2PI
        vals = (vals * dens.reshape((-1,) + (1,) * (vals.ndim - 1))).reshape(
            nodes.shape + vals.shape[1:]
        )
        w = weights.reshape(weights.shape + (1,) * (vals.ndim - 2))
        return np.sum(vals * w, axis=1)

    coarse = integrate(a, b)
    for _depth in range(max_depth + 1):
        mid = 0.5 * (a + b)
        left = integrate(a, mid)
        right = integrate(mid, b)
        fine = left + right
        err = np.abs(fine - coarse)
        if err.ndim > 1:
            err = err.reshape(err.shape[0], -1).max(axis=1)
        ok = err <= tol * np.maximum((b - a) / length, 1e-3)
        if _depth == max_depth:
            ok[:] = True
        acc = fine[ok].sum(axis=0)
        total = acc if total is None else total + acc
        if ok.all():
            break
        keep = ~ok
        a, b = np.concatenate([a[keep], mid[keep]]), np.concatenate([mid[keep], b[keep]])
        coarse = np.concatenate([left[keep], right[keep]])
    return np.asarray(total)


def hermite_coefficients(
    f: Callable,
    kmax: int,
    normalized: bool = True,
    *,
    breakpoints: Sequence[float] | None = None,
) -> np.ndarray:
    r"""Hermite coefficients of ``f`` up to degree ``kmax`` (chapters 0 and 2).

    Returns :math:`c_k = \mathbb E[f(G)h_k(G)]` (``normalized=True``) or
    :math:`\lambda_k = \mathbb E[f(G)\mathrm{He}_k(G)]` (``normalized=False``) for
    ``k = 0..kmax``. Accurate to about 1e-10 for polynomials and smooth links and to better
    than 1e-8 for discontinuous ones such as ``sign`` (jumps are located by adaptive
    bisection, or taken from ``breakpoints`` / the link's ``breakpoints`` attribute).

    Parameters
    ----------
    f : callable or str
        Vectorised link, or a name from :data:`lecnotes.targets.LINKS`.
    kmax : int
        Highest degree, ``>= 0``.
    normalized : bool
        Which normalisation (see module docstring); exponents do not depend on it.
    breakpoints : sequence of float, optional
        Points where ``f`` jumps or kinks.

    Returns
    -------
    ndarray of shape ``(kmax + 1,)``.
    """
    from .targets import get_link  # local import: targets imports this module

    link = get_link(f)
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    if breakpoints is None:
        breakpoints = getattr(link, "breakpoints", ())

    def integrand(g):
        return _eval_vectorised(link, g)[:, None] * hermite_polys(g, kmax, normalized).T

    return gaussian_expectation(integrand, breakpoints=breakpoints)


# ---------------------------------------------------------------------------------------
# Hermite tensors (chapter 5)
# ---------------------------------------------------------------------------------------
def hermite_tensor(x, k: int) -> np.ndarray:
    r"""The explicit Hermite tensor :math:`\mathrm{He}_k(x)\in(\mathbb R^d)^{\otimes k}`.

    Chapter 5, eq. (Hermite tensor recursion):
    :math:`\mathrm{He}_{k+1}(x)_{i_0\dots i_k} = x_{i_0}\mathrm{He}_k(x)_{i_1\dots i_k} -
    \sum_{j=1}^{k}\delta_{i_0 i_j}\mathrm{He}_{k-1}(x)_{i_1\dots\hat{i_j}\dots i_k}`,
    so that :math:`\langle \mathrm{He}_k(x), w^{\otimes k}\rangle =
    \mathrm{He}_k(\langle w,x\rangle)` for unit ``w``. It has ``d**k`` entries: use it for
    teaching and tests with small ``d`` only; :func:`he4_partial_trace`
    contracts without forming it.

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
    (chapter 5, eq. (partial trace)) gives

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
    v = V.finite_array(v, "v")
    n, d = X.shape
    if v.shape[0] != d or v.ndim not in (1, 2):
        raise ValueError(f"v must have shape ({d},) or ({d}, r), got {v.shape}")
    sq = np.einsum("ij,ij->i", X, X)
    a = weights * (sq - d - 4.0) / n
    c = np.sum(weights * (sq - d - 2.0)) / n
    Xv = X @ v
    return X.T @ (a[:, None] * Xv if v.ndim == 2 else a * Xv) - c * v


def _check_vector(v, d):
    v = V.finite_array(v, "v")
    if v.ndim not in (1, 2) or v.shape[0] != d:
        raise ValueError(f"v must have shape ({d},) or ({d}, r), got {v.shape}")
    return v


def he_partial_trace(X, weights, v, k: int = 4) -> np.ndarray:
    r"""Product with the partial trace :math:`M_k` of the empirical Hermite tensor (chapter 5).

    Chapter 5, eq. (M_k): :math:`M_k=\frac1n\sum_iT_i\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]`,
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
    k = V.positive_int(k, "k")
    if k not in (2, 4):
        raise ValueError(f"k must be 2 or 4 (even degrees implemented), got {k}")
    if k == 4:
        return he4_partial_trace(X, weights, v)
    X, weights = V.data_pair(X, weights)
    n, d = X.shape
    v = _check_vector(v, d)
    Xv = X @ v
    a = weights / n
    return X.T @ (a[:, None] * Xv if v.ndim == 2 else a * Xv) - float(np.mean(weights)) * v


def he3_vector_contraction(X, weights) -> np.ndarray:
    r"""The degree-3 Hermite tensor traced down to a vector (chapter 5, eq. (vector trace)).

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
    sq = np.einsum("ij,ij->i", X, X)
    return X.T @ (weights * (sq - d - 2.0)) / n


def he3_unfolding_gram(X, weights, diagonal: bool = False, block: int = 2048) -> np.ndarray:
    r"""Gram matrix of the :math:`d\times d^2` unfolding of the empirical degree-3 tensor.

    Chapter 5, eq. (unfolding). With :math:`\hat{\mathcal T}=\frac1n\sum_iT_i\mathrm{He}_3(x_i)`
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
    sq = np.einsum("ij,ij->i", X, X)
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
