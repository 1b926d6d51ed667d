r"""Simulations of chapter 10: the three stages of layer-wise learning, and a kernel baseline.

The target of {prf:ref}`def-ch10-sight` with :math:`W_\star` the first :math:`r` coordinates
(the estimators are rotation equivariant, so this loses nothing). Seeds are on axis 0. The
data of size ``d`` and seed ``s`` come from ``validate.stream(rng, d, s, stage)``, so adding a
size, a seed or a sample size changes no other draw, and the samples of a smaller ``n`` are
the first rows of those of the largest (nested data).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.hermite import hermite_polys
from lecnotes.hierarchical import matched as M
from lecnotes.hierarchical import numerics as NU
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.numerics import log_crossing
from lecnotes.models.kernels import relu_ntk

__all__ = [
    "latent_rank",
    "sample_sight",
    "stage_one_subspace",
    "subspace_overlap",
    "quadratic_feature",
    "feature_overlap",
    "Stage1Sweep",
    "stage_one_sweep",
    "Stage2Sweep",
    "stage_two_sweep",
    "DepthSweep",
    "depth_sweep",
    "log_crossing",
    "low_degree_errors",
]

STAGE_SPLIT = (0.75, 0.125, 0.125)
"""Fractions of a budget of n samples given to the three stages (fresh samples each)."""


def latent_rank(d, eps=0.5):
    r"""The latent dimension :math:`r = \lfloor d^\varepsilon\rceil` of
    {prf:ref}`def-ch10-sight` (at least 2).

    Parameters
    ----------
    d : int
        Input dimension (>= 4).
    eps : float
        Exponent in (0, 1).

    Returns
    -------
    int
    """
    d = V.positive_int(d, "d", minimum=4)
    eps = V.positive_float(eps, "eps")
    if eps >= 1:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    return max(2, int(round(d**eps)))


def sample_sight(d, r, n, c, rng=None, out=None):
    r"""``n`` samples of {prf:ref}`def-ch10-sight`: :math:`x\sim N(0,I_d)`,
    :math:`y = g(h(W_\star x))` with :math:`W_\star` the first ``r`` coordinates.

    Parameters
    ----------
    d, r, n : int
        Input dimension, latent dimension (2 <= r <= d), number of samples.
    c : float
        Quadratic coefficient of the link {eq}`eq-ch10-feature`.
    rng : Generator, int or None
        Random state.
    out : ndarray of float64, optional
        A flat buffer of at least ``n * d`` entries that ``X`` is drawn into (the same
        values; a sweep reuses one buffer instead of allocating each draw).

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    """
    r = V.positive_int(r, "r", minimum=2)
    d = V.positive_int(d, "d", minimum=r)
    n = V.positive_int(n, "n")
    if out is None:
        X = V.generator(rng).standard_normal((n, d))
    else:
        if out.dtype != np.float64 or out.ndim != 1 or out.size < n * d:
            raise ValueError(f"out must be a flat float64 array of at least {n * d} entries")
        X = out[:n * d].reshape(n, d)
        V.generator(rng).standard_normal(out=X)
    s = np.einsum("ij,ij->i", X[:, :r], X[:, :r])
    return X, T.link(T.feature(s, r), c)


def _orthonormal(U, name):
    U = V.finite_array(U, name, ndim=2)
    if U.shape[1] > U.shape[0]:
        raise ValueError(f"{name} must have shape (d, r) with r <= d")
    return U


def stage_one_subspace(X, y, r, T_name="tanh"):
    r"""The first stage ({prf:ref}`prop-ch10-stage-one`): the top ``r`` eigenvectors of
    :math:`D_T = \frac1n\sum_iT(y_i)x_ix_i^\top`, {eq}`eq-ch10-spectral`.

    Parameters
    ----------
    X : ndarray (n, d)
        Inputs.
    y : ndarray (n,)
        Labels.
    r : int
        Number of eigenvectors (1..d).
    T_name : str
        Preprocessing, a key of :data:`lecnotes.hierarchical.theory.PREPROCESSINGS`.

    Returns
    -------
    ndarray (d, r)
        Orthonormal columns, the estimated latent subspace.
    """
    X, y = V.data_pair(X, y)
    r = V.positive_int(r, "r")
    if r > X.shape[1]:
        raise ValueError(f"r must be an integer in 1..{X.shape[1]}, got {r}")
    if not isinstance(T_name, str) or T_name not in T.PREPROCESSINGS:
        raise ValueError(f"T_name must be one of {sorted(T.PREPROCESSINGS)}, got {T_name!r}")
    t = T.PREPROCESSINGS[T_name](y)
    D = (X * t[:, None]).T @ X / len(y)
    return np.linalg.eigh(D)[1][:, -r:]


def subspace_overlap(U, r):
    r"""The stage-one overlap :math:`q_1 = \|\hat U^\top U_\star\|_F^2/r` with
    :math:`U_\star` the first ``r`` coordinates ({prf:ref}`prop-ch10-stage-one`).

    Parameters
    ----------
    U : ndarray (d, k)
        Orthonormal columns.
    r : int
        Latent dimension (1..d).

    Returns
    -------
    float
        In [0, 1]; :math:`k/d` for a random subspace of dimension :math:`k = r`.
    """
    U = _orthonormal(U, "U")
    r = V.positive_int(r, "r")
    if r > U.shape[0]:
        raise ValueError(f"r must be an integer in 1..{U.shape[0]}, got {r}")
    return float(np.sum(U[:r] ** 2) / r)


def quadratic_feature(Z, y):
    r"""The second stage ({prf:ref}`prop-ch10-stage-two`): the matrix
    :math:`A = \frac1n\sum_iy_i(z_iz_i^\top - I)` of {eq}`eq-ch10-stage-two`, which defines the
    learned feature :math:`\hat h(z) = (z^\top Az - \operatorname{tr}A)/(\sqrt2\|A\|_F)`.

    Parameters
    ----------
    Z : ndarray (n, k)
        First-stage outputs :math:`\hat U^\top x_i`.
    y : ndarray (n,)
        Labels.

    Returns
    -------
    ndarray (k, k)
    """
    Z, y = V.data_pair(Z, y)
    return (Z * y[:, None]).T @ Z / len(y) - np.mean(y) * np.eye(Z.shape[1])


def feature_overlap(A, U=None):
    r"""Exact overlap :math:`|\mathrm{corr}(\hat h, h)|` of the learned quadratic feature with
    the true one ({prf:ref}`prop-ch10-stage-two`): for Gaussian inputs
    :math:`\mathrm{Cov}(x^\top Bx, x^\top Cx) = 2\operatorname{tr}(BC)`, so it is
    :math:`|\operatorname{tr}(A\,\hat U^\top P_\star\hat U)|/(\sqrt r\,\|A\|_F)`.

    Parameters
    ----------
    A : ndarray (k, k)
        The matrix of :func:`quadratic_feature`.
    U : ndarray (d, k), optional
        The first stage; ``None`` for the true latent coordinates (then :math:`r = k`).

    Returns
    -------
    float
    """
    A = V.finite_array(A, "A", ndim=2)
    if A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise ValueError("A must be a square matrix")
    k = A.shape[0]
    if U is None:
        G, r = np.eye(k), k
    else:
        U = _orthonormal(U, "U")
        if U.shape[1] != k:
            raise ValueError(f"U must have {k} columns")
        G, r = U[:k].T @ U[:k], k
    norm = np.linalg.norm(A)
    if norm == 0:
        raise ValueError("A is zero: no feature")
    return float(abs(np.sum(A * G)) / (math.sqrt(r) * norm))


class Stage1Sweep(NamedTuple):
    r"""Stage-one overlaps, ``overlap[seed, size, alpha]`` ({prf:ref}`prop-ch10-stage-one`)."""

    dims: np.ndarray
    ranks: np.ndarray
    alphas: np.ndarray
    overlap: np.ndarray


def _sizes(dims, name="dims"):
    a = V.finite_array(dims, name, ndim=1)
    if a.size == 0 or np.any(a < 4) or np.any(a != np.round(a)):
        raise ValueError(f"{name} must hold integers >= 4")
    return a.astype(int)


def _positive_grid(values, name):
    a = V.finite_array(values, name, ndim=1)
    if a.size == 0 or np.any(a <= 0) or np.any(np.diff(a) <= 0):
        raise ValueError(f"{name} must hold increasing positive numbers")
    return a


def stage_one_sweep(dims, alphas, seeds, c, eps=0.5, rng=None):
    r"""The first stage at :math:`n = \alpha dr` for each size and seed
    ({prf:ref}`prop-ch10-stage-one`), nested in :math:`\alpha`.

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4); :math:`r` = :func:`latent_rank`.
    alphas : array_like
        Increasing values of :math:`n/(dr)`.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    eps : float
        Latent exponent.
    rng : Generator, int or None
        Parent random state (streams ``(d, seed, 1)``).

    Returns
    -------
    Stage1Sweep
    """
    dims = _sizes(dims)
    alphas = _positive_grid(alphas, "alphas")
    seeds = V.positive_int(seeds, "seeds")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    out = np.zeros((seeds, len(dims), len(alphas)))
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        ns = np.maximum(np.round(alphas * d * r).astype(int), 1)
        for s in range(seeds):
            X, y = sample_sight(int(d), int(r), int(ns[-1]), c, V.stream(rng, int(d), s, 1))
            X, t = X.astype(np.float32), np.tanh(y).astype(np.float32)  # single-precision blocks
            D, start = np.zeros((d, d)), 0
            for i, n in enumerate(ns):
                Xb = X[start:n]
                D += ((Xb * t[start:n, None]).T @ Xb).astype(float)
                start = n
                U = NU.top_eigenvectors(D / n, int(r))
                out[s, j, i] = subspace_overlap(U, int(r))
    return Stage1Sweep(dims, ranks, alphas, out)


class Stage2Sweep(NamedTuple):
    r"""Stage-two overlaps on the true latent coordinates, ``overlap[seed, size, beta]``
    ({prf:ref}`prop-ch10-stage-two`)."""

    ranks: np.ndarray
    betas: np.ndarray
    overlap: np.ndarray


def stage_two_sweep(ranks, betas, seeds, c, rng=None):
    r"""The second stage alone at :math:`n = \beta r^2`, on the true coordinates
    :math:`z = W_\star x` ({prf:ref}`prop-ch10-stage-two`), nested in :math:`\beta`.

    Parameters
    ----------
    ranks : array_like of int
        Latent dimensions (>= 2).
    betas : array_like
        Increasing values of :math:`n/r^2`.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    rng : Generator, int or None
        Parent random state (streams ``(r, seed, 2)``).

    Returns
    -------
    Stage2Sweep
    """
    ranks = V.finite_array(ranks, "ranks", ndim=1)
    if ranks.size == 0 or np.any(ranks < 2) or np.any(ranks != np.round(ranks)):
        raise ValueError("ranks must hold integers >= 2")
    ranks = ranks.astype(int)
    betas = _positive_grid(betas, "betas")
    seeds = V.positive_int(seeds, "seeds")
    out = np.zeros((seeds, len(ranks), len(betas)))
    for j, r in enumerate(ranks):
        ns = np.maximum(np.round(betas * r * r).astype(int), 2)
        for s in range(seeds):
            Z, y = sample_sight(int(r), int(r), int(ns[-1]), c, V.stream(rng, int(r), s, 2))
            for i, n in enumerate(ns):
                out[s, j, i] = feature_overlap(quadratic_feature(Z[:n], y[:n]))
    return Stage2Sweep(ranks, betas, out)


class DepthSweep(NamedTuple):
    r"""Deep against shallow ({prf:ref}`thm-ch10-layerwise`, {prf:ref}`prop-ch10-shallow`):
    arrays ``[seed, size, n]``; the kernel only up to ``kernel_ns``."""

    dims: np.ndarray
    ranks: np.ndarray
    ns: np.ndarray
    deep_error: np.ndarray
    """Normalised test error of the three-layer network trained layer by layer."""
    q1: np.ndarray
    """Stage-one overlap."""
    rho2: np.ndarray
    """Stage-two overlap."""
    kernel_ns: np.ndarray
    kernel_error: np.ndarray
    """Normalised test error of kernel ridge with the ReLU NTK (the lazy two-layer network)."""
    matched_error: np.ndarray | None = None
    """Normalised test error of the matched two-layer learner (:mod:`lecnotes.hierarchical.matched`,
    same stage one), ``[seed, size, n]``, NaN where not run."""


_DEEP_CACHE: dict = {}  # layer-wise results per (root, rng, d, r, c, n_test, seed, sizes)

def _link_features(hh, lo, hi):
    """h_0, h_1, h_2 of the learned feature, clipped to the range seen in training."""
    return hermite_polys(np.clip(hh, lo, hi), 2, normalized=True).T


def _deep_error(U, Z2, y2, Z3, y3, Zt, yt, var):
    """The second and third stages on their own samples (latent coordinates ``Z = X U``),
    then the test error."""
    A = quadratic_feature(Z2, y2)
    scale = math.sqrt(2) * np.linalg.norm(A)

    def feat(Z):
        return (np.einsum("ij,ij->i", Z @ A, Z) - np.trace(A)) / scale

    h3 = feat(Z3)
    lo, hi = float(h3.min()), float(h3.max())
    coef = np.linalg.lstsq(_link_features(h3, lo, hi), y3, rcond=None)[0]
    pred = _link_features(feat(Zt), lo, hi) @ coef
    return float(np.mean((pred - yt) ** 2)) / var, feature_overlap(A, U)


def depth_sweep(dims, ns, seeds, c, kernel_ns=(256, 512, 1024, 2048), kernel_seeds=None,
                lam=1e-3, n_test=2000, eps=0.5, matched_seeds=0, matched_at=(), rng=None):
    r"""Test error against :math:`n` of the three-layer network trained layer by layer
    ({prf:ref}`thm-ch10-layerwise`; a budget of :math:`n` fresh samples split over the stages
    as :data:`STAGE_SPLIT`) and of kernel ridge regression with the ReLU NTK on all
    :math:`n` samples ({prf:ref}`prop-ch10-shallow`).

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4).
    ns : array_like of int
        Increasing sample budgets (>= 64), each split over the stages by
        :data:`STAGE_SPLIT`.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    kernel_ns : sequence of int
        Sample sizes at which the kernel is fitted (its cost is :math:`n^3`), increasing, at
        most the number of samples of the largest budget.
    kernel_seeds : int, optional
        Seeds of the kernel (default ``seeds``; at most ``seeds``).
    lam : float
        Ridge of the kernel (>= 0).
    n_test : int
        Test samples.
    eps : float
        Latent exponent.
    matched_seeds : int
        Seeds (the first ones, same data and same stage one) on which the matched two-layer
        learner of {prf:ref}`ex-ch10-exponents` (b) is also run, on the samples of stages 2
        and 3 (default 0: not run).
    matched_at : sequence of int
        Indices of ``ns`` at which it is run (its cost grows like
        :math:`n\binom{r+4}{4}^2`).
    rng : Generator, int or None
        Parent random state (streams ``(d, seed, 3..5)`` for the three stages, whose
        concatenation trains the kernel, and ``(d, seed, 6)`` for the test set). With an
        integer, a seed whose grid points a sweep on the same streams ran before is not run
        again (its data are nested), unless the matched learner or the kernel needs them.

    Returns
    -------
    DepthSweep
    """
    dims = _sizes(dims)
    ns = _positive_grid(ns, "ns")
    if np.any(ns < 64) or np.any(ns != np.round(ns)):
        raise ValueError("ns must hold integers >= 64")
    ns = ns.astype(int)
    seeds = V.positive_int(seeds, "seeds")
    kseeds = seeds if kernel_seeds is None else V.positive_int(kernel_seeds, "kernel_seeds")
    if kseeds > seeds:
        raise ValueError(f"kernel_seeds must be an integer in 1..{seeds}, got {kseeds}")
    n_test, lam = V.positive_int(n_test, "n_test"), V.nonneg_float(lam, "lam")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    kns = np.asarray(kernel_ns, float) if len(kernel_ns) == 0 else _positive_grid(
        kernel_ns, "kernel_ns")
    if np.any(kns < 16) or np.any(kns != np.round(kns)) or np.any(kns > ns[-1]):
        raise ValueError(f"kernel_ns must hold integers in 16..{ns[-1]}")
    kns = kns.astype(int)
    mseeds = V.positive_int(matched_seeds, "matched_seeds", minimum=0)
    if mseeds > seeds:
        raise ValueError(f"matched_seeds must be an integer in 0..{seeds}, got {mseeds}")
    at = {V.positive_int(int(i), "matched_at", minimum=0) for i in matched_at}
    if any(i >= len(ns) for i in at):
        raise ValueError(f"matched_at must hold indices in 0..{len(ns) - 1}")
    merr = np.full((mseeds, len(dims), len(ns)), np.nan)
    shape = (seeds, len(dims), len(ns))
    err, q1, rho2 = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    kerr = np.full((kseeds, len(dims), len(kns)), np.nan)
    split = np.array(STAGE_SPLIT)
    base = (V.seed_root(), int(rng)) if isinstance(rng, int | np.integer) else None
    buf = NU.Buffers()
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        d, r = int(d), int(r)
        var = T.feature_law(r, c).var
        sizes = np.maximum((ns[:, None] * split[None, :]).astype(int), 8)  # (len(ns), 3)
        index = M.hermite_index(r, 4) if mseeds else None
        for s in range(seeds):
            keys = None if base is None else [
                (base, d, r, float(c), n_test, s, tuple(int(v) for v in z)) for z in sizes]
            if (keys and s >= mseeds and (s >= kseeds or not len(kns))
                    and all(k in _DEEP_CACHE for k in keys)):
                for i, k in enumerate(keys):  # the same streams, already run
                    err[s, j, i], q1[s, j, i], rho2[s, j, i] = _DEEP_CACHE[k]
                continue
            data = [sample_sight(d, r, int(sizes[-1, k]), c, V.stream(rng, d, s, 3 + k),
                                 out=buf.get(k, int(sizes[-1, k]) * d)) for k in range(3)]
            Xt, yt = sample_sight(d, r, n_test, c, V.stream(rng, d, s, 6),
                                  out=buf.get(3, n_test * d))
            (X1, y1), (X2, y2), (X3, y3) = data
            t1, D, start = np.tanh(y1), np.zeros((d, d)), 0
            X1s = buf.get(4, X1.size, np.float32).reshape(X1.shape)  # single-precision blocks
            X1s[...] = X1
            t1s = t1.astype(np.float32)
            for i in range(len(ns)):
                n1, n2, n3 = (int(v) for v in sizes[i])
                D += ((X1s[start:n1] * t1s[start:n1, None]).T @ X1s[start:n1]).astype(float)
                start = n1
                U = NU.top_eigenvectors(D / n1, r)
                q1[s, j, i] = subspace_overlap(U, r)
                Z2, Z3, Zt = X2[:n2] @ U, X3[:n3] @ U, Xt @ U
                err[s, j, i], rho2[s, j, i] = _deep_error(
                    U, Z2, y2[:n2], Z3, y3[:n3], Zt, yt, var)
                if keys is not None:
                    _DEEP_CACHE[keys[i]] = (err[s, j, i], q1[s, j, i], rho2[s, j, i])
                if s < mseeds and i in at:
                    merr[s, j, i] = M.hermite_ridge_errors(
                        np.concatenate([Z2, Z3]), np.concatenate([y2[:n2], y3[:n3]]), Zt, yt,
                        index, M.MATCHED_RIDGES).min() / var
            if s < kseeds:
                Xk = np.concatenate([X1, X2, X3])
                yk = np.concatenate([y1, y2, y3])
                if len(kns):  # the kernels of smaller n are blocks of the largest
                    K, Kt = relu_ntk(Xk[:kns[-1]]), relu_ntk(Xt, Xk[:kns[-1]])
                for i, n in enumerate(kns):
                    coef = NU.kernel_ridge_block(K, n, yk[:n] - np.mean(yk[:n]), lam)
                    pred = Kt[:, :n] @ coef + np.mean(yk[:n])
                    kerr[s, j, i] = float(np.mean((pred - yt) ** 2)) / var
    return DepthSweep(dims, ranks, ns, err, q1, rho2, kns, kerr, merr)


def low_degree_errors(d, n, seeds, c, degree=2, n_test=20000, eps=0.5, rng=None):
    r"""Test error, divided by that of the constant :math:`\mathbb Ey` on the same test points
    (the heavy tail of :math:`y` makes this ratio far less noisy than a division by
    :math:`\operatorname{Var}y`), of least squares (ridge
    :math:`10^{-3}`) on all Hermite polynomials of :math:`x` of degree at most ``degree``: the
    learner that {prf:ref}`prop-ch10-shallow` says a kernel is equivalent to when
    :math:`d^{l+\delta}\le n\le d^{l+1-\delta}`, whose error tends to {eq}`eq-ch10-floor` for
    ``degree`` 2 or 3 once :math:`n` is large against the number of polynomials.

    Parameters
    ----------
    d, n : int
        Input dimension (>= 4) and training samples.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    degree : int
        Largest degree (>= 1).
    n_test : int
        Test samples.
    eps : float
        Latent exponent.
    rng : Generator, int or None
        Parent random state (streams ``(d, seed, 15)`` training, ``(d, seed, 16)`` test).

    Returns
    -------
    ndarray (seeds,)
    """
    d = V.positive_int(d, "d", minimum=4)
    n, seeds = V.positive_int(n, "n"), V.positive_int(seeds, "seeds")
    n_test = V.positive_int(n_test, "n_test")
    r = latent_rank(d, eps)
    index = M.hermite_index(d, degree)
    law = T.feature_law(r, c)
    out = np.empty(seeds)
    for s in range(seeds):
        X, y = sample_sight(d, r, n, c, V.stream(rng, d, s, 15))
        Xt, yt = sample_sight(d, r, n_test, c, V.stream(rng, d, s, 16))
        null = float(np.mean((yt - law.mean) ** 2))
        out[s] = M.latent_ridge_errors(np.eye(d), X, y, Xt, yt, index, [1e-3])[0] / null
    return out
