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

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite_norms
from lecnotes.core.exponents import (
    GEN_TOL,
    INFO_RTOL,
    ExponentNotFound,
    Gen4Stats,
    gen4_interval,
    gen4_stats,
    generative_exponent,
    information_exponent,
)
from lecnotes.core.hermite import gaussian_expectation, hermite_coefficients
from lecnotes.core.label_law import KMAX_LIMIT, evaluate, pieces
from lecnotes.core.targets import GEN4_A, Link, gen4_partner, get_link

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
    "ExponentTable",
    "exponent_table",
    "annulus_link",
    "NoiseCurves",
    "noise_curves",
    "FloorConstant",
    "raw_floor_constant",
    "log_slopes",
    "FloorRatio",
    "raw_floor_ratio",
]


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


def _taus(taus) -> np.ndarray:
    t = V.finite_array(taus, "taus", ndim=1)
    if t.size == 0 or np.any(t <= 0):
        raise ValueError("taus must be a non-empty sequence of noise levels > 0")
    return t


class ExponentTable(NamedTuple):
    """The two exponents and the norms :math:`\\mathbb E[\\zeta_k(Y)^2]` of a list of links."""

    ie: dict
    """Link name -> information exponent."""
    ge: dict
    """Link name -> generative exponent."""
    norms: dict
    """Link name -> :math:`\\mathbb E[\\zeta_k(Y)^2]`, k = 1..kmax (ndarray)."""


def exponent_table(names, kmax: int = 4) -> ExponentTable:
    r"""Information exponent, generative exponent and :math:`\mathbb E[\zeta_k(Y)^2]` per link.

    Chapter 2, {prf:ref}`def-ch2-information-exponent` and
    {prf:ref}`def-ch2-generative-exponent`, all by quadrature (no sampling).

    Parameters
    ----------
    names : sequence of str
        Catalogue names of links (``lecnotes.core.targets.LINKS``), at least one.
    kmax : int
        Largest degree of the norms, at least 1.

    Returns
    -------
    ExponentTable
    """
    if isinstance(names, str) or len(names) == 0:
        raise ValueError("names must be a non-empty sequence of link names")
    kmax = V.positive_int(kmax, "kmax")
    for n in names:
        get_link(n)
    norms = {n: conditional_hermite_norms(n, kmax) for n in names}
    ie = {n: information_exponent(n) for n in names}
    ge = {n: generative_exponent(n) for n in names}
    return ExponentTable(ie, ge, norms)


def annulus_link(a: float, b: float, name: str = "annulus") -> Link:
    r"""The indicator link :math:`\varphi(u) = \mathbb 1\{a<\lvert u\rvert<b\}`.

    Chapter 2, {eq}`eq-ch2-gen4-partner`: with :math:`b` the partner of :math:`a` it is the
    generative-exponent-4 link; any other :math:`b` gives :math:`k_\star = 2`.

    Parameters
    ----------
    a, b : float
        Radii, ``0 <= a < b``.
    name : str
        Name of the link.

    Returns
    -------
    Link
        With break points :math:`\pm a, \pm b`.
    """
    a = V.nonneg_float(a, "a")
    b = V.positive_float(b, "b")
    if not a < b:
        raise ValueError(f"need a < b, got a = {a}, b = {b}")
    return Link(name, lambda u: ((np.abs(u) > a) & (np.abs(u) < b)).astype(float), "",
                (-b, -a, a, b))


class NoiseCurves(NamedTuple):
    """The decay of :math:`\\mathbb E[\\zeta_k(Y)^2]` with the noise, and its large-noise law."""

    values: list
    """Per case, :math:`\\mathbb E[\\zeta_k(Y)^2]` at each noise level (ndarray)."""
    laws: list
    """Per case, the :class:`NoiseAsymptotics` ``(m, C)``."""
    ratio: dict
    """Case name ``"<link> (k = <k>)"`` -> measured / asymptotic at the noise level ``at``."""


def noise_curves(cases, taus, at: int = -2) -> NoiseCurves:
    r""":func:`noise_decay` and :func:`large_noise_asymptotics` for several links (chapter 2).

    The check of part 3 of {prf:ref}`prop-ch2-noise`: the ratio of
    :math:`\mathbb E[\zeta_k(Y)^2]` to :math:`C\tau^{-2m}` at the noise level ``taus[at]``.

    Parameters
    ----------
    cases : sequence of (link, k)
        Links (names or callables with a ``name``) and degrees.
    taus : array_like (T,)
        Noise levels, positive.
    at : int
        Index into ``taus`` of the level where the ratio is taken.

    Returns
    -------
    NoiseCurves
    """
    taus = _taus(taus)
    is_int = isinstance(at, (int, np.integer)) and not isinstance(at, bool)
    if not is_int or not -taus.size <= at < taus.size:
        raise ValueError(f"at must be an index into taus (|at| < {taus.size}), got {at!r}")
    if len(cases) == 0:
        raise ValueError("cases must be a non-empty sequence of (link, k)")
    values, laws, ratio = [], [], {}
    for link, k in cases:
        vals = noise_decay(link, k, taus)
        law = large_noise_asymptotics(link, k)
        values.append(vals)
        laws.append(law)
        name = link if isinstance(link, str) else link.name
        ratio[f"{name} (k = {k})"] = vals[at] / (law.C * taus[at] ** (-2.0 * law.m))
    return NoiseCurves(values, laws, ratio)


class FloorConstant(NamedTuple):
    """The constant of the raw-label noise floor and its standard error."""

    K: float
    """Ratio of the means :math:`(d-1)\\,\\overline{\\langle v,w_\\star\\rangle^2}/
    \\overline{\\lVert v^\\perp\\rVert^2}` (7 for the :math:`\\mathrm{He}_3` label)."""
    se: float
    """Its standard error (delta method)."""
    count: int
    """Number of replicates pooled."""


def raw_floor_constant(signal, noise, dims, deltas) -> FloorConstant:
    r"""The constant :math:`\mathbb E[Y^2G^2]/\mathbb E[Y^2]` of the raw-label floor (chapter 2).

    With :math:`n = \delta d`, the two parts of the raw-label first-moment estimator have means
    :math:`\mathbb E\langle\hat v,w_\star\rangle^2 = \mathbb E[Y^2G^2]/n` and
    :math:`\mathbb E\lVert\hat v^\perp\rVert^2 = (d-1)\mathbb E[Y^2]/n` (chapter 2, the gap at
    :math:`n` of order :math:`d`; exact reduction {prf:ref}`prop-ch3-reduction`). The ratio of
    the pooled means of :math:`n\langle\hat v,w_\star\rangle^2` and
    :math:`n\lVert\hat v^\perp\rVert^2/(d-1)`, with a delta-method standard error.

    Parameters
    ----------
    signal, noise : array_like (reps, len(dims), len(deltas))
        :math:`\langle\hat v,w_\star\rangle^2` and :math:`\lVert\hat v^\perp\rVert^2` per replicate.
    dims : sequence of int
        Dimensions, at least 2.
    deltas : sequence of float
        Ratios :math:`n/d`, positive.

    Returns
    -------
    FloorConstant
    """
    signal = V.finite_array(signal, "signal", ndim=3)
    noise = V.finite_array(noise, "noise", ndim=3)
    d = np.array([V.positive_int(x, "dims", minimum=2) for x in dims])
    dl = np.array([V.positive_float(x, "deltas") for x in deltas])
    if signal.shape != noise.shape or signal.shape[1:] != (d.size, dl.size):
        raise ValueError("signal and noise must both have shape (reps, len(dims), len(deltas))")
    if signal.shape[0] < 2:
        raise ValueError("need at least 2 replicates for a standard error")
    n_ = np.round(np.outer(d, dl))  # (dims, deltas) sample sizes
    a, b = signal * n_, noise * n_ / (d[:, None] - 1)  # means E[Y^2 G^2] and E[Y^2]
    K = a.mean() / b.mean()
    se = (a - K * b).std(ddof=1) / np.sqrt(a.size) / b.mean()  # delta method
    return FloorConstant(float(K), float(se), int(a.size))


def log_slopes(x, y) -> np.ndarray:
    r"""Local slopes :math:`\Delta\log y/\Delta\log x` between consecutive points.

    The exponents of chapter 2's scaling laws ({eq}`eq-ch2-low-degree`,
    {eq}`eq-ch2-sgd-drift`) read off a log-log curve.

    Parameters
    ----------
    x, y : array_like (N,)
        Positive values, N at least 2.

    Returns
    -------
    ndarray (N - 1,)
    """
    x = V.finite_array(x, "x", ndim=1)
    y = V.finite_array(y, "y", ndim=1)
    if x.size < 2 or x.shape != y.shape or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive arrays of the same length >= 2")
    return np.diff(np.log(y)) / np.diff(np.log(x))


class FloorRatio(NamedTuple):
    """The mean raw-label overlap over the floor :math:`7/(d+6)`, per dimension."""

    mean: np.ndarray
    """Per dimension, the mean over replicates and the ratio grid of :math:`(d+6)\\rho^2/7`."""
    se: np.ndarray
    """Its standard error over replicates."""


def raw_floor_ratio(rho2, dims, constant: float = 7.0) -> FloorRatio:
    r"""Mean of :math:`(d+K-1)\rho^2/K` per dimension, with its standard error (chapter 2).

    The first-order floor :math:`\mathbb E[\rho^2]\approx K/(d+K-1)` of the raw-label
    first-moment estimator (:math:`K = 7` for :math:`\mathrm{He}_3`; chapter 2, the gap at
    :math:`n` of order :math:`d`). Each replicate is averaged over the grid of ratios first,
    so the standard error is over independent replicates.

    Parameters
    ----------
    rho2 : array_like (reps, len(dims), len(deltas))
        Squared overlaps.
    dims : sequence of int
        Dimensions.
    constant : float
        The constant :math:`K > 0`.

    Returns
    -------
    FloorRatio
    """
    r = V.finite_array(rho2, "rho2", ndim=3)
    d = np.array([V.positive_int(x, "dims", minimum=2) for x in dims])
    K = V.positive_float(constant, "constant")
    if r.shape[1] != d.size or r.shape[0] < 2:
        raise ValueError("rho2 must have shape (reps >= 2, len(dims), len(deltas))")
    per_rep = (r * (d[None, :, None] + K - 1) / K).mean(axis=2)
    return FloorRatio(per_rep.mean(axis=0), per_rep.std(axis=0, ddof=1) / np.sqrt(r.shape[0]))
