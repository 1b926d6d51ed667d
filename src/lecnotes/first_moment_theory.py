r"""Closed forms of chapter 3: the asymptotic overlap of the first-moment estimator.

The limit of the overlap of :math:`\frac1n\sum_iT(y_i)x_i` for any preprocessing and label
noise (:func:`first_moment_moments`, :func:`first_moment_overlap`), by quadrature.
"""

from __future__ import annotations

import numpy as np

from . import _validate as V
from .conditional_hermite import conditional_hermite_norms
from .hermite import gaussian_expectation
from .targets import get_link

__all__ = [
    "first_moment_moments",
    "first_moment_overlap",
]


def _label_expectation(f_of_g_and_y, link, noise):
    r""":math:`\mathbb E[F(G, Y)]` for :math:`Y = \varphi(G) + \tau Z`, by quadrature (chapter 3).

    ``f_of_g_and_y(g, y)`` is vectorised and may return trailing axes. Noiseless: one adaptive
    quadrature over :math:`G` (jumps of :math:`T\circ\varphi` are located by bisection). Noisy:
    adaptive quadrature over :math:`Z` of a function evaluated on a fixed Gauss-Legendre grid
    in :math:`G` (after averaging over the noise the integrand is smooth in :math:`G`).
    """
    phi = get_link(link)
    if noise == 0:
        return gaussian_expectation(
            lambda g: f_of_g_and_y(g, np.asarray(phi(g), dtype=float)),
            breakpoints=getattr(phi, "breakpoints", ()),
        )
    cuts = np.linspace(-12.0, 12.0, 97)
    nodes, weights = np.polynomial.legendre.leggauss(24)
    half = 0.5 * np.diff(cuts)
    mids = 0.5 * (cuts[1:] + cuts[:-1])
    g = (mids[:, None] + half[:, None] * nodes[None, :]).ravel()
    wg = (half[:, None] * weights[None, :]).ravel() * np.exp(-0.5 * g**2) / np.sqrt(2 * np.pi)
    phig = np.asarray(phi(g), dtype=float)

    def over_z(z):  # z: (m,) -> (m, ...) integrated against the G-grid
        vals = f_of_g_and_y(g[None, :], phig[None, :] + noise * z[:, None])
        return np.tensordot(vals, wg, axes=([1], [0])) if vals.ndim == 2 else np.einsum(
            "mg...,g->m...", vals, wg
        )

    return gaussian_expectation(over_z, cutoff=9.0, tol=1e-10)


def first_moment_moments(link, T=None, noise: float = 0.0):
    r"""The two numbers behind the first-moment overlap (chapter 3, eq. (overlap)).

    Returns :math:`(\mu, m_2) = (\mathbb E[T(Y)G], \mathbb E[T(Y)^2])` for
    :math:`Y = \varphi(G) + \tau Z`. With ``T=None`` the optimal preprocessing
    :math:`T^\star(y) = \mathbb E[G\mid Y=y]` is used, for which :math:`\mu = m_2 = q =
    \mathbb E[\mathbb E[G\mid Y]^2]` (computed by :mod:`lecnotes.exponents`).

    Parameters
    ----------
    link : callable or str
    T : callable or None
        Vectorised preprocessing of the labels.
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.
    """

    noise = V.nonneg_float(noise, "noise")
    get_link(link)
    if T is None:
        q = float(conditional_hermite_norms(link, 1, noise)[0])
        return q, q
    if not callable(T):
        raise ValueError(f"T must be a callable of the labels or None, got {T!r}")

    def both(g, y):
        t = np.asarray(T(y), dtype=float)
        if t.shape != np.shape(y):
            raise ValueError("T must be vectorised: T(y) must have the shape of y")
        return np.stack([t * g, t * t], axis=-1)

    mu, m2 = _label_expectation(both, link, noise)
    return float(mu), float(m2)


def first_moment_overlap(link, delta, T=None, noise: float = 0.0):
    r"""Asymptotic squared overlap of the first-moment estimator (chapter 3, eq. (overlap)).

    For :math:`v = \frac1n\sum_i T(y_i)x_i` with :math:`n, d\to\infty`, :math:`n/d\to\delta`:

    .. math:: \rho^2 \to \frac{\delta\mu^2}{\delta\mu^2 + \mathbb E[T(Y)^2]},\qquad
              \mu = \mathbb E[T(Y)G],

    and with the optimal :math:`T = \mathbb E[G\mid Y]` (``T=None``)
    :math:`\rho^2\to\delta q/(1+\delta q)`, :math:`q = \mathbb E[\mathbb E[G\mid Y]^2]`.
    Computed by quadrature, not simulation.

    Parameters
    ----------
    link : callable or str
    delta : float or array_like
        Sample ratio(s) :math:`n/d > 0`.
    T : callable or None
    noise : float

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
