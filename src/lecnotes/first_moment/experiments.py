r"""Chapter 3, first-moment estimators: label preprocessing and one gradient step (also chapter 0).

The first-moment (Stein) estimator with label preprocessing :math:`T` is
:math:`v = \frac1n\sum_i T(y_i)x_i` (chapter 3, {eq}`eq-ch3-first-moment`); its mean is
:math:`\mathbb E[T(Y)G]\,w_\star` by Stein's lemma ({prf:ref}`prop-first-moment-mean`). The
overlap of an estimate :math:`\hat w` with :math:`w_\star` is
:math:`\rho = |\langle\hat w,w_\star\rangle|/\|\hat w\|` ({prf:ref}`def-overlap`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation, loss_derivative
from lecnotes.core.first_moment import (
    ReducedParts,
    first_moment,
    preprocess,
    reduced_first_moment_overlaps,
    simulate_first_moment_overlaps,
    simulate_first_moment_overlaps_by_link,
)
from lecnotes.core.overlaps import overlap
from lecnotes.core.targets import single_index

__all__ = [
    "preprocess",
    "first_moment",
    "simulate_first_moment_overlaps",
    "simulate_first_moment_overlaps_by_link",
    "reduced_first_moment_overlaps",
    "ReducedParts",
    "loss_preprocessing",
    "single_neuron_gradient",
    "StepComparison",
    "step_versus_estimator",
    "StepSweep",
    "gradient_step_sweep",
]


def loss_preprocessing(loss="square", f0: float = 0.0):
    r"""The label preprocessing chosen by a loss: :math:`T(y) = -\partial_f\ell(y; f_0)`.

    Chapter 3, {eq}`eq-ch3-gradient-step`: at an initialisation where the network outputs
    :math:`f_0 = \sigma(0)` on every input, one gradient step on the first layer is the
    first-moment estimator with this :math:`T` (times :math:`\eta\sigma'(0)`).

    Parameters
    ----------
    loss : str or callable
        A name from :data:`LOSSES` or a callable :math:`\partial_f\ell(y, f)`.
    f0 : float
        The output of the network at initialisation.

    Returns
    -------
    callable
        The vectorised preprocessing :math:`T`.
    """
    g = loss_derivative(loss)
    f0 = float(f0)
    return lambda y: -np.asarray(g(np.asarray(y, dtype=float), np.full(np.shape(y), f0)))


def single_neuron_gradient(X, y, w, activation="tanh", loss="square") -> np.ndarray:
    r"""Gradient of :math:`\hat R(w) = \frac1n\sum_i\ell(y_i, \sigma(\langle w, x_i\rangle))`.

    Chapter 3, {eq}`eq-ch3-gradient`:
    :math:`\nabla\hat R(w) = \frac1n\sum_i\partial_f\ell(y_i,\sigma(\langle w,x_i\rangle))\,
    \sigma'(\langle w,x_i\rangle)\,x_i`, two matrix-vector products. At :math:`w = 0` it is
    :math:`-\sigma'(0)` times the first-moment vector with
    :math:`T = -\partial_f\ell(\cdot;\sigma(0))` (:func:`loss_preprocessing`).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    w : array_like (d,)
        Weight vector of the neuron.
    activation : str, (sigma, dsigma) pair or Activation
        See :func:`lecnotes.core.activations.get_activation`.
    loss : str or callable
        See :data:`lecnotes.core.activations.LOSSES`.

    Returns
    -------
    ndarray (d,)
        :math:`\nabla\hat R(w)`.
    """

    X, y = V.data_pair(X, y)
    w = V.finite_array(w, "w", ndim=1)
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries, X has {X.shape[1]} columns")
    act = get_activation(activation)
    g = loss_derivative(loss)
    u = X @ w
    weights = np.asarray(g(y, act.sigma(u)), dtype=float) * act.dsigma(u)
    return X.T @ weights / X.shape[0]


class StepComparison(NamedTuple):
    """One gradient step against the first-moment estimator (:func:`step_versus_estimator`)."""

    loss: str
    """The loss of the step."""
    init: str
    """The name of the initialisation."""
    one_minus_cos: float
    r""":math:`1-\cos` of the angle between the step and :math:`v_T`."""
    overlap: float
    r"""The overlap of the step with :math:`w_\star`."""


def step_versus_estimator(X, y, w_star, inits: dict, losses=("square", "huber"),
                          activation="tanh") -> list:
    r"""One gradient step of a single neuron against the first-moment estimator (chapter 3).

    For each loss and initialisation :math:`w`, the step :math:`-\nabla\hat R(w)`
    (:func:`single_neuron_gradient`) is compared with :math:`v_T` for the preprocessing
    :math:`T = -\partial_f\ell(\cdot;\sigma(0))` of :func:`loss_preprocessing`: at :math:`w = 0`
    they are parallel ({eq}`eq-ch3-gradient-step`).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    w_star : array_like (d,)
        The direction to recover.
    inits : dict
        name -> initial weight vector (d,).
    losses : sequence of str
        Losses of :data:`lecnotes.core.activations.LOSSES`.
    activation : str
        Activation of the neuron.

    Returns
    -------
    list of StepComparison
        One per (loss, initialisation), losses in the outer loop.
    """
    f0 = float(get_activation(activation).sigma(np.zeros(1))[0])
    out = []
    for loss in losses:
        v = first_moment(X, y, T=loss_preprocessing(loss, f0=f0))
        for name, w in inits.items():
            g = -single_neuron_gradient(X, y, w, activation=activation, loss=loss)
            cos = g @ v / np.linalg.norm(g)
            out.append(StepComparison(loss, name, float(1 - cos), overlap(g, w_star)))
    return out


class StepSweep(NamedTuple):
    """One gradient step over independent data sets (:func:`gradient_step_sweep`)."""

    overlap: np.ndarray
    r"""(seeds, losses): overlap with :math:`w_\star` of the step from :math:`w = 0`."""
    small_init_ratio: np.ndarray
    r"""(seeds, losses): :math:`1-\cos(\text{step}, v_T)` from a random :math:`w_0` of norm
    ``init_norm``, divided by :math:`\|w_0\|^2(1+d/n)/(2\|v_T\|^2)`."""


def gradient_step_sweep(link, d: int, n: int, seeds: int, losses=("square", "huber"),
                        activation="tanh", init_norm: float = 1e-2, rng=None) -> StepSweep:
    r"""One gradient step of a single neuron on ``seeds`` independent data sets (chapter 3).

    For each data set (stream ``stream(rng, s)``) and loss, the step from :math:`w = 0`
    ({eq}`eq-ch3-gradient-step`) and the step from a random :math:`w_0` of norm
    ``init_norm``, compared with :math:`v_T` through :func:`step_versus_estimator`.

    Parameters
    ----------
    link : callable or str
        The link.
    d, n : int
        Dimension and number of samples.
    seeds : int
        Number of independent data sets.
    losses : sequence of str
        Losses of :data:`lecnotes.core.activations.LOSSES`.
    activation : str
        Activation of the neuron.
    init_norm : float
        Norm of the random initialisation.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    StepSweep
    """
    d, n, seeds = (V.positive_int(v, name) for v, name in ((d, "d"), (n, "n"), (seeds, "seeds")))
    init_norm = V.positive_float(init_norm, "init_norm")
    ov = np.empty((seeds, len(losses)))
    ratio = np.empty((seeds, len(losses)))
    for s in range(seeds):
        gen = V.stream(rng, s)
        X, y, w_star = single_index(n, d, link, rng=gen)
        w0 = gen.standard_normal(d)
        w0 *= init_norm / np.linalg.norm(w0)
        rows = step_versus_estimator(X, y, w_star, {"zero": np.zeros(d), "random": w0},
                                     losses=losses, activation=activation)
        f0 = float(get_activation(activation).sigma(np.zeros(1))[0])
        for k, loss in enumerate(losses):
            v = X.T @ preprocess(y, loss_preprocessing(loss, f0=f0)) / n
            ov[s, k] = rows[2 * k].overlap
            ratio[s, k] = rows[2 * k + 1].one_minus_cos / (
                init_norm**2 * (1 + d / n) / (2 * np.sum(v**2)))
    return StepSweep(ov, ratio)
