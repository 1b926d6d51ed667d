r"""Chapter 5, Hermite tensors and the partial trace: estimators beyond second moments.

The partial trace of the empirical Hermite tensor (:func:`partial_trace_estimator`,
matrix-free, ``k = 2, 4``, on the Lanczos engine :func:`lecnotes.core.linalg.top_eigenpair`), the
odd-degree vector contraction and the degree-3 unfolding (:func:`vector_contraction_estimator`,
:func:`unfolding_estimator`), and the sweeps over :math:`n/d^2` of the chapter
(:func:`simulate_partial_trace`, :func:`simulate_overlaps`).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from lecnotes.core import stats
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
from lecnotes.core.preprocessing import is_family, label_weights
from lecnotes.core.targets import get_link

__all__ = [
    "partial_trace_matrix",
    "partial_trace_estimator",
    "vector_contraction_estimator",
    "unfolding_estimator",
    "simulate_partial_trace",
    "simulate_overlaps",
    "VectorEstimate",
    "PartialTraceSimulation",
    "PartialTraceSamples",
    "sample_partial_trace_matrices",
    "interval_lambda4",
    "critical_alpha",
    "vector_contraction_limit",
    "partial_trace_sweep",
    "overlap_sweep",
    "Extrapolation",
    "extrapolate_threshold",
]


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


def _extreme(A, which="magnitude"):
    """Eigenvalue and unit eigenvector of a symmetric matrix: largest modulus, top or bottom."""
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
        val, vec = _extreme(dense_matrix(), which)
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


class PartialTraceSimulation(NamedTuple):
    """:func:`simulate_partial_trace`: sample sizes ``n`` and arrays (seeds, len(alphas)) of
    the partial trace's ``rho2`` and chosen eigenvalue ``value``, the second-moment
    estimator's ``rho2_second``, and (``k = 4``, else None) ``rho2_raw``, the same
    contraction of the monomial tensor."""

    n: np.ndarray
    rho2: np.ndarray
    value: np.ndarray
    rho2_second: np.ndarray
    rho2_raw: np.ndarray | None


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


def simulate_partial_trace(alphas, d, seeds, link="gen4", T=None, k: int = 4,
                           rng=None) -> PartialTraceSimulation:
    r"""Overlaps of the partial-trace and second-moment estimators over seeds and n/d^2 (chapter 5).

    The simulations compared with {prf:ref}`prop-ch5-limit` ({eq}`eq-ch5-alpha-c`). For each
    seed one data set with :math:`n_{\max}=\max\alpha\cdot d^2` samples is drawn
    (:math:`w_\star=e_1`) and the estimators at smaller :math:`\alpha=n/d^2` use its first
    :math:`n` rows (nested samples). The matrices are accumulated block by block, so the sweep
    costs about two products of size :math:`n_{\max}d^2` (four when ``T`` is ``None``: the
    sample mean of the labels changes with :math:`n`). At every :math:`n` the results are those
    of :func:`partial_trace_estimator` (``which="magnitude"``) and of the second-moment
    estimator of chapter 4 with the same labels (largest modulus too).

    Parameters
    ----------
    alphas : array_like
        Increasing values of :math:`n/d^2` (``n = round(alpha d^2)``).
    d : int
        Dimension, 2 <= d <= 2000.
    seeds : int
    link : str or callable
    T : None, str or callable
        Preprocessing (``None``: centred by the sample mean; families are not accepted).
    k : {2, 4}
    rng : Generator, int or None

    Returns
    -------
    PartialTraceSimulation
        ``rho2_raw`` (``k = 4`` only) is the same contraction of the *monomial* tensor,
        :math:`\frac1n\sum_iT_i\|x_i\|^2x_ix_i^\top` ({prf:ref}`rem-ch5-monomials`).
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be positive and increasing")
    d = V.positive_int(d, "d", minimum=2)
    if d > 2000:
        raise ValueError(f"simulate_partial_trace is dense: d must be <= 2000, got {d}")
    seeds = V.positive_int(seeds, "seeds")
    k = check_even_degree(k)
    if is_family(T):
        raise ValueError("simulate_partial_trace does not accept a family T_delta")
    phi = get_link(link)
    rng = V.generator(rng)
    ns = np.maximum(2, np.round(alphas * d * d).astype(int))
    keys = ("rho2", "value", "rho2_second") + (("rho2_raw",) if k == 4 else ())
    out = {key: np.empty((seeds, ns.size)) for key in keys}
    eye = np.eye(d)

    for s in range(seeds):
        X = V.stream(rng, s).standard_normal((ns[-1], d))  # seed s: its own stream
        y = np.asarray(phi(X[:, 0]), dtype=float)
        sq = np.einsum("ij,ij->i", X, X) - d
        hi = (sq - 4.0) if k == 4 else np.ones_like(sq)  # weight of x x^T
        lo = (sq - 2.0) if k == 4 else np.ones_like(sq)  # weight of -I
        if T is None:  # M(y - ybar) = M(y) - ybar M(1): accumulate both
            cols = [y * hi, hi, y, np.ones_like(y)]
        else:
            t = label_weights(y, T, None)
            cols = [t * hi, t]
        acc = [np.zeros((d, d)) for _ in cols]
        c_acc = np.zeros(2)  # sums of y * lo and lo (or t * lo)
        prev = 0
        for j, n in enumerate(ns):
            B = X[prev:n]
            for a, c in zip(acc, cols, strict=True):
                a += B.T @ (c[prev:n, None] * B)
            if T is None:
                c_acc += [np.sum(y[prev:n] * lo[prev:n]), np.sum(lo[prev:n])]
            else:
                c_acc[0] += np.sum(t[prev:n] * lo[prev:n])
            prev = n
            if T is None:
                ybar = float(np.mean(y[:n]))
                M = (acc[0] - ybar * acc[1]) / n - (c_acc[0] - ybar * c_acc[1]) / n * eye
                D = (acc[2] - ybar * acc[3]) / n
            else:
                M = acc[0] / n - c_acc[0] / n * eye
                D = acc[1] / n
            val, vec = _extreme(M)
            out["value"][s, j] = val
            out["rho2"][s, j] = vec[0] ** 2
            out["rho2_second"][s, j] = _extreme(D)[1][0] ** 2
            if k == 4:  # (1/n) sum T ||x||^2 x x^T = M + (d + 4) D + c I: monomials
                out["rho2_raw"][s, j] = _extreme(M + (d + 4.0) * D)[1][0] ** 2
    return PartialTraceSimulation(ns, out["rho2"], out["value"], out["rho2_second"],
                                  out.get("rho2_raw"))


def simulate_overlaps(estimator, ns, d, seeds, link, rng=None) -> np.ndarray:
    r"""Squared overlaps of any estimator over seeds and nested sample sizes (chapter 5).

    The sample-complexity sweeps of {ref}`sec-ch5-odd-degree`. For each seed one data set of
    :math:`\max n` samples is drawn with :math:`w_\star=e_1` (rotation invariance) and
    ``estimator(X[:n], y[:n])`` is evaluated for every ``n``.

    Parameters
    ----------
    estimator : callable
        ``(X, y) -> w`` or ``(X, y) -> (w, ...)`` (the first element is used).
    ns : array_like of int, increasing
    d : int
    seeds : int
    link : str or callable
    rng : Generator, int or None

    Returns
    -------
    ndarray (seeds, len(ns)) of :math:`\langle\hat w,e_1\rangle^2/\|\hat w\|^2`.
    """
    if not callable(estimator):
        raise ValueError("estimator must be a callable (X, y) -> w")
    ns = np.asarray(ns)
    if ns.ndim != 1 or ns.size == 0 or not np.issubdtype(ns.dtype, np.integer) \
            or np.any(ns < 1) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be a non-empty increasing array of positive integers")
    d = V.positive_int(d, "d")
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    rng = V.generator(rng)
    out = np.empty((seeds, ns.size))
    for s in range(seeds):
        X = V.stream(rng, s).standard_normal((int(ns[-1]), d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for j, n in enumerate(ns):
            w = estimator(X[:n], y[:n])
            w = np.asarray(w[0] if isinstance(w, tuple) else w, dtype=float)
            out[s, j] = w[0] ** 2 / float(w @ w)
    return out


# ---------------------------------------------------------------------------------------
# Closed forms and sweeps of chapter 5 (the notebook keeps the parameters and the claims)
# ---------------------------------------------------------------------------------------
class PartialTraceSamples(NamedTuple):
    """Arrays (reps, d, d) of :math:`M_4` (``partial_trace``) and of the moment contraction
    :math:`\\frac1n\\sum_iT_i\\|x_i\\|^2x_ix_i^\\top` (``moment``)."""

    partial_trace: np.ndarray
    moment: np.ndarray


def sample_partial_trace_matrices(d, n, reps, link="gen4", T=None, rng=None):
    r""":math:`M_4` and the moment contraction on independent data sets (chapter 5).

    Each data set has ``n`` samples in dimension ``d`` with :math:`w_\star=e_1`; the two
    matrices are formed densely (small ``d``), to test their means entry by entry:
    {prf:ref}`prop-ch5-mean` and {eq}`eq-ch5-moment-mean`.

    Parameters
    ----------
    d, n, reps : int
        Dimension, samples per data set, number of data sets.
    link : str or callable
    T : None, str or callable
        Preprocessing of :math:`M_4` (``None``: centred); the moment contraction uses ``y``.
    rng : Generator, int or None

    Returns
    -------
    PartialTraceSamples
    """
    d = V.positive_int(d, "d", minimum=2)
    n = V.positive_int(n, "n")
    reps = V.positive_int(reps, "reps")
    phi = get_link(link)
    gen = V.generator(rng)
    M, R = np.empty((reps, d, d)), np.empty((reps, d, d))
    for r in range(reps):
        X = V.stream(gen, r).standard_normal((n, d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        M[r] = partial_trace_matrix(X, y, T=T)
        R[r] = (X * (y * (X * X).sum(1))[:, None]).T @ X / n
    return PartialTraceSamples(M, R)


def interval_lambda4(a, b) -> float:
    r""":math:`\lambda_4=\mathbb E[Y\mathrm{He}_4(G)]` for :math:`Y=\mathbb 1\{a<|G|<b\}`.

    Chapter 5 ({prf:ref}`prop-ch5-mean`):
    :math:`\lambda_4=2\int_a^b\mathrm{He}_4\gamma=2a\gamma(a)(a^2-b^2)` when
    :math:`a\gamma(a)=b\gamma(b)` (the generative-exponent-4 links of chapter 2,
    :func:`lecnotes.core.exponents.gen4_interval`); centring the labels leaves it unchanged.

    Parameters
    ----------
    a, b : float
        The interval, ``0 < a < b``.

    Returns
    -------
    float
    """
    if not 0 < a < b:
        raise ValueError(f"need 0 < a < b, got {a}, {b}")
    gamma_a = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    return 2 * a * gamma_a * (a**2 - b**2)


def critical_alpha(lambda4, mean_T2) -> float:
    r"""The critical :math:`\alpha_c=2\,\mathbb E[T^2]/\lambda_4^2` of the partial trace, chapter 5.

    With :math:`n=\alpha d^2` the squared overlap of the partial-trace estimator tends to
    :math:`\max(0,1-\alpha_c/\alpha)` ({prf:ref}`prop-ch5-limit`, {eq}`eq-ch5-alpha-c`).

    Parameters
    ----------
    lambda4, mean_T2 : float
        :math:`\lambda_4(T)=\mathbb E[T(Y)\mathrm{He}_4(G)]\ne0` and :math:`\mathbb E[T(Y)^2]`.

    Returns
    -------
    float
    """
    lambda4 = float(lambda4)
    if lambda4 == 0 or not math.isfinite(lambda4):
        raise ValueError(f"lambda4 must be finite and non-zero, got {lambda4}")
    return 2 * V.nonneg_float(mean_T2, "mean_T2") / lambda4**2


def vector_contraction_limit(beta, q):
    r"""Limit :math:`3\beta q/(3\beta q+1)` of the vector contraction's :math:`\rho^2` (chapter 5).

    {eq}`eq-ch5-vector-limit`, for :math:`n=\beta d^2` samples and
    :math:`q=\mathbb E[\zeta_3(Y)^2]` (optimal labels).

    Parameters
    ----------
    beta, q : float or array_like, float
        :math:`n/d^2`, and :math:`\mathbb E[\zeta_3(Y)^2] \ge 0`.

    Returns
    -------
    float or ndarray, shaped like ``beta``.
    """
    beta = np.asarray(beta, dtype=float)
    q = V.nonneg_float(q, "q")
    return 3 * beta * q / (3 * beta * q + 1)


def partial_trace_sweep(alphas, dims, seeds, link="gen4", T=None, k: int = 4, rng=None):
    r""":func:`simulate_partial_trace` at several ``d``: the figure of {prf:ref}`prop-ch5-limit`.

    Parameters
    ----------
    alphas, dims, seeds
        Increasing :math:`n/d^2`, dimensions, number of seeds.
    link, T, k
        As in :func:`simulate_partial_trace`.
    rng : Generator, int or None
        Seed of the sweep; dimension ``d`` uses ``V.stream(rng, d)``.

    Returns
    -------
    dict
        ``{d: PartialTraceSimulation}``.
    """
    base = V.generator(rng)
    return {d: simulate_partial_trace(alphas, d, seeds, link, T, k, rng=V.stream(base, d))
            for d in dims}


def overlap_sweep(estimator, dims, factors, exponent, seeds, link, rng=None) -> dict:
    r""":func:`simulate_overlaps` at :math:`n=c\,d^{e}`, several ``d`` ({ref}`sec-ch5-odd-degree`).

    Parameters
    ----------
    estimator : callable
        ``(X, y) -> w`` or ``(X, y) -> (w, ...)``.
    dims : sequence of int
    factors, exponent : array_like, float
        :math:`c` (increasing) and :math:`e`: ``n = round(c * d**exponent)``.
    seeds : int
    link : str or callable
    rng : Generator, int or None
        Seed of the sweep; dimension ``d`` uses ``V.stream(rng, d)``.

    Returns
    -------
    dict
        ``{d: (ns, rho2)}`` with ``rho2`` of shape (seeds, len(ns)), the input of
        :func:`lecnotes.core.stats.scaling_exponent`.
    """
    factors = V.finite_array(factors, "factors", ndim=1)
    base, out = V.generator(rng), {}
    for d in dims:
        ns = np.round(factors * d**exponent).astype(int)
        out[d] = (ns, simulate_overlaps(estimator, ns, d, seeds, link, rng=V.stream(base, d)))
    return out


class Extrapolation(NamedTuple):
    """The fit :math:`n_{1/2}/d^2=A+B/d` and the bootstrap standard error ``A_se`` of ``A``
    (:func:`extrapolate_threshold`)."""

    A: float
    B: float
    A_se: float


def extrapolate_threshold(runs: dict, n_boot: int = 300, rng=None) -> Extrapolation:
    r"""Extrapolate :math:`n_{1/2}/d^2` to :math:`d\to\infty` (chapter 5).

    :math:`n_{1/2}` is the sample size at which the mean :math:`\rho^2` crosses 1/2
    (:func:`lecnotes.core.stats.crossing_size`); a least-squares fit of
    :math:`n_{1/2}/d^2=A+B/d` over the dimensions gives the limit :math:`A`, to compare with
    :math:`2\alpha_c` of {eq}`eq-ch5-alpha-c`, and a bootstrap over seeds its standard error.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}``, ``rho2`` of shape (seeds, len(ns)).
    n_boot : int
        Bootstrap resamples.
    rng : Generator, int or None

    Returns
    -------
    Extrapolation
    """
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    gen = V.generator(rng)

    def fit(rs):
        y = [stats.crossing_size(*rs[d]) / d**2 for d in sorted(rs)]
        if not np.all(np.isfinite(y)):
            return np.nan, np.nan
        return np.polyfit(1 / np.array(sorted(rs), float), y, 1)[::-1]

    boots = [fit({d: (ns, r[gen.integers(0, len(r), len(r))]) for d, (ns, r) in
                  runs.items()})[0] for _ in range(n_boot)]
    A, B = fit(runs)
    return Extrapolation(float(A), float(B), float(np.nanstd(boots, ddof=1)))
