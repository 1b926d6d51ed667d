r"""Closed forms of chapter 4: exact asymptotics of spectral estimators and their thresholds.

The exact asymptotics of the top eigenpair of :math:`D_T=\frac1n\sum_i T(y_i)x_ix_i^\top`
(Lu & Li; Mondelli & Montanari): :func:`spectral_overlap`, :func:`spectral_threshold`,
:func:`spectral_functions`, the limiting bulk (a generalised Marchenko-Pastur law)
:func:`bulk_density`, :func:`bulk_edge`, the mean matrix :func:`mean_matrix_coefficients`, and
the optimal threshold over all preprocessings
:func:`lecnotes.core.conditional_hermite.weak_recovery_ratio` (foundation tier). The plain
Marchenko-Pastur law is :func:`lecnotes.core.rmt.marchenko_pastur_density`.

Conventions (book, *Notation*): :math:`x_i\sim N(0,I_d)`, :math:`\|w_\star\|=1`,
:math:`\delta=n/d`, :math:`G\sim N(0,1)`, :math:`Y=\varphi(G)` (noiseless labels). Every
expectation over :math:`(G,Y)` is computed by the adaptive quadrature
:func:`lecnotes.core.hermite.gaussian_expectation` in the variable :math:`G`, with break points
where :math:`T\circ\varphi` jumps (never by Monte Carlo).

Normalisation (the idea of the proof of {prf:ref}`thm-spectral-asymptotics`): with
:math:`w_\star=e_1` the bulk of :math:`D_T` is that of :math:`P=\frac1n\sum_iT_iz_iz_i^\top`,
whose Stieltjes equation {eq}`eq-ch4-stieltjes` becomes :math:`z=\psi_\delta(\lambda)` under
:math:`m=-\delta/\lambda`, and the outlier equation :math:`z=\frac1n\sum T_iG_i^2+
u^\top(z-P)^{-1}u` becomes :math:`\psi_\delta=\Phi` ({eq}`eq-ch4-psi-phi`,
{eq}`eq-ch4-outlier-equation`). So the formulas hold *as written* for :math:`D_T` normalised by
:math:`1/n` with standard Gaussian inputs (checked against simulation in the tests and in
chapter 4).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from lecnotes.core import validate as V
from lecnotes.core.preprocessing import (
    G_CUTOFF,
    LabelLaw,
    get_preprocessing,
    is_family,
    resolve_preprocessing,
)
from lecnotes.core.rmt import weighted_wishart_density

__all__ = [
    "NoProportionalThresholdWarning",
    "SpectralFunctions",
    "SpectralLimit",
    "MeanMatrix",
    "spectral_functions",
    "spectral_overlap",
    "spectral_threshold",
    "bulk_edge",
    "bulk_density",
    "mean_matrix_coefficients",
    "threshold_by_bisection",
]


_EPS_SUP = 1e-9  # lambda = sup T + _EPS_SUP * scale stands for lambda -> sup T


class NoProportionalThresholdWarning(UserWarning):
    """T is unbounded above on the support of Y: no threshold with n proportional to d.

    Then the top eigenvalue of :math:`D_T` grows with :math:`n` (it follows the largest
    :math:`T(y_i)`), its eigenvector localises on the heaviest samples, and the overlap tends
    to 0 at every fixed :math:`\\delta` (chapter 4, {ref}`sec-ch4-raw-labels`).
    """


class SpectralLimit(NamedTuple):
    """Limits of the squared overlap ``rho2`` and of the top eigenvalue ``top`` of :math:`D_T`
    (:func:`spectral_overlap`; ``top`` is ``inf`` when T is unbounded above)."""

    rho2: float
    top: float


class MeanMatrix(NamedTuple):
    """The coefficients ``mean_T`` :math:`=\\mathbb E[T(Y)]` of :math:`I` and ``beta``
    :math:`=\\mathbb E[T(Y)\\mathrm{He}_2(G)]` of :math:`w_\\star w_\\star^\\top` in
    {eq}`eq-ch4-mean-matrix` (:func:`mean_matrix_coefficients`)."""

    mean_T: float
    beta: float


@dataclass(frozen=True)
class SpectralFunctions:
    r"""The functions of the Lu-Li / Mondelli-Montanari theory at one :math:`\delta`.

    Chapter 4, {eq}`eq-ch4-psi-phi` (:math:`\Phi` there, :math:`\varphi` here): for
    :math:`\lambda>\sup T`, with :math:`S=T/(\lambda-T)`,
    :math:`\psi(\lambda)=\lambda(1/\delta+\mathbb E S)`, :math:`\psi'(\lambda)=1/\delta-\mathbb
    E S^2`, :math:`\varphi(\lambda)=\lambda\,\mathbb E[SG^2]`, :math:`\varphi'(\lambda)=-\mathbb
    E[S^2G^2]`.

    Attributes
    ----------
    delta : float
    sup_T : float
        Essential supremum of :math:`T(Y)` (the left end of the domain of psi and phi).
    lambda_bar : float
        :math:`\arg\min\psi` on :math:`(\sup T,\infty)` (equal to ``sup_T`` when psi is
        increasing there).
    edge : float
        The right edge of the bulk, :math:`\psi(\bar\lambda)`.
    lambda_star : float
        Root of :math:`\psi(\max(\lambda,\bar\lambda))=\varphi(\lambda)`, or ``nan`` if there is
        none above :math:`\bar\lambda`.
    rho2 : float
        Limit of the squared overlap of the top eigenvector.
    top : float
        Limit of the top eigenvalue.
    """

    delta: float
    sup_T: float
    lambda_bar: float
    edge: float
    lambda_star: float
    rho2: float
    top: float
    _law: object = None

    def _m(self, lam):
        return self._law.moments(lam)

    def psi(self, lam):
        """:math:`\\psi_\\delta(\\lambda)` of {eq}`eq-ch4-psi-phi` (vectorised).

        Parameters
        ----------
        lam : float or array_like
            Values of :math:`\\lambda > \\sup T`.

        Returns
        -------
        ndarray shaped like ``lam``.
        """
        lam = np.asarray(lam, dtype=float)
        m = self._m(lam)
        return (np.atleast_1d(lam) * (1 / self.delta + m[..., 0])).reshape(lam.shape)

    def dpsi(self, lam):
        """:math:`\\psi_\\delta'(\\lambda)`, the derivative of {eq}`eq-ch4-psi-phi`.

        Parameters
        ----------
        lam : float or array_like
            Values of :math:`\\lambda > \\sup T`.

        Returns
        -------
        ndarray shaped like ``lam``.
        """
        lam = np.asarray(lam, dtype=float)
        return (1 / self.delta - self._m(lam)[..., 1]).reshape(lam.shape)

    def phi(self, lam):
        """:math:`\\Phi(\\lambda)` of {eq}`eq-ch4-psi-phi` (written :math:`\\varphi` here).

        Parameters
        ----------
        lam : float or array_like
            Values of :math:`\\lambda > \\sup T`.

        Returns
        -------
        ndarray shaped like ``lam``.
        """
        lam = np.asarray(lam, dtype=float)
        return (np.atleast_1d(lam) * self._m(lam)[..., 2]).reshape(lam.shape)

    def dphi(self, lam):
        """:math:`\\Phi'(\\lambda)`, the derivative of {eq}`eq-ch4-psi-phi`.

        Parameters
        ----------
        lam : float or array_like
            Values of :math:`\\lambda > \\sup T`.

        Returns
        -------
        ndarray shaped like ``lam``.
        """
        lam = np.asarray(lam, dtype=float)
        return (-self._m(lam)[..., 3]).reshape(lam.shape)


def _offsets(law: LabelLaw, lo=1e-7, hi=1e8, num=61):
    return law.scale * np.geomspace(lo, hi, num)


def _lambda_bar(law: LabelLaw, delta: float) -> float:
    """argmin of psi on (sup T, inf): root of E[S^2] = 1/delta, or sup T if psi increases."""
    s0 = law.sup
    eps = law.scale * _EPS_SUP
    q0 = float(law.moments(s0 + eps)[0, 1])
    if not q0 > 1 / delta:
        return s0

    def f(u):  # u = log(lambda - sup T)
        return float(law.moments(s0 + math.exp(u))[0, 1]) - 1 / delta

    lo = math.log(eps)
    hi = math.log(law.scale)
    while f(hi) > 0:
        lo, hi = hi, hi + math.log(10.0)
        if hi > math.log(law.scale * 1e14):  # pragma: no cover - E[S^2] ~ E[T^2]/lam^2
            raise RuntimeError("could not bracket the bulk edge (is E[T(Y)^2] finite?)")
    u = brentq(f, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=200)
    return s0 + math.exp(u)


def _solve(law: LabelLaw, delta: float) -> SpectralFunctions:
    s0 = law.sup
    lam_bar = _lambda_bar(law, delta)
    lb = lam_bar if lam_bar > s0 else s0 + law.scale * _EPS_SUP
    m_bar = law.moments(lb)[0]
    edge = lb * (1 / delta + m_bar[0])

    def h(lam):  # (phi - psi)/lambda = E[S (G^2 - 1)] - 1/delta; decreasing in lambda
        m = law.moments(lam)[0]
        return float(m[2] - m[0]) - 1 / delta

    if h(lb) <= 0:
        return SpectralFunctions(delta, s0, lam_bar, edge, math.nan, 0.0, edge, law)
    lo, hi = lb, max(lb, s0 + law.scale)
    while h(hi) > 0:
        lo, hi = hi, s0 + 4 * (hi - s0)
    lam_star = brentq(h, lo, hi, xtol=1e-14 * max(1.0, hi), rtol=1e-14, maxiter=300)
    m = law.moments(lam_star)[0]
    dpsi = 1 / delta - m[1]
    dphi = -m[3]
    rho2 = dpsi / (dpsi - dphi)
    top = lam_star * (1 / delta + m[0])
    return SpectralFunctions(delta, s0, lam_bar, edge, lam_star, float(rho2), float(top), law)


def _warn_unbounded():
    warnings.warn(
        "T is unbounded above on the support of Y: the top eigenvalue of D_T grows with n "
        "(it follows the largest T(y_i)), the top eigenvector localises on the heaviest "
        "samples and its overlap tends to 0 at every fixed delta = n/d, so there is no "
        "proportional threshold. Trim T (or use a bounded preprocessing).",
        NoProportionalThresholdWarning,
        stacklevel=3,
    )


def spectral_functions(link, delta, T=None, *, breakpoints=()) -> SpectralFunctions:
    r"""Solve the Lu-Li / Mondelli-Montanari equations at one :math:`\delta` (chapter 4).

    The functions {eq}`eq-ch4-psi-phi` and the solution of {eq}`eq-ch4-outlier-equation`
    ({prf:ref}`thm-spectral-asymptotics`).

    Parameters
    ----------
    link : str or callable
        The link :math:`\varphi`, :math:`Y=\varphi(G)`.
    delta : float
        Sample ratio :math:`n/d > 0`.
    T : callable or PreprocessingFamily
        Vectorised preprocessing of the labels, bounded above on the support of :math:`Y`
        (it may be unbounded below, like :math:`1-1/y`). A family (see
        :mod:`lecnotes.core.preprocessing`) is evaluated at ``delta``.
    breakpoints : sequence of float
        Extra points in :math:`g` where :math:`T(\varphi(g))` jumps (those of the link and
        the ``breakpoints`` attribute of ``T``, given in :math:`y`, are added automatically).

    Returns
    -------
    SpectralFunctions
        With the solution (``lambda_bar``, ``edge``, ``lambda_star``, ``rho2``, ``top``) and
        the functions ``psi``, ``dpsi``, ``phi``, ``dphi``.

    Raises
    ------
    ValueError
        For a bad ``delta``, a non-callable ``T``, ``T`` unbounded above (use
        :func:`spectral_overlap`, which answers with the limit), or ``sup T <= 0``.
    """
    delta = V.positive_float(delta, "delta")
    law = LabelLaw(resolve_preprocessing(T, delta), link, breakpoints)
    if not law.bounded:
        raise ValueError("T is unbounded above on the support of Y: no proportional threshold")
    return _solve(law, delta)


def spectral_overlap(link, delta, T=None, *, breakpoints=()) -> SpectralLimit:
    r"""Limit of the squared overlap and of the top eigenvalue of :math:`D_T` (chapter 4).

    {prf:ref}`thm-spectral-asymptotics` (Lu & Li 2017; Mondelli & Montanari 2018),
    {eq}`eq-ch4-outlier-equation` and {eq}`eq-ch4-overlap-limit`: with :math:`\psi,\varphi` as
    in :class:`SpectralFunctions` and :math:`\bar\lambda=\arg\min_{\lambda>\sup T}\psi`, let
    :math:`\lambda^\star` solve :math:`\psi(\max(\lambda,\bar\lambda))=\varphi(\lambda)`. If
    :math:`\lambda^\star>\bar\lambda`,

    .. math:: \rho^2\to\frac{\psi'(\lambda^\star)}{\psi'(\lambda^\star)-\varphi'(\lambda^\star)},
              \qquad \lambda_1(D_T)\to\psi(\lambda^\star);

    otherwise :math:`\rho^2\to0` and :math:`\lambda_1(D_T)\to\psi(\bar\lambda)`, the bulk edge.
    All expectations by quadrature (accuracy about 1e-9).

    Parameters
    ----------
    link : str or callable
        Default ``"quadratic"`` (real phase retrieval).
    delta : float
        :math:`n/d>0`.
    T : callable or PreprocessingFamily
        Preprocessing (see :func:`spectral_functions`).
    breakpoints : sequence of float
        Extra jump points of :math:`T(\varphi(g))` in :math:`g`.

    Returns
    -------
    SpectralLimit
        ``(rho2, top)``. If ``T`` is unbounded above, ``(0.0, inf)`` and a
        :class:`NoProportionalThresholdWarning`: the top eigenvalue diverges with ``n`` and
        the overlap vanishes at every fixed ``delta``.
    """
    delta = V.positive_float(delta, "delta")
    law = LabelLaw(resolve_preprocessing(T, delta), link, breakpoints)
    if not law.bounded:
        _warn_unbounded()
        return SpectralLimit(0.0, math.inf)
    sol = _solve(law, delta)
    return SpectralLimit(sol.rho2, sol.top)


def threshold_by_bisection(link, T, lo, hi, *, steps: int = 30) -> float:
    r"""The threshold found by bisection on the outlier condition of the theorem (chapter 4).

    The outlier condition of {prf:ref}`thm-spectral-asymptotics`, against the one-equation
    formula {eq}`eq-ch4-threshold` of {prf:ref}`prop-threshold`.

    An independent check of :func:`spectral_threshold`: bisects on whether
    :func:`spectral_overlap` is positive, between ``lo`` (no outlier) and ``hi`` (outlier).

    Parameters
    ----------
    link, T
        As in :func:`spectral_overlap`.
    lo, hi : float
        A bracket of the threshold, ``0 < lo < hi``.
    steps : int
        Number of halvings (the bracket shrinks by ``2**steps``).

    Returns
    -------
    float
        The midpoint of the final bracket.
    """
    lo = V.positive_float(lo, "lo")
    hi = V.positive_float(hi, "hi")
    steps = V.positive_int(steps, "steps")
    if not lo < hi:
        raise ValueError(f"need lo < hi, got {lo}, {hi}")
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if spectral_overlap(link, mid, T).rho2 > 0 else (mid, hi)
    return 0.5 * (lo + hi)


def _family_threshold(family, link, breakpoints, tol):
    lo = float(getattr(family, "delta_min", 0.0))

    def has_outlier(delta):
        law = LabelLaw(family.at(delta), link, breakpoints)
        if not law.bounded:
            return False
        return _solve(law, delta).rho2 > 0

    hi = max(2 * lo, 1.0)
    while not has_outlier(hi):
        hi *= 2
        if hi > 1e6:
            return math.inf
    lo_ok = lo if lo > 0 else hi * 1e-6
    while hi - lo_ok > tol * 0.25:
        mid = 0.5 * (lo_ok + hi)
        if has_outlier(mid):
            hi = mid
        else:
            lo_ok = mid
    return 0.5 * (lo_ok + hi)


def spectral_threshold(link, T, *, breakpoints=(), tol: float = 1e-6) -> float:
    r"""The weak-recovery threshold :math:`\delta_c(T)` of the spectral estimator (chapter 4).

    :math:`\delta_c=\inf\{\delta:\ \lambda_1(D_T)\text{ separates from the bulk}\}`. Along the
    bulk edge :math:`\psi'(\bar\lambda)=0`, i.e. :math:`\delta=1/\mathbb E[S^2]` with
    :math:`S=T/(\bar\lambda-T)`, and an outlier exists iff
    :math:`\mathbb E[S\,(G^2-1)]>1/\delta`; so ({prf:ref}`prop-threshold`,
    {eq}`eq-ch4-threshold`) the threshold is
    found from one equation in :math:`\lambda`,

    .. math:: K(\lambda)=\mathbb E[S\,\mathrm{He}_2(G)]-\mathbb E[S^2]=0,\qquad
              \delta_c=1/\mathbb E[S^2],

    taking the largest root (beyond which :math:`K>0`). When :math:`\psi` is increasing on
    its whole domain (:math:`\mathbb E[S^2]` finite at :math:`\lambda=\sup T` and
    :math:`K(\sup T)\ge0`) the edge sits at :math:`\bar\lambda=\sup T` and
    :math:`\delta_c=1/\mathbb E[S\,\mathrm{He}_2(G)]|_{\lambda=\sup T}`. By Cauchy-Schwarz
    :math:`\delta_c\ge1/\mathbb E[(\mathbb E[G^2|Y]-1)^2]` ({eq}`eq-ch4-delta-u`,
    :func:`lecnotes.core.conditional_hermite.weak_recovery_ratio`).

    Parameters
    ----------
    link : str or callable
    T : callable or PreprocessingFamily
        A preprocessing of the labels (bounded above), or a family ``T_delta`` used at each
        ``delta`` (then the threshold is the smallest ``delta`` at which ``T_delta`` gives an
        outlier, found by bisection, and cannot be below the family's ``delta_min``).
    breakpoints : sequence of float
        Extra jump points in :math:`g`.
    tol : float
        Absolute accuracy on :math:`\delta_c` for a family (a fixed ``T`` is solved to
        machine precision of the quadrature, about 1e-9).

    Returns
    -------
    float
        :math:`\delta_c`; ``inf`` if no ``delta`` gives an outlier (e.g.
        :math:`\mathbb E[T(Y)\mathrm{He}_2(G)]\le0`), or if ``T`` is unbounded above (with a
        :class:`NoProportionalThresholdWarning`).
    """
    tol = V.positive_float(tol, "tol")
    if is_family(T):

        family = get_preprocessing(T) if isinstance(T, str) else T
        return _family_threshold(family, link, breakpoints, tol)
    law = LabelLaw(resolve_preprocessing(T), link, breakpoints)
    if not law.bounded:
        _warn_unbounded()
        return math.inf
    s0 = law.sup
    lam = s0 + _offsets(law)
    m = law.moments(lam)
    K = (m[:, 2] - m[:, 0]) - m[:, 1]
    pos = K > 0
    if not pos[-1]:
        # K < 0 at very large lambda means E[T He2] <= 0 (asymptotically K ~ E[T He2]/lambda)
        if not np.any(pos):
            return math.inf
        # positive somewhere but negative far out: the outlier disappears again at large
        # delta (impossible if E[T He2] > 0); report the largest crossing anyway
    neg = np.nonzero(~pos)[0]
    if neg.size == 0:
        # K > 0 right from sup T: the boundary case lambda_bar = sup T
        m0 = law.moments(s0 + law.scale * _EPS_SUP)[0]
        return float(1.0 / (m0[2] - m0[0]))
    j = neg[-1]
    if j == lam.size - 1:
        return math.inf

    def k_of(u):
        mm = law.moments(s0 + math.exp(u))[0]
        return float(mm[2] - mm[0] - mm[1])

    u = brentq(k_of, math.log(lam[j] - s0), math.log(lam[j + 1] - s0), xtol=1e-13,
               rtol=1e-13, maxiter=200)
    mm = law.moments(s0 + math.exp(u))[0]
    return float(1.0 / mm[1])


def bulk_edge(link, delta, T=None, *, breakpoints=()) -> float:
    r"""Right edge :math:`\psi_\delta(\bar\lambda)` of the limiting bulk of :math:`D_T` (chapter 4).

    The edge of the law of {prf:ref}`prop-bulk-law`, :math:`\psi_\delta(\bar\lambda)` with
    :math:`\psi_\delta` of {eq}`eq-ch4-psi-phi`. Equals :math:`(1+\delta^{-1/2})^2` for
    :math:`T\equiv1` (Marchenko-Pastur). Raises ``ValueError`` if ``T`` is unbounded above
    (then the spectrum has no finite edge).

    Parameters
    ----------
    link, delta, T, breakpoints
        As in :func:`spectral_overlap`.

    Returns
    -------
    float
    """
    return spectral_functions(link, delta, T, breakpoints=breakpoints).edge


def bulk_density(x, link, delta, T=None, *, breakpoints=(), eta: float = 1e-9):
    r"""Density of the limiting spectrum of :math:`\frac1n\tilde X^\top\mathrm{diag}(T)\tilde X`.

    {prf:ref}`prop-bulk-law`, {eq}`eq-ch4-stieltjes`: :math:`z_i\sim N(0,I_{d-1})` independent
    of the labels, :math:`d/n\to1/\delta`; solved by
    :func:`lecnotes.core.rmt.weighted_wishart_density` with the law of :math:`T(Y)` (expectations by
    quadrature). The atom at 0 is removed: the returned function integrates to the mass of the
    continuous part.

    Parameters
    ----------
    x : array_like
        Points of the real line.
    link, delta, T, breakpoints
        As in :func:`spectral_overlap` (``T`` may be unbounded below).
    eta : float
        Final distance to the real axis.

    Returns
    -------
    ndarray shaped like ``x``.
    """
    delta = V.positive_float(delta, "delta")
    eta = V.positive_float(eta, "eta")
    x = V.finite_array(x, "x")
    shape = x.shape
    x = x.ravel()
    law = LabelLaw(resolve_preprocessing(T, delta), link, breakpoints)
    if not law.bounded:
        raise ValueError("T is unbounded above on the support of Y: the bulk has no edge")
    dens = weighted_wishart_density(x, delta, lambda f: law.expect(lambda t, g: f(t)),
                                    scale=law.scale, eta=eta)
    return dens.reshape(shape)


def mean_matrix_coefficients(link, T=None, *, breakpoints=()) -> MeanMatrix:
    r"""The two coefficients of the mean of :math:`D_T` (chapter 4).

    :math:`(\mathbb E[T(Y)],\ \mathbb E[T(Y)\mathrm{He}_2(G)])`.

    {prf:ref}`lem-mean-matrix`, {eq}`eq-ch4-mean-matrix`:
    :math:`\mathbb E[D_T]=\mathbb E[T(Y)]\,I+\mathbb E[T(Y)\mathrm{He}_2(G)]\,w_\star
    w_\star^\top`. By quadrature.

    Parameters
    ----------
    link : str or callable
    T : callable, str or None
        Preprocessing (``None``: raw labels).
    breakpoints : sequence of float
        Extra jump points of :math:`T(\varphi(g))` in :math:`g`.

    Returns
    -------
    MeanMatrix
        ``(mean_T, beta)``.

    Raises
    ------
    ValueError
        If the expectations do not exist: ``T`` infinite on the support, or unbounded below
        with a non-integrable singularity, like :math:`1-1/y` for :math:`y=G^2`
        (:math:`\mathbb E[1/G^2]=\infty`), detected as values below -1e12 on the quadrature
        grid; or ``T`` unbounded above.
    """
    law = LabelLaw(resolve_preprocessing(T), link, breakpoints)
    g = np.linspace(-G_CUTOFF, G_CUTOFF, 56001)
    tg = law.t(g, allow_inf=True)
    if not law.bounded or not np.all(np.isfinite(tg)) or np.min(tg) < -1e12:
        raise ValueError(
            "E[T(Y)] or E[T(Y) He2(G)] does not exist for this T (infinite or non-integrable "
            "values on the support of Y): the mean matrix of D_T is not defined"
        )
    m = law.expect(lambda t, g: np.stack([t, t * (g * g - 1.0)], axis=-1))
    return MeanMatrix(float(m[0]), float(m[1]))
