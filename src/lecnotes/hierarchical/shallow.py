r"""Shallow baselines of chapter 10 on the target of {prf:ref}`def-ch10-sight`.

Two two-layer learners, each given the whole budget of :math:`n` samples of the deep learner
of :func:`lecnotes.hierarchical.experiments.depth_sweep` and tested on the same test points
({prf:ref}`prop-ch10-shallow`):

* **random features** (:math:`p` ReLU features :math:`\sigma(\langle w_k, x\rangle)`,
  :math:`w_k\sim N(0, I_d/d)` fixed) with a ridge second layer on all :math:`n` samples;
* **one giant step** (chapter 6's two-phase procedure): the first layer of
  :math:`f = p^{-1/2}\sum_ka_k\sigma(\langle w_k,x\rangle)`, :math:`a_k = \pm p^{-1/2}`, moves
  by one gradient step of the square loss with :math:`\eta = \eta_0p\sqrt{n_1/d}` on
  :math:`n_1 = n/2` samples, then the second layer is fitted by ridge on :math:`n/2` fresh ones.

Both are matrix-free in :math:`n`: the :math:`p\times p` Gram matrix and the first-layer
gradient are added up over blocks of samples, nested in :math:`n` (the samples of a smaller
:math:`n` are the first rows of those of the largest), and every array carries the seeds on
axis 0 (one batched product per block for all seeds). The ridge is chosen for each
:math:`(seed, d, n)` on the test set among :data:`RIDGES` (an oracle that can only favour the
shallow learner), through one tridiagonal reduction of the Gram matrix per grid point
(:func:`ridge_path_test_errors`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.hierarchical import numerics as NU
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.experiments import latent_rank

__all__ = ["RIDGES", "ridge_path_errors", "ridge_path_test_errors", "relu_features",
           "one_giant_step", "ShallowSweep", "shallow_sweep", "rf_sweep", "null_errors",
           "trend_size"]

RIDGES = 10.0 ** np.arange(-6, 4)
"""Ridges tried, in units of :math:`\\operatorname{tr}(G)/p` of the training Gram matrix."""


def ridge_path_errors(gram, rhs, ybar, gram_t, rhs_t, fbar_t, y2_t, lams):
    r"""Test errors of ridge regression on features for several ridges, from second moments
    only ({prf:ref}`prop-ch10-shallow`'s shallow learners).

    With the training moments :math:`G = F^\top F/n`, :math:`b = F^\top(y-\bar y)/n`, the
    coefficients are :math:`a_\lambda = (G+\lambda I)^{-1}b` (one eigendecomposition of
    :math:`G` serves every :math:`\lambda`), the prediction :math:`\bar y + \phi(x)^\top
    a_\lambda`, and its mean squared error on a test set is
    :math:`a^\top G_ta + 2\bar y\,a^\top\bar f_t - 2a^\top b_t + \overline{y_t^2} -
    2\bar y\,\overline{y_t} + \bar y^2`; here ``y2_t`` holds
    :math:`\overline{(y_t-\bar y)^2}`.

    Parameters
    ----------
    gram : ndarray (..., p, p)
        :math:`G`, symmetric positive semi-definite.
    rhs : ndarray (..., p)
        :math:`b`.
    ybar : ndarray (...)
        Training mean of the labels, added back to the prediction.
    gram_t, rhs_t, fbar_t : ndarray (..., p, p), (..., p), (..., p)
        Test moments :math:`F_t^\top F_t/n_t`, :math:`F_t^\top y_t/n_t`,
        :math:`F_t^\top\mathbf 1/n_t`.
    y2_t : ndarray (...)
        :math:`\overline{(y_t-\bar y)^2}`.
    lams : array_like (..., L) or (L,)
        Ridges :math:`\lambda > 0`, absolute, on the last axis.

    Returns
    -------
    ndarray (..., L)
        Test mean squared errors.
    """
    gram, lams = _gram_and_ridges(gram, lams)
    ev, Q = np.linalg.eigh(gram)
    proj = np.einsum("...pk,...p->...k", Q, rhs)  # Q^T b
    coef = np.einsum("...pk,...kl->...pl", Q,
                     proj[..., :, None] / (np.maximum(ev, 0)[..., :, None]
                                           + lams[..., None, :]))
    quad = np.einsum("...pl,...pq,...ql->...l", coef, gram_t, coef)
    lin = np.einsum("...pl,...p->...l", coef, 2 * np.asarray(ybar)[..., None] * fbar_t
                    - 2 * rhs_t)
    return quad + lin + np.asarray(y2_t)[..., None]


def relu_features(X, W):
    r"""ReLU features :math:`\sigma(XW^\top)` batched over seeds (axis 0), in single precision
    (the Gram matrices built from them are summed in single precision over blocks of at most
    a few thousand samples and accumulated in double).

    Parameters
    ----------
    X : ndarray (S, n, d)
    W : ndarray (S, p, d)

    Returns
    -------
    ndarray (S, n, p)
    """
    F = np.matmul(np.asarray(X, np.float32), np.swapaxes(np.asarray(W, np.float32), -1, -2))
    return np.maximum(F, 0.0, out=F)


def one_giant_step(W0, a0, X, y, eta0=1.0):
    r"""Chapter 6's giant step on the first layer of :math:`f = p^{-1/2}\sigma(XW^\top)a`,
    batched over seeds: :math:`W_1 = W_0 - \eta\nabla_W\frac1{2n}\sum_i(f(x_i)-y_i)^2` with
    :math:`\eta = \eta_0p\sqrt{n/d}` (the two-layer baseline of {prf:ref}`prop-ch10-shallow`).

    Parameters
    ----------
    W0 : ndarray (S, p, d)
    a0 : ndarray (S, p)
    X : ndarray (S, n, d)
    y : ndarray (S, n)
    eta0 : float
        :math:`\eta_0 > 0`.

    Returns
    -------
    ndarray (S, p, d)
    """
    eta0 = V.positive_float(eta0, "eta0")
    W0, a0 = np.asarray(W0, float), np.asarray(a0, float)
    X, y = np.asarray(X, float), np.asarray(y, float)
    if W0.ndim != 3 or X.ndim != 3 or a0.shape != W0.shape[:2] or y.shape != X.shape[:2]:
        raise ValueError("shapes must be W0 (S, p, d), a0 (S, p), X (S, n, d), y (S, n)")
    _, p, d = W0.shape
    n = X.shape[1]
    return W0 - eta0 * p * math.sqrt(n / d) * _step_sum(W0, a0, X, y) / n


def _step_sum(W0, a0, X, y, dtype=float):
    """sum_i of the first-layer gradient terms of the square loss (not divided by n), computed
    in ``dtype`` (single precision in the sweeps' blocks, summed in double over blocks)."""
    p = W0.shape[1]
    Xc = np.asarray(X, dtype)
    Z = np.matmul(Xc, np.swapaxes(np.asarray(W0, dtype), -1, -2))
    f = np.einsum("snp,sp->sn", np.maximum(Z, 0.0), a0.astype(dtype)) / math.sqrt(p)
    M = (Z > 0) * (f - y.astype(dtype))[:, :, None]
    G = np.matmul(np.swapaxes(M, -1, -2), Xc).astype(float)
    return G * (a0[:, :, None] / math.sqrt(p))


class ShallowSweep(NamedTuple):
    r"""Shallow baselines against :math:`n`, arrays ``[seed, size, n]``
    ({prf:ref}`prop-ch10-shallow`)."""

    dims: np.ndarray
    ranks: np.ndarray
    ns: np.ndarray
    width: int
    rf_error: np.ndarray
    """Normalised test error of random-features ridge (all ``n`` samples)."""
    gs_error: np.ndarray
    """Normalised test error of the two-layer network after one giant step and ridge."""
    gs_latent: np.ndarray
    r"""Mean over neurons of :math:`\|P_\star w_k\|^2/\|w_k\|^2` after the step (:math:`r/d`
    at initialisation)."""


def _draw(gens, n, d, r, c):
    """Samples of every seed, with a last column of ones (the neurons' bias), stored in single
    precision (every learner here computes its features in single precision), the labels
    computed from the double-precision draw."""
    X, s = np.empty((len(gens), n, d + 1), np.float32), np.empty((len(gens), n))
    X[:, :, d] = 1.0
    for k, g in enumerate(gens):
        x = g.standard_normal((n, d))
        s[k] = np.einsum("nj,nj->n", x[:, :r], x[:, :r])
        X[k, :, :d] = x
    return X, T.link(T.feature(s, r), c)


def _layer(gens, p, d):
    """Rows w_k ~ N(0, I_d/d) and a bias N(0, 1) in the last column."""
    return np.stack([np.concatenate([g.standard_normal((p, d)) / math.sqrt(d),
                                     g.standard_normal((p, 1))], axis=1) for g in gens])


def _moments(F, y, ybar=None):
    """Gram, F^T y, F^T 1 (sums) of a block, batched over seeds, in double precision."""
    return (np.matmul(np.swapaxes(F, -1, -2), F).astype(float),
            np.einsum("snp,sn->sp", F, y.astype(np.float32)).astype(float),
            F.sum(axis=1, dtype=float))


def ridge_path_test_errors(gram, rhs, ybar, Ft, yt, lams):
    r"""Test errors of ridge regression on features for several ridges, from the training
    moments and the test features themselves ({prf:ref}`prop-ch10-shallow`'s shallow
    learners): the same numbers as :func:`ridge_path_errors`, computed from the predictions
    :math:`\bar y + F_ta_\lambda` (a few test products per ridge) instead of from a
    :math:`p\times p` test Gram matrix.

    Parameters
    ----------
    gram : ndarray (..., p, p)
        :math:`G = F^\top F/n`, symmetric positive semi-definite.
    rhs : ndarray (..., p)
        :math:`b = F^\top(y-\bar y)/n`.
    ybar : ndarray (...)
        Training mean of the labels, added back to the prediction.
    Ft : ndarray (..., n_t, p)
        Test features.
    yt : ndarray (..., n_t)
        Test labels.
    lams : array_like (..., L) or (L,)
        Ridges :math:`\lambda > 0`, absolute, on the last axis.

    Returns
    -------
    ndarray (..., L)
        Test mean squared errors.
    """
    gram, lams = _gram_and_ridges(gram, lams)
    Ft, yt = np.asarray(Ft), np.asarray(yt, float)
    if Ft.shape[-1] != gram.shape[-1] or Ft.shape[:-1] != yt.shape:
        raise ValueError("Ft must have shape (..., n_t, p) and yt (..., n_t)")
    coef = NU.ridge_coefficients(gram, rhs, lams)
    pred = np.matmul(np.asarray(Ft, float), coef) + np.asarray(ybar)[..., None, None]
    return np.mean((pred - yt[..., :, None]) ** 2, axis=-2)


def _best(gram, fy, f1, ysum, n, test, var):
    """Oracle-ridge normalised test error from sums over n training samples."""
    Ft, yt = test
    ybar = ysum / n
    G, b = gram / n, (fy - ybar[:, None] * f1) / n
    lam = np.einsum("spp->s", G)[:, None] / G.shape[-1] * RIDGES[None, :]
    return ridge_path_test_errors(G, b, ybar, Ft, yt, lam).min(axis=-1) / var


def null_errors(dims, seeds, c, n_test=2000, eps=0.5, rng=None):
    r"""Normalised test error of the constant predictor :math:`\mathbb E y` on the test sets of
    :func:`shallow_sweep` and :func:`lecnotes.hierarchical.experiments.depth_sweep` (streams
    ``(d, seed, 6)``): :math:`\overline{(y_t-\mathbb Ey)^2}/\operatorname{Var}y`, 1 up to the
    fluctuation of the test set ({prf:ref}`prop-ch10-shallow`). Dividing a learner's error by
    it removes that fluctuation, which every learner on the same test points shares.

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4).
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    n_test : int
        Test samples.
    eps : float
        Latent exponent.
    rng : Generator, int or None
        Parent random state, as in :func:`shallow_sweep`.

    Returns
    -------
    ndarray (seeds, len(dims))
    """
    dims = _dims(dims)
    seeds, n_test = V.positive_int(seeds, "seeds"), V.positive_int(n_test, "n_test")
    out = np.zeros((seeds, len(dims)))
    for j, d in enumerate(dims):
        r = latent_rank(int(d), eps)
        law = T.feature_law(r, c)
        _, yt = _draw([V.stream(rng, int(d), s, 6) for s in range(seeds)], n_test, int(d), r, c)
        out[:, j] = np.mean((yt - law.mean) ** 2, axis=1) / law.var
    return out


def _dims(dims):
    dims = np.asarray(V.finite_array(dims, "dims", ndim=1))
    if dims.size == 0 or np.any(dims < 4) or np.any(dims != np.round(dims)):
        raise ValueError("dims must hold integers >= 4")
    return dims.astype(int)


def _segments(ns, chunk):
    """(start, stop, grid index or None) blocks: grid points end a block."""
    out, start = [], 0
    for i, n in enumerate(ns):
        while n - start > chunk:
            out.append((start, start + chunk, None))
            start += chunk
        out.append((start, int(n), i))
        start = int(n)
    return out


def shallow_sweep(dims, ns, seeds, c, p=512, eta0=1.0, n_test=2000, eps=0.5, chunk=4096,
                  rf_seeds=None, rng=None):
    r"""Random-features ridge and the one-giant-step network against :math:`n`
    ({prf:ref}`prop-ch10-shallow`), on the budgets ``ns`` of the deep learner.

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4); :math:`r` = :func:`latent_rank`.
    ns : array_like of int
        Increasing sample budgets (>= 16).
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    p : int
        Width (number of features), >= 2.
    eta0 : float
        Giant-step size in units of :math:`p\sqrt{n_1/d}`.
    n_test : int
        Test samples (the test set of ``depth_sweep`` for the same ``rng``).
    eps : float
        Latent exponent.
    chunk : int
        Largest block of samples handled at once.
    rf_seeds : int, optional
        Random features only on the first ``rf_seeds`` seeds (default all; ``rf_error`` has
        that many rows).
    rng : Generator, int or None
        Parent random state: streams ``(d, seed, 6)`` test set (as in ``depth_sweep``),
        ``(d, seed, 7)`` random-features data, ``(d, seed, 8)`` and ``(d, seed, 9)`` the
        step and ridge batches of the network, ``(d, seed, 10)`` the random features,
        ``(d, seed, 11)`` the network's initialisation (rows of :math:`W_0`, then signs).

    Returns
    -------
    ShallowSweep
    """
    dims = _dims(dims)
    ns = V.finite_array(ns, "ns", ndim=1)
    if ns.size == 0 or np.any(ns < 16) or np.any(ns != np.round(ns)) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must hold increasing integers >= 16")
    ns = ns.astype(int)
    seeds, p = V.positive_int(seeds, "seeds"), V.positive_int(p, "p", minimum=2)
    srf = seeds if rf_seeds is None else V.positive_int(rf_seeds, "rf_seeds")
    if srf > seeds:
        raise ValueError(f"rf_seeds must be an integer in 1..{seeds}, got {srf}")
    eta0 = V.positive_float(eta0, "eta0")
    n_test, chunk = V.positive_int(n_test, "n_test"), V.positive_int(chunk, "chunk")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    shape = (seeds, len(dims), len(ns))
    gs, lat = np.zeros(shape), np.zeros(shape)
    rf = np.zeros((srf,) + shape[1:])
    half = np.maximum(ns // 2, 8)
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        d, r = int(d), int(r)
        var = T.feature_law(r, c).var
        key = lambda k, d=d: [V.stream(rng, d, s, k) for s in range(seeds)]  # noqa: E731
        Xt, yt = _draw(key(6), n_test, d, r, c)
        Wrf = _layer(key(10)[:srf], p, d)
        test = (relu_features(Xt[:srf], Wrf), yt[:srf])
        acc = [np.zeros((srf, p, p)), np.zeros((srf, p)), np.zeros((srf, p))]
        ysum, gens = np.zeros(srf), key(7)[:srf]
        for start, stop, i in _segments(ns, chunk):
            X, y = _draw(gens, stop - start, d, r, c)
            for a, m in zip(acc, _moments(relu_features(X, Wrf), y), strict=True):
                a += m
            ysum += y.sum(axis=1)
            if i is not None:
                rf[:, j, i] = _best(*acc, ysum, stop, test, var)
        gens = key(11)
        W0 = _layer(gens, p, d)
        a0 = np.stack([g.choice([-1.0, 1.0], size=p) for g in gens]) / math.sqrt(p)
        Xr, yr = _draw(key(9), int(half[-1]), d, r, c)
        grad, gens = np.zeros_like(W0), key(8)
        for start, stop, i in _segments(half, chunk):
            X, y = _draw(gens, stop - start, d, r, c)
            grad += _step_sum(W0, a0, X, y, np.float32)
            if i is None:
                continue
            W1 = W0 - eta0 * p * math.sqrt(stop / d) * grad / stop
            lat[:, j, i] = np.mean(np.sum(W1[:, :, :r] ** 2, -1)
                                   / np.sum(W1[:, :, :d] ** 2, -1), -1)
            mom = [np.zeros((seeds, p, p)), np.zeros((seeds, p)), np.zeros((seeds, p))]
            for s0 in range(0, stop, chunk):
                s1 = min(s0 + chunk, stop)
                for a, m in zip(mom, _moments(relu_features(Xr[:, s0:s1], W1), yr[:, s0:s1]),
                                strict=True):
                    a += m
            gs[:, j, i] = _best(*mom, yr[:, :stop].sum(1), stop,
                                (relu_features(Xt, W1), yt), var)
    return ShallowSweep(dims, ranks, ns, p, rf, gs, lat)


def rf_sweep(dims, ns, seeds, c, widths, n_test=2000, eps=0.5, chunk=2048, rng=None):
    r"""Random-features ridge alone, with a width of its own at each size (of order
    :math:`d^2/2`, the number of quadratic forms of :math:`x`, so that it can be
    sample-limited rather than width-limited, {prf:ref}`prop-ch10-shallow`), on the streams
    of :func:`shallow_sweep` (same training samples and test points).

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4).
    ns : array_like of int
        Increasing sample sizes.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    widths : array_like of int
        Number of features at each size.
    n_test : int
        Test samples.
    eps : float
        Latent exponent.
    chunk : int
        Samples per block.
    rng : Generator, int or None
        Parent random state.

    Returns
    -------
    ndarray (seeds, sizes, len(ns))
        Normalised test errors (divided by :math:`\operatorname{Var}y`).
    """
    dims = _dims(dims)
    ns = np.asarray(V.finite_array(ns, "ns", ndim=1))
    if ns.size == 0 or np.any(ns < 8) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must hold increasing integers >= 8")
    ns = ns.astype(int)
    widths = [V.positive_int(int(p), "widths", minimum=2) for p in widths]
    if len(widths) != len(dims):
        raise ValueError("widths must have one entry per size")
    seeds = V.positive_int(seeds, "seeds")
    out = np.zeros((seeds, len(dims), len(ns)))
    for j, (d, p) in enumerate(zip(dims, widths, strict=True)):
        d, r = int(d), latent_rank(int(d), eps)
        var = T.feature_law(r, c).var
        key = lambda k, d=d: [V.stream(rng, d, s, k) for s in range(seeds)]  # noqa: E731
        Xt, yt = _draw(key(6), n_test, d, r, c)
        W = _layer(key(10), p, d)
        test = (relu_features(Xt, W), yt)
        acc = [np.zeros((seeds, p, p)), np.zeros((seeds, p)), np.zeros((seeds, p))]
        ysum, gens = np.zeros(seeds), key(7)
        for start, stop, i in _segments(ns, chunk):
            X, y = _draw(gens, stop - start, d, r, c)
            for a, m in zip(acc, _moments(relu_features(X, W), y), strict=True):
                a += m
            ysum += y.sum(axis=1)
            if i is not None:
                out[:, j, i] = _best(*acc, ysum, stop, test, var)
    return out


def trend_size(ns, errors, level, last=5):
    r"""The :math:`n` at which a learning curve would reach ``level`` if it went on as over its
    last ``last`` grid points: a straight line fitted to :math:`\log` error against
    :math:`\log n` there, extrapolated (the size a shallow learner would need to reach the
    kernel floor {eq}`eq-ch10-floor`, as a measured trend, not a theorem).

    Parameters
    ----------
    ns : array_like (N,)
        Increasing positive sample sizes.
    errors : array_like (..., N)
        Positive errors (means over seeds, say).
    level : float or array_like
        Positive target level, broadcastable to ``errors.shape[:-1]``.
    last : int
        Number of grid points fitted (2..N).

    Returns
    -------
    slope : ndarray (...)
        The fitted exponent of :math:`n`.
    size : ndarray (...)
        The extrapolated :math:`n` (``inf`` where the fitted curve does not decrease; ``n``
        itself where the curve is already at or below ``level``).
    """
    ns = V.finite_array(ns, "ns", ndim=1)
    e = V.finite_array(errors, "errors")
    if ns.size < 2 or np.any(ns <= 0) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must hold at least two increasing positive numbers")
    if e.ndim < 1 or e.shape[-1] != ns.size or np.any(e <= 0):
        raise ValueError(f"errors must be positive with {ns.size} entries on the last axis")
    last = V.positive_int(last, "last", minimum=2)
    if last > ns.size:
        raise ValueError(f"last must be an integer in 2..{ns.size}, got {last}")
    lev = np.broadcast_to(V.finite_array(level, "level"), e.shape[:-1])
    if np.any(lev <= 0):
        raise ValueError("level must be positive")
    lx, ly = np.log(ns[-last:]), np.log(e[..., -last:])
    xc = lx - lx.mean()
    slope = np.sum((ly - ly.mean(-1, keepdims=True)) * xc, -1) / np.sum(xc * xc)
    top = ly.mean(-1) + slope * (lx[-1] - lx.mean())  # the fitted line at the largest n
    gap = np.log(lev) - top
    with np.errstate(divide="ignore"):
        size = np.where(gap >= 0, ns[-1], np.where(slope < 0, np.exp(lx[-1] + gap / np.where(
            slope < 0, slope, -1.0)), np.inf))
    return slope, size


def _gram_and_ridges(gram, lams):
    """``gram`` (..., p, p) and ``lams`` (positive ridges on the last axis), checked."""
    gram = V.finite_array(gram, "gram")
    if gram.ndim < 2 or gram.shape[-1] != gram.shape[-2]:
        raise ValueError("gram must have shape (..., p, p)")
    lams = V.finite_array(lams, "lams")
    if lams.ndim < 1 or lams.size == 0 or np.any(lams <= 0):
        raise ValueError("lams must hold positive numbers, the ridges on the last axis")
    return gram, lams
