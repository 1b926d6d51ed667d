r"""Chapter 6, giant steps: the two-phase procedure of Dandi et al.

First-layer giant steps (:func:`lecnotes.networks.giant_step`, :func:`lecnotes.networks.multi_step`)
followed by a ridge second layer (:func:`two_phase`, :class:`TwoPhaseResult`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from .networks import forward, multi_step, remove_linear_part, ridge_second_layer

__all__ = [
    "TwoPhaseResult",
    "two_phase",
]


@dataclass
class TwoPhaseResult:
    """Outcome of :func:`two_phase`: first layers after each step and the ridge second layer.

    Attributes
    ----------
    Ws : list of ndarray
        First layer after each step (``Ws[-1]`` is the one used for prediction).
    a : ndarray (p,)
        Second layer from ridge regression.
    offset : float
    linear : ndarray (d,)
        Constant and linear parts added back to the network output (zero unless the linear
        part of the labels was removed).
    activation, scaling
        As used for training.
    """

    Ws: list
    a: np.ndarray
    offset: float
    linear: np.ndarray
    activation: object = "relu"
    scaling: object = 1.0

    @property
    def W(self) -> np.ndarray:
        return self.Ws[-1]

    def predict(self, X) -> np.ndarray:
        """Prediction :math:`A+\\langle B,x\\rangle+f(x;W_T,\\hat a)` on the rows of ``X``."""
        X = V.finite_array(X, "X", ndim=2)
        return self.offset + X @ self.linear + forward(self.W, self.a, X, self.activation,
                                                        self.scaling)


def two_phase(W0, a0, batches: Sequence, ridge_batch, eta, lam: float, activation="relu", *,
              scaling=1.0, loss: str = "square", remove_linear: bool = False,
              chunk: int | None = None) -> TwoPhaseResult:
    r"""The two-phase procedure of Dandi et al. (chapter 6, algorithm (two-phase)).

    Phase 1: one first-layer gradient step per batch in ``batches`` (fresh batches; the same
    pair twice is a reused batch), second layer fixed at ``a0`` (:func:`multi_step`).
    Phase 2: ridge regression of the labels of ``ridge_batch`` on the features
    :math:`s\,\sigma(XW_T^\top)` (:func:`ridge_second_layer`; ``lam`` in its convention).

    With ``remove_linear=True`` the empirical constant and linear parts
    (:func:`remove_linear_part`) are removed from the labels of every batch before it is
    used, the ridge is fitted on the residual labels of ``ridge_batch``, and the constant and
    linear parts estimated on ``ridge_batch`` are added back to the prediction: the leap-2
    protocol of the paper's reference code, with every estimate taken from training data.

    Returns
    -------
    TwoPhaseResult
    """
    if not isinstance(batches, Sequence) or len(batches) < 1:
        raise ValueError("batches must be a non-empty sequence of (X, y) pairs")
    if remove_linear:
        batches = [(Xb, remove_linear_part(Xb, yb)[0]) for Xb, yb in batches]
    Ws = multi_step(W0, a0, batches, eta, activation, loss, scaling=scaling, chunk=chunk)
    Xr, yr = V.data_pair(*ridge_batch)
    if remove_linear:
        yr, offset, linear = remove_linear_part(Xr, yr)
    else:
        offset, linear = 0.0, np.zeros(Xr.shape[1])
    a = ridge_second_layer(Ws[-1], Xr, yr, lam, activation, scaling=scaling, chunk=chunk)
    return TwoPhaseResult(Ws, a, offset, linear, activation, scaling)
