r"""Single- and multi-index targets with Gaussian inputs (chapter 0).

The single-index model (chapter 0, {prf:ref}`def-index-models`):
:math:`y = \varphi(\langle w_\star, x\rangle) + \tau\,\varepsilon` with
:math:`x\sim N(0,I_d)`, :math:`\|w_\star\|=1`, :math:`\varepsilon\sim N(0,1)`. The
multi-index model replaces :math:`\langle w_\star,x\rangle` by the vector
:math:`W_\star x\in\mathbb R^k` with orthonormal rows.

Links are vectorised callables. The catalogue :data:`LINKS` holds named :class:`Link`
objects, which also carry their points of non-smoothness (used by the quadrature of
:mod:`lecnotes.core.hermite`) and a LaTeX label for tables and figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation, he, panel_rule

__all__ = [
    "Link",
    "LINKS",
    "get_link",
    "apply_link",
    "random_unit_vector",
    "random_orthonormal",
    "single_index",
    "multi_index",
    "staircase",
    "HE3",
    "two_direction_link",
    "link_expectation",
    "LinkMoments",
    "link_moments",
    "GEN4_A",
    "GEN4_B",
    "gen4_partner",
]


@dataclass(frozen=True)
class Link:
    """A named, vectorised link function :math:`\\varphi:\\mathbb R\\to\\mathbb R`.

    Attributes
    ----------
    name : str
        Catalogue key.
    func : callable
        Vectorised function of a numpy array.
    latex : str
        Formula for tables and legends.
    breakpoints : tuple of float
        Points where ``func`` jumps or has a kink (helps the quadrature).
    """

    name: str
    func: Callable[[np.ndarray], np.ndarray]
    latex: str = ""
    breakpoints: tuple[float, ...] = field(default_factory=tuple)

    def __call__(self, u):
        return self.func(np.asarray(u, dtype=float))

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Link({self.name!r})"


def _he(k: int) -> Callable[[np.ndarray], np.ndarray]:

    return lambda u: he(k, u)


LINKS: dict[str, Link] = {
    link.name: link
    for link in [
        Link("linear", lambda u: u, r"u"),
        Link("quadratic", lambda u: u**2, r"u^2"),
        Link("cubic", lambda u: u**3, r"u^3"),
        Link("he2", _he(2), r"\mathrm{He}_2(u)"),
        Link("he3", _he(3), r"\mathrm{He}_3(u)"),
        Link("he4", _he(4), r"\mathrm{He}_4(u)"),
        Link("he5", _he(5), r"\mathrm{He}_5(u)"),
        Link("he6", _he(6), r"\mathrm{He}_6(u)"),
        Link("abs", np.abs, r"|u|", (0.0,)),
        Link("relu", lambda u: np.maximum(u, 0.0), r"\max(u,0)", (0.0,)),
        Link("tanh", np.tanh, r"\tanh(u)"),
        Link("sign", np.sign, r"\mathrm{sign}(u)", (0.0,)),
    ]
}
"""Catalogue of named links: linear, quadratic, cubic, he2..he6, abs, relu, tanh, sign, and
(appended below) gen4, the generative-exponent-4 indicator of chapters 2 and 5."""


def get_link(link) -> Callable[[np.ndarray], np.ndarray]:
    """Resolve ``link`` (a name from :data:`LINKS` or a callable) to a callable.

    Parameters
    ----------
    link : str or callable
        A catalogue name or a vectorised function.

    Returns
    -------
    callable
        The :class:`Link` of the catalogue, or ``link`` itself.

    Raises
    ------
    ValueError
        For an unknown name or an object that is neither a string nor callable.
    """
    if isinstance(link, str):
        try:
            return LINKS[link]
        except KeyError:
            raise ValueError(
                f"unknown link {link!r}; known links: {', '.join(sorted(LINKS))}"
            ) from None
    if callable(link):
        return link
    raise ValueError(f"link must be a callable or a name from LINKS, got {link!r}")


def random_unit_vector(d: int, rng=None) -> np.ndarray:
    """A uniformly random unit vector of :math:`\\mathbb R^d` ({prf:ref}`def-index-models`).

    Parameters
    ----------
    d : int
        Dimension.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    ndarray (d,)
    """
    d = V.positive_int(d, "d")
    rng = V.generator(rng)
    w = rng.standard_normal(d)
    return w / np.linalg.norm(w)


def random_orthonormal(k: int, d: int, rng=None) -> np.ndarray:
    """``k`` orthonormal rows in :math:`\\mathbb R^d`, Haar distributed (chapter 0).

    The directions of a multi-index model, {prf:ref}`def-index-models`.

    Parameters
    ----------
    k, d : int
        Number of rows and dimension, ``k <= d``.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    ndarray (k, d)
    """
    k = V.positive_int(k, "k")
    d = V.positive_int(d, "d")
    if k > d:
        raise ValueError(f"cannot have k = {k} orthonormal directions in dimension d = {d}")
    rng = V.generator(rng)
    q, r = np.linalg.qr(rng.standard_normal((d, k)))
    q = q * np.sign(np.diag(r))[None, :]  # Haar: fix the sign ambiguity of QR
    return q.T.copy()


def apply_link(link: Callable, u: np.ndarray) -> np.ndarray:
    """Labels ``link(u)`` of the projections ``u`` (one row per sample), checked: one finite
    value per sample (the labels of {prf:ref}`def-index-models` without noise).

    Parameters
    ----------
    link : callable
        Vectorised over the first axis of ``u``.
    u : ndarray (n,) or (n, k)
        Projections of the inputs on the directions.

    Returns
    -------
    ndarray (n,)
    """
    y = np.asarray(link(u), dtype=float)
    if y.shape != u.shape[:1]:
        raise ValueError(
            f"the link must be vectorised and return one value per sample: on input of shape "
            f"{u.shape} it returned shape {y.shape}"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError("the link returned NaN or infinite labels")
    return y


def single_index(n: int, d: int, link, noise: float = 0.0, rng=None, w_star=None):
    r"""Draw ``n`` samples of the single-index model in dimension ``d`` (chapter 0).

    :math:`y_i = \varphi(\langle w_\star,x_i\rangle) + \tau\varepsilon_i`,
    :math:`x_i\sim N(0,I_d)`, :math:`w_\star` uniform on the sphere (or given):
    {prf:ref}`def-index-models`.

    Parameters
    ----------
    n, d : int
        Number of samples and dimension, both ``>= 1``.
    link : callable or str
        Vectorised link or a name from :data:`LINKS`.
    noise : float
        Standard deviation :math:`\tau\ge 0` of the additive Gaussian label noise.
    rng : numpy.random.Generator, int or None
        Source of randomness (a seed gives a reproducible draw).
    w_star : array_like, optional
        Use this direction (normalised) instead of a random one.

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    w_star : ndarray (d,), unit norm
    """
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    phi = get_link(link)
    noise = V.nonneg_float(noise, "noise")
    rng = V.generator(rng)
    if w_star is None:
        w_star = random_unit_vector(d, rng)
    else:
        w_star = V.finite_array(w_star, "w_star", ndim=1)
        if w_star.shape != (d,) or np.linalg.norm(w_star) == 0:
            raise ValueError(f"w_star must be a non-zero vector of shape ({d},)")
        w_star = w_star / np.linalg.norm(w_star)
    X = rng.standard_normal((n, d))
    y = apply_link(phi, X @ w_star)
    if noise > 0:
        y = y + noise * rng.standard_normal(n)
    return X, y, w_star


def multi_index(n: int, d: int, g, k: int, noise: float = 0.0, rng=None, W_star=None):
    r"""Draw ``n`` samples of the multi-index model :math:`y = g(W_\star x) + \tau\varepsilon`.

    Chapter 0, {prf:ref}`def-index-models`. ``W_star`` has ``k`` orthonormal rows; ``g`` maps an
    ``(n, k)`` array of projections :math:`z_i = W_\star x_i` to ``n`` labels.

    Parameters
    ----------
    n, d, k : int
        Samples, dimension, number of relevant directions (``1 <= k <= d``).
    g : callable
        Vectorised over rows: ``g(Z)`` with ``Z`` of shape ``(n, k)`` returns shape ``(n,)``.
    noise : float
        Label noise standard deviation.
    rng : Generator, int or None
        Random source (SPEC 7).
    W_star : array_like (k, d), optional
        Directions to use (orthonormalised); random (Haar) if omitted.

    Returns
    -------
    X : ndarray (n, d), y : ndarray (n,), W_star : ndarray (k, d)
    """
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    k = V.positive_int(k, "k")
    if not callable(g):
        raise ValueError(f"g must be a callable of an (n, k) array, got {g!r}")
    noise = V.nonneg_float(noise, "noise")
    rng = V.generator(rng)
    if W_star is None:
        W_star = random_orthonormal(k, d, rng)
    else:
        W_star = V.finite_array(W_star, "W_star", ndim=2)
        if W_star.shape != (k, d):
            raise ValueError(f"W_star must have shape ({k}, {d}), got {W_star.shape}")
        q, r = np.linalg.qr(W_star.T)
        if np.min(np.abs(np.diag(r))) < 1e-12:
            raise ValueError("W_star must have linearly independent rows")
        W_star = (q * np.sign(np.diag(r))[None, :]).T
    X = rng.standard_normal((n, d))
    y = apply_link(g, X @ W_star.T)
    if noise > 0:
        y = y + noise * rng.standard_normal(n)
    return X, y, W_star


def staircase(levels: int = 2) -> Callable[[np.ndarray], np.ndarray]:
    r"""The staircase :math:`g(z) = z_1 + z_1z_2 + \dots + z_1\cdots z_L` (chapters 0 and 6).

    A multi-index link ({prf:ref}`def-index-models`); chapter 6, {prf:ref}`thm-ch6-staircase`.

    Parameters
    ----------
    levels : int
        :math:`L`, the number of directions used.

    Returns
    -------
    callable
        ``g(Z)`` for ``Z`` of shape (n, >= L), returning shape (n,).
    """
    levels = V.positive_int(levels, "levels")

    def g(Z):
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] < levels:
            raise ValueError(f"staircase with {levels} levels needs Z of shape (n, >= {levels})")
        return np.cumprod(Z[:, :levels], axis=1).sum(axis=1)

    return g


GEN4_A = 0.2254
r"""The ``a`` of ``LINKS["gen4"]``: the maximiser 0.225409... of :math:`\mathbb E[\zeta_4(Y)^2]`
over the family :math:`\mathbb 1\{a<|u|<b(a)\}` of chapter 2, rounded to four digits (the one
source of this constant; :func:`lecnotes.core.exponents.gen4_interval` derives the rest)."""


def gen4_partner(a: float) -> float:
    r"""The :math:`b > 1` with :math:`ae^{-a^2/2} = be^{-b^2/2}`, for :math:`0 < a < 1`.

    Chapter 2, {eq}`eq-ch2-gen4-partner`: with this partner the indicator
    :math:`\mathbb 1\{a<|u|<b\}` has :math:`\zeta_2\equiv0`, hence generative exponent 4.

    Parameters
    ----------
    a : float
        The inner end, in (0, 1).

    Returns
    -------
    float
        The outer end :math:`b`, to machine precision (Brent's method).
    """
    a = float(a)
    if not 0.0 < a < 1.0:
        raise ValueError(f"a must lie in (0, 1), got {a!r}")
    fa = a * math.exp(-0.5 * a * a)
    return float(brentq(lambda b: fa - b * math.exp(-0.5 * b * b), 1.0, 40.0,
                        xtol=1e-15, rtol=1e-15))


GEN4_B = gen4_partner(GEN4_A)
"""The ``b`` of ``LINKS["gen4"]``, :func:`gen4_partner` of :data:`GEN4_A` (2.131777344456144)."""

# The generative-exponent-4 link of chapter 2, 1{a < |u| < b}, so that E[G^2 | Y] = 1 on both
# labels. Chapter 5 uses it as its running example.
LINKS["gen4"] = Link(
    "gen4",
    lambda u: ((np.abs(u) > GEN4_A) & (np.abs(u) < GEN4_B)).astype(float),
    r"\mathbb{1}\{a<|u|<b\}",
    (-GEN4_B, -GEN4_A, GEN4_A, GEN4_B),
)


def _he3_normalised(u):
    u = np.asarray(u, dtype=float)
    return (u**3 - 3 * u) / math.sqrt(6.0)


HE3 = Link("he3-normalised", _he3_normalised, r"\mathrm{He}_3(u)/\sqrt6")
r"""The link :math:`\mathrm{He}_3(u)/\sqrt6` (unit variance; information exponent 3, generative
exponent 1): the target of the reuse experiments of chapter 7."""


def two_direction_link(Z) -> np.ndarray:
    r""":math:`g(z) = (z_1+\mathrm{He}_3(z_2)/\sqrt6)/\sqrt2` (chapter 7).

    One direction with information exponent 1 and one with information exponent 3
    (generative exponent 1); unit variance. Use with :func:`lecnotes.core.targets.multi_index`
    (``k = 2``); the reuse experiment of {eq}`eq-ch7-reuse-preprocessing`.

    Parameters
    ----------
    Z : array_like (n, >= 2)
        Projections :math:`z = W_\star x`.

    Returns
    -------
    ndarray (n,)
    """
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or Z.shape[1] < 2:
        raise ValueError(f"two_direction_link needs Z of shape (n, >= 2), got {Z.shape}")
    z1, z2 = Z[:, 0], Z[:, 1]
    return (z1 + (z2**3 - 3 * z2) / math.sqrt(6.0)) / math.sqrt(2.0)


def link_expectation(F, link, noise: float = 0.0):
    r""":math:`\mathbb E[F(G, Y)]` for :math:`Y = \varphi(G) + \tau Z`, by quadrature.

    The package's one engine for moments of a link (used by :func:`link_moments` and the
    closed forms of chapter 3, {eq}`eq-ch3-overlap`). Noiseless: one adaptive quadrature over
    :math:`G` (:func:`lecnotes.core.hermite.gaussian_expectation`; jumps of :math:`F(g,\varphi(g))`
    beyond the link's ``breakpoints`` are located by bisection). Noisy: adaptive quadrature
    over :math:`Z` of a function evaluated on a fixed grid in :math:`G` (24-point
    Gauss-Legendre on 96 panels of :math:`[-12, 12]`; after averaging over the noise the
    integrand is smooth in :math:`G`).

    Parameters
    ----------
    F : callable
        ``F(g, y)``, vectorised in both arguments (broadcast), may return trailing axes.
    link : callable or str
        The link :math:`\varphi`.
    noise : float
        :math:`\tau\ge0`.

    Returns
    -------
    ndarray
        The expectation (0-d for a scalar ``F``, else the trailing shape).
    """
    phi = get_link(link)
    if noise == 0:
        return gaussian_expectation(
            lambda g: F(g, np.asarray(phi(g), dtype=float)),
            breakpoints=getattr(phi, "breakpoints", ()),
        )
    cuts = np.linspace(-12.0, 12.0, 97)
    nodes, weights = panel_rule(cuts[:-1], cuts[1:], 24)
    g = nodes.ravel()
    wg = weights.ravel() * np.exp(-0.5 * g**2) / np.sqrt(2 * np.pi)
    phig = np.asarray(phi(g), dtype=float)

    def over_z(z):  # z: (m,) -> (m, ...) integrated against the G-grid
        vals = F(g[None, :], phig[None, :] + noise * z[:, None])
        return np.tensordot(vals, wg, axes=([1], [0])) if vals.ndim == 2 else np.einsum(
            "mg...,g->m...", vals, wg
        )

    return gaussian_expectation(over_z, cutoff=9.0, tol=1e-10)


class LinkMoments(NamedTuple):
    r"""Low moments of a noiseless label :math:`Y = \varphi(G)` (:func:`link_moments`)."""

    mean: float
    r""":math:`\mathbb E[Y] = c_0`."""
    c1: float
    r""":math:`c_1 = \mathbb E[YG]`."""
    c2: float
    r""":math:`c_2 = \mathbb E[Y h_2(G)]`."""
    ey2: float
    r""":math:`\mathbb E[Y^2]`."""
    ey2g2: float
    r""":math:`\mathbb E[Y^2G^2]`."""


def link_moments(link) -> LinkMoments:
    r"""The moments of :math:`Y = \varphi(G)` that the one-step theories use (chapters 0, 6).

    Hermite coefficients :math:`c_0, c_1, c_2` ({eq}`eq-ch0-hermite-expansion`) and the second
    moments :math:`\mathbb E[Y^2]`, :math:`\mathbb E[Y^2G^2]`, by one quadrature
    (:func:`link_expectation`).

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.

    Returns
    -------
    LinkMoments
        ``(mean, c1, c2, ey2, ey2g2)``.
    """
    vals = link_expectation(
        lambda g, y: np.stack([y, y * g, y * (g * g - 1) / math.sqrt(2), y**2, (y * g) ** 2],
                              axis=-1),
        link,
    )
    return LinkMoments(*(float(v) for v in vals))
