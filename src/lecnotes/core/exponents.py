"""The information and generative exponents of a link: the definitions every chapter uses.

Chapter 2 defines them ({prf:ref}`def-ch2-information-exponent`,
{prf:ref}`def-ch2-generative-exponent`) and studies them (:mod:`lecnotes.exponents`); chapter 5
uses them and the generative-exponent-4 family of :func:`gen4_interval`. The tolerances are
documented in :mod:`lecnotes.exponents.experiments`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import check_kmax, conditional_hermite_norms
from lecnotes.core.hermite import gaussian_expectation, hermite_coefficients
from lecnotes.core.label_law import evaluate, gauss, pieces
from lecnotes.core.targets import GEN4_A, gen4_partner, get_link

INFO_RTOL = 1e-9
"""Relative tolerance of :func:`information_exponent`: ``|c_k| > 1e-9 sd(phi(G))``."""


GEN_TOL = 1e-10
"""Absolute tolerance of :func:`generative_exponent` on ``E[zeta_k(Y)^2]`` (in [0, 1])."""


class ExponentNotFound(ValueError):
    """No degree ``k <= kmax`` qualifies: the exponent exceeds ``kmax`` or is infinite.

    Attributes
    ----------
    kmax : int
        The largest degree examined.
    values : ndarray
        The quantities that were compared with the tolerance (``|c_k|/sd`` for the
        information exponent, :math:`\\mathbb E[\\zeta_k(Y)^2]` for the generative one),
        for ``k = 1..kmax``.
    """

    def __init__(self, message: str, kmax: int, values):
        super().__init__(message)
        self.kmax = kmax
        self.values = np.asarray(values)


def information_exponent(link, kmax: int = 8, *, rtol: float = INFO_RTOL) -> int:
    r"""The information exponent of a link (chapter 2, {prf:ref}`def-ch2-information-exponent`).

    :math:`\min\{k\ge1: c_k\neq0\}`, :math:`c_k=\mathbb E[\varphi(G)h_k(G)]`, where
    :math:`c_k` counts as non-zero when :math:`|c_k| > \mathrm{rtol}\cdot\mathrm{sd}(\varphi(G))`
    (scale-free: multiplying or shifting the link does not change the answer). The
    coefficients come from :func:`lecnotes.core.hermite.hermite_coefficients` with the jumps and
    kinks located by the piece decomposition (module doc) as break points, so discontinuous
    links are integrated exactly piece by piece. Additive label noise does not change the
    information exponent (:math:`\mathbb E[(\varphi(G)+\tau Z)h_k(G)]=c_k`).

    Parameters
    ----------
    link : callable or str
        Vectorised link or a name from :data:`lecnotes.core.targets.LINKS`.
    kmax : int
        Largest degree examined, ``1 <= kmax <= 12``.
    rtol : float
        Relative tolerance, default :data:`INFO_RTOL` = 1e-9.

    Returns
    -------
    int
        The information exponent, in ``1..kmax``.

    Raises
    ------
    ExponentNotFound
        If ``c_1 = ... = c_kmax = 0`` within tolerance (also for a constant link).
    ValueError
        For an unknown name, a non-callable link, or a bad ``kmax`` / ``rtol``.
    """
    phi = get_link(link)
    kmax = check_kmax(kmax)
    rtol = V.positive_float(rtol, "rtol")
    P = pieces(phi)
    # centre first, so that a large constant part does not swamp the quadrature error
    c0 = float(gaussian_expectation(lambda g: evaluate(phi, g), breakpoints=P.breaks))

    def centred(g):
        return evaluate(phi, g) - c0

    coef = hermite_coefficients(centred, kmax, normalized=True, breakpoints=P.breaks)
    var = float(gaussian_expectation(lambda g: centred(g) ** 2, breakpoints=P.breaks))
    sd = math.sqrt(max(var, 0.0))
    rel = np.abs(coef[1:]) / sd if sd > 0 else np.zeros(kmax)
    hits = np.nonzero(rel > rtol)[0]
    if sd == 0 or hits.size == 0:
        raise ExponentNotFound(
            f"no Hermite coefficient c_k, 1 <= k <= {kmax}, exceeds {rtol:g} sd(phi(G)): the "
            "information exponent is larger than kmax (or infinite for a constant link)",
            kmax,
            rel,
        )
    return int(hits[0] + 1)


def generative_exponent(link, kmax: int = 8, noise: float = 0.0, *, tol: float = GEN_TOL) -> int:
    r"""The generative exponent :math:`k_\star` (chapter 2, {eq}`eq-ch2-generative-exponent`).

    {prf:ref}`def-ch2-generative-exponent` (Damian et al. 2024).


    :math:`k_\star=\min\{k\ge1:\mathbb E[\zeta_k(Y)^2]>\mathrm{tol}\}` with
    :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]` and :math:`Y=\varphi(G)+\tau Z`; equivalently
    the smallest information exponent of :math:`T(Y)` over all square-integrable :math:`T`
    (:math:`T=\zeta_{k_\star}` attains it). Always :math:`k_\star\le` the information exponent;
    every non-constant polynomial has :math:`k_\star\le2`; Gaussian label noise changes
    neither exponent. The values :math:`\mathbb E[\zeta_k(Y)^2]` come from
    :func:`conditional_hermite_norms`.

    Parameters
    ----------
    link : callable or str
        Vectorised link or a name from :data:`lecnotes.core.targets.LINKS`.
    kmax : int
        Largest degree examined, ``1 <= kmax <= 12``.
    noise : float
        Standard deviation :math:`\tau\ge0` of the additive Gaussian label noise.
    tol : float
        Absolute tolerance on :math:`\mathbb E[\zeta_k(Y)^2]\in[0,1]`, default
        :data:`GEN_TOL` = 1e-10.

    Returns
    -------
    int
        :math:`k_\star` in ``1..kmax``.

    Raises
    ------
    ExponentNotFound
        If :math:`\mathbb E[\zeta_k(Y)^2]\le` ``tol`` for all ``k <= kmax`` (e.g. a constant
        link, for which :math:`Y` is independent of :math:`G`).
    ValueError
        For an unknown name, a non-callable link, or a bad ``kmax`` / ``noise`` / ``tol``.
    """
    tol = V.positive_float(tol, "tol")
    norms = conditional_hermite_norms(link, kmax, noise)
    hits = np.nonzero(norms > tol)[0]
    if hits.size == 0:
        raise ExponentNotFound(
            f"E[zeta_k(Y)^2] <= {tol:g} for every k <= {len(norms)}: the generative exponent "
            "is larger than kmax (or infinite if Y is independent of G)",
            len(norms),
            norms,
        )
    return int(hits[0] + 1)


class Gen4Stats(NamedTuple):
    r"""The member :math:`\mathbb 1\{a<|u|<b\}` of the generative-exponent-4 family."""

    b: float
    """The partner :math:`b` of :math:`a` (:func:`lecnotes.core.targets.gen4_partner`)."""
    p_one: float
    r""":math:`P = \mathbb P(Y = 1) = 2(\Phi(b)-\Phi(a))`."""
    zeta4_norm: float
    r""":math:`\mathbb E[\zeta_4(Y)^2] = N_4^2/(P(1-P))`."""


def gen4_stats(a: float) -> Gen4Stats:
    r"""Closed forms of the generative-exponent-4 link with inner end ``a`` (chapter 2).

    With :math:`b` the partner of :math:`a` ({eq}`eq-ch2-gen4-partner`),
    :math:`P=\mathbb P(Y=1)` and :math:`N_4 = 2\int_a^b h_4\gamma =
    2(\mathrm{He}_3(a)\gamma(a)-\mathrm{He}_3(b)\gamma(b))/\sqrt{24}`,
    :math:`\mathbb E[\zeta_4(Y)^2] = N_4^2/(P(1-P))` ({eq}`eq-ch2-gen4-zeta4`).

    Parameters
    ----------
    a : float
        Inner end of the interval, in (0, 1).

    Returns
    -------
    Gen4Stats
        ``(b, p_one, zeta4_norm)``.
    """
    b = gen4_partner(a)
    p = 2.0 * (ndtr(b) - ndtr(a))
    n4 = 2.0 * ((a**3 - 3 * a) * gauss(a) - (b**3 - 3 * b) * gauss(b)) / math.sqrt(24.0)
    return Gen4Stats(b, float(p), float(n4**2 / (p * (1.0 - p))))


def gen4_interval(a="max"):
    r"""The interval :math:`(a,b)` of the generative-exponent-4 link :math:`\mathbb 1\{a<|u|<b\}`.

    Chapter 2, {eq}`eq-ch2-gen4-partner` and {eq}`eq-ch2-gen4-zeta4`. With :math:`A=\{a<|G|<b\}` and
    :math:`Y=\mathbb 1_A(G)`: odd :math:`\zeta_k` vanish by symmetry, and
    :math:`\int_a^b\mathrm{He}_2\gamma=a\gamma(a)-b\gamma(b)`, so :math:`\zeta_2\equiv0`
    (equivalently :math:`\mathbb E[G^2\mid Y]=1` on both labels) exactly when
    :math:`ae^{-a^2/2}=be^{-b^2/2}`. For every :math:`a\in(0,1)` there is one such
    :math:`b>1`, and then :math:`\int_a^b\mathrm{He}_4\gamma=a\gamma(a)(a^2-b^2)\neq0`, so
    :math:`k_\star=4`. One family member per choice:

    * ``"max"`` (default; ``LINKS["gen4"]``): the member maximising
      :math:`\mathbb E[\zeta_4(Y)^2]` (maximiser 0.225409..., rounded to :data:`GEN4_A`
      = 0.2254, which loses 8e-11), :math:`b=2.131777344456144`,
      :math:`\mathbb E[\zeta_4^2]=0.155173`, :math:`\mathbb P(Y=1)=0.78864`;
    * ``"balanced"``: :math:`\mathbb P(Y=1)=1/2`, :math:`a\approx0.50897`,
      :math:`b\approx1.59474`, :math:`\mathbb E[\zeta_4^2]\approx0.1107`;
    * a float ``a`` in (0, 1): that member.

    Parameters
    ----------
    a : {"max", "balanced"} or float
        Which member of the family.

    Returns
    -------
    (a, b) : tuple of float
    """
    if isinstance(a, str):
        if a == "max":
            a_val = GEN4_A
        elif a == "balanced":
            a_val = brentq(lambda t: gen4_stats(t)[1] - 0.5, 0.05, 0.95, xtol=1e-15, rtol=1e-15)
        else:
            raise ValueError(f"a must be 'max', 'balanced' or a number in (0, 1), got {a!r}")
    else:
        a_val = V.positive_float(a, "a")
        if not a_val < 1.0:
            raise ValueError(f"a must lie in (0, 1), got {a!r}")
    return float(a_val), float(gen4_partner(a_val))
