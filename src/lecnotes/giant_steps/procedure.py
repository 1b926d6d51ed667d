r"""Chapter 6, giant steps: the network of the chapter and the two-phase procedure.

The chapter's network {eq}`eq-ch6-network` is
:math:`f(x) = p^{-1/2}\sum_ia_i\sigma(\langle w_i,x\rangle)` with
:math:`w_i^0\sim N(0,I_d/d)`, :math:`a_i = b_i/\sqrt p` (:func:`init_network`, i.e.
:func:`lecnotes.models.networks.init_params` with ``symmetric=False, a_scale=p**-0.5``),
trained on the first layer by giant steps (:func:`lecnotes.models.layerwise.giant_step`,
learning rate :func:`lecnotes.giant_steps.theory.giant_step_size`), then on the second by
ridge (:func:`two_phase`, {prf:ref}`def-ch6-two-phase`). The sweeps of the chapter are in
:mod:`lecnotes.giant_steps.experiments` (one step), :mod:`lecnotes.giant_steps.many_steps`
(fresh steps and staircases) and :mod:`lecnotes.giant_steps.generalisation` (the second
layer); their size grids are checked by :func:`lecnotes.core.validate.sizes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lecnotes.core import validate as V
from lecnotes.giant_steps.theory import remove_linear_part
from lecnotes.models.layerwise import multi_step, ridge_second_layer
from lecnotes.models.networks import forward, init_params

__all__ = ["check_callable", "init_network", "TwoPhaseResult", "two_phase"]


def check_callable(f, name: str):
    """``f`` itself, after checking it can be called (TypeError otherwise).

    Links and targets of {prf:ref}`def-ch6-two-phase`'s sweeps are functions of the
    projections.

    Parameters
    ----------
    f : callable
        The function to check.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    callable
    """
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")
    return f


def init_network(p: int, d: int, rng, second_layer: str = "sign"):
    r"""The chapter's initial network {eq}`eq-ch6-network`: :math:`W_0`, :math:`a_0 = b/\sqrt p`.

    :func:`lecnotes.models.networks.init_params` with ``symmetric=False`` and
    ``a_scale=p**-0.5``: rows :math:`w_i^0\sim N(0, I_d/d)`, then the second layer (signs
    :math:`b_i=\pm1` or Gaussian), drawn from ``rng`` in that order.

    Parameters
    ----------
    p, d : int
        Width and dimension, positive.
    rng : Generator, int or None
    second_layer : {"sign", "gaussian"}

    Returns
    -------
    W0 : ndarray (p, d)
    a0 : ndarray (p,)
    """
    p, d = V.positive_int(p, "p"), V.positive_int(d, "d")
    return init_params(p, d, rng=rng, symmetric=False, second_layer=second_layer,
                       a_scale=p**-0.5)


@dataclass(frozen=True)
class TwoPhaseResult:
    """Outcome of :func:`two_phase`: first layers after each step and the ridge second layer.

    ``Ws`` the first layer after each step (``W = Ws[-1]`` predicts), ``a`` the ridge second
    layer, ``offset`` and ``linear`` the constant and linear parts added back to the output
    (zero unless the linear part of the labels was removed), ``activation`` and ``scaling`` as
    used for training.
    """

    Ws: list
    a: np.ndarray
    offset: float
    linear: np.ndarray
    activation: object = "relu"
    scaling: object = 1.0

    @property
    def W(self) -> np.ndarray:
        """The first layer after the last step, ``Ws[-1]``."""
        return self.Ws[-1]

    def predict(self, X) -> np.ndarray:
        r"""Prediction :math:`A+\langle B,x\rangle+f(x;W_T,\hat a)` on the rows of ``X``.

        Parameters
        ----------
        X : array_like (n, d)

        Returns
        -------
        ndarray (n,)
        """
        X = V.finite_array(X, "X", ndim=2)
        return self.offset + X @ self.linear + forward(self.W, self.a, X, self.activation,
                                                        self.scaling)


def two_phase(W0, a0, batches: Sequence, ridge_batch, eta, lam: float, activation="relu", *,
              scaling=1.0, loss: str = "square", remove_linear: bool = False,
              chunk: int | None = None) -> TwoPhaseResult:
    r"""The two-phase procedure of Dandi et al., {prf:ref}`def-ch6-two-phase`.

    Phase 1: one first-layer gradient step per batch in ``batches`` (fresh batches; the same
    pair twice is a reused batch), second layer fixed at ``a0``
    (:func:`lecnotes.models.layerwise.multi_step`). Phase 2: ridge regression of the labels of
    ``ridge_batch`` on the features :math:`s\,\sigma(XW_T^\top)`
    (:func:`lecnotes.models.layerwise.ridge_second_layer`; ``lam`` in its convention).

    With ``remove_linear=True`` the empirical constant and linear parts
    (:func:`remove_linear_part`) are removed from the labels of every batch before it is
    used, the ridge is fitted on the residual labels of ``ridge_batch``, and the constant and
    linear parts estimated on ``ridge_batch`` are added back to the prediction: the leap-2
    protocol of the paper's reference code, with every estimate taken from training data.

    Parameters
    ----------
    W0, a0 : array_like
        Initial first layer (p, d) and second layer (p,).
    batches : sequence of (X, y) pairs
        One batch per first-layer step; ``ridge_batch`` the batch of the ridge.
    ridge_batch : (X, y) pair
    eta : float or sequence of float
        Learning rate(s) of the steps; ``lam`` the ridge.
    lam : float
    activation, scaling, loss, chunk
        As in :func:`lecnotes.models.layerwise.giant_step`.
    remove_linear : bool

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

