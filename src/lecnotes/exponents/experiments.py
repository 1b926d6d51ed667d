r"""Information and generative exponents of a single-index link (chapter 2).

Setting (chapter 2): :math:`G\sim N(0,1)` and the label :math:`Y=\varphi(G)+\tau Z` with
:math:`Z\sim N(0,1)` independent of :math:`G` (``noise`` :math:`=\tau\ge 0`). With the
normalised Hermite polynomials :math:`h_k=\mathrm{He}_k/\sqrt{k!}`:

* the **information exponent** (chapter 2, {prf:ref}`def-ch2-information-exponent`) is the
  index of the first non-zero Hermite coefficient :math:`c_k=\mathbb E[\varphi(G)h_k(G)]`,
  :math:`k\ge1`;
* the **generative exponent** (chapter 2, {prf:ref}`def-ch2-generative-exponent`; Damian,
  Pillaud-Vivien, Lee, Bruna 2024)
  is :math:`k_\star=\min\{k\ge1:\ \mathbb E[\zeta_k(Y)^2]>0\}` with
  :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`, equivalently the smallest information
  exponent of :math:`T(Y)` over square-integrable label transformations :math:`T`.

Additive independent label noise changes neither exponent (chapter 2,
{prf:ref}`prop-ch2-noise`); it only shrinks :math:`\mathbb E[\zeta_k(Y)^2]`, like
:math:`C\tau^{-2m}` for large :math:`\tau` (:func:`large_noise_asymptotics`).

The conditional Hermite functions :math:`\zeta_k` and their norms are computed without Monte
Carlo by :mod:`lecnotes.core.conditional_hermite` on the piece decomposition of
:mod:`lecnotes.core.label_law` (where the method is described).

Tolerances (documented, tested)
-------------------------------
* :data:`INFO_RTOL`: :math:`c_k` counts as non-zero when
  :math:`|c_k| > 10^{-9}\,\mathrm{sd}(\varphi(G))` (quadrature error is below
  :math:`10^{-11}\,\mathrm{sd}` for the catalogue links, discontinuous ones included);
* :data:`GEN_TOL`: :math:`\mathbb E[\zeta_k(Y)^2]\in[0,1]` counts as non-zero when it exceeds
  :math:`10^{-10}` (zeros come out below :math:`10^{-18}`); e.g.
  :math:`\varphi(u)=u^2+\varepsilon u` has :math:`\mathbb E[\zeta_1^2]\approx\varepsilon^2/2`,
  so :math:`k_\star=1` is detected for :math:`|\varepsilon|\gtrsim1.5\times10^{-5}`.

When no :math:`k\le` ``kmax`` qualifies (a constant link, or an exponent beyond ``kmax``) the
exponent functions raise :class:`ExponentNotFound`; they never return ``kmax``.
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
from lecnotes.core.label_law import KMAX_LIMIT, evaluate, gauss, pieces
from lecnotes.core.targets import GEN4_A, gen4_partner, get_link

__all__ = [
    "INFO_RTOL",
    "GEN_TOL",
    "GEN4_A",
    "ExponentNotFound",
    "information_exponent",
    "generative_exponent",
    "NoiseAsymptotics",
    "large_noise_asymptotics",
    "gen4_partner",
    "Gen4Stats",
    "gen4_stats",
    "gen4_interval",
    "format_number",
    "markdown_table",
    "random_polynomial_links",
    "noise_decay",
]


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


class NoiseAsymptotics(NamedTuple):
    r"""The large-noise law :math:`\mathbb E[\zeta_k(Y)^2]\sim C\tau^{-2m}`."""

    m: int
    """The order :math:`m`."""
    C: float
    """The constant :math:`C`."""


def large_noise_asymptotics(link, k: int, mmax: int = 8) -> NoiseAsymptotics:
    r"""Leading large-noise behaviour :math:`\mathbb E[\zeta_k(Y)^2]\sim C\tau^{-2m}` (chapter 2).

    Expanding :math:`p_\tau(y-\varphi)/p_\tau(y)=\sum_m \mathrm{He}_m(y/\tau)(\varphi/\tau)^m/m!`
    gives, as :math:`\tau\to\infty`, :math:`\mathbb E[\zeta_k(Y)^2] = C\tau^{-2m}(1+o(1))` with
    :math:`m=\min\{m\ge1:\mathbb E[\varphi(G)^mh_k(G)]\neq0\}` and
    :math:`C=\mathbb E[\varphi(G)^mh_k(G)]^2/m!` (chapter 2, after {prf:ref}`prop-ch2-noise`).

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    k : int
        Degree ``>= 1``.
    mmax : int
        Largest power examined.

    Returns
    -------
    NoiseAsymptotics
        ``(m, C)``.

    Raises
    ------
    ExponentNotFound
        If :math:`\mathbb E[\varphi^m h_k]=0` (relative to :data:`INFO_RTOL`) for all
        ``m <= mmax``.
    """
    phi = get_link(link)
    k = V.positive_int(k, "k", minimum=1)
    if k > KMAX_LIMIT:
        raise ValueError(f"k must be <= {KMAX_LIMIT}, got {k}")
    mmax = V.positive_int(mmax, "mmax", minimum=1)
    P = pieces(phi)
    vals = []
    for m in range(1, mmax + 1):  # a loop over powers, each a vectorised quadrature
        def pm(g, m=m):
            return evaluate(phi, g) ** m

        c = hermite_coefficients(pm, k, normalized=True, breakpoints=P.breaks)
        sq = gaussian_expectation(lambda g, m=m: pm(g) ** 2, breakpoints=P.breaks)
        norm = math.sqrt(float(sq))
        vals.append(abs(float(c[k])) / norm if norm > 0 else 0.0)
        if norm > 0 and abs(float(c[k])) > INFO_RTOL * norm:
            return NoiseAsymptotics(m, float(c[k]) ** 2 / math.factorial(m))
    raise ExponentNotFound(
        f"E[phi(G)^m h_{k}(G)] = 0 for every m <= {mmax}", mmax, np.asarray(vals)
    )


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


# ---------------------------------------------------------------------------------------
# The chapter's tables and sweeps.


def format_number(v: float, fmt: str = "+.4f") -> str:
    """Format a number for the chapter's tables, printing quadrature zeros (below 5e-13) as 0.

    Parameters
    ----------
    v : float
        The number.
    fmt : str
        A format specification for :func:`format`.

    Returns
    -------
    str
    """
    return "0" if abs(v) < 5e-13 else format(v, fmt)


def markdown_table(header, rows) -> str:
    """A Markdown table from a header and rows of already formatted cells.

    A bar ``|`` inside a cell is written ``\\vert`` (it would end the cell).

    Parameters
    ----------
    header : sequence of str
        Column titles.
    rows : sequence of sequences
        The cells, converted with :class:`str`.

    Returns
    -------
    str
        The table, one line per row (display it with ``IPython.display.Markdown``).
    """

    def cell(v):
        return str(v).replace("|", "\\vert ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return "\n".join(lines)


def random_polynomial_links(count: int, rng=None) -> list:
    r"""Random polynomial links :math:`\sum_{j=\ell}^{D} a_j\mathrm{He}_j` with :math:`\ell\ge3`.

    The test of {prf:ref}`prop-ch2-polynomial-ge` (every non-constant polynomial has
    generative exponent at most 2) on links whose information exponent is at least 3: for each
    link, the lowest degree :math:`\ell` is uniform in {3, 4, 5}, the degree :math:`D` in
    {6, 7, 8}, the coefficients standard Gaussian, and with probability 1/2 the odd ones are
    set to zero (an even polynomial). Link ``i`` is drawn from ``stream(rng, i)``.

    Parameters
    ----------
    count : int
        Number of links.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    list of callable
        Vectorised links.
    """
    count = V.positive_int(count, "count")
    out = []
    for i in range(count):
        gen = V.stream(rng, i)
        low, deg = gen.integers(3, 6), gen.integers(6, 9)
        coef = gen.standard_normal(deg + 1) * (np.arange(deg + 1) >= low)
        if gen.random() < 0.5:
            coef[1::2] = 0  # an even polynomial
        out.append(lambda u, c=coef: np.polynomial.hermite_e.hermeval(u, c))
    return out


def noise_decay(link, k: int, taus) -> np.ndarray:
    r""":math:`\mathbb E[\zeta_k(Y)^2]` for :math:`Y = \varphi(G)+\tau Z` over noise levels.

    The decay that {prf:ref}`prop-ch2-noise` and :func:`large_noise_asymptotics` describe.

    Parameters
    ----------
    link : callable or str
        The link.
    k : int
        Degree.
    taus : array_like
        Noise levels :math:`\tau > 0`.

    Returns
    -------
    ndarray shaped like ``taus``
    """
    k = V.positive_int(k, "k")
    return np.array([conditional_hermite_norms(link, k, noise=t)[k - 1] for t in taus])
