r"""Activations, their Gaussian moments, and the losses of the book (one table each).

:data:`ACTIVATIONS` (relu, tanh, linear, quadratic, sincos) holds :class:`Activation` objects
(:math:`\sigma` with :math:`\sigma'`); :func:`activation_moments` (chapter 6) and
:func:`derivative_means` (chapter 7) are the Gaussian moments of an activation and of its
derivatives. :data:`LOSSES` holds the derivatives :math:`\partial_f\ell(y,f)` of the losses
(chapter 3); :func:`loss_and_dual` the value and dual variable of the two risks used to train
networks (chapter 1: square, chapter 7: correlation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from .hermite import gaussian_expectation, hermite_coefficients

__all__ = [
    "Activation",
    "ACTIVATIONS",
    "get_activation",
    "ActivationMoments",
    "activation_moments",
    "loss_and_dual",
    "sincos_derivative",
    "SINCOS",
    "derivative_means",
    "LOSSES",
    "loss_derivative",
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
        norm controls the Rademacher complexity (chapter 1, eq. (path-norm bound)).
    """

    name: str
    sigma: Callable[[np.ndarray], np.ndarray]
    dsigma: Callable[[np.ndarray], np.ndarray]
    latex: str = ""
    homogeneous: bool = False

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Activation({self.name!r})"


def _relu(u):
    return np.maximum(u, 0.0)


def _drelu(u):
    return (u > 0).astype(float)


def _dtanh(u):
    return 1.0 - np.tanh(u) ** 2  # no overflow of cosh for |u| > 710


ACTIVATIONS: dict[str, Activation] = {
    act.name: act
    for act in [
        Activation("relu", _relu, _drelu, r"\max(u,0)", homogeneous=True),
        Activation("tanh", np.tanh, _dtanh, r"\tanh(u)"),
        Activation("linear", lambda u: np.asarray(u, dtype=float), np.ones_like, "u", True),
        Activation("quadratic", np.square, lambda u: 2.0 * u, "u^2"),
    ]
}
"""Catalogue of named activations: relu, tanh, linear, quadratic."""


def get_activation(activation) -> Activation:
    """Resolve an activation given by name, as a ``(sigma, dsigma)`` pair, or as an Activation.

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


@dataclass(frozen=True)
class ActivationMoments:
    r"""Gaussian moments of :math:`\sigma'` that enter the one-step theory (chapter 6).

    Attributes
    ----------
    mu1 : float
        :math:`\mathbb E[\sigma'(G)]`, the first Hermite coefficient of :math:`\sigma`
        (1/2 for ReLU): the weight of the rank-one part of the gradient.
    beta1 : float
        :math:`\mathbb E[\sigma'(G)G] = \mathbb E[\sigma''(G)]` (``1/sqrt(2 pi)`` for ReLU):
        the weight with which a step sees degree-2 structure.
    m2 : float
        :math:`\mathbb E[\sigma'(G)^2]` (1/2 for ReLU).
    var : float
        :math:`\mathrm{Var}\,\sigma'(G) = m_2-\mu_1^2` (1/4 for ReLU): the size of the
        per-neuron noise that is *not* rank one.
    lambda3 : float
        :math:`\mathbb E[\sigma'(G)\mathrm{He}_2(G)] = \mathbb E[\sigma(G)\mathrm{He}_3(G)]`,
        the unnormalised third Hermite coefficient of :math:`\sigma`: the weight of the third
        level of a staircase. Zero for the bias-free ReLU.
    """

    mu1: float
    beta1: float
    m2: float
    var: float
    lambda3: float


def activation_moments(activation="relu", breakpoints=None) -> ActivationMoments:
    r"""Compute :class:`ActivationMoments` by adaptive Gaussian quadrature (chapter 6).

    ``breakpoints`` are the kinks of :math:`\sigma` (jumps of :math:`\sigma'`); for
    ``"relu"`` the default is ``(0,)``, otherwise the quadrature finds jumps adaptively.
    """

    act = get_activation(activation)
    if breakpoints is None:
        breakpoints = (0.0,) if act.name == "relu" else ()

    def ds(g):
        return np.asarray(act.dsigma(g), dtype=float) * np.ones_like(g)

    vals = gaussian_expectation(
        lambda g: np.stack([ds(g), ds(g) * g, ds(g) ** 2, ds(g) * (g * g - 1.0)], axis=1),
        breakpoints=breakpoints,
    )
    mu1, beta1, m2, lam3 = (float(v) for v in vals)
    return ActivationMoments(mu1, beta1, m2, m2 - mu1**2, lam3)


def loss_and_dual(f, y, loss):
    n = y.shape[0]
    if loss == "square":
        r = f - y
        return 0.5 * float(r @ r) / n, r / n
    if loss == "correlation":
        return -float(y @ f) / n, -y / n
    raise ValueError(f"loss must be 'square' or 'correlation', got {loss!r}")


def sincos_derivative(k: int) -> Callable[[np.ndarray], np.ndarray]:
    r"""The ``k``-th derivative of :math:`\sigma(z) = \sin z+\cos z` (chapter 7).

    :math:`\sigma(z) = \sqrt2\sin(z+\pi/4)`, so
    :math:`\sigma^{(k)}(z) = \sqrt2\sin(z+\pi/4+k\pi/2)`. Returns a vectorised callable.
    """
    k = V.positive_int(k, "k", minimum=0)
    phase = math.pi / 4 + k * math.pi / 2

    def f(z):
        return math.sqrt(2.0) * np.sin(np.asarray(z, dtype=float) + phase)

    return f


SINCOS = Activation("sincos", sincos_derivative(0), sincos_derivative(1),
                       r"\sin u+\cos u")
r""":math:`\sigma(z)=\sin z+\cos z`: every derivative has Gaussian mean
:math:`\mathbb E[\sigma^{(k)}(G)] = \pm e^{-1/2}` (chapter 7), so no Hermite coefficient vanishes
and every term of the expansions of the chapter is present; bounded with bounded derivatives."""


def derivative_means(activation, kmax: int, breakpoints=()) -> np.ndarray:
    r"""Gaussian means :math:`\mu_k = \mathbb E[\sigma^{(k)}(G)]` of the derivatives (chapter 7).

    The coefficients of the Taylor terms, :math:`k = 0..k_{\max}`. By Stein's lemma
    they are the unnormalised Hermite coefficients of :math:`\sigma`, computed by adaptive
    quadrature (:func:`lecnotes.hermite.hermite_coefficients`); for :data:`SINCOS` they are
    :math:`\sqrt2 e^{-1/2}\sin(\pi/4+k\pi/2) = \pm e^{-1/2}`. ReLU: :math:`\mu_k = 0` for odd
    :math:`k\ge3`; tanh: :math:`\mu_k = 0` for even :math:`k`.
    """

    kmax = V.positive_int(kmax, "kmax", minimum=0)
    act = get_activation(activation)
    if act.name == "relu" and not breakpoints:
        breakpoints = (0.0,)
    return np.asarray(hermite_coefficients(act.sigma, kmax, normalized=False,
                                           breakpoints=tuple(breakpoints)), dtype=float)


def _huber_grad(y, f, c=1.0):
    return -np.clip(y - f, -c, c)


LOSSES = {
    "square": lambda y, f: f - y,  # l = (y - f)^2 / 2
    "correlation": lambda y, f: -y * np.ones_like(f),  # l = -y f
    "huber": _huber_grad,  # l = Huber_1(y - f): quadratic below 1, linear above
    "logistic": lambda y, f: -y / (1.0 + np.exp(y * f)),  # l = log(1 + exp(-y f))
}
r"""Derivatives :math:`\partial_f\ell(y, f)` of the losses used in the book (vectorised)."""


def loss_derivative(loss):
    if callable(loss):
        return loss
    try:
        return LOSSES[loss]
    except (KeyError, TypeError):
        raise ValueError(
            f"loss must be a name from LOSSES ({', '.join(LOSSES)}) or a callable dl/df(y, f), "
            f"got {loss!r}"
        ) from None
