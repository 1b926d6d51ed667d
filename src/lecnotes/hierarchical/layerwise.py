r"""The layer-wise protocol of {prf:ref}`thm-ch10-layerwise` run by gradient descent
({ref}`sec-ch10-gd`): a three-layer network whose first layer is trained alone on a first
batch, then its second layer alone on a fresh batch.

The network is :math:`f(x) = \sum_ja_j\sigma_2(u_j(x))`, :math:`u_j(x) = v_j^\top\phi(x)`,
with first-layer features :math:`\phi_k(x) = \mathrm{He}_2(w_k^\top x)/\sqrt2`,
:math:`\|w_k\| = 1`, :math:`k = 1..p_1`.

* **Stage 1** (:math:`W_1` alone, :math:`n_1` samples): the upper layers are frozen so that
  every first-layer unit enters the output with the same positive weight, and :math:`W_1`
  follows gradient ascent on the sphere of the correlation :math:`\frac1{n_1}\sum_i
  (T(y_i) - \bar T)f(x_i)` with :math:`T = \tanh`. For this activation the gradient of row
  :math:`k` is :math:`\sqrt2\,\bar D_Tw_k` with :math:`\bar D_T = \frac1{n_1}\sum_i(T(y_i) -
  \bar T)x_ix_i^\top`, so each step is :math:`w_k\leftarrow(w_k + \eta_1\bar D_Tw_k)/\|\cdot\|`
  (the :math:`\sqrt2` absorbed in :math:`\eta_1`): a shifted power iteration of the matrix of
  {eq}`eq-ch10-spectral`, run by every row from its own random start.
* **Stage 2** (:math:`W_2` alone, :math:`W_1` frozen, :math:`n_2` fresh samples): gradient
  descent from :math:`v = 0` on the square loss of the pre-activation,
  :math:`\frac1{2n_2}\sum_i(y_i - \bar y - v^\top\phi(x_i))^2`, a fixed number of steps of size
  the inverse of the largest eigenvalue of the empirical feature covariance (a second-layer
  unit in its linear regime; its output is a function of :math:`u` alone, and the third stage
  fits the link on it).

Both overlaps are exact (no test set): :math:`q_1` of the top-:math:`r` right singular
subspace of :math:`W_1`, and :math:`\mathrm{corr}(u, h) = \operatorname{tr}(B_{zz})/(\sqrt r
\|B\|_F)` with :math:`u(x) = (x^\top Bx - \operatorname{tr}B)/\sqrt2`,
:math:`B = \sum_kv_kw_kw_k^\top` (the covariance identity of Gaussian quadratic forms).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.hierarchical.experiments import latent_rank, sample_sight
from lecnotes.hierarchical.numerics import top_eigenvectors

__all__ = ["LayerwiseGD", "layerwise_gd_sweep", "quadratic_corr"]


class LayerwiseGD(NamedTuple):
    r"""Stage-wise overlaps of the gradient-trained three-layer network, seeds on axis 0."""

    dims: np.ndarray
    ranks: np.ndarray
    alphas: np.ndarray
    """Stage-1 budgets :math:`n_1/(dr)`."""
    betas: np.ndarray
    """Stage-2 budgets :math:`n_2/r^2`."""
    q1: np.ndarray
    """``[seed, size, alpha]``: subspace overlap of the top-:math:`r` right singular vectors of
    :math:`W_1` after ``steps1`` steps."""
    q1_one: np.ndarray
    """The same after a single step."""
    energy: np.ndarray
    """``[seed, size, alpha]``: fraction of :math:`W_1`'s Frobenius energy in the latent
    space."""
    corr: np.ndarray
    """``[seed, size, beta]``: correlation with :math:`h` of the second-layer pre-activation,
    trained on top of the first layer of the largest ``alpha``."""
    corr_sum: np.ndarray
    """``[seed, size]``: the same for the untrained uniform second layer :math:`v = 1`, the sum
    of the first-layer features (stage 2's zero-sample baseline)."""


def quadratic_corr(W, v, r):
    r"""Correlation with :math:`h` ({eq}`eq-ch10-feature`) of
    :math:`u(x) = v^\top\phi(x)`, :math:`\phi_k = \mathrm{He}_2(w_k^\top x)/\sqrt2`, for
    :math:`x\sim N(0, I_d)` and unit rows :math:`w_k`, the latent space the first ``r``
    coordinates ({ref}`sec-ch10-gd`).

    Parameters
    ----------
    W : ndarray (..., p1, d)
        First-layer rows, unit norm.
    v : ndarray (..., p1)
        Second-layer weights.
    r : int
        Latent dimension.

    Returns
    -------
    ndarray (...)
    """
    W, v = np.asarray(W, float), np.asarray(v, float)
    B = np.matmul(np.swapaxes(W * v[..., None], -1, -2), W)
    tr = np.trace(B[..., :r, :r], axis1=-2, axis2=-1)
    return tr / (np.sqrt(r) * np.linalg.norm(B, axis=(-2, -1)))


def _stage_one(X, t, W0, ns, steps, eta):
    """Rows of W1 after ``steps`` spherical steps at each nested n, and after one step."""
    d = X.shape[1]
    D, S, start, out, one = np.zeros((d, d)), np.zeros((d, d)), 0, [], []
    Xs, ts = X.astype(np.float32), t.astype(np.float32)  # single-precision blocks
    for n in ns:
        D += ((Xs[start:n] * ts[start:n, None]).T @ Xs[start:n]).astype(float)
        S += (Xs[start:n].T @ Xs[start:n]).astype(float)
        start = n
        Db = D / n - np.mean(t[:n]) * S / n
        W = W0
        for k in range(steps):
            W = W + eta * W @ Db
            W = W / np.linalg.norm(W, axis=1, keepdims=True)
            if k == 0:
                one.append(W)
        out.append(W)
    return out, one


def _top_overlap(W, r):
    U = top_eigenvectors(W.T @ W, r)  # the top-r right singular vectors
    return float(np.sum(U[:r] ** 2) / r)


def _stage_two(W, X, y, ns, steps):
    """Second-layer weights after ``steps`` GD steps from 0, at each nested n."""
    F = ((X @ W.T) ** 2 - 1) / np.sqrt(2)
    yc = y - np.mean(y)
    G, m, start = np.zeros((len(ns),) + (W.shape[0],) * 2), np.zeros((len(ns), W.shape[0])), 0
    Gs, ms = np.zeros(G.shape[1:]), np.zeros(W.shape[0])
    for i, n in enumerate(ns):
        Gs += F[start:n].T @ F[start:n]
        ms += F[start:n].T @ yc[start:n]
        start = n
        G[i], m[i] = Gs / n, ms / n
    lr = 1.0 / np.linalg.eigvalsh(G)[:, -1:]  # every n at once
    v = np.zeros_like(m)
    for _ in range(steps):
        v = v + lr * (m - np.matmul(G, v[:, :, None])[:, :, 0])
    return v


def layerwise_gd_sweep(dims, alphas, betas, seeds, c, width=1.0, steps1=10, eta1=3.0,
                       steps2=200, eps=0.5, rng=None):
    r"""The layer-wise protocol by gradient descent ({ref}`sec-ch10-gd`) at each size and
    seed: stage 1 at :math:`n_1 = \alpha dr` (nested in :math:`\alpha`), then stage 2 at
    :math:`n_2 = \beta r^2` fresh samples (nested in :math:`\beta`) on the first layer of the
    largest :math:`\alpha`.

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4); :math:`r` = :func:`latent_rank`.
    alphas, betas : array_like
        Increasing stage budgets :math:`n_1/(dr)` and :math:`n_2/r^2`.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    width : float
        First-layer width :math:`p_1` in units of :math:`d`.
    steps1, steps2 : int
        Gradient steps of the two stages.
    eta1 : float
        Step size of stage 1.
    eps : float
        Latent exponent.
    rng : Generator, int or None
        Parent random state (streams ``(d, seed, 21..23)``: stage 1, initialisation, stage 2).

    Returns
    -------
    LayerwiseGD
    """
    dims = np.asarray(V.finite_array(dims, "dims", ndim=1), int)
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    betas = V.finite_array(betas, "betas", ndim=1)
    for a, name in ((alphas, "alphas"), (betas, "betas")):
        if a.size == 0 or np.any(a <= 0) or np.any(np.diff(a) <= 0):
            raise ValueError(f"{name} must hold increasing positive numbers")
    seeds = V.positive_int(seeds, "seeds")
    steps1, steps2 = V.positive_int(steps1, "steps1"), V.positive_int(steps2, "steps2")
    eta1, width = V.positive_float(eta1, "eta1"), V.positive_float(width, "width")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    shape = (seeds, len(dims), len(alphas))
    q1, q1_one, energy = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    corr, corr_sum = np.zeros((seeds, len(dims), len(betas))), np.zeros((seeds, len(dims)))
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        d, r, p1 = int(d), int(r), max(int(round(width * d)), int(r))
        n1 = np.round(alphas * d * r).astype(int)
        n2 = np.maximum(np.round(betas * r * r).astype(int), 2)
        for s in range(seeds):
            X, y = sample_sight(d, r, int(n1[-1]), c, V.stream(rng, d, s, 21))
            W0 = V.stream(rng, d, s, 22).standard_normal((p1, d))
            W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
            Ws, ones = _stage_one(X, np.tanh(y), W0, n1, steps1, eta1)
            for i, (W, W_one) in enumerate(zip(Ws, ones, strict=True)):
                q1[s, j, i], q1_one[s, j, i] = _top_overlap(W, r), _top_overlap(W_one, r)
                energy[s, j, i] = np.sum(W[:, :r] ** 2) / p1
            X2, y2 = sample_sight(d, r, int(n2[-1]), c, V.stream(rng, d, s, 23))
            vs = _stage_two(Ws[-1], X2, y2, n2, steps2)
            corr[s, j] = quadratic_corr(Ws[-1][None], vs, r)
            corr_sum[s, j] = quadratic_corr(Ws[-1], np.ones(p1), r)
    return LayerwiseGD(dims, ranks, alphas, betas, q1, q1_one, energy, corr, corr_sum)
