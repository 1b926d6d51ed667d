r"""Chapter 6, generalisation: ridge on the features of a giant step, simulated and predicted.

After one step the feature map :math:`x\mapsto p^{-1/2}\sigma(W_1x)` is a spiked random-features
model ({prf:ref}`def-ch6-two-phase`, phase 2). This module holds the ridge estimator of the
chapter's learning curves (:func:`ridge_second_layer_path`, :func:`ridge_test_error`) and the
deterministic equivalent that predicts its test error from the second moments of the features
({prf:ref}`thm-ch6-ridge-equivalent`): the exact ReLU feature covariance
(:func:`relu_feature_covariance`, the arc-cosine kernel), the feature-label correlations by
quadrature (:func:`feature_label_moments`), and the equivalent itself
(:func:`ridge_equivalent_error`, :func:`equivalent_learning_curve`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.models.networks import features, output_scale

__all__ = [
    "ridge_second_layer_path",
    "ridge_test_error",
    "relu_feature_covariance",
    "FeatureMoments",
    "feature_label_moments",
    "ridge_equivalent_error",
    "equivalent_learning_curve",
]

RIDGES = 10.0 ** np.arange(-5, 0)
"""The ridges of the chapter's learning curves, chosen on a validation set."""


def ridge_second_layer_path(W, X, y, lams, activation="relu", *, scaling=1.0) -> np.ndarray:
    r"""Ridge second layers for several ridges at once (phase 2 of {prf:ref}`def-ch6-two-phase`).

    The same estimator as :func:`lecnotes.models.layerwise.ridge_second_layer` for every
    :math:`\lambda` in ``lams`` (all > 0), from one eigendecomposition of :math:`F^\top F`
    (:math:`n\ge p`) or :math:`FF^\top` (:math:`n<p`): choosing the ridge on a validation
    set costs one fit.

    Parameters
    ----------
    W, X, y, activation, scaling
        As in :func:`lecnotes.models.layerwise.ridge_second_layer`.
    lams : sequence of float
        Ridges, all > 0.

    Returns
    -------
    ndarray (len(lams), p)
    """
    X, y = V.data_pair(X, y)
    W = V.finite_array(W, "W", ndim=2)
    if W.shape[0] < 1 or X.shape[1] != W.shape[1]:
        raise ValueError(f"W must have shape (p >= 1, {X.shape[1]}), got {W.shape}")
    lams = V.finite_array(lams, "lams", ndim=1)
    if lams.size < 1 or np.any(lams <= 0):
        raise ValueError("lams must be a non-empty sequence of positive ridges")
    F = output_scale(W.shape[0], scaling) * features(W, X, activation)
    n, p = F.shape
    if n >= p:
        evals, U = np.linalg.eigh(F.T @ F)
        proj = U.T @ (F.T @ y)
        return (U @ (proj[:, None] / (evals[:, None] + n * lams[None, :]))).T
    evals, U = np.linalg.eigh(F @ F.T)
    proj = U.T @ y
    return (F.T @ (U @ (proj[:, None] / (evals[:, None] + n * lams[None, :])))).T



def ridge_test_error(W, batch, val, test, p: int, offset: Callable | None = None,
                     moments=None):
    r"""Test error of a ridge second layer on the features of ``W`` ({prf:ref}`def-ch6-two-phase`).

    The ridge is fitted on ``batch`` for :math:`\lambda\in\{10^{-5},\dots,10^{-1}\}`
    (:func:`ridge_second_layer_path`) and chosen on ``val``; ``offset(x)`` (default 0) is
    added to the network output (the linear part removed from the labels).

    Parameters
    ----------
    W : ndarray (p, d)
    batch, val, test : (X, y) pairs
    p : int
        Width (the output scale is :math:`p^{-1/2}`).
    offset : callable, optional
    moments : FeatureMoments, optional
        The second moments of the features of ``W`` and the labels (no ``offset``). Given,
        the function also returns the exact population error of the chosen second layer
        :math:`\hat a`, :math:`\mathbb E[y^2]-2\hat a^\top b+\hat a^\top\Omega\hat a`, which has
        no test-set noise ({prf:ref}`thm-ch6-ridge-equivalent` predicts it).

    Returns
    -------
    float, or (float, float) with ``moments``
    """
    p = V.positive_int(p, "p")
    if offset is None:
        def offset(Z):
            return 0.0
    lams = RIDGES
    A = ridge_second_layer_path(W, batch[0], batch[1] - offset(batch[0]), lams,
                                scaling=p**-0.5)
    err = [np.mean((features(W, Z) @ A.T / np.sqrt(p) + (offset(Z) - t)[:, None]) ** 2, axis=0)
           for Z, t in (val, test)]
    best = int(np.argmin(err[0]))
    if moments is None:
        return err[1][best]
    a = A[best]
    return err[1][best], float(moments.y2 - 2 * a @ moments.b + a @ moments.omega @ a)


# --- the deterministic equivalent -------------------------------------------------------------
def relu_feature_covariance(W, scaling: float = 1.0) -> np.ndarray:
    r"""Exact :math:`\Omega = \mathbb E[\phi\phi^\top]` of :math:`\phi = s\,\mathrm{relu}(Wx)`.

    For :math:`x\sim N(0,I_d)` and rows :math:`w_i, w_j` of norms :math:`r_i, r_j` at angle
    :math:`\theta`, :math:`\mathbb E[\mathrm{relu}(\langle w_i,x\rangle)
    \mathrm{relu}(\langle w_j,x\rangle)] = \frac{r_ir_j}{2\pi}(\sin\theta+(\pi-\theta)
    \cos\theta)` (the arc-cosine kernel of degree one), used in
    {prf:ref}`thm-ch6-ridge-equivalent`.

    Parameters
    ----------
    W : array_like (p, d)
    scaling : float
        The output scale :math:`s` (the chapter's :math:`p^{-1/2}`).

    Returns
    -------
    ndarray (p, p)
    """
    W = V.finite_array(W, "W", ndim=2)
    scaling = V.positive_float(scaling, "scaling")
    r = np.linalg.norm(W, axis=1)
    if np.any(r == 0):
        raise ValueError("every row of W must be non-zero")
    cos = np.clip((W @ W.T) / np.outer(r, r), -1.0, 1.0)
    theta = np.arccos(cos)
    k = (np.sqrt(1.0 - cos**2) + (np.pi - theta) * cos) / (2 * np.pi)
    return scaling**2 * np.outer(r, r) * k


class FeatureMoments(NamedTuple):
    r"""Second moments of features and labels ({prf:ref}`thm-ch6-ridge-equivalent`).

    ``omega`` :math:`=\mathbb E[\phi\phi^\top]` (p, p), ``b`` :math:`=\mathbb E[\phi y]` (p,),
    ``y2`` :math:`=\mathbb E[y^2]`.
    """

    omega: np.ndarray
    b: np.ndarray
    y2: float


def feature_label_moments(W, W_star, target: Callable, scaling: float = 1.0,
                          nodes: int = 40) -> FeatureMoments:
    r"""The second moments of ReLU features :math:`s\,\mathrm{relu}(Wx)` and a multi-index label.

    For :math:`y = g(W_\star x)` with ``W_star`` (k, d) orthonormal, k = 1 or 2, write
    :math:`\langle w_i,x\rangle = \langle\alpha_i,z\rangle+\beta_i\xi` with
    :math:`\alpha_i = W_\star w_i` and :math:`\beta_i^2 = \|w_i\|^2-\|\alpha_i\|^2`; then
    :math:`\mathbb E_\xi\,\mathrm{relu}(m+\beta\xi) = m\Phi(m/\beta)+\beta\phi(m/\beta)` and the
    remaining expectation over :math:`z` is a ``nodes``-point Gauss-Hermite rule per axis.

    Parameters
    ----------
    W : array_like (p, d)
    W_star : array_like (k, d)
    target : callable
        ``target(Z)`` of the projections ``Z`` (m, k).
    scaling : float
    nodes : int

    Returns
    -------
    FeatureMoments
    """
    W = V.finite_array(W, "W", ndim=2)
    W_star = V.finite_array(W_star, "W_star", ndim=2)
    scaling = V.positive_float(scaling, "scaling")
    k = W_star.shape[0]
    if k not in (1, 2) or W_star.shape[1] != W.shape[1]:
        raise ValueError(f"W_star must have shape (1 or 2, {W.shape[1]}), got {W_star.shape}")
    x, w = np.polynomial.hermite_e.hermegauss(V.positive_int(nodes, "nodes"))
    w = w / w.sum()
    grids = np.meshgrid(*([x] * k), indexing="ij")
    Z = np.stack([g.ravel() for g in grids], axis=1)                 # (m, k)
    wz = np.prod(np.meshgrid(*([w] * k), indexing="ij"), axis=0).ravel()
    y = np.asarray(target(Z), dtype=float)
    alpha = W @ W_star.T                                              # (p, k)
    beta = np.sqrt(np.maximum(np.sum(W**2, axis=1) - np.sum(alpha**2, axis=1), 1e-300))
    m = Z @ alpha.T                                                   # (m, p)
    t = m / beta
    g = m * ndtr(t) + beta * np.exp(-0.5 * t**2) / np.sqrt(2 * np.pi)
    b = scaling * ((wz * y) @ g)
    return FeatureMoments(relu_feature_covariance(W, scaling), b, float(wz @ y**2))


def _equivalent(om, beta2, y2: float, n: int, lam: float) -> float:
    def gap(kappa):
        return kappa * (1 - np.sum(om / (om + kappa)) / n) - lam

    kappa = brentq(gap, lam, lam + np.sum(om) / n + 1.0, xtol=1e-14 * lam, rtol=1e-12)
    df2 = np.sum(om**2 / (om + kappa) ** 2)
    return float((y2 - np.sum(beta2 * (om + 2 * kappa) / (om + kappa) ** 2)) / (1 - df2 / n))


def _spectrum(moments: FeatureMoments):
    om, U = np.linalg.eigh(moments.omega)
    return np.maximum(om, 0.0), (U.T @ moments.b) ** 2


def ridge_equivalent_error(moments: FeatureMoments, n: int, lam: float) -> float:
    r"""Deterministic equivalent of the ridge test error, {prf:ref}`thm-ch6-ridge-equivalent`.

    With :math:`\Omega = \sum_k\omega_ku_ku_k^\top`, :math:`\beta_k = \langle u_k,b\rangle`, the
    effective ridge :math:`\kappa` solves :math:`\lambda = \kappa\,(1-\mathrm{df}_1(\kappa)/n)`,
    :math:`\mathrm{df}_1 = \sum_k\omega_k/(\omega_k+\kappa)`, and the test error is
    :math:`\big(\mathbb E[y^2]-\sum_k\beta_k^2(\omega_k+2\kappa)/(\omega_k+\kappa)^2\big)
    /\big(1-\mathrm{df}_2(\kappa)/n\big)`, :math:`\mathrm{df}_2 = \sum_k\omega_k^2/
    (\omega_k+\kappa)^2` (eq. {eq}`eq-ch6-ridge-equivalent`, the bias and noise terms combined).

    Parameters
    ----------
    moments : FeatureMoments
    n : int
        Number of ridge samples.
    lam : float
        Ridge (> 0), in the convention of :func:`ridge_second_layer_path`.

    Returns
    -------
    float
    """
    n, lam = V.positive_int(n, "n"), V.positive_float(lam, "lam")
    return _equivalent(*_spectrum(moments), moments.y2, n, lam)


def equivalent_learning_curve(moments: FeatureMoments, n_list, lams=RIDGES) -> np.ndarray:
    r"""The smallest deterministic-equivalent test error over the ridges ``lams``, per ``n``.

    The prediction drawn beside :func:`ridge_test_error`, whose ridge is chosen on a validation
    set from the same ``lams`` ({prf:ref}`thm-ch6-ridge-equivalent`); one eigendecomposition.

    Parameters
    ----------
    moments : FeatureMoments
    n_list : sequence of int
    lams : sequence of float

    Returns
    -------
    ndarray (len(n_list),)
    """
    if isinstance(n_list, (str, bytes)) or not np.iterable(n_list) or not len(n_list):
        raise ValueError(f"n_list must be a non-empty sequence of integers >= 1, got {n_list!r}")
    n_list = [V.positive_int(n, "n_list") for n in n_list]
    om, beta2 = _spectrum(moments)
    lams = [V.positive_float(lam, "lam") for lam in lams]
    return np.array([min(_equivalent(om, beta2, moments.y2, n, lam) for lam in lams)
                     for n in n_list])
