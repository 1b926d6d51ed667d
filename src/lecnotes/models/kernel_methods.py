"""Learning with a kernel: ridge, gradient descent, the RKHS norm, Rademacher complexity, risk.

The kernels themselves (arc-cosine, ReLU NTK, RBF, random features) are in
:mod:`lecnotes.models.kernels`; chapter 1 compares what these methods reach with what a trained
network reaches ({prf:ref}`def-ch1-rademacher`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite, hermite_polys
from lecnotes.core.targets import get_link


def _square_kernel(K, name="K"):
    K = V.finite_array(K, name, ndim=2)
    if K.shape[0] != K.shape[1] or K.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {K.shape}")
    return K


def _kernel_and_labels(K, y):
    K = _square_kernel(K)
    y = V.finite_array(y, "y", ndim=1)
    if y.shape[0] != K.shape[0]:
        raise ValueError(f"K is {K.shape[0]} x {K.shape[0]} but y has {y.shape[0]} entries")
    return K, y


def kernel_ridge(K, y, lam: float) -> np.ndarray:
    r"""Coefficients :math:`\alpha` of kernel ridge regression, :math:`(K+n\lambda I)\alpha=y`.

    The kernel predictor :math:`\hat f_\lambda` of chapter 1, {eq}`eq-ch1-kernel-barrier`.
    Cholesky factorisation and two triangular solves
    (``scipy.linalg.cho_solve``); ``lam = 0`` returns the minimum-norm interpolant
    (least-squares solve, valid for a singular ``K``). Predict with ``K_test @ alpha``.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix on the training inputs (symmetric positive semi-definite).
    y : array_like (n,)
        Labels.
    lam : float
        Ridge, ``>= 0``.

    Returns
    -------
    ndarray (n,)
        The coefficients :math:`\alpha`.
    """
    K, y = _kernel_and_labels(K, y)
    lam = V.nonneg_float(lam, "lam")
    n = K.shape[0]
    if lam == 0:
        return np.linalg.lstsq(K, y, rcond=None)[0]
    A = K + n * lam * np.eye(n)
    try:
        return sla.cho_solve(sla.cho_factor(A, lower=True, check_finite=False), y)
    except np.linalg.LinAlgError:
        raise ValueError("K + n lam I is not positive definite: is K a kernel matrix?") from None


def rkhs_norm(K, alpha) -> float:
    r"""RKHS norm :math:`\sqrt{\alpha^\top K\alpha}` of :math:`f=\sum_i\alpha_iK(\cdot,x_i)`.

    The radius of the RKHS ball of {prf:ref}`lem-ch1-three-balls` (chapter 1).

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix.
    alpha : array_like (n,)
        Coefficients.

    Returns
    -------
    float
    """
    K = _square_kernel(K)
    alpha = V.finite_array(alpha, "alpha", ndim=1)
    if alpha.shape[0] != K.shape[0]:
        raise ValueError(f"alpha has {alpha.shape[0]} entries, K is {K.shape[0]} x {K.shape[0]}")
    return float(np.sqrt(max(alpha @ K @ alpha, 0.0)))


def kernel_gradient_descent(K, y, eta: float, steps: int, f0=None):
    r"""Gradient descent on the linearised (lazy) model, in closed form ({eq}`eq-ch1-linearised`).

    The linearised network :math:`f_t = f_0 + \nabla_\theta f_0\cdot(\theta_t-\theta_0)` trained
    by GD on :math:`\frac1{2n}\sum_i(f_t(x_i)-y_i)^2` with step :math:`\eta` evolves as
    :math:`f_t = f_0 + \sum_i\alpha_{t,i}K(\cdot,x_i)`, :math:`K` the (empirical) NTK, with
    residual :math:`r_t = (I-\eta K/n)^t r_0` and
    :math:`\alpha_t = -U\,\mathrm{diag}\big((1-(1-\eta\mu/n)^t)/\mu\big)U^\top r_0`.
    Moreover :math:`\|\theta_t-\theta_0\| = \sqrt{\alpha_t^\top K\alpha_t}`.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix (the tangent kernel at initialisation).
    y : array_like (n,)
        Labels.
    eta : float
        Step size.
    steps : int
        Number of steps.
    f0 : array_like (n,), optional
        Initial predictions on the training set (default 0).

    Returns
    -------
    alpha : ndarray (n,)
        Coefficients of :math:`f_t-f_0`; predict with ``f0_test + K_test @ alpha``.
    """
    K, y = _kernel_and_labels(K, y)
    eta = V.positive_float(eta, "eta")
    steps = V.positive_int(steps, "steps", minimum=0)
    n = K.shape[0]
    r0 = -y if f0 is None else V.finite_array(f0, "f0", ndim=1) - y
    if r0.shape != y.shape:
        raise ValueError("f0 must have the shape of y")
    mu, U = np.linalg.eigh(0.5 * (K + K.T))
    mu = np.maximum(mu, 0.0)
    q = 1.0 - eta * mu / n
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(mu > 1e-12 * max(mu.max(), 1e-300), (1.0 - q**steps) / mu, eta * steps / n)
    return -U @ (coef * (U.T @ r0))


def rademacher_rkhs(K, B: float = 1.0, n_mc: int = 200, rng=None):
    r"""Monte Carlo empirical Rademacher complexity of the RKHS ball of radius ``B``.

    Chapter 1, {eq}`eq-ch1-rademacher` and {prf:ref}`lem-ch1-three-balls`: for
    :math:`\mathcal F_B=\{\|f\|_{\mathcal H}\le B\}`,
    :math:`\sup_{f\in\mathcal F_B}\frac1n\sum_i s_if(x_i) = \frac Bn\sqrt{s^\top Ks}` exactly,
    so :math:`\widehat{\mathfrak R}_n = \frac Bn\mathbb E_s\sqrt{s^\top Ks}`. With the linear
    kernel :math:`K=XX^\top` this is the class :math:`\{x\mapsto\langle w,x\rangle:\|w\|\le B\}`.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix.
    B : float
        Radius of the ball.
    n_mc : int
        Number of sign vectors.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    mean, stderr : float
        Monte Carlo estimate over ``n_mc`` sign vectors and its standard error.
    """
    K = _square_kernel(K)
    B = V.nonneg_float(B, "B")
    n_mc = V.positive_int(n_mc, "n_mc", minimum=2)
    rng = V.generator(rng)
    n = K.shape[0]
    S = rng.choice([-1.0, 1.0], size=(n_mc, n))
    vals = B / n * np.sqrt(np.maximum(np.einsum("ij,ij->i", S @ K, S), 0.0))
    return float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(n_mc))


def rademacher_rkhs_bound(K, B: float = 1.0) -> float:
    r"""Jensen bound :math:`\widehat{\mathfrak R}_n\le\frac Bn\sqrt{\mathrm{tr}\,K}` (chapter 1).

    The upper side of {eq}`eq-ch1-linear-sandwich` for the ball of :func:`rademacher_rkhs`.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix.
    B : float
        Radius of the ball.

    Returns
    -------
    float
    """
    K = _square_kernel(K)
    B = V.nonneg_float(B, "B")
    return float(B / K.shape[0] * np.sqrt(max(np.trace(K), 0.0)))


def kernel_ridge_at_loss(K, y, target_loss: float, *, lam_range=(1e-12, 1e4), iters: int = 40):
    r"""The minimum-RKHS-norm fit reaching a given training loss (chapter 1).

    Among functions with :math:`\frac1{2n}\sum_i(f(x_i)-y_i)^2\le\varepsilon`, the one of least
    RKHS norm is a kernel ridge solution (Lagrange duality); its training loss increases and
    its norm decreases with :math:`\lambda`. Bisection on :math:`\log\lambda` finds the largest
    ridge whose training loss is at most ``target_loss`` (one Cholesky solve per step). The
    RKHS budget of {prf:ref}`lem-ch1-three-balls`.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix.
    y : array_like (n,)
        Labels.
    target_loss : float
        :math:`\varepsilon > 0`.
    lam_range : (float, float)
        Bracket of ridges for the bisection.
    iters : int
        Bisection steps.

    Returns
    -------
    lam : float
    alpha : ndarray (n,)
        Coefficients; the RKHS norm is ``rkhs_norm(K, alpha)``.

    Raises
    ------
    ValueError
        If even the smallest ridge of ``lam_range`` does not reach ``target_loss``.
    """
    K, y = _kernel_and_labels(K, y)
    eps = V.positive_float(target_loss, "target_loss")
    lo, hi = (V.positive_float(v, "lam_range") for v in lam_range)
    iters = V.positive_int(iters, "iters")
    if lo >= hi:
        raise ValueError(f"lam_range must be increasing, got {lam_range}")
    n = K.shape[0]

    def fit(lam):
        alpha = kernel_ridge(K, y, lam)
        return alpha, 0.5 * float(np.sum((n * lam * alpha) ** 2)) / n  # residual = n lam alpha

    a_lo, loss_lo = fit(lo)
    if loss_lo > eps:
        raise ValueError(f"even lam = {lo:g} leaves training loss {loss_lo:.3g} > {eps:g}")
    a_hi, loss_hi = fit(hi)
    if loss_hi <= eps:
        return hi, a_hi
    for _ in range(iters):
        mid = np.sqrt(lo * hi)
        a_mid, loss_mid = fit(mid)
        if loss_mid <= eps:
            lo, a_lo = mid, a_mid
        else:
            hi = mid
    return lo, a_lo


class RiskResult(NamedTuple):
    """Test risk of a predictor on a single-index target (:func:`single_index_risk`)."""

    risk: float
    """The risk :math:`\\mathbb E(\\hat f(x)-\\varphi(u))^2`."""
    stderr: float
    """Monte Carlo standard error (over :math:`x_\\perp`)."""
    coefficients: np.ndarray
    """Hermite coefficients :math:`c_0..c_{k_{\\max}}` of the predictor along :math:`w_\\star`."""


def single_index_risk(predict, w_star, link, *, n_perp: int = 200, n_quad: int = 32,
                      kmax: int = 2, rng=None):
    r"""Test risk of a predictor on a single-index target, quadrature along :math:`w_\star`.

    Chapter 1, {eq}`eq-ch1-risk-decomposition`. Writing :math:`x = u\,w_\star + x_\perp`, the risk
    :math:`\mathbb E(\hat f(x)-\varphi(u))^2` is integrated exactly in :math:`u` by
    ``n_quad``-point Gauss-Hermite quadrature and by Monte Carlo over ``n_perp`` draws of
    :math:`x_\perp\sim N(0,I-w_\star w_\star^\top)`. This removes the heavy-tailed fluctuation
    of :math:`\varphi(u)^2` that dominates a plain test-set average (for
    :math:`\varphi = h_2` it has variance 14 per sample). Also returns the Hermite coefficients
    of the predictor along :math:`w_\star`, :math:`c_k = \mathbb E[\hat f(x)h_k(u)]`.

    Parameters
    ----------
    predict : callable
        ``predict(X)`` for an (N, d) array returns N predictions.
    w_star : array_like (d,)
        The target direction.
    link : callable or str
        The target's link (name from :data:`lecnotes.core.targets.LINKS` or vectorised callable).
    n_perp, n_quad, kmax : int
        Monte Carlo draws of :math:`x_\perp`, Gauss-Hermite nodes, largest coefficient degree.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    RiskResult
        ``(risk, stderr, coefficients)``, the coefficients in the normalised Hermite basis.
    """

    if not callable(predict):
        raise ValueError("predict must be a callable of an (N, d) array")
    w = V.finite_array(w_star, "w_star", ndim=1)
    nw = np.linalg.norm(w)
    if nw == 0:
        raise ValueError("w_star must be non-zero")
    w = w / nw
    phi = get_link(link)
    n_perp = V.positive_int(n_perp, "n_perp", minimum=2)
    n_quad = V.positive_int(n_quad, "n_quad")
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    rng = V.generator(rng)
    nodes, weights = gauss_hermite(n_quad)
    Xp = rng.standard_normal((n_perp, w.shape[0]))
    Xp -= np.outer(Xp @ w, w)
    Xq = (Xp[:, None, :] + nodes[None, :, None] * w[None, None, :]).reshape(-1, w.shape[0])
    f = np.asarray(predict(Xq), dtype=float)
    if f.shape != (Xq.shape[0],):
        raise ValueError(f"predict returned shape {f.shape}, expected ({Xq.shape[0]},)")
    f = f.reshape(n_perp, n_quad)
    per = (f - np.asarray(phi(nodes), dtype=float)[None, :]) ** 2 @ weights
    H = hermite_polys(nodes, kmax, normalized=True)  # (kmax+1, n_quad)
    coefs = (f @ (H * weights[None, :]).T).mean(axis=0)
    return RiskResult(float(per.mean()), float(per.std(ddof=1) / np.sqrt(n_perp)), coefs)


def kernel_gd_steps_to_loss(K, y, eta: float, target_loss: float, max_steps: int = 100_000,
                            f0=None) -> int:
    r"""First step at which kernel gradient descent reaches a training loss (chapter 1).

    Same dynamics as :func:`kernel_gradient_descent`: the loss
    :math:`\frac1{2n}\sum_j(1-\eta\mu_j/n)^{2t}(U^\top r_0)_j^2` is evaluated in closed form.
    Gives the training time :math:`t` of the lazy prediction of {prf:ref}`prop-ch1-lazy-movement`.

    Parameters
    ----------
    K : array_like (n, n)
        Kernel matrix.
    y : array_like (n,)
        Labels.
    eta : float
        Step size.
    target_loss : float
        Training loss to reach.
    max_steps : int
        Step cap.
    f0 : array_like (n,), optional
        Initial predictions (default 0).

    Returns
    -------
    int
        The first step :math:`t` with loss at most ``target_loss``.

    Raises
    ------
    ValueError
        If the loss is not reached within ``max_steps`` steps.
    """
    K, y = _kernel_and_labels(K, y)
    eta = V.positive_float(eta, "eta")
    eps = V.nonneg_float(target_loss, "target_loss")
    max_steps = V.positive_int(max_steps, "max_steps")
    n = K.shape[0]
    r0 = -y if f0 is None else V.finite_array(f0, "f0", ndim=1) - y
    if r0.shape != y.shape:
        raise ValueError("f0 must have the shape of y")
    mu, U = np.linalg.eigh(0.5 * (K + K.T))
    q2 = (1.0 - eta * np.maximum(mu, 0.0) / n) ** 2
    c2 = (U.T @ r0) ** 2 / (2 * n)
    lo, hi = 0, 1
    while np.sum(c2 * q2**hi) > eps:  # doubling, then bisection on the monotone loss
        if hi >= max_steps:
            raise ValueError(f"training loss {eps:g} not reached within {max_steps} steps")
        lo, hi = hi, min(2 * hi, max_steps)
    if np.sum(c2) <= eps:
        return 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if np.sum(c2 * q2**mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi
