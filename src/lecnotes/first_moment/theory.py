r"""Closed forms of chapter 3: the asymptotic overlap of the first-moment estimator.

The limit of the overlap of :math:`\frac1n\sum_iT(y_i)x_i` for any preprocessing and label
noise (:func:`first_moment_moments`, :func:`first_moment_overlap`), by quadrature.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite_norms
from lecnotes.core.targets import get_link, link_expectation

__all__ = [
    "FirstMomentMoments",
    "first_moment_moments",
    "first_moment_overlap",
    "optimal_preprocessing",
]


class FirstMomentMoments(NamedTuple):
    r"""The two numbers of {eq}`eq-ch3-first-moment` behind the overlap."""

    mu: float
    r""":math:`\mu_T = \mathbb E[T(Y)G]`."""
    m2: float
    r""":math:`m_T = \mathbb E[T(Y)^2]`."""


def first_moment_moments(link, T=None, noise: float = 0.0) -> FirstMomentMoments:
    r"""The two numbers behind the first-moment overlap (chapter 3, {eq}`eq-ch3-first-moment`).

    Returns :math:`(\mu, m_2) = (\mathbb E[T(Y)G], \mathbb E[T(Y)^2])` for
    :math:`Y = \varphi(G) + \tau Z`. With ``T=None`` the optimal preprocessing
    :math:`T^\star(y) = \mathbb E[G\mid Y=y]` is used, for which :math:`\mu = m_2 = q =
    \mathbb E[\mathbb E[G\mid Y]^2]` ({prf:ref}`thm-optimal-preprocessing`; computed by
    :mod:`lecnotes.core.conditional_hermite`).

    Parameters
    ----------
    link : callable or str
        The link.
    T : callable or None
        Vectorised preprocessing of the labels.
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    FirstMomentMoments
        ``(mu, m2)``: :math:`\mu_T` and :math:`m_T`.
    """

    noise = V.nonneg_float(noise, "noise")
    get_link(link)
    if T is None:
        q = float(conditional_hermite_norms(link, 1, noise)[0])
        return FirstMomentMoments(q, q)
    if not callable(T):
        raise ValueError(f"T must be a callable of the labels or None, got {T!r}")

    def both(g, y):
        t = np.asarray(T(y), dtype=float)
        if t.shape != np.shape(y):
            raise ValueError("T must be vectorised: T(y) must have the shape of y")
        return np.stack([t * g, t * t], axis=-1)

    mu, m2 = link_expectation(both, link, noise)
    return FirstMomentMoments(float(mu), float(m2))


def first_moment_overlap(link, delta, T=None, noise: float = 0.0):
    r"""Asymptotic squared overlap of the first-moment estimator (chapter 3, {eq}`eq-ch3-overlap`).

    {prf:ref}`thm-first-moment-overlap`; with the optimal preprocessing
    {eq}`eq-ch3-optimal-overlap` ({prf:ref}`thm-optimal-preprocessing`).


    For :math:`v = \frac1n\sum_i T(y_i)x_i` with :math:`n, d\to\infty`, :math:`n/d\to\delta`:

    .. math:: \rho^2 \to \frac{\delta\mu^2}{\delta\mu^2 + \mathbb E[T(Y)^2]},\qquad
              \mu = \mathbb E[T(Y)G],

    and with the optimal :math:`T = \mathbb E[G\mid Y]` (``T=None``)
    :math:`\rho^2\to\delta q/(1+\delta q)`, :math:`q = \mathbb E[\mathbb E[G\mid Y]^2]`.
    Computed by quadrature, not simulation.

    Parameters
    ----------
    link : callable or str
        The link.
    delta : float or array_like
        Sample ratio(s) :math:`n/d > 0`.
    T : callable or None
        Preprocessing; ``None`` is the optimal one.
    noise : float
        Label-noise standard deviation.

    Returns
    -------
    float or ndarray shaped like ``delta``.
    """
    d = V.finite_array(delta, "delta")
    if np.any(d <= 0):
        raise ValueError("delta must be positive")
    mu, m2 = first_moment_moments(link, T, noise)
    if m2 == 0:
        raise ValueError("E[T(Y)^2] = 0: the preprocessed labels vanish")
    out = d * mu**2 / (d * mu**2 + m2)
    return float(out) if out.ndim == 0 else out


def optimal_preprocessing(link: str, noise: float = 0.0):
    r"""The optimal preprocessing :math:`T^\star(y)=\mathbb E[G\mid Y=y]` in closed form (ch. 3).

    {prf:ref}`thm-optimal-preprocessing`, written out for four links so that it costs a few
    array operations per label (the general
    :func:`lecnotes.core.conditional_hermite.conditional_hermite`
    solves for the preimages of every label, which is slow for :math:`10^7` labels):

    * ``"relu"``: :math:`y` for :math:`y > 0` and :math:`-\sqrt{2/\pi}` at :math:`y = 0`;
    * ``"cubic"``: :math:`y^{1/3}` (an injective link reveals :math:`G`);
    * ``"sign"`` with noise :math:`\tau>0`: :math:`\sqrt{2/\pi}\tanh(y/\tau^2)`
      (exercise {ref}`ex-ch3-noisy-sign`);
    * ``"he3"``: :math:`\sum_jw_jg_j/\sum_jw_j` over the real roots :math:`g_j` of
      :math:`g^3-3g=y` (three for :math:`|y|<2`, by the trigonometric formula; one beyond),
      :math:`w_j=\gamma(g_j)/|3g_j^2-3|`.

    Parameters
    ----------
    link : {"relu", "cubic", "sign", "he3"}
        The link (noiseless except ``"sign"``, which needs ``noise > 0``).
    noise : float
        Label-noise standard deviation (only for ``"sign"``).

    Returns
    -------
    callable
        Vectorised :math:`T^\star`.
    """
    noise = V.nonneg_float(noise, "noise")
    if link == "sign":
        if noise <= 0:
            raise ValueError("the closed form for the sign needs label noise tau > 0")
        return lambda y: np.sqrt(2 / np.pi) * np.tanh(np.asarray(y, dtype=float) / noise**2)
    if noise != 0:
        raise ValueError(f"the closed form for {link!r} is for noiseless labels")
    if link == "relu":
        return lambda y: np.where(np.asarray(y) > 0, y, -np.sqrt(2 / np.pi))
    if link == "cubic":
        return np.cbrt
    if link == "he3":
        return _he3_posterior_mean
    raise ValueError(f"no closed form for the link {link!r}; use conditional_hermite")


def _he3_posterior_mean(y):
    y = np.asarray(y, dtype=float)
    inner = np.abs(y) < 2
    theta = np.arccos(np.clip(y / 2, -1, 1))[..., None] / 3 - 2 * np.pi * np.arange(3) / 3
    g3 = 2 * np.cos(theta)                                 # the three roots for |y| < 2
    w3 = np.exp(-g3**2 / 2) / np.abs(3 * g3**2 - 3)
    root = np.sqrt(np.maximum(y**2 - 4, 0))
    g1 = np.cbrt((y + root) / 2) + np.cbrt((y - root) / 2)  # the one root for |y| >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        inside = np.sum(w3 * g3, axis=-1) / np.sum(w3, axis=-1)
    return np.where(inner, inside, g1)
