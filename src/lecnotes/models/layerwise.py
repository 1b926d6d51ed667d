"""Training one layer at a time: the giant step, many steps, the ridge second layer.

Chapters 6 and 7 move the first layer of the network of :mod:`lecnotes.models.networks` by one
large full-batch step ({eq}`eq-ch6-update`; :func:`giant_step`) or by a few of them on
fresh or reused batches (:func:`multi_step`), then fit the second layer by ridge regression on
the learned features (:func:`ridge_second_layer`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg as sla

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation
from lecnotes.models.networks import features, first_layer_gradient, output_scale


def giant_step(W, a, X, y, eta, activation="relu", *, scaling=1.0, loss="square",
               chunk: int | None = None):
    r"""One gradient step on the first layer, second layer fixed: {eq}`eq-ch6-update`.

    :math:`W_1 = W - \eta\nabla_W\hat R(W,a)` with :math:`f = s\,\sigma(XW^\top)a`
    (``scaling=1.0``: :math:`f=\sigma(XW^\top)a`, the width absorbed in ``a``). A "giant"
    step takes :math:`\eta` of order :math:`p\sqrt{n/d}` (Dandi et al. 2024; see
    :func:`lecnotes.giant_steps.theory.giant_step_size`).

    Parameters
    ----------
    W, a, X, y, activation, loss
        As in :func:`loss_value`.
    eta : float
        Learning rate (> 0).
    scaling : {"ntk", "mf"} or float
        Default ``1.0``.
    chunk : int, optional
        As in :func:`first_layer_gradient`.

    Returns
    -------
    ndarray (m, d)
        The updated first layer.
    """
    eta = V.positive_float(eta, "eta")
    return np.asarray(W, dtype=float) - eta * first_layer_gradient(
        W, a, X, y, activation, scaling, loss, chunk=chunk
    )


def multi_step(W, a, batches: Sequence, eta, activation="relu", loss="square", *, scaling=1.0,
               chunk: int | None = None):
    r"""Several first-layer steps, one per batch (chapters 6 and 7).

    Phase 1 of {prf:ref}`def-ch6-two-phase` and the steps of {prf:ref}`def-ch7-two-steps`:
    passing the same pair twice reuses the batch (chapter 7). The second layer stays fixed.

    Parameters
    ----------
    W, a : array_like
        Initial first layer and (fixed) second layer.
    batches : sequence of (X, y) pairs
        One batch per step.
    eta : float or sequence of float
        A number or one number per step.
    activation, loss, scaling, chunk
        As in :func:`giant_step`.

    Returns
    -------
    list of ndarray
        The first layer after each step (``len(batches)`` arrays).
    """
    if not isinstance(batches, Sequence) or len(batches) < 1:
        raise ValueError("batches must be a non-empty sequence of (X, y) pairs")
    etas = np.asarray(eta, dtype=float)
    if etas.ndim == 0:
        etas = np.full(len(batches), float(etas))
    if etas.shape != (len(batches),):
        raise ValueError(f"eta must be a number or have one entry per batch ({len(batches)})")
    out = []
    for (Xb, yb), e in zip(batches, etas, strict=True):
        W = giant_step(W, a, Xb, yb, e, activation, scaling=scaling, loss=loss, chunk=chunk)
        out.append(W)
    return out


def ridge_second_layer(W, X, y, lam: float, activation="relu", *, scaling=1.0,
                       chunk: int | None = None) -> np.ndarray:
    r"""Second layer by ridge regression on the features (chapters 6 and 7).

    :math:`\hat a = \arg\min_a \frac1n\|y-F a\|^2+\lambda\|a\|^2`, :math:`F=s\,\sigma(XW^\top)`:
    :math:`\hat a=(F^\top F+n\lambda I)^{-1}F^\top y` when :math:`n\ge p`, or the equivalent
    :math:`F^\top(FF^\top+n\lambda I)^{-1}y` when :math:`n<p` (Cholesky solves, no inverse).
    ``lam = 0`` gives the minimum-norm least-squares solution.

    The ridge of the reference code of Dandi et al., :math:`(F^\top F+\lambda_{\rm code}I)`,
    is ``lam = lam_code / n`` here.

    Phase 2 of {prf:ref}`def-ch6-two-phase`.

    Parameters
    ----------
    W : array_like (p, d)
        First layer.
    X, y : array_like
        Ridge batch.
    lam : float
        Ridge (>= 0).
    activation, scaling
        As in :func:`forward` (``scaling`` default ``1.0``).
    chunk : int, optional
        For ``n >= p`` and ``lam > 0``: accumulate :math:`F^\top F` and :math:`F^\top y` over
        blocks of ``chunk`` samples, so that the ``n x p`` feature matrix is never formed
        (ignored otherwise).

    Returns
    -------
    ndarray (p,)
    """
    X, y = V.data_pair(X, y)
    lam = V.nonneg_float(lam, "lam")
    W = V.finite_array(W, "W", ndim=2)
    if W.shape[0] < 1:
        raise ValueError("W must have at least one row (neuron)")
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but W has {W.shape[1]} (input dim)")
    s = output_scale(W.shape[0], scaling)
    n, p = X.shape[0], W.shape[0]
    if chunk is not None:
        chunk = V.positive_int(chunk, "chunk")
        if n >= p and lam > 0 and chunk < n:
            act = get_activation(activation)
            gram, rhs = np.zeros((p, p)), np.zeros(p)
            for start in range(0, n, chunk):
                Fc = s * act.sigma(X[start:start + chunk] @ W.T)
                gram += Fc.T @ Fc
                rhs += Fc.T @ y[start:start + chunk]
            gram[np.diag_indices(p)] += n * lam
            return sla.cho_solve(sla.cho_factor(gram), rhs)
    F = s * features(W, X, activation)
    if lam == 0:
        return np.linalg.lstsq(F, y, rcond=None)[0]
    if n >= p:
        return sla.cho_solve(sla.cho_factor(F.T @ F + n * lam * np.eye(p)), F.T @ y)
    return F.T @ sla.cho_solve(sla.cho_factor(F @ F.T + n * lam * np.eye(n)), y)
