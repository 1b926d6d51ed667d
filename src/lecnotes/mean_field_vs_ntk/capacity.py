r"""Norms, capacity and movement of a two-layer network (foundation; chapter 1 uses them).

The path norm and its Rademacher-complexity bound ({eq}`eq-ch1-rademacher`), and how far
training moves the weights (relative movement of the first layer, distance in
parameter space). They depend only on the weights, never on a chapter's experiment.
"""

from __future__ import annotations

import numpy as np

from lecnotes.core import validate as V
from lecnotes.models.networks import check_params, output_scale

__all__ = ["path_norm", "path_norm_rademacher_bound", "relative_movement", "param_distance"]


def path_norm(W, a, scaling="mf") -> float:
    r"""Path norm :math:`s_m\sum_k|a_k|\,\|w_k\|` (chapter 1, {prf:ref}`lem-ch1-three-balls`).

    For a positively homogeneous activation (ReLU) it bounds the Barron norm of the network
    function; with ``scaling="mf"`` it is :math:`\frac1m\sum_k|a_k|\|w_k\|`, of order one along
    mean-field training.

    Parameters
    ----------
    W : array_like (m, d)
        First layer.
    a : array_like (m,)
        Second layer.
    scaling : str
        ``"mf"`` or ``"ntk"`` ({prf:ref}`def-ch1-scalings`), which sets :math:`s_m`.

    Returns
    -------
    float
    """
    W, a = check_params(W, a)
    s = output_scale(W.shape[0], scaling)
    return float(s * np.abs(a) @ np.linalg.norm(W, axis=1))


def path_norm_rademacher_bound(X, B: float) -> float:
    r"""Bound on the Rademacher complexity of ReLU networks with path norm at most ``B``.

    Chapter 1, {prf:ref}`lem-ch1-three-balls` (Neyshabur, Tomioka, Srebro 2015):
    :math:`\widehat{\mathfrak R}_n \le 2B\sqrt{\sum_i\|x_i\|^2}/n`.

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    B : float
        Path-norm radius.

    Returns
    -------
    float
    """
    X = V.finite_array(X, "X", ndim=2)
    if X.shape[0] < 1:
        raise ValueError("X must have at least one row")
    B = V.nonneg_float(B, "B")
    return float(2.0 * B * np.sqrt(np.sum(X * X)) / X.shape[0])


def relative_movement(W, W0) -> float:
    r""":math:`\|W-W_0\|_F/\|W_0\|_F`, the relative movement of the first layer (chapter 1).

    The left side of {eq}`eq-ch1-lazy-movement`.

    Parameters
    ----------
    W, W0 : array_like (m, d)
        First layer after and before training.

    Returns
    -------
    float
    """
    W = V.finite_array(W, "W", ndim=2)
    W0 = V.finite_array(W0, "W0", ndim=2)
    if W.shape != W0.shape:
        raise ValueError(f"shapes differ: {W.shape} vs {W0.shape}")
    n0 = np.linalg.norm(W0)
    if n0 == 0:
        raise ValueError("W0 is zero: relative movement undefined")
    return float(np.linalg.norm(W - W0) / n0)


def param_distance(W, a, W0, a0) -> float:
    r""":math:`\|\theta-\theta_0\| = (\|W-W_0\|_F^2+\|a-a_0\|^2)^{1/2}` (chapter 1).

    In the lazy regime it bounds the RKHS norm (for the tangent kernel at initialisation) of
    the change of the network function, the "norm budget" of the linearised model
    ({eq}`eq-ch1-linearised`, {prf:ref}`lem-ch1-three-balls`).

    Parameters
    ----------
    W, a : array_like
        Parameters after training, (m, d) and (m,).
    W0, a0 : array_like
        Parameters at initialisation.

    Returns
    -------
    float
    """
    W, a = check_params(W, a)
    W0, a0 = check_params(W0, a0)
    if W.shape != W0.shape:
        raise ValueError(f"shapes differ: {W.shape} vs {W0.shape}")
    return float(np.sqrt(np.sum((W - W0) ** 2) + np.sum((a - a0) ** 2)))
