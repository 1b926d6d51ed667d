r"""Kernel methods: kernel ridge regression, arc-cosine / ReLU NTK kernels, random features,
the linearised (lazy) dynamics and the Rademacher complexity of RKHS balls (chapters 1, 6).

Conventions (chapter 1). Kernel ridge regression with ridge :math:`\lambda\ge0` solves

.. math:: \hat f = \arg\min_{f\in\mathcal H}\frac1n\sum_{i=1}^n(y_i-f(x_i))^2
          + \lambda\|f\|_{\mathcal H}^2,\qquad
          \hat f(x) = \sum_i\alpha_iK(x,x_i),\quad (K+n\lambda I)\alpha = y,

solved by a Cholesky factorisation (never an explicit inverse). The arc-cosine kernels of
Cho and Saul (2009) are
:math:`k_\ell(x,z) = \frac1\pi\|x\|^\ell\|z\|^\ell J_\ell(\theta)` with
:math:`J_0 = \pi-\theta`, :math:`J_1 = \sin\theta+(\pi-\theta)\cos\theta`, :math:`\theta`
the angle between :math:`x` and :math:`z`; they satisfy
:math:`k_\ell(x,z) = 2\,\mathbb E_{w\sim N(0,I)}[\Theta(w\cdot x)\Theta(w\cdot z)(w\cdot x)^\ell
(w\cdot z)^\ell]`.
"""

from __future__ import annotations

import numpy as np

from lecnotes.core import validate as V
from lecnotes.models.networks import features

__all__ = [
    "arccos_kernel",
    "relu_ntk",
    "rbf_kernel",
    "random_features",
]


def _pair(X, Z):
    X = V.finite_array(X, "X", ndim=2)
    if Z is None:
        return X, X
    Z = V.finite_array(Z, "Z", ndim=2)
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"X and Z have different dimensions: {X.shape[1]} vs {Z.shape[1]}")
    return X, Z


def _cosines(X, Z):
    """Gram matrix, norms and clipped cosines (the Gram matrix is returned separately)."""
    nx = np.linalg.norm(X, axis=1)
    nz = np.linalg.norm(Z, axis=1)
    if np.any(nx == 0) or np.any(nz == 0):
        raise ValueError("arc-cosine kernels need non-zero inputs")
    G = X @ Z.T
    c = G * (1.0 / nx)[:, None]
    c *= (1.0 / nz)[None, :]
    np.clip(c, -1.0, 1.0, out=c)
    return G, nx, nz, c


def _j0_j1(c):
    """Return (pi - theta, J_1(theta)) from the cosines; overwrites ``c`` (memory: 3 arrays)."""
    pt = np.arccos(c)
    np.subtract(np.pi, pt, out=pt)  # pi - theta
    s = c * c
    np.subtract(1.0, s, out=s)
    np.maximum(s, 0.0, out=s)
    np.sqrt(s, out=s)  # sin theta
    c *= pt
    s += c  # J_1 = sin theta + (pi - theta) cos theta
    return pt, s


def arccos_kernel(X, Z=None, order: int = 1) -> np.ndarray:
    r"""Arc-cosine kernel :math:`k_\ell(x,z)` of Cho and Saul (2009), orders 0, 1, 2.

    The kernels :math:`k_0, k_1` of chapter 1, {eq}`eq-ch1-relu-ntk`:
    :math:`k_0 = 1-\theta/\pi`,
    :math:`k_1 = \frac1\pi\|x\|\|z\|(\sin\theta+(\pi-\theta)\cos\theta)`,
    :math:`k_2 = \frac1\pi\|x\|^2\|z\|^2(3\sin\theta\cos\theta+(\pi-\theta)(1+2\cos^2\theta))`.

    Parameters
    ----------
    X : array_like (n_X, d)
        Inputs.
    Z : array_like (n_Z, d), optional
        Second set of inputs (default ``X``).
    order : int
        0, 1 or 2.

    Returns
    -------
    ndarray (n_X, n_Z)
    """
    X, Z = _pair(X, Z)
    order = V.positive_int(order, "order", minimum=0)
    if order > 2:
        raise ValueError(f"order must be 0, 1 or 2, got {order}")
    G, nx, nz, c = _cosines(X, Z)
    del G
    if order == 2:
        theta = np.arccos(c)
        s = np.sqrt(np.maximum(1.0 - c * c, 0.0))
        return np.outer(nx**2, nz**2) / np.pi * (3 * s * c + (np.pi - theta) * (1 + 2 * c * c))
    pt, j1 = _j0_j1(c)
    if order == 0:
        return pt / np.pi
    j1 *= (nx / np.pi)[:, None]
    j1 *= nz[None, :]
    return j1


def relu_ntk(X, Z=None, *, w_var: float | None = None, a_var: float = 1.0) -> np.ndarray:
    r"""Infinite-width NTK of :math:`f=m^{-1/2}\sum_k a_k\relu(w_k\cdot x)` ({eq}`eq-ch1-relu-ntk`).

    With :math:`w_k\sim N(0,v I_d)` (``w_var`` = v, default :math:`1/d`) and
    :math:`\mathbb E a_k^2` = ``a_var``,

    .. math:: K(x,z) = \underbrace{\tfrac v2\,k_1(x,z)}_{\text{second layer}}
              + \underbrace{a\,\langle x,z\rangle\,\tfrac12 k_0(x,z)}_{\text{first layer}},

    the limit of :func:`lecnotes.models.networks.empirical_ntk` as :math:`m\to\infty`
    (Jacot, Gabriel, Hongler 2018). It is rotation invariant: a function of
    :math:`\|x\|,\|z\|,\langle x,z\rangle`. Computed in place (about four n_X x n_Z
    arrays of memory).

    Parameters
    ----------
    X : array_like (n_X, d)
        Inputs.
    Z : array_like (n_Z, d), optional
        Second set of inputs (default ``X``).
    w_var : float, optional
        Variance :math:`v` of the first-layer weights (default :math:`1/d`).
    a_var : float
        :math:`\mathbb E a_k^2`; 0 keeps the second-layer part only.

    Returns
    -------
    ndarray (n_X, n_Z)
    """
    X, Z = _pair(X, Z)
    d = X.shape[1]
    w_var = 1.0 / d if w_var is None else V.positive_float(w_var, "w_var")
    a_var = V.nonneg_float(a_var, "a_var")
    G, nx, nz, c = _cosines(X, Z)
    pt, j1 = _j0_j1(c)
    del c
    G *= pt
    G *= 0.5 * a_var / np.pi
    j1 *= (0.5 * w_var / np.pi * nx)[:, None]
    j1 *= nz[None, :]
    G += j1
    return G


def rbf_kernel(X, Z=None, bandwidth: float = 1.0) -> np.ndarray:
    r"""Gaussian kernel :math:`\exp(-\|x-z\|^2/(2b^2d))`, rotation invariant (chapter 1).

    The distance is divided by :math:`d` so that the kernel is of order one for Gaussian
    inputs whatever the dimension (exercise {ref}`ex-ch1-rbf`).

    Parameters
    ----------
    X : array_like (n_X, d)
        Inputs.
    Z : array_like (n_Z, d), optional
        Second set of inputs (default ``X``).
    bandwidth : float
        :math:`b > 0`.

    Returns
    -------
    ndarray (n_X, n_Z)
    """
    X, Z = _pair(X, Z)
    b = V.positive_float(bandwidth, "bandwidth")
    sq = (
        np.einsum("ij,ij->i", X, X)[:, None]
        + np.einsum("ij,ij->i", Z, Z)[None, :]
        - 2.0 * X @ Z.T
    )
    return np.exp(-np.maximum(sq, 0.0) / (2.0 * b * b * X.shape[1]))


def random_features(X, m: int | None = None, activation="relu", rng=None, W=None):
    r"""Random features :math:`\phi(x) = m^{-1/2}\sigma(Wx)`, rows :math:`w_k\sim N(0,I_d/d)`.

    Rahimi and Recht (2007); the second-layer part of {eq}`eq-ch1-relu-ntk` (chapter 1).
    :math:`\Phi\Phi^\top` converges to :math:`\mathbb E_w[\sigma(w\cdot x)\sigma(w\cdot z)]`
    (for ReLU: ``arccos_kernel(X, Z, 1) / (2 d)``) as :math:`m\to\infty`. Pass ``W`` to reuse
    the same features on new inputs.

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    m : int, optional
        Number of features (needed unless ``W`` is given).
    activation : str
        Activation :math:`\sigma`.
    rng : Generator, int or None
        Random source of ``W`` (SPEC 7).
    W : array_like (m, d), optional
        Reuse these first-layer weights.

    Returns
    -------
    Phi : ndarray (n, m)
    W : ndarray (m, d)
    """
    X = V.finite_array(X, "X", ndim=2)
    if W is None:
        if m is None:
            raise ValueError("give the number of features m or the weights W")
        m = V.positive_int(m, "m")
        W = V.generator(rng).standard_normal((m, X.shape[1])) / np.sqrt(X.shape[1])
    else:
        W = V.finite_array(W, "W", ndim=2)
        if m is not None and W.shape[0] != m:
            raise ValueError(f"W has {W.shape[0]} rows but m = {m}")
        if W.shape[0] < 1:
            raise ValueError("W must have at least one row")
    return features(W, X, activation) / np.sqrt(W.shape[0]), W


