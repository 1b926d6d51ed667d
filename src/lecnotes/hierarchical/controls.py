r"""Controls of the layer-wise protocol ({ref}`sec-ch10-gd`): the second stage alone, given
the latent space, on the radial feature of {prf:ref}`def-ch10-sight` and on a feature that is
not rotation invariant inside the latent space ({ref}`sec-ch10-control`).

The first layer is the ideal output of stage 1: :math:`p_1` unit rows drawn uniformly inside
the latent space, so that every first-layer feature :math:`\phi_k = \mathrm{He}_2(w_k^\top
z)/\sqrt2` is a quadratic form of the :math:`r` latent coordinates :math:`z` and the samples
can be drawn in :math:`\mathbb R^r`. The target's feature is :math:`h_B = (z^\top Bz -
\operatorname{tr}B)/(\sqrt2\|B\|_F)` with :math:`B = I_r` (radial, :math:`h_B = h`) or
:math:`B = \operatorname{diag}(1, -1, 1, -1, \dots)` (signed), and :math:`y = g(h_B)` with the
link of {eq}`eq-ch10-feature`. The second layer is trained as in
:mod:`lecnotes.hierarchical.layerwise` and its correlation with :math:`h_B` is exact:
:math:`\operatorname{tr}(MB)/(\|M\|_F\|B\|_F)`, :math:`M = \sum_kv_kw_kw_k^\top`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.experiments import latent_rank, log_crossing

__all__ = ["StageTwoControl", "feature_matrix", "running_crossing", "stage_two_control"]


class StageTwoControl(NamedTuple):
    r"""Second-stage correlations given the latent space, seeds on axis 0."""

    dims: np.ndarray
    ranks: np.ndarray
    betas: np.ndarray
    """Stage-2 budgets :math:`n_2/r^2`."""
    corr: np.ndarray
    """``[feature, seed, size, beta]``: correlation with :math:`h_B` of the trained
    pre-activation, feature 0 radial and 1 signed."""
    corr_sum: np.ndarray
    """``[feature, seed, size]``: the same for the untrained uniform layer :math:`v = 1`."""


def feature_matrix(r, signed):
    r"""The matrix :math:`B/\|B\|_F` of the feature :math:`h_B` ({ref}`sec-ch10-control`).

    Parameters
    ----------
    r : int
        Latent dimension (>= 2).
    signed : bool
        ``False``: :math:`B = I_r` (the radial feature :math:`h`); ``True``:
        :math:`B = \operatorname{diag}(1, -1, 1, \dots)`.

    Returns
    -------
    ndarray (r, r)
    """
    r = V.positive_int(r, "r", minimum=2)
    b = np.where(np.arange(r) % 2 == 1, -1.0, 1.0) if signed else np.ones(r)
    return np.diag(b / np.linalg.norm(b))


def _quadratic_span(Wl):
    """Orthonormal basis (p1, k) of the span of the features' coefficient vectors: feature k,
    (z'w_kw_k'z - 1)/sqrt2, is linear in the r(r+1)/2 + 1 monomials z_az_b (a <= b) and 1,
    so every Gram matrix of the features has its range inside this span (k <= that number)."""
    p1, r = Wl.shape
    a, b = np.triu_indices(r)
    C = np.concatenate([Wl[:, a] * Wl[:, b], np.ones((p1, 1))], axis=1)  # (p1, D)
    if C.shape[1] >= p1:
        return np.eye(p1)
    return np.linalg.qr(C)[0]


def _gd_from_zero(G, m, steps):
    """``steps`` GD steps from 0 on v'Gv/2 - m'v with step 1/lambda_max(G), in closed form
    (the loop of :mod:`lecnotes.hierarchical.layerwise`, one column of ``m`` per target)."""
    lam, U = np.linalg.eigh(G)  # batched over leading axes of G (..., k, k), m (..., k, t)
    lr = 1.0 / lam[..., -1:]
    small = lam <= 1e-12 * lam[..., -1:]
    fac = np.where(small, steps * lr, (1 - (1 - lr * lam) ** steps) / np.where(small, 1, lam))
    return U @ (fac[..., :, None] * (np.swapaxes(U, -1, -2) @ m))


def _corr(Wl, v, B):
    """Correlation of sum_k v_k He2(w_k.z)/sqrt2 with h_B for latent rows Wl (p1, r)."""
    r = Wl.shape[1]
    outer = (Wl[:, :, None] * Wl[:, None, :]).reshape(len(Wl), r * r)
    M = (np.asarray(v) @ outer).reshape(np.shape(v)[:-1] + (r, r))
    return np.einsum("...de,ed->...", M, B) / np.linalg.norm(M, axis=(-2, -1))


def stage_two_control(dims, betas, seeds, c, width=1.0, steps2=200, eps=0.5, rng=None):
    r"""Stage 2 of the layer-wise protocol on an ideal first layer ({ref}`sec-ch10-control`),
    for the radial and the signed feature, on the same first layers and latent samples.

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4); :math:`r` = :func:`latent_rank`, :math:`p_1 = ` ``width``
        :math:`\cdot d`.
    betas : array_like
        Increasing budgets :math:`n_2/r^2`.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    width : float
        First-layer width in units of :math:`d`.
    steps2 : int
        Gradient steps of the second layer.
    eps : float
        Latent exponent.
    rng : Generator, int or None
        Parent random state (streams ``(d, seed, 41..42)``: first layer, samples).

    Returns
    -------
    StageTwoControl
    """
    dims = np.asarray(V.finite_array(dims, "dims", ndim=1), int)
    betas = V.finite_array(betas, "betas", ndim=1)
    if betas.size == 0 or np.any(betas <= 0) or np.any(np.diff(betas) <= 0):
        raise ValueError("betas must hold increasing positive numbers")
    seeds = V.positive_int(seeds, "seeds")
    steps2, width = V.positive_int(steps2, "steps2"), V.positive_float(width, "width")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    corr = np.zeros((2, seeds, len(dims), len(betas)))
    corr_sum = np.zeros((2, seeds, len(dims)))
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        d, r = int(d), int(r)
        p1 = max(int(round(width * d)), r)
        n2 = np.maximum(np.round(betas * r * r).astype(int), 2)
        Bs = [feature_matrix(r, sig) for sig in (False, True)]
        for s in range(seeds):
            Wl = V.stream(rng, d, s, 41).standard_normal((p1, r))
            Wl /= np.linalg.norm(Wl, axis=1, keepdims=True)
            Z = V.stream(rng, d, s, 42).standard_normal((int(n2[-1]), r))
            # the features in the coordinates of their span Q (the iterates of GD from 0
            # stay in it): Gram matrices of order <= r(r+1)/2 + 1 instead of p1
            Q = _quadratic_span(Wl)
            F = (((Z @ Wl.T) ** 2 - 1) / np.sqrt(2)) @ Q
            hs = [(np.einsum("ij,jk,ik->i", Z, B, Z) - np.trace(B)) / np.sqrt(2) for B in Bs]
            Y = np.stack([T.link(h, c) for h in hs], axis=1)
            k = Q.shape[1]
            G, m = np.zeros((len(n2), k, k)), np.zeros((len(n2), k, 2))
            Gs, ms, f1, y1, start = np.zeros((k, k)), np.zeros((k, 2)), np.zeros(k), 0.0, 0
            for i, n in enumerate(n2):
                Gs += F[start:n].T @ F[start:n]
                ms += F[start:n].T @ Y[start:n]
                f1 += F[start:n].sum(axis=0)
                y1 += Y[start:n].sum(axis=0)
                start = n
                # labels centred by the mean of this batch, the first n samples
                G[i], m[i] = Gs / n, (ms - np.outer(f1, y1 / n)) / n
            v = Q @ _gd_from_zero(G, m, steps2)  # (beta, p1, feature), every n at once
            for f, B in enumerate(Bs):
                corr[f, s, j] = _corr(Wl, v[:, :, f], B)
            for f, B in enumerate(Bs):
                corr_sum[f, s, j] = _corr(Wl, np.ones(p1), B)
    return StageTwoControl(dims, ranks, betas, corr, corr_sum)


def running_crossing(x, values, level):
    r"""The abscissa at which the running maximum of each curve reaches ``level``,
    interpolated in :math:`\log x` ({ref}`sec-ch10-control`); a curve already at ``level`` at
    the first point counts as crossing there, one that never reaches it as crossing at the
    last (censored at the ends of the grid, both counted).

    Parameters
    ----------
    x : array_like (p,)
        Increasing positive abscissae.
    values : array_like (..., p)
        Curves.
    level : float
        The level.

    Returns
    -------
    crossing : ndarray (...)
    censored : tuple of int
        Curves censored at the left and at the right end.
    """
    run = np.maximum.accumulate(V.finite_array(values, "values"), axis=-1)
    level = float(level)
    left, right = int(np.sum(run[..., 0] >= level)), int(np.sum(run[..., -1] < level))
    run[..., 0] = np.minimum(run[..., 0], level - 1e-9)
    run[..., -1] = np.maximum(run[..., -1], level)
    return log_crossing(x, run, level), (left, right)
