r"""Online SGD on a Hermite link: the mean overlap ODE with the link's own constants (chapter 2).

Chapter 2, {eq}`eq-ch2-sgd-drift`: spherical online SGD with the correlation loss
:math:`-y\,\varphi(\langle w,x\rangle)` for the target :math:`y = \varphi(\langle w_\star,
x\rangle)`, :math:`\varphi = \mathrm{He}_k`, student activation the link itself. With
:math:`q = m^2` the squared overlap, the expected change per step of size :math:`\eta` is, to
first order in the drift and second order in the noise,

.. math::

    \frac{dq}{dt} = 2\eta A\,q^{k/2}(1-q) - \eta^2\big(C(d-1)q - D(1-q)\big),

with the drift constant :math:`A = k c_k^2`, the renormalisation constant
:math:`C = \mathbb E[g^2] = \mathbb E[\varphi(G)^2]\,\mathbb E[\varphi'(Z)^2]` and the variance
along :math:`w_\star`, :math:`D = \mathbb E[\varphi(G)^2G^2]\,\mathbb E[\varphi'(Z)^2] -
(\mathbb E[\varphi(G)G]\,\mathbb E[\varphi'(Z)])^2`, all at overlap zero. For
:math:`\varphi = h_k` (:math:`A = k`, :math:`C = k`, :math:`D = (2k+1)k - [k=1]`) this is the
ODE of chapter 8 (``lecnotes.online_sgd.theory.ode_rhs``, {eq}`eq-ch8-ode`); for
:math:`\varphi = \mathrm{He}_k = \sqrt{k!}\,h_k` every constant carries the factor
:math:`(k!)^2` and the step :math:`\eta` is chapter 8's :math:`k!\,\eta`.

With :math:`\eta = c\,d^{-k/2}` and :math:`q = x/d` the ODE becomes, for large :math:`d`,
:math:`dx/dt = c\,d^{1-k}\,[2Ax^{k/2} - c(Cx - D)]`: the overlap escapes iff the bracket is
positive for every :math:`x>0`, i.e. iff :math:`c < c^\star = A(k-2)x_\star^{k/2}/D` with
:math:`x_\star = kD/((k-2)C)` (:func:`step_threshold`), and then it takes
:math:`d^{k-1}J(c)` steps, :math:`J(c) = \int_1^\infty dx/(c[2Ax^{k/2} - c(Cx-D)])`
(:func:`escape_constant`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.integrate import quad, solve_ivp

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite, he

__all__ = ["SgdConstants", "sgd_constants", "ode_rhs", "step_threshold", "escape_constant",
           "ode_escape_steps", "measured_threshold", "SgdOdeSweep", "sgd_ode_sweep",
           "overlap_constants", "late_threshold"]

KMAX = 8
"""Largest Hermite degree handled."""


class SgdConstants(NamedTuple):
    """The constants of the overlap ODE of online SGD on :math:`\\mathrm{He}_k`."""

    k: int
    """Information exponent of the link."""
    A: float
    """Drift constant :math:`k c_k^2`."""
    C: float
    """Renormalisation constant :math:`\\mathbb E[g^2]`."""
    D: float
    """Variance of the gradient along :math:`w_\\star` at overlap zero."""


def _check_k(k) -> int:
    k = V.positive_int(k, "k", minimum=3)
    if k > KMAX:
        raise ValueError(f"k must be an integer in 3..{KMAX}, got {k}")
    return k


def sgd_constants(k: int) -> SgdConstants:
    r"""The constants :math:`A, C, D` of {eq}`eq-ch2-sgd-drift` for :math:`\varphi = \mathrm{He}_k`.

    Exact Gauss-Hermite quadrature of the Gaussian moments (module docstring); for
    :math:`\mathrm{He}_3`: :math:`A = 18`, :math:`C = 6\cdot18 = 108`, :math:`D = 42\cdot18 = 756`.

    Parameters
    ----------
    k : int
        Degree of the link, 3..8 (its information exponent).

    Returns
    -------
    SgdConstants
    """
    k = _check_k(k)
    g, w = gauss_hermite(4 * k + 4)
    phi, dphi = he(k, g), k * he(k - 1, g)
    ck2 = float(w @ (phi * he(k, g))) ** 2 / math.factorial(k)
    e_dphi2 = float(w @ dphi**2)
    C = float(w @ phi**2) * e_dphi2
    D = float(w @ (phi**2 * g**2)) * e_dphi2 - (float(w @ (phi * g)) * float(w @ dphi)) ** 2
    return SgdConstants(k, k * ck2, C, D)


def _constants(const) -> SgdConstants:
    if not isinstance(const, SgdConstants):
        raise ValueError("const must be the SgdConstants of sgd_constants(k)")
    return const


def ode_rhs(q, const: SgdConstants, d: int, eta: float):
    r""":math:`dq/dt` of {eq}`eq-ch2-sgd-drift` (per step): drift, renormalisation, noise.

    Parameters
    ----------
    q : array_like
        Squared overlaps in [0, 1].
    const : SgdConstants
        From :func:`sgd_constants`.
    d : int
        Dimension, at least 2.
    eta : float
        Step size, positive.

    Returns
    -------
    ndarray
    """
    const = _constants(const)
    d = V.positive_int(d, "d", minimum=2)
    eta = V.positive_float(eta, "eta")
    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
    k, A, C, D = const
    return 2 * eta * A * q ** (k / 2) * (1 - q) - eta**2 * (C * (d - 1) * q - D * (1 - q))


def step_threshold(const: SgdConstants) -> float:
    r"""The largest step constant :math:`c^\star` (:math:`\eta = c\,d^{-k/2}`) that escapes.

    Chapter 2, {eq}`eq-ch2-sgd-drift` as :math:`d\to\infty`:
    :math:`c^\star = \min_x 2Ax^{k/2}/(Cx-D) = A(k-2)x_\star^{k/2}/D` at
    :math:`x_\star = kD/((k-2)C)` (module docstring). For :math:`h_3` it is
    :math:`21^{3/2}/7 = 13.75`, chapter 8's threshold; for :math:`\mathrm{He}_3`, 6 times smaller.

    Parameters
    ----------
    const : SgdConstants
        From :func:`sgd_constants`.

    Returns
    -------
    float
    """
    k, A, C, D = _constants(const)
    x = k * D / ((k - 2) * C)
    return A * (k - 2) * x ** (k / 2) / D


def escape_constant(const: SgdConstants, c: float) -> float:
    r"""The limit :math:`J(c) = \lim_d t_{\mathrm{esc}}/d^{k-1}` at :math:`\eta = c\,d^{-k/2}`.

    Chapter 2, {eq}`eq-ch2-sgd-drift`: :math:`J(c) = \int_1^\infty dx/(c[2Ax^{k/2}-c(Cx-D)])`
    from the start :math:`q_0 = 1/d` (module docstring).

    Parameters
    ----------
    const : SgdConstants
        From :func:`sgd_constants`.
    c : float
        Step constant, in :math:`(0, c^\star)`.

    Returns
    -------
    float
    """
    k, A, C, D = _constants(const)
    c = V.positive_float(c, "c")
    if c >= step_threshold(const):
        raise ValueError(f"c must be below the threshold {step_threshold(const):.4g}, got {c}")
    val, _ = quad(lambda x: 1.0 / (c * (2 * A * x ** (k / 2) - c * (C * x - D))), 1.0, np.inf,
                  limit=200)
    return float(val)


def ode_escape_steps(const: SgdConstants, d: int, eta: float, target: float = 0.5) -> float:
    r"""Steps for {eq}`eq-ch2-sgd-drift` to take :math:`q` from :math:`1/d` to ``target``:math:`^2`.

    Integrated in time (LSODA) until the overlap reaches ``target`` or the solution settles
    (``inf``: the step is too large, the overlap stays at the fixed point near the noise level;
    the horizon is :math:`10^4` times the drift-only time).

    Parameters
    ----------
    const : SgdConstants
        From :func:`sgd_constants`.
    d : int
        Dimension, at least 2.
    eta : float
        Step size, positive.
    target : float
        Overlap that counts as escaped, in :math:`(d^{-1/2}, 1)`.

    Returns
    -------
    float
    """
    const = _constants(const)
    d = V.positive_int(d, "d", minimum=2)
    eta = V.positive_float(eta, "eta")
    target = V.positive_float(target, "target")
    if not d**-0.5 < target < 1:
        raise ValueError(f"target must lie in (d^(-1/2), 1) = ({d**-0.5:.3g}, 1), got {target}")
    k, A = const.k, const.A
    drift_only = d ** ((k - 2) / 2) / (eta * A * (k - 2))
    hit = lambda t, q: q[0] - target**2  # noqa: E731
    hit.terminal, hit.direction = True, 1
    sol = solve_ivp(lambda t, q: ode_rhs(q, const, d, eta), (0.0, 1e4 * drift_only), [1.0 / d],
                    events=hit, rtol=1e-10, atol=1e-14 / d, method="LSODA")
    return float(sol.t_events[0][0]) if sol.t_events[0].size else math.inf


def measured_threshold(const: SgdConstants, d: int, lo: float, hi: float,
                       rtol: float = 1e-4) -> float:
    r"""The step constant where :func:`ode_escape_steps` turns infinite, by bisection.

    Chapter 2, {eq}`eq-ch2-sgd-drift`: the :math:`c` with escape at :math:`\eta < c\,d^{-k/2}`
    and none above, measured on the time integration (not on the formula of
    :func:`step_threshold`).

    Parameters
    ----------
    const : SgdConstants
        From :func:`sgd_constants`.
    d : int
        Dimension.
    lo, hi : float
        A bracket: escape at ``lo``, none at ``hi``.
    rtol : float
        Relative width of the final bracket.

    Returns
    -------
    float
    """
    const = _constants(const)
    lo, hi = V.positive_float(lo, "lo"), V.positive_float(hi, "hi")
    rtol = V.positive_float(rtol, "rtol")
    d = V.positive_int(d, "d", minimum=2)
    k = const.k

    def escapes(c):
        return math.isfinite(ode_escape_steps(const, d, c * d ** (-k / 2)))

    if not lo < hi or not escapes(lo) or escapes(hi):
        raise ValueError(f"[lo, hi] = [{lo}, {hi}] does not bracket the threshold")
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if escapes(mid) else (lo, mid)
    return 0.5 * (lo + hi)


class SgdOdeSweep(NamedTuple):
    """Escape steps of the overlap ODE over step constants and dimensions, for one link."""

    k: int
    """Degree of the link :math:`\\mathrm{He}_k`."""
    c_star: float
    """The threshold :func:`step_threshold`."""
    cs: np.ndarray
    """The scanned step constants."""
    scan_dims: np.ndarray
    """Dimensions of the scan."""
    scan: np.ndarray
    """(len(scan_dims), len(cs)): steps divided by :math:`d^{k-1}` (inf: no escape)."""
    dims: np.ndarray
    """Dimensions at the step constant ``c``."""
    c: float
    """The step constant of ``steps``."""
    steps: np.ndarray
    """Steps at :math:`\\eta = c\\,d^{-k/2}` for each of ``dims``."""
    J: float
    """The limit :func:`escape_constant` at ``c``: steps over :math:`d^{k-1}` as d grows."""
    drift_only: np.ndarray
    """Steps of the drift alone (no renormalisation, no noise) at the same steps and dims."""


def sgd_ode_sweep(k: int, cs, scan_dims, dims, c: float) -> SgdOdeSweep:
    r""":func:`ode_escape_steps` over step constants (``cs`` x ``scan_dims``) and dimensions.

    Chapter 2, {eq}`eq-ch2-sgd-drift`, for :math:`\varphi = \mathrm{He}_k`.

    Parameters
    ----------
    k : int
        Degree of the link, 3..8.
    cs : array_like
        Step constants of the scan, positive.
    scan_dims : sequence of int
        Dimensions of the scan.
    dims : sequence of int
        Dimensions at the fixed step constant ``c``.
    c : float
        Step constant, positive.

    Returns
    -------
    SgdOdeSweep
    """
    const = sgd_constants(k)
    cs = V.finite_array(cs, "cs", ndim=1)
    if cs.size == 0 or np.any(cs <= 0):
        raise ValueError("cs must be a non-empty array of positive step constants")
    sd = np.array([V.positive_int(x, "scan_dims", minimum=2) for x in scan_dims])
    dd = np.array([V.positive_int(x, "dims", minimum=2) for x in dims])
    c = V.positive_float(c, "c")
    scan = np.array([[ode_escape_steps(const, int(d), ci * float(d) ** (-k / 2))
                       / float(d) ** (k - 1) for ci in cs] for d in sd])
    steps = np.array([ode_escape_steps(const, int(d), c * float(d) ** (-k / 2)) for d in dd])
    drift = np.array([_drift_only_steps(const, int(d), c * float(d) ** (-k / 2)) for d in dd])
    J = escape_constant(const, c) if c < step_threshold(const) else math.inf
    return SgdOdeSweep(k, step_threshold(const), cs, sd, scan, dd, c, steps, J, drift)


def _drift_only_steps(const: SgdConstants, d: int, eta: float, target: float = 0.5) -> float:
    """Steps of :math:`m' = \\eta A m^{k-1}(1-m^2)` from :math:`d^{-1/2}` to ``target``."""
    k, A = const.k, const.A
    val, _ = quad(lambda m: m ** (1 - k) / (1 - m * m), d**-0.5, target, limit=200)
    return val / (eta * A)


def overlap_constants(k: int, m):
    r"""Drift and renormalisation of spherical SGD on :math:`\mathrm{He}_k` at overlap :math:`m`.

    Chapter 2, {eq}`eq-ch2-sgd-drift` without its :math:`m = 0` approximation of the
    constants: with :math:`z = mG + \sqrt{1-m^2}\,\xi` and :math:`g = \varphi(G)\varphi'(z)`,
    the mean step of :math:`m` is :math:`\eta\,a(m) - \tfrac12\eta^2 d\,C(m)\,m` to leading
    order, :math:`a(m) = \mathbb E[gG] - m\,\mathbb E[gz]` (the step along :math:`w_\star`
    minus its share of the radial growth) and :math:`C(m) = \mathbb E[g^2]`. Exact
    two-dimensional Gauss-Hermite quadrature.

    Parameters
    ----------
    k : int
        Degree of the link, 3..8.
    m : array_like
        Overlaps in [0, 1).

    Returns
    -------
    (a, C) : tuple of ndarray shaped like ``m``
    """
    k = _check_k(k)
    m = V.finite_array(m, "m")
    if np.any(m < 0) or np.any(m >= 1):
        raise ValueError("m must lie in [0, 1)")
    x, w = gauss_hermite(4 * k + 4)
    G, X = x[:, None], x[None, :]
    W = np.outer(w, w)
    a, C = np.empty(m.shape), np.empty(m.shape)
    for i, mi in np.ndenumerate(m):
        z = mi * G + math.sqrt(1 - mi * mi) * X
        g = he(k, G) * k * he(k - 1, z)
        a[i] = float((W * g * G).sum()) - mi * float((W * g * z).sum())
        C[i] = float((W * g * g).sum())
    return a, C


def late_threshold(k: int, d: int, m_lo: float = 0.1, m_hi: float = 0.5,
                   points: int = 41) -> float:
    r"""The largest step constant whose drift beats the renormalisation on :math:`[m_{lo}, m_{hi}]`.

    Chapter 2, {eq}`eq-ch2-sgd-drift` with the constants at the overlap itself
    (:func:`overlap_constants`): with :math:`\eta = c\,d^{-k/2}`, the mean of :math:`m` grows
    at :math:`m` iff :math:`c < 2a(m)\,d^{(k-2)/2}/(C(m)\,m)`; the minimum over a grid of
    :math:`m`. It grows like :math:`d^{(k-2)/2}`: a finite-size constraint, which binds
    before :func:`step_threshold` at moderate :math:`d`.

    Parameters
    ----------
    k : int
        Degree of the link, 3..8.
    d : int
        Dimension, at least 2.
    m_lo, m_hi : float
        The range of overlaps, ``0 < m_lo < m_hi < 1``.
    points : int
        Grid points, at least 2.

    Returns
    -------
    float
    """
    k = _check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    m_lo, m_hi = V.positive_float(m_lo, "m_lo"), V.positive_float(m_hi, "m_hi")
    if not m_lo < m_hi < 1:
        raise ValueError(f"need 0 < m_lo < m_hi < 1, got {m_lo}, {m_hi}")
    points = V.positive_int(points, "points", minimum=2)
    m = np.linspace(m_lo, m_hi, points)
    a, C = overlap_constants(k, m)
    return float(np.min(2 * a * d ** ((k - 2) / 2) / (C * m)))
