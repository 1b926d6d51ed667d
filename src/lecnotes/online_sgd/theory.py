r"""Closed forms of chapter 8 (online SGD): the overlap's mean map, its ODE, escape times.

The neuron lives on the sphere, the target is :math:`y = h_k(\langle w_\star, x\rangle)`, the
student activation is :math:`h_k` and the loss the correlation loss
(definition {prf:ref}`def-ch8-spherical-sgd`). Everything here is deterministic: the mean map
of the squared overlap {eq}`eq-ch8-mean-map`, its small-step limit, the ODE
{eq}`eq-ch8-ode`, and the escape times they predict.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad, solve_ivp

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite

__all__ = ["check_k", "noise_constant", "along_variance",
           "mean_map", "ode_rhs", "solve_ode", "escape_steps",
           "ode_escape_time", "optimal_batch_step", "logistic_k2", "tanh_k1",
           "break_point", "reuse_rates", "reuse_ode", "map_trajectory", "limit_threshold",
           "map_threshold"]


def check_k(k) -> int:
    r"""The information exponent ``k`` of the chapter's links :math:`h_1, h_2, h_3`
    ({prf:ref}`def-ch8-spherical-sgd`), checked.

    Parameters
    ----------
    k : int
        1, 2 or 3.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``k`` is not one of the integers 1, 2, 3 (naming ``k``).
    """
    k = V.positive_int(k, "k")
    if k > 3:
        raise ValueError(f"k must be 1, 2 or 3 (the chapter's links h_1, h_2, h_3), got {k}")
    return k


def _eta(eta, name="eta"):
    out = np.asarray(eta, dtype=float) if np.ndim(eta) else V.positive_float(eta, name)
    if np.ndim(out) and (not np.all(np.isfinite(out)) or np.any(out <= 0)):
        raise ValueError(f"{name} must be finite and > 0, got {eta!r}")
    return out


def _q(q, name="q"):
    try:
        out = np.asarray(q, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers in [0, 1], got {q!r}") from None
    if np.any(np.isnan(out)) or np.any(out < -1e-12) or np.any(out > 1 + 1e-12):
        raise ValueError(f"{name} must be in [0, 1], got {q!r}")
    return np.clip(out, 0.0, 1.0)


def noise_constant(k: int) -> float:
    r"""The per-coordinate variance :math:`C_k = \E[y^2\sigma'(z)^2] = k` of one sample's
    gradient at overlap zero (for :math:`y = h_k(G)`, :math:`\sigma = h_k`), eq.
    {eq}`eq-ch8-mean-map`.

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).

    Returns
    -------
    float
    """
    return float(check_k(k))


def along_variance(k: int) -> float:
    r"""The variance :math:`D_k` of one sample's gradient along :math:`w_\star` at overlap
    zero, eq. {eq}`eq-ch8-mean-map`: :math:`\E[y^2G^2]\,\E[\sigma'(Z)^2] - (\E[yG])^2
    \E[\sigma']^2 = (2k+1)k - [k=1]`, larger than :math:`C_k` because the label is
    correlated with :math:`G^2` (:math:`\E[h_k(G)^2G^2] = 2k+1`).

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).

    Returns
    -------
    float
    """
    k = check_k(k)
    return float((2 * k + 1) * k - (k == 1))


def mean_map(q, k: int, d: int, eta, batch: int = 1):
    r"""One step of the mean map {eq}`eq-ch8-mean-map` of the squared overlap :math:`q = m^2`.

    Parameters
    ----------
    q : array_like
        Squared overlaps in [0, 1].
    k : int
        Information exponent.
    d : int
        Dimension.
    eta : float or array_like
        Step size (broadcast against ``q``).
    batch : int
        Samples per step :math:`n_b`.

    Returns
    -------
    ndarray
        :math:`q_{t+1}`.
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    batch = V.positive_int(batch, "batch")
    q = _q(q)
    eta = np.asarray(_eta(eta), dtype=float)
    m = np.sqrt(q)
    C, D = noise_constant(k), along_variance(k)
    drift = k * m ** (k - 1) * (1 - q)
    num = (m + eta * drift) ** 2 + eta**2 * D * (1 - q) / batch
    den = 1 + eta**2 * (k**2 * m ** (2 * k - 2) * (1 - q) + (d - 1) * C / batch)
    return num / den


def _mean_map_scalar(q: float, k: int, d: int, eta: float, batch: int, C: float,
                     D: float) -> float:
    """:func:`mean_map` of one checked number, in plain floats (the same operations, without
    the checks and arrays that cost :func:`escape_steps` ten times more than the map)."""
    q = min(max(q, 0.0), 1.0)
    m = math.sqrt(q)
    drift = k * m ** (k - 1) * (1 - q)
    num = (m + eta * drift) ** 2 + eta**2 * D * (1 - q) / batch
    den = 1 + eta**2 * (k**2 * m ** (2 * k - 2) * (1 - q) + (d - 1) * C / batch)
    return num / den


def ode_rhs(q, k: int, d: int, eta: float, batch: int = 1):
    r"""Right-hand side of the ODE {eq}`eq-ch8-ode`: :math:`dq/dt` per step, to first order in
    the drift and second order in the noise.

    Parameters
    ----------
    q : array_like
        Squared overlap(s).
    k, d, eta, batch
        As in :func:`mean_map`.

    Returns
    -------
    ndarray
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    batch = V.positive_int(batch, "batch")
    eta = V.positive_float(eta, "eta")
    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
    C, D = noise_constant(k), along_variance(k)
    return (2 * eta * k * q ** (k / 2) * (1 - q)
            - eta**2 * (C * (d - 1) * q - D * (1 - q)) / batch)


def solve_ode(q0: float, k: int, d: int, eta: float, t, batch: int = 1):
    r"""Solve {eq}`eq-ch8-ode` from :math:`q(0) = q_0` at the times ``t`` (in steps).

    Parameters
    ----------
    q0 : float
        Initial squared overlap.
    k, d, eta, batch
        As in :func:`mean_map`.
    t : array_like
        Increasing times, ``t[0] >= 0``.

    Returns
    -------
    ndarray shaped like ``t``
    """
    t = V.finite_array(t, "t", ndim=1)
    if t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError("t must be non-empty, non-negative and increasing")
    q0 = float(_q(q0, "q0"))
    ode_rhs(q0, k, d, eta, batch)             # validates k, d, eta, batch
    sol = solve_ivp(lambda s, q: ode_rhs(q, k, d, eta, batch), (0.0, float(t[-1])), [q0],
                    t_eval=t, rtol=1e-9, atol=1e-12, method="LSODA")
    return sol.y[0]


def logistic_k2(q0: float, eta: float, t):
    r"""Closed form of {eq}`eq-ch8-ode` for k = 2 without the noise terms: the logistic
    :math:`q = q_0e^{4\eta t}/(1-q_0+q_0e^{4\eta t})`.

    Parameters
    ----------
    q0, eta : float
    t : array_like

    Returns
    -------
    ndarray
    """
    q0 = float(_q(q0, "q0"))
    eta = V.positive_float(eta, "eta")
    e = np.exp(4 * eta * V.finite_array(t, "t"))
    return q0 * e / (1 - q0 + q0 * e)


def tanh_k1(m0: float, eta: float, t):
    r"""Closed form for k = 1 without the noise terms: :math:`m = \tanh(\eta t + \mathrm{artanh}
    \,m_0)`, i.e. :math:`\dot m = \eta(1-m^2)` ({eq}`eq-ch8-ode` with :math:`q = m^2`).

    Parameters
    ----------
    m0, eta : float
    t : array_like

    Returns
    -------
    ndarray
    """
    m0 = float(V.finite_array(m0, "m0", ndim=0))
    if not -1 < m0 < 1:
        raise ValueError(f"m0 must be in (-1, 1), got {m0!r}")
    eta = V.positive_float(eta, "eta")
    return np.tanh(eta * V.finite_array(t, "t") + math.atanh(m0))


def escape_steps(k: int, d: int, eta, batch: int = 1, q0: float | None = None,
                 level: float = 0.5, max_steps: int = 10**7) -> float:
    r"""Steps of the mean map {eq}`eq-ch8-mean-map` from :math:`q_0` (default :math:`1/d`) until
    :math:`|m|\ge` ``level`` (interpolated), {prf:ref}`thm-ch8-sample-complexity`.

    Parameters
    ----------
    k, d, eta, batch
        As in :func:`mean_map`.
    q0 : float, optional
        Initial squared overlap (default ``1/d``, the typical start).
    level : float
        Overlap that counts as escaped.
    max_steps : int
        Give up (return ``inf``) after this many steps.

    Returns
    -------
    float
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    eta = V.positive_float(eta, "eta")
    batch = V.positive_int(batch, "batch")
    max_steps = V.positive_int(max_steps, "max_steps")
    q = 1.0 / d if q0 is None else float(_q(q0, "q0"))
    level = _level(level)
    target = level**2
    C, D = noise_constant(k), along_variance(k)
    for t in range(max_steps):
        q_new = _mean_map_scalar(q, k, d, eta, batch, C, D)
        if q_new >= target:
            return t + (target - q) / (q_new - q)
        if q_new <= q * (1 + 1e-12) and t > 10:
            return math.inf   # the map of one number is monotone: stuck at a fixed point
        q = q_new
    return math.inf


def ode_escape_time(k: int, d: int, eta: float, batch: int = 1, q0: float | None = None,
                    level: float = 0.5) -> float:
    r"""Escape time of the ODE {eq}`eq-ch8-ode` (steps until :math:`|m| =` ``level``).

    Parameters
    ----------
    k, d, eta, batch, q0, level
        As in :func:`escape_steps`.

    Returns
    -------
    float
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    q0 = 1.0 / d if q0 is None else float(_q(q0, "q0"))
    level = _level(level)
    val, _ = quad(lambda q: 1.0 / ode_rhs(q, k, d, eta, batch), q0, level**2, limit=200)
    return float(val)


def optimal_batch_step(k: int, d: int, batch: int, c: float = 0.5) -> float:
    r"""The step :math:`\eta = c\,n_b\,d^{-k/2}` (:math:`c\,n_b/d` for k = 1) of
    {prf:ref}`thm-ch8-batch`, at which the drift beats the noise contraction at the start.

    Parameters
    ----------
    k, d, batch : int
    c : float
        Constant in front.

    Returns
    -------
    float
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    batch = V.positive_int(batch, "batch")
    c = V.positive_float(c, "c")
    return c * batch / d if k == 1 else c * batch * d ** (-k / 2)


def break_point(k: int, d: int, c: float = 0.5, eta_max: float = 1.0) -> float:
    r"""Batch size at which :func:`optimal_batch_step` reaches ``eta_max``:
    :math:`n_b^\ast = \eta_{\max}d^{k/2}/c` ({prf:ref}`thm-ch8-batch`).

    Parameters
    ----------
    k, d : int
    c, eta_max : float

    Returns
    -------
    float
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    c = V.positive_float(c, "c")
    eta_max = V.positive_float(eta_max, "eta_max")
    return eta_max * (d if k == 1 else d ** (k / 2)) / c


def _level(level):
    level = V.positive_float(level, "level")
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level


def _tanh_prime(z):
    return 1.0 / np.cosh(np.clip(z, -40.0, 40.0)) ** 2


def reuse_rates(m, c: float, n_nodes: int = 100, student: str = "tanh"):
    r"""Population drift and squared step of SGD with repetition ({prf:ref}`def-ch8-reuse`),
    tanh (or :math:`h_3`) student, :math:`\He_3` target, per fresh sample, at large :math:`d` with
    :math:`\eta = c/d` ({eq}`eq-ch8-reuse-ode`).

    The first visit has the weight :math:`r_0 = y\,\sigma'(z_0)`, the second
    :math:`r_1 = y\,\sigma'(z_1)` with :math:`z_1 = z_0 + c\,r_0`; here :math:`y = h_3(G)`
    and :math:`(G, z_0)` are standard Gaussians of correlation :math:`m`.

    Parameters
    ----------
    m : array_like
        Overlaps in [-1, 1].
    c : float
        :math:`\eta d`.
    n_nodes : int
        Gauss-Hermite nodes per axis.
    student : {"tanh", "hermite"}
        :math:`\sigma = \tanh` or :math:`\sigma = h_3`.

    Returns
    -------
    drift, power : ndarray
        :math:`\E[r_0(G-mz_0) + r_1(G-mz_1)]` and :math:`\E[r_0^2 + r_1^2]`, shaped like ``m``.
    """
    if student not in ("tanh", "hermite"):
        raise ValueError(f"student must be 'tanh' or 'hermite', got {student!r}")
    dsig = _tanh_prime if student == "tanh" else (lambda z: (3 * z * z - 3) / np.sqrt(6.0))
    c = V.positive_float(c, "c")
    m = np.asarray(m, dtype=float)
    if np.any(np.isnan(m)) or np.any(np.abs(m) > 1):
        raise ValueError(f"m must be in [-1, 1], got {m!r}")
    g, wts = gauss_hermite(V.positive_int(n_nodes, "n_nodes"))
    G, X = np.meshgrid(g, g, indexing="ij")
    W = np.outer(wts, wts)
    y = (G**3 - 3 * G) / np.sqrt(6.0)
    mm = m.reshape(-1, 1, 1)
    z0 = mm * G + np.sqrt(1 - mm**2) * X
    r0 = y * dsig(z0)
    z1 = z0 + c * r0
    r1 = y * dsig(z1)
    drift = np.sum(W * (r0 * (G - mm * z0) + r1 * (G - mm * z1)), axis=(1, 2))
    power = np.sum(W * (r0**2 + r1**2), axis=(1, 2))
    return drift.reshape(m.shape), power.reshape(m.shape)


def reuse_ode(c: float, tau, m0: float = 0.0):
    r"""Solve the overlap ODE {eq}`eq-ch8-reuse-ode` of SGD with repetition,
    :math:`dm/d\tau = c\,D(m) - \tfrac{c^2}2P(m)\,m`, in samples per dimension
    :math:`\tau = s/d` (:func:`reuse_rates` gives :math:`D` and :math:`P`).

    Parameters
    ----------
    c : float
        :math:`\eta d`.
    tau : array_like
        Increasing times (samples / d), ``tau[0] >= 0``.
    m0 : float
        Initial overlap.

    Returns
    -------
    ndarray shaped like ``tau``
    """
    tau = V.finite_array(tau, "tau", ndim=1)
    if tau.size == 0 or np.any(np.diff(tau) < 0) or tau[0] < 0:
        raise ValueError("tau must be non-empty, non-negative and increasing")
    c = V.positive_float(c, "c")
    m0 = float(V.finite_array(m0, "m0", ndim=0))
    if not -1 <= m0 <= 1:
        raise ValueError(f"m0 must be in [-1, 1], got {m0!r}")
    grid = np.linspace(-1.0, 1.0, 201)
    D, P = reuse_rates(grid, c)
    rate = c * D - 0.5 * c * c * P * grid

    def rhs(_, m):
        return np.interp(m, grid, rate)

    sol = solve_ivp(rhs, (0.0, float(tau[-1])), [m0], t_eval=tau, rtol=1e-8, atol=1e-10)
    return sol.y[0]


def map_trajectory(q0: float, k: int, d: int, eta: float, batch: int, n_steps: int):
    r"""The mean map {eq}`eq-ch8-mean-map` iterated ``n_steps`` times from :math:`q_0`.

    Parameters
    ----------
    q0 : float
        Initial squared overlap in [0, 1].
    k, d, eta, batch
        As in :func:`mean_map`.
    n_steps : int
        Steps.

    Returns
    -------
    ndarray, shape (n_steps + 1,)
        :math:`q_0, q_1, \dots`.
    """
    q = float(_q(q0, "q0"))
    n_steps = V.positive_int(n_steps, "n_steps")
    k, d = check_k(k), V.positive_int(d, "d", minimum=2)
    eta, batch = V.positive_float(eta, "eta"), V.positive_int(batch, "batch")
    C, D = noise_constant(k), along_variance(k)
    out = np.empty(n_steps + 1)
    out[0] = q
    for t in range(n_steps):
        q = _mean_map_scalar(q, k, d, eta, batch, C, D)
        out[t + 1] = q
    return out


def limit_threshold(k: int) -> float:
    r"""The largest step constant :math:`c` (:math:`\eta = c\,d^{-k/2}`, :math:`n_b = 1`) at which
    the ODE {eq}`eq-ch8-ode` escapes as :math:`d\to\infty`, for :math:`k\ge3`: with
    :math:`x = qd` and :math:`x^\ast = D_k/C_k`, escape needs
    :math:`2x^{k/2} > c\,(x - x^\ast)` for every :math:`x`, so
    :math:`c^\ast = \frac{k-2}{x^\ast}\big(\frac{k x^\ast}{k-2}\big)^{k/2}`
    (:math:`\sqrt{27\cdot7}\approx13.75` for k = 3).

    Parameters
    ----------
    k : int
        Information exponent, 3 (the chapter's only k >= 3).

    Returns
    -------
    float
    """
    k = check_k(k)
    if k < 3:
        raise ValueError(f"k must be >= 3 for a step threshold of order one, got {k}")
    xs = along_variance(k) / noise_constant(k)
    return (k - 2) / xs * (k * xs / (k - 2)) ** (k / 2)


def map_threshold(k: int, d: int, level: float = 0.5, n_grid: int = 4000,
                  tol: float = 1e-4) -> float:
    r"""The largest step constant :math:`c` at which the mean map {eq}`eq-ch8-mean-map`
    (:math:`n_b = 1`, :math:`\eta = c\,d^{-k/2}`) escapes from :math:`q = 1/d`: the map of a
    single number escapes if and only if :math:`M(q) > q` on all of
    :math:`[1/d, \text{level}^2]`; bisection on :math:`c`. Tends to :func:`limit_threshold`.

    Parameters
    ----------
    k : int
        Information exponent (3).
    d : int
        Dimension.
    level : float
        Escape level of :math:`|m|`.
    n_grid : int
        Points of the (geometric) grid of :math:`q`.
    tol : float
        Relative precision of :math:`c`.

    Returns
    -------
    float
    """
    k = check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    level = _level(level)
    n_grid = V.positive_int(n_grid, "n_grid", minimum=10)
    tol = V.positive_float(tol, "tol")
    q = np.geomspace(1.0 / d, level**2, n_grid)

    def escapes(c):
        return bool(np.all(mean_map(q, k, d, optimal_batch_step(k, d, 1, c)) > q))

    lo, hi = 1e-3, 2 * limit_threshold(max(k, 3))
    if not escapes(lo) or escapes(hi):
        raise ValueError(f"no threshold in [{lo}, {hi}] at d = {d}")
    while hi - lo > tol * lo:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if escapes(mid) else (lo, mid)
    return 0.5 * (lo + hi)
