r"""Chapter 1: what a fit of the target costs in norm, predicted in closed form.

Two predictions for the budgets of {prf:ref}`lem-ch1-three-balls`:

* the least RKHS norm of the ReLU NTK reaching a training loss, predicted by the kernel's
  *equivalent* {eq}`eq-ch1-kernel-equivalent`: its degree-0 and degree-1 parts kept, the
  off-diagonal part of degrees :math:`\ge2` dropped, so that degrees :math:`\ge2` act as the
  diagonal :math:`\Gamma\approx\gamma I`; a rank :math:`d+1` matrix plus a diagonal, solved by
  the Woodbury identity;
* the least path norm with which the smoothed neurons :math:`\psi_c` of
  {prf:ref}`prop-ch1-aligned-bound` fit the target to a given error (an
  :math:`\ell_1`-penalised least-squares problem in the quadrature Gram matrix).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import single_index
from lecnotes.mean_field_vs_ntk.theory import smoothed_relu, target

__all__ = ["NTKTaylor", "ntk_taylor", "equivalent_min_norm", "heuristic_min_norm",
           "equivalent_norm_sweep", "smoothed_path_norms"]


class NTKTaylor(NamedTuple):
    r"""Coefficients of the ReLU NTK as a function of the cosine, inputs of norm :math:`\sqrt d`."""

    f0: float
    r""":math:`f(0) = 1/(2\pi)`, the constant part."""
    f1: float
    r""":math:`f'(0) = (d+1)/4`, the linear part."""
    gamma: float
    r""":math:`\gamma = f(1) - f(0) - f'(0) = (d+1)/4 - 1/(2\pi)`, the weight of degrees
    :math:`\ge2` on the diagonal."""


def ntk_taylor(d: int) -> NTKTaylor:
    r"""The degree-0, degree-1 and degree-:math:`\ge2` weights of the ReLU NTK (chapter 1).

    {eq}`eq-ch1-relu-ntk` for :math:`\|x\| = \|x'\| = \sqrt d` is
    :math:`f(t) = g_1(t) + d\,g_0(t)` with :math:`g_1(t) = (\sqrt{1-t^2} + (\pi-\arccos t)t)/(2\pi)`
    and :math:`g_0(t) = t(1-\arccos(t)/\pi)/2`, :math:`t` the cosine; the coefficients of
    {eq}`eq-ch1-kernel-equivalent` are :math:`f(0)`, :math:`f'(0)` and
    :math:`\gamma = f(1) - f(0) - f'(0)`.

    Parameters
    ----------
    d : int
        Dimension, at least 1.

    Returns
    -------
    NTKTaylor
    """
    d = V.positive_int(d, "d")
    f0, f1 = 1 / (2 * np.pi), (d + 1) / 4
    return NTKTaylor(f0, f1, (d + 1) / 2 - f0 - f1)


def _equivalent_factors(X):
    n, d = X.shape
    nu = np.linalg.norm(X, axis=1)
    t = ntk_taylor(d)
    A = np.column_stack([np.sqrt(t.f0 / d) * nu, np.sqrt(t.f1 / d) * X])
    diag = nu**2 * (1 / (2 * d) + 0.5)  # the exact diagonal K(x, x) of the ReLU NTK
    return A, diag - np.sum(A**2, axis=1)


def equivalent_min_norm(X, y, target_loss: float, iters: int = 60) -> float:
    r"""Least RKHS norm reaching ``target_loss`` for the equivalent of the ReLU NTK (chapter 1).

    The kernel matrix {eq}`eq-ch1-kernel-equivalent`,
    :math:`K_{\rm eq} = \frac{\nu\nu^\top}{d}f(0) + f'(0)\frac{XX^\top}d + \Gamma` with
    :math:`\nu_i = \|x_i\|` and :math:`\Gamma` the diagonal that gives :math:`K_{\rm eq}` the
    exact diagonal of the NTK; the least-norm fit at training loss :math:`\varepsilon` is the
    ridge solution at the largest ridge reaching it ({ref}`ex-ch1-ridge-budget`), found by
    bisection on :math:`\log\lambda\in[10^{-12}, 10^4]`, each solve by the Woodbury identity
    (:math:`O(nd^2)`).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    target_loss : float
        :math:`\varepsilon`, with :math:`0 < \varepsilon < \frac1{2n}\|y\|^2`.
    iters : int
        Bisection steps.

    Returns
    -------
    float
        The RKHS norm :math:`(\alpha^\top K_{\rm eq}\alpha)^{1/2}`.
    """
    X, y = V.data_pair(X, y)
    eps = V.positive_float(target_loss, "target_loss")
    iters = V.positive_int(iters, "iters")
    if eps >= 0.5 * float(np.mean(y**2)):
        raise ValueError(f"target_loss must be below half the mean squared label, got {eps}")
    A, D = _equivalent_factors(X)
    n = X.shape[0]

    def solve(lam):
        Dp = D + n * lam
        b, AD = y / Dp, A / Dp[:, None]
        return b - AD @ np.linalg.solve(np.eye(A.shape[1]) + A.T @ AD, A.T @ b)

    lo, hi = np.log(1e-12), np.log(1e4)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        alpha = solve(np.exp(mid))
        if 0.5 * np.mean((n * np.exp(mid) * alpha) ** 2) <= eps:  # residual = n lam alpha
            lo = mid
        else:
            hi = mid
    alpha = solve(np.exp(lo))
    return float(np.sqrt(alpha @ (D * alpha) + np.sum((A.T @ alpha) ** 2)))


def heuristic_min_norm(n: int, d: int, target_loss: float) -> float:
    r"""The norm of the heuristic :math:`K\approx\gamma I` on a label part of unit energy.

    Chapter 1, {eq}`eq-ch1-kernel-equivalent` with the low-degree part dropped: fitting
    :math:`n` labels of energy one with the kernel :math:`\gamma I` to training loss
    :math:`\varepsilon` leaves the residual fraction :math:`\sqrt{2\varepsilon}` and costs
    :math:`(1-\sqrt{2\varepsilon})\sqrt{n/\gamma}`.

    Parameters
    ----------
    n, d : int
        Number of samples and dimension.
    target_loss : float
        :math:`\varepsilon\in(0, 1/2)`.

    Returns
    -------
    float
    """
    n, d = V.positive_int(n, "n"), V.positive_int(d, "d")
    eps = V.positive_float(target_loss, "target_loss")
    if eps >= 0.5:
        raise ValueError(f"target_loss must lie in (0, 1/2), got {eps}")
    return float((1 - np.sqrt(2 * eps)) * np.sqrt(n / ntk_taylor(d).gamma))


def equivalent_norm_sweep(d: int, kappas, eps: float, seeds: int, rng=None) -> np.ndarray:
    r""":func:`equivalent_min_norm` on the data of the norm-budget experiment (chapter 1).

    For each seed ``s`` and :math:`n = \kappa d`, the data set that
    :func:`lecnotes.mean_field_vs_ntk.experiments.norm_budget_sweep` draws first from a fresh
    copy of ``stream(rng, s)`` (the same inputs and labels), and the least norm of the
    equivalent kernel {eq}`eq-ch1-kernel-equivalent` at training loss ``eps``.

    Parameters
    ----------
    d : int
        Dimension.
    kappas : array_like of int
        Sample ratios, ``n = kappa d``.
    eps : float
        Target training loss.
    seeds : int
        Number of seeds.
    rng : Generator, int or None
        Random source (SPEC 7), as in ``norm_budget_sweep``.

    Returns
    -------
    ndarray (seeds, len(kappas))
    """
    d, seeds = V.positive_int(d, "d"), V.positive_int(seeds, "seeds")
    ks = V.finite_array(kappas, "kappas", ndim=1)
    if ks.size < 1 or np.any(ks < 1) or np.any(ks != np.round(ks)):
        raise ValueError(f"kappas must be a non-empty array of integers >= 1, got {kappas!r}")
    kappas = [int(k) for k in ks]
    eps = V.positive_float(eps, "eps")
    out = np.zeros((seeds, len(kappas)))
    for s in range(seeds):
        for j, kappa in enumerate(kappas):
            X, y, _ = single_index(kappa * d, d, target, rng=V.stream(rng, s))
            out[s, j] = equivalent_min_norm(X, y, eps)
    return out


def smoothed_path_norms(cosines, penalties):
    r"""Least path norm of a smoothed-neuron fit of :math:`h_1+h_2`, against its error.

    Chapter 1, {prf:ref}`prop-ch1-aligned-bound`: a network of unit neurons with cosines
    :math:`c` computes on average over the directions orthogonal to :math:`w_\star` the
    combination :math:`\sum_ca_c\psi_c(G)` of path norm :math:`\sum_c|a_c|`, and no network fits
    the target better than its average over those directions does. For each penalty
    :math:`\mu` the fit minimises :math:`\E(\sum_ca_c\psi_c - h_1 - h_2)^2 + \mu\sum_c|a_c|`
    (quadrature Gram matrix, L-BFGS-B on :math:`a = p - q`, :math:`p, q\ge0`).

    Parameters
    ----------
    cosines : array_like (k,)
        Cosines in [-1, 1].
    penalties : array_like
        Penalties :math:`\mu > 0`.

    Returns
    -------
    (errors, path_norms) : tuple of ndarray
        One value per penalty.
    """
    cos = V.finite_array(cosines, "cosines", ndim=1)
    if cos.size < 1 or np.any(np.abs(cos) > 1):
        raise ValueError(f"cosines must be a non-empty array in [-1, 1], got {cos}")
    mus = V.finite_array(penalties, "penalties", ndim=1)
    if mus.size < 1 or np.any(mus <= 0):
        raise ValueError(f"penalties must be a non-empty array of positive numbers, got {mus}")

    def feats(g):
        return np.array([smoothed_relu(c, g) for c in cos])

    M = gaussian_expectation(lambda g: np.einsum("in,jn->nij", feats(g), feats(g)),
                             breakpoints=(0.0,))
    r = gaussian_expectation(lambda g: (feats(g) * target(g)).T, breakpoints=(0.0,))
    k, errors, norms = cos.size, [], []
    for mu in mus:

        def objective(z, mu=mu):
            a = z[:k] - z[k:]
            grad = 2 * (M @ a - r)
            return 2 - 2 * a @ r + a @ M @ a + mu * z.sum(), np.concatenate([grad + mu,
                                                                             mu - grad])

        res = minimize(objective, np.zeros(2 * k), jac=True, method="L-BFGS-B",
                       bounds=[(0, None)] * (2 * k),
                       options={"maxiter": 20000, "ftol": 1e-16, "gtol": 1e-12})
        a = res.x[:k] - res.x[k:]
        errors.append(float(2 - 2 * a @ r + a @ M @ a))
        norms.append(float(np.abs(a).sum()))
    return np.array(errors), np.array(norms)
