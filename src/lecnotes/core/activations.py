r"""Activations, their Gaussian moments, and the losses of the book (one table each).

:data:`ACTIVATIONS` (relu, tanh, linear, quadratic, sincos) holds :class:`Activation` objects
(:math:`\sigma` with :math:`\sigma'` and its kinks). :func:`hermite_moments` gives the Gaussian
means :math:`\mu_k = \mathbb E[\sigma^{(k)}(G)]` of its derivatives (the unnormalised Hermite
coefficients of :math:`\sigma`, chapter 7), :func:`activation_moments` the moments of
:math:`\sigma'` of the one-step theory of chapter 6, built on them. :data:`LOSSES` holds the
losses of the book as :class:`Loss` objects (value and derivative
:math:`\partial_f\ell(y,f)`): chapter 3 uses the derivatives, and :func:`loss_and_dual` the
empirical risk and its dual variable for training networks (chapter 1: square, chapter 7:
correlation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation, hermite_coefficients

__all__ = [
    "Activation",
    "ACTIVATIONS",
    "get_activation",
    "sincos_derivative",
    "SINCOS",
    "hermite_moments",
    "ActivationMoments",
    "activation_moments",
    "Loss",
    "LOSSES",
    "get_loss",
    "loss_derivative",
    "loss_and_dual",
]


@dataclass(frozen=True)
class Activation:
    r"""An activation :math:`\sigma` together with its derivative :math:`\sigma'`.

    Attributes
    ----------
    name : str
    sigma, dsigma : callable
        Vectorised functions of a numpy array.
    latex : str
        Formula for legends.
    homogeneous : bool
        ``True`` if :math:`\sigma(tu) = t\sigma(u)` for ``t > 0`` (ReLU, linear): then the path
        norm controls the Rademacher complexity (chapter 1, {prf:ref}`def-ch1-rademacher`).
    breakpoints : tuple of float
        The kinks of :math:`\sigma` (jumps of :math:`\sigma'`), where Gaussian quadratures of
        the activation are split: ``(0.0,)`` for ReLU.
    """

    name: str
    sigma: Callable[[np.ndarray], np.ndarray]
    dsigma: Callable[[np.ndarray], np.ndarray]
    latex: str = ""
    homogeneous: bool = False
    breakpoints: tuple = ()

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Activation({self.name!r})"


def _relu(u):
    return np.maximum(u, 0.0)


def _drelu(u):
    return (u > 0).astype(float)


def _dtanh(u):
    return 1.0 - np.tanh(u) ** 2  # no overflow of cosh for |u| > 710


def sincos_derivative(k: int) -> Callable[[np.ndarray], np.ndarray]:
    r"""The ``k``-th derivative of :math:`\sigma(z) = \sin z+\cos z` (chapter 7).

    :math:`\sigma(z) = \sqrt2\sin(z+\pi/4)`, so
    :math:`\sigma^{(k)}(z) = \sqrt2\sin(z+\pi/4+k\pi/2)`.

    Parameters
    ----------
    k : int
        Order of the derivative, ``>= 0``.

    Returns
    -------
    callable
        The vectorised function :math:`\sigma^{(k)}`.
    """
    k = V.positive_int(k, "k", minimum=0)
    phase = math.pi / 4 + k * math.pi / 2

    def f(z):
        return math.sqrt(2.0) * np.sin(np.asarray(z, dtype=float) + phase)

    return f


SINCOS = Activation("sincos", sincos_derivative(0), sincos_derivative(1), r"\sin u+\cos u")
r""":math:`\sigma(z)=\sin z+\cos z`: every derivative has Gaussian mean
:math:`\mathbb E[\sigma^{(k)}(G)] = \pm e^{-1/2}` (chapter 7), so no Hermite coefficient vanishes
and every term of the expansions of the chapter is present; bounded with bounded derivatives."""

ACTIVATIONS: dict[str, Activation] = {
    act.name: act
    for act in [
        Activation("relu", _relu, _drelu, r"\max(u,0)", homogeneous=True, breakpoints=(0.0,)),
        Activation("tanh", np.tanh, _dtanh, r"\tanh(u)"),
        Activation("linear", lambda u: np.asarray(u, dtype=float), np.ones_like, "u", True),
        Activation("quadratic", np.square, lambda u: 2.0 * u, "u^2"),
        SINCOS,
    ]
}
"""Catalogue of named activations: relu, tanh, linear, quadratic, sincos."""


def get_activation(activation) -> Activation:
    """Resolve an activation given by name, as a ``(sigma, dsigma)`` pair, or as an Activation.

    Parameters
    ----------
    activation : str, (sigma, dsigma) pair or Activation
        A name from :data:`ACTIVATIONS`, two vectorised callables, or an :class:`Activation`
        (returned as is).

    Returns
    -------
    Activation

    Raises
    ------
    ValueError
        For an unknown name or anything else.
    """
    if isinstance(activation, Activation):
        return activation
    if isinstance(activation, str):
        try:
            return ACTIVATIONS[activation]
        except KeyError:
            raise ValueError(
                f"unknown activation {activation!r}; known: {', '.join(sorted(ACTIVATIONS))}"
            ) from None
    if (
        isinstance(activation, (tuple, list))
        and len(activation) == 2
        and all(callable(f) for f in activation)
    ):
        return Activation("custom", activation[0], activation[1])
    raise ValueError(
        "activation must be a name from ACTIVATIONS, a (sigma, dsigma) pair of callables or "
        f"an Activation, got {activation!r}"
    )


def hermite_moments(activation, kmax: int, breakpoints=None) -> np.ndarray:
    r"""Gaussian means :math:`\mu_k = \mathbb E[\sigma^{(k)}(G)]`, :math:`k = 0..k_{\max}`.

    By Stein's lemma :math:`\mu_k = \mathbb E[\sigma(G)\mathrm{He}_k(G)]`, the unnormalised
    Hermite coefficients of :math:`\sigma`: the coefficients of the Taylor terms of
    {eq}`eq-ch7-feature-taylor` and {eq}`eq-ch7-second-taylor` (chapter 7), and
    :math:`\mu_1, \mu_2, \mu_3` of the one-step theory of chapter 6 (:func:`activation_moments`).
    Computed by adaptive quadrature (:func:`lecnotes.core.hermite.hermite_coefficients`). For
    :data:`SINCOS`, :math:`\mu_k = \sqrt2 e^{-1/2}\sin(\pi/4+k\pi/2) = \pm e^{-1/2}`; ReLU:
    :math:`\mu_k = 0` for odd :math:`k\ge3`; tanh: :math:`\mu_k = 0` for even :math:`k`.

    Parameters
    ----------
    activation : str, (sigma, dsigma) pair or Activation
    kmax : int
        Highest order, ``>= 0``.
    breakpoints : sequence of float, optional
        Kinks of :math:`\sigma`; default the activation's own ``breakpoints``.

    Returns
    -------
    ndarray (kmax + 1,)
    """
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    act = get_activation(activation)
    bp = act.breakpoints if breakpoints is None else tuple(breakpoints)
    return np.asarray(hermite_coefficients(act.sigma, kmax, normalized=False,
                                           breakpoints=tuple(bp)), dtype=float)


@dataclass(frozen=True)
class ActivationMoments:
    r"""Gaussian moments of :math:`\sigma'` that enter the one-step theory (chapter 6).

    They are the coefficients of {eq}`eq-ch6-neuron-overlap`, {eq}`eq-ch6-spike-bulk` and
    {eq}`eq-ch6-leap2`.

    Attributes
    ----------
    mu1 : float
        :math:`\mathbb E[\sigma'(G)] = \mu_1`, the first Hermite coefficient of :math:`\sigma`
        (1/2 for ReLU): the weight of the rank-one part of the gradient.
    beta1 : float
        :math:`\mathbb E[\sigma'(G)G] = \mu_2` (``1/sqrt(2 pi)`` for ReLU): the weight with
        which a step sees degree-2 structure.
    m2 : float
        :math:`\mathbb E[\sigma'(G)^2]` (1/2 for ReLU).
    var : float
        :math:`\mathrm{Var}\,\sigma'(G) = m_2-\mu_1^2` (1/4 for ReLU): the size of the
        per-neuron noise that is *not* rank one.
    lambda3 : float
        :math:`\mathbb E[\sigma'(G)\mathrm{He}_2(G)] = \mathbb E[\sigma(G)\mathrm{He}_3(G)] =
        \mu_3`, the unnormalised third Hermite coefficient of :math:`\sigma`: the weight of the
        third level of a staircase ({prf:ref}`thm-ch6-staircase`). Zero for the bias-free ReLU.
    """

    mu1: float
    beta1: float
    m2: float
    var: float
    lambda3: float


def activation_moments(activation="relu", breakpoints=None) -> ActivationMoments:
    r"""The moments of :math:`\sigma'` of the one-step theory of chapter 6.

    :math:`\mu_1,\mu_2,\mu_3` from :func:`hermite_moments` and :math:`m_2 =
    \mathbb E[\sigma'(G)^2]` by adaptive Gaussian quadrature: the coefficients of
    {eq}`eq-ch6-neuron-overlap` and {eq}`eq-ch6-spike-bulk`.

    Parameters
    ----------
    activation : str, (sigma, dsigma) pair or Activation
    breakpoints : sequence of float, optional
        The kinks of :math:`\sigma` (jumps of :math:`\sigma'`); default the activation's own
        ``breakpoints`` (``(0,)`` for ReLU).

    Returns
    -------
    ActivationMoments
    """
    act = get_activation(activation)
    bp = act.breakpoints if breakpoints is None else tuple(breakpoints)
    _, mu1, beta1, lam3 = (float(v) for v in hermite_moments(act, 3, bp))
    m2 = float(gaussian_expectation(
        lambda g: (np.asarray(act.dsigma(g), dtype=float) * np.ones_like(g)) ** 2,
        breakpoints=bp))
    return ActivationMoments(mu1, beta1, m2, m2 - mu1**2, lam3)


@dataclass(frozen=True)
class Loss:
    r"""A loss :math:`\ell(y, f)`: the sum over samples and the derivative in :math:`f`.

    Attributes
    ----------
    name : str
    total : callable
        ``total(y, f)`` :math:`= \sum_i\ell(y_i, f_i)` (a float).
    derivative : callable
        ``derivative(y, f)`` :math:`= \partial_f\ell(y, f)`, vectorised. Calling the loss
        itself, ``loss(y, f)``, returns the derivative (chapter 3 uses only that).
    output_free : bool
        The derivative does not depend on :math:`f` (the correlation loss): a first-layer
        gradient then needs no forward pass.
    """

    name: str
    total: Callable
    derivative: Callable
    output_free: bool = False

    def __call__(self, y, f):
        """The derivative :math:`\\partial_f\\ell(y, f)` (vectorised).

        Parameters
        ----------
        y, f : ndarray
            Labels and outputs.

        Returns
        -------
        ndarray
        """
        return self.derivative(y, f)


def _square_total(y, f):
    r = f - y
    return 0.5 * float(r @ r)


def _huber_total(y, f, c=1.0):
    r = np.abs(y - f)
    return float(np.sum(np.where(r <= c, 0.5 * r * r, c * r - 0.5 * c * c)))


def _huber_grad(y, f, c=1.0):
    return -np.clip(y - f, -c, c)


LOSSES: dict[str, Loss] = {
    loss.name: loss
    for loss in [
        Loss("square", _square_total, lambda y, f: f - y),  # l = (y - f)^2 / 2
        Loss("correlation", lambda y, f: -float(y @ f),
             lambda y, f: -y * np.ones_like(f), output_free=True),  # l = -y f
        Loss("huber", _huber_total, _huber_grad),  # Huber_1(y - f): quadratic below 1
        Loss("logistic", lambda y, f: float(np.sum(np.logaddexp(0.0, -y * f))),
             lambda y, f: -y / (1.0 + np.exp(y * f))),  # l = log(1 + exp(-y f))
    ]
}
r"""The losses of the book: square, correlation, huber, logistic (:class:`Loss` objects)."""


def get_loss(loss) -> Loss:
    """Resolve a loss given by name or as a :class:`Loss`.

    Parameters
    ----------
    loss : str or Loss

    Returns
    -------
    Loss
    """
    if isinstance(loss, Loss):
        return loss
    try:
        return LOSSES[loss]
    except (KeyError, TypeError):
        raise ValueError(f"loss must be a name from LOSSES ({', '.join(LOSSES)}) or a Loss, "
                         f"got {loss!r}") from None


def loss_derivative(loss):
    r"""The derivative :math:`\partial_f\ell(y, f)` of a loss (chapter 3).

    Parameters
    ----------
    loss : str, Loss or callable
        A name from :data:`LOSSES`, a :class:`Loss`, or a callable ``dl/df(y, f)`` (returned
        as is).

    Returns
    -------
    callable
    """
    if callable(loss):
        return loss
    try:
        return get_loss(loss)
    except ValueError:
        raise ValueError(
            f"loss must be a name from LOSSES ({', '.join(LOSSES)}) or a callable dl/df(y, f), "
            f"got {loss!r}"
        ) from None


def loss_and_dual(f, y, loss):
    r"""Empirical risk :math:`\frac1n\sum_i\ell(y_i,f_i)` and its dual variable (chapter 1).

    The dual variable :math:`g_i = \partial\hat R/\partial f_i = \partial_f\ell(y_i,f_i)/n`
    is what the gradients of a network contract with.

    Parameters
    ----------
    f, y : ndarray (n,)
        Outputs and labels.
    loss : str or Loss
        A name from :data:`LOSSES` or a :class:`Loss`.

    Returns
    -------
    value : float
    dual : ndarray (n,)
    """
    ell = get_loss(loss)
    n = y.shape[0]
    return ell.total(y, f) / n, ell.derivative(y, f) / n
