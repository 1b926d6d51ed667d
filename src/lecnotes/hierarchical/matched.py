r"""The matched two-layer learner of chapter 10 ({prf:ref}`ex-ch10-exponents` (b)).

A two-layer network whose first layer has found the latent subspace (the same stage-one
:math:`\hat U` as the layer-wise learner, from the same samples) and whose second layer is a
kernel on the :math:`r` latent coordinates :math:`\hat z = \hat U^\top x`: here ridge regression
on all the Hermite polynomials of :math:`\hat z` of degree at most 4, the degree of the target
as a function of :math:`z` ({prf:ref}`prop-ch10-shallow`). It knows :math:`r` and the degree,
not the feature: its second layer has :math:`\binom{r+4}{4}` coefficients (495, 1001, 1820 at
:math:`r` = 8, 10, 12), against the :math:`r(r+1)/2 + 3` of the layer-wise learner's last two
stages. Since :math:`\hat U` has orthonormal columns and is independent of the samples it is
applied to, :math:`\hat z\sim N(0, I_r)` exactly and the normalised Hermite products are
orthonormal: the ridge is in units of the identity, the population Gram matrix.
"""

from __future__ import annotations

import math
from itertools import combinations_with_replacement

import numpy as np
import scipy.linalg as sla

from lecnotes.core import stats
from lecnotes.core import validate as V

__all__ = ["MATCHED_RIDGES", "hermite_index", "hermite_features", "latent_ridge_errors",
           "hermite_ridge_errors", "welch_z"]

MATCHED_RIDGES = np.array([1e-3, 1e-2, 1e-1, 1.0])
"""Ridges tried by the matched learner (units of the identity); the best on the test set."""


def hermite_index(r, degree=4):
    r"""Multi-indices of the Hermite products of degree at most ``degree`` in ``r`` variables,
    as ``degree`` columns of flat indices ``k * r + j`` into the table of
    :math:`h_k(z_j)` (padding ``0``: :math:`h_0 = 1`) ({prf:ref}`prop-ch10-shallow`).

    Parameters
    ----------
    r : int
        Number of variables (>= 1).
    degree : int
        Largest total degree (>= 1).

    Returns
    -------
    ndarray (m, degree) of int
        :math:`m = \binom{r+\mathrm{degree}}{\mathrm{degree}}` rows.
    """
    r = V.positive_int(r, "r")
    degree = V.positive_int(degree, "degree")
    rows = []
    for k in range(degree + 1):
        for combo in combinations_with_replacement(range(r), k):
            pairs = [(combo.count(j), j) for j in sorted(set(combo))]
            row = [p * r + j for p, j in pairs]
            rows.append(row + [0] * (degree - len(row)))
    return np.array(rows, dtype=int).reshape(len(rows), degree)


def hermite_features(Z, index):
    r"""Normalised Hermite products :math:`\prod_jh_{\alpha_j}(z_j)`, orthonormal under
    :math:`N(0, I_r)` ({prf:ref}`prop-ch10-shallow`), in single precision.

    Parameters
    ----------
    Z : ndarray (n, r)
        Latent coordinates.
    index : ndarray (m, degree)
        From :func:`hermite_index` with the same ``r``.

    Returns
    -------
    ndarray (n, m), float32
    """
    Z = V.finite_array(Z, "Z", ndim=2)
    return _hermite_rows(Z, np.asarray(index)).T


def _hermite_rows(Z, index):
    """The transpose of :func:`hermite_features`, (m, n): built row by row (contiguous copies
    of the rows of the table of h_k(z_j)), the same products in the same order."""
    degree = index.shape[1]
    r = Z.shape[1]
    if index.max() >= (degree + 1) * r:
        raise ValueError("index does not match the number of columns of Z")
    Zt = np.ascontiguousarray(Z.T)
    H = [np.ones_like(Zt), Zt]
    for k in range(2, degree + 1):
        H.append(Zt * H[-1] - (k - 1) * H[-2])
    table = np.concatenate([h / math.sqrt(math.factorial(k)) for k, h in enumerate(H)],
                           axis=0).astype(np.float32)
    F = table[index[:, 0]]
    for t in range(1, degree):
        F *= table[index[:, t]]
    return F


def latent_ridge_errors(U, X, y, Xt, yt, index, ridges=MATCHED_RIDGES):
    r"""Test mean squared errors of the matched two-layer learner ({prf:ref}`ex-ch10-exponents`
    (b)): ridge on the Hermite features of :math:`\hat z = \hat U^\top x` up to the degree of
    ``index``, one value per ridge.

    Parameters
    ----------
    U : ndarray (d, r)
        Orthonormal columns, the learned latent subspace.
    X, y : ndarray (n, d), (n,)
        Training samples (fresh with respect to ``U``).
    Xt, yt : ndarray (n_t, d), (n_t,)
        Test samples.
    index : ndarray (m, degree)
        From :func:`hermite_index`.
    ridges : array_like
        Positive ridges, in units of the identity.

    Returns
    -------
    ndarray (len(ridges),)
    """
    X, y = V.data_pair(X, y)
    return hermite_ridge_errors(X @ U, y, Xt @ U, yt, index, ridges)


def hermite_ridge_errors(Z, y, Zt, yt, index, ridges=MATCHED_RIDGES):
    r""":func:`latent_ridge_errors` from the latent coordinates :math:`\hat z = \hat U^\top x`
    of the training and test samples ({prf:ref}`ex-ch10-exponents` (b)).

    Parameters
    ----------
    Z, y : ndarray (n, r), (n,)
        Training latent coordinates and labels.
    Zt, yt : ndarray (n_t, r), (n_t,)
        Test latent coordinates and labels.
    index : ndarray (m, degree)
        From :func:`hermite_index`.
    ridges : array_like
        Positive ridges, in units of the identity.

    Returns
    -------
    ndarray (len(ridges),)
    """
    ridges = V.finite_array(ridges, "ridges", ndim=1)
    if ridges.size == 0 or np.any(ridges <= 0):
        raise ValueError("ridges must hold positive numbers")
    Z, y = np.asarray(Z), np.asarray(y)
    if Z.ndim != 2 or y.shape != Z.shape[:1] or np.asarray(Zt).shape[1:] != Z.shape[1:]:
        raise ValueError("Z must have shape (n, r), y (n,) and Zt (n_t, r)")
    index = np.asarray(index)
    FT = _hermite_rows(Z, index)  # (m, n)
    n = len(y)
    G = (FT @ FT.T).astype(float) / n
    b = (FT @ y.astype(np.float32)).astype(float) / n
    Ft = _hermite_rows(Zt, index).astype(float)  # (m, n_t)
    G32, b32 = G.astype(np.float32), b.astype(np.float32)  # G is near I: single precision
    coef = np.empty((ridges.size, len(G)))
    for i, lam in enumerate(ridges):
        A = G32 + np.float32(lam) * np.eye(len(G), dtype=np.float32)
        coef[i] = sla.cho_solve(sla.cho_factor(A, check_finite=False), b32)
    return np.mean((coef @ Ft - yt) ** 2, axis=1)


def welch_z(a, se_a, n_a, b, se_b, n_b):
    r"""The difference of two means over independent seeds in standard errors, and the
    Student-:math:`t` factor (level ``stats.CLAIM_LEVEL``) of its Welch-Satterthwaite degrees
    of freedom, rounded down: the comparison of two growth exponents
    ({prf:ref}`ex-ch10-exponents`).

    Parameters
    ----------
    a, se_a : float
        First mean and its standard error.
    n_a : int
        Its number of seeds (>= 2).
    b, se_b, n_b
        The same for the second mean.

    Returns
    -------
    z : float
        :math:`(a-b)/\sqrt{se_a^2+se_b^2}`.
    t : float
        The :math:`t` factor the one-sided claim :math:`z\ge t` uses.
    """
    n_a, n_b = V.positive_int(n_a, "n_a", minimum=2), V.positive_int(n_b, "n_b", minimum=2)
    va, vb = float(se_a) ** 2, float(se_b) ** 2
    if not (va > 0 and vb > 0):
        raise ValueError("the standard errors must be positive")
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    return (float(a) - float(b)) / math.sqrt(va + vb), stats.t_factor(int(df) + 1)
