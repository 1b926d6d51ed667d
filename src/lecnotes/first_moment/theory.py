r"""Closed forms of chapter 3: the asymptotic overlap of the first-moment estimator.

The limit of the overlap of :math:`\frac1n\sum_iT(y_i)x_i` for any preprocessing and label
noise (:func:`first_moment_moments`, :func:`first_moment_overlap`), by quadrature.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite_norms
from lecnotes.core.first_moment import (
    optimal_preprocessing,
)
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


