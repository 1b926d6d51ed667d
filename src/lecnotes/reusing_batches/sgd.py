r"""Chapter 9's multi-pass SGD: one neuron on the sphere, each sample used once or twice.

The step is chapter 8's spherical SGD on the correlation loss with batch size 1 and
:math:`\eta = c/d` ({prf:ref}`def-ch9-sgd`). For one sample the overlap after one *or two*
steps on it depends on the neuron only through :math:`m = \langle w,\wstar\rangle`
({prf:ref}`lem-ch9-sgd-chain`): with :math:`Z, S` standard Gaussians and
:math:`\rho\sim\chi^2_{d-2}`, the update is a scalar map, so a path costs :math:`O(1)` per
sample instead of :math:`O(d)`, and the two protocols run on the same samples.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite
from lecnotes.reusing_batches.theory import LINKS, STUDENTS, check_link, check_student

_S6 = math.sqrt(6.0)

__all__ = ["chain_step", "EscapeRuns", "sgd_escape", "reuse_limit_rate", "reuse_limit_time",
           "MedianEscape", "median_escape", "one_pass_escape",
           "OnePassLimit", "one_pass_limit"]


def _dims(dims):
    return V.sizes(dims, "dims", minimum=8)


def _level(level):
    level = V.positive_float(level, "level")
    if level >= 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return level


def chain_step(m, Z, S, rho, eta, reuse: bool, student="tanh", link="he3"):
    r"""One fresh sample of spherical SGD in the overlap coordinates, eq. {eq}`eq-ch9-chain`:
    one step (``reuse=False``) or two steps on the same sample (``reuse=True``).

    Parameters
    ----------
    m : ndarray
        Overlaps in [-1, 1].
    Z, S, rho : ndarray
        The sample's coordinates along :math:`w` and along the unit vector of
        :math:`\wstar - mw`, and its squared norm in the other :math:`d-2` directions.
    eta : float
        Step size, > 0.
    reuse : bool
        Two steps on the sample instead of one.
    student, link : str
        Names of :data:`lecnotes.reusing_batches.theory.STUDENTS` and ``LINKS``.

    Returns
    -------
    ndarray
        The overlaps after the sample.
    """
    eta = V.positive_float(eta, "eta")
    if not isinstance(reuse, bool):
        raise TypeError(f"reuse must be True or False, got {reuse!r}")
    ds = STUDENTS[check_student(student)][0]
    phi = LINKS[check_link(link)]
    m = np.clip(np.asarray(m, dtype=float), -1.0, 1.0)
    sq = np.sqrt(1.0 - m * m)
    G = m * Z + sq * S
    y = phi(G)
    a = y * ds(Z)
    n1 = np.sqrt(1.0 + (eta * a) ** 2 * (S * S + rho))
    m1 = (m + eta * a * S * sq) / n1
    if not reuse:
        return m1
    Z1 = (Z + eta * a * (S * S + rho)) / n1
    a1 = y * ds(Z1)
    n2 = np.sqrt(1.0 + (eta * a1) ** 2 * np.maximum(Z * Z + S * S + rho - Z1 * Z1, 0.0))
    return (m1 + eta * a1 * (G - Z1 * m1)) / n2


class EscapeRuns(NamedTuple):
    """Escape of SGD with and without repetition on the same samples ({prf:ref}`def-ch9-sgd`)."""

    dims: np.ndarray
    reuse: np.ndarray
    r"""Fresh samples until :math:`|m|\ge` level with repetition, (seeds, dims, paths);
    ``nan`` if not within the budget."""
    one_pass: np.ndarray
    """The same for one pass on the same samples."""
    budget: np.ndarray
    """Samples per path at each d."""


def sgd_escape(dims, seeds: int, paths: int = 16, c: float = 1.0, level: float = 0.2,
               tau_max: float = 6.0, rng=None) -> EscapeRuns:
    r"""Spherical SGD with :math:`\eta = c/d`, :math:`h_3` target, tanh student, each fresh
    sample used twice or once ({prf:ref}`def-ch9-sgd`), by the exact chain {eq}`eq-ch9-chain`
    for ``tau_max * d`` samples, from :math:`m_0` distributed as the first coordinate of a
    uniform unit vector. Size ``d`` draws from ``validate.stream(rng, d)``.

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    seeds : int
        Groups of paths (axis 0), at least 2.
    paths : int
        Paths per group.
    c : float
        :math:`\eta d`.
    level : float
        :math:`|m|` that counts as escaped, in (0, 1).
    tau_max : float
        Budget in samples per dimension.
    rng : Generator, int or None
        Parent random state (SPEC 7).

    Returns
    -------
    EscapeRuns
    """
    seeds = V.positive_int(seeds, "seeds", minimum=2)
    paths = V.positive_int(paths, "paths")
    c = V.positive_float(c, "c")
    tau_max = V.positive_float(tau_max, "tau_max")
    level = V.positive_float(level, "level")
    if level >= 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    dims = np.asarray(dims)
    if dims.ndim != 1 or dims.size == 0:
        raise ValueError("dims must be a non-empty sequence of integers >= 8")
    dims = np.array([V.positive_int(int(d) if float(d) == int(d) else d, "dims", minimum=8)
                     for d in dims.tolist()])
    P = seeds * paths
    hit = {True: np.full((dims.size, P), np.nan), False: np.full((dims.size, P), np.nan)}
    budget = np.array([int(math.ceil(tau_max * d)) for d in dims])
    for j, d in enumerate(dims):
        g = V.stream(rng, int(d))
        g1 = g.standard_normal(P)
        m0 = g1 / np.sqrt(g1 * g1 + g.chisquare(d - 1, P))
        m = {True: m0.copy(), False: m0.copy()}
        for t in range(budget[j]):
            Z, S, rho = g.standard_normal(P), g.standard_normal(P), g.chisquare(d - 2, P)
            for reuse in (True, False):
                m[reuse] = chain_step(m[reuse], Z, S, rho, c / d, reuse)
                new = np.isnan(hit[reuse][j]) & (np.abs(m[reuse]) >= level)
                hit[reuse][j, new] = t + 1

    def by_seed(a):
        return a.reshape(dims.size, seeds, paths).transpose(1, 0, 2)

    return EscapeRuns(dims, by_seed(hit[True]), by_seed(hit[False]), budget)


def reuse_limit_rate(m, c: float = 1.0, n_nodes: int = 80):
    r"""The large-:math:`d` drift of SGD with repetition, eq. {eq}`eq-ch9-reuse-ode`: the mean
    change of :math:`m` per fresh sample, times :math:`d`, of the chain {eq}`eq-ch9-chain` at
    :math:`\eta = c/d` (tanh student, :math:`h_3` target).

    Parameters
    ----------
    m : array_like
        Overlaps in [-1, 1].
    c : float
        :math:`\eta d > 0`.
    n_nodes : int
        Gauss-Hermite nodes per axis (at least 8).

    Returns
    -------
    ndarray shaped like ``m``
        :math:`c\,\E[a(G-mZ) + a_1(G-mZ_1)] - \tfrac{c^2}2\E[a^2+a_1^2]\,m`.
    """
    c = V.positive_float(c, "c")
    m = V.finite_array(m, "m")
    if np.any(np.abs(m) > 1):
        raise ValueError("m must lie in [-1, 1]")
    g, w = gauss_hermite(V.positive_int(n_nodes, "n_nodes", minimum=8))
    Z, S = np.meshgrid(g, g, indexing="ij")
    W = np.outer(w, w)
    ds, phi = STUDENTS["tanh"][0], LINKS["he3"]
    mm = m.reshape(-1, 1, 1)
    G = mm * Z + np.sqrt(1.0 - mm * mm) * S
    y = phi(G)
    a = y * ds(Z)
    Z1 = Z + c * a
    a1 = y * ds(Z1)
    drift = np.sum(W * (a * (G - mm * Z) + a1 * (G - mm * Z1)), axis=(1, 2))
    power = np.sum(W * (a * a + a1 * a1), axis=(1, 2))
    return (c * drift - 0.5 * c * c * power * mm[:, 0, 0]).reshape(m.shape)


def reuse_limit_time(c: float = 1.0, level: float = 0.1, n_grid: int = 201) -> float:
    r"""Samples per dimension :math:`\tau^\star` for the ODE
    :math:`dm/d\tau` = :func:`reuse_limit_rate` to go from :math:`m = 0` to :math:`|m| =`
    ``level`` ({prf:ref}`prop-ch9-sgd-limit`): the :math:`d\to\infty` limit of the escape
    time divided by :math:`d`.

    Parameters
    ----------
    c : float
        :math:`\eta d > 0`.
    level : float
        In (0, 1).
    n_grid : int
        Points of the trapezoidal rule (at least 11).

    Returns
    -------
    float
    """
    c = V.positive_float(c, "c")
    level = _level(level)
    n_grid = V.positive_int(n_grid, "n_grid", minimum=11)
    side = np.sign(reuse_limit_rate(np.array([0.0]), c)[0])
    m = side * np.linspace(0.0, level, n_grid)
    r = side * reuse_limit_rate(m, c)
    if np.any(r <= 0):
        raise ValueError(f"the ODE does not reach |m| = {level} (a zero of the drift before it)")
    return float(np.trapezoid(1.0 / r, np.abs(m)))


class MedianEscape(NamedTuple):
    """Median escape of SGD with repetition per group of paths ({prf:ref}`prop-ch9-sgd-limit`)."""

    dims: np.ndarray
    medians: np.ndarray
    r"""Median number of fresh samples to :math:`|m|\ge` level in each group, (groups, dims);
    ``inf`` if a group's median was not reached within the budget."""
    escaped: np.ndarray
    """Fraction of the paths escaped when the run stopped, per d (in :func:`median_escape` a
    group's paths stop once its median is final)."""
    drift_side: np.ndarray | None = None
    r"""One pass only: per group and d, the fraction of the paths that reach the level by the
    group's median whose :math:`m` then has the sign of the drift :math:`\kappa`, (groups,
    dims); ``None`` for :func:`median_escape`."""


def _first_hits(M, level):
    """First row (1-based, 0 if none) at which each column of ``M`` reaches ``|M| >= level``,
    and the sign of ``M`` there (0 if none)."""
    reach = np.abs(M) >= level
    idx = np.argmax(reach, axis=0)
    hit = reach[idx, np.arange(M.shape[1])]
    return np.where(hit, idx + 1, 0), np.where(hit, np.sign(M[idx, np.arange(M.shape[1])]), 0.0)


def _kappa_power():
    r""":math:`\kappa = \sqrt3\,\E[\sigma'(z)h_2(z)]` and :math:`\E[\sigma'(z)^2]` of the tanh
    student ({prf:ref}`prop-ch9-one-pass`)."""
    g, w = gauss_hermite(120)
    ds = STUDENTS["tanh"][0](g)
    return math.sqrt(3.0) * float(w @ (ds * (g * g - 1.0))) / math.sqrt(2.0), float(w @ ds**2)


def _reuse_block(m, Z, S, Q, eta, level):
    r"""``len(Z)`` samples of SGD with repetition by the chain {eq}`eq-ch9-chain` (tanh
    student, :math:`h_3` target) for the paths ``m``, with the draws (steps, paths) ``Z``,
    ``S`` and :math:`Q = S^2+\rho`; the same arithmetic as ``chain_step(..., reuse=True)``,
    without its per-call checks. Returns the final overlaps and the first sample (1-based) at
    which each path reached ``level`` (0 if none)."""
    dz = (eta / _S6) / np.cosh(Z) ** 2                # eta tanh'(Z) / sqrt 6
    ZQ, e6, M = Z * Z + Q, eta / _S6, np.empty(Z.shape)   # ZQ: |x|^2 of each sample
    for t in range(Z.shape[0]):
        z, s, q = Z[t], S[t], Q[t]
        sq = np.sqrt(1.0 - m * m)
        G = m * z + sq * s
        y = G * (G * G - 3.0)                          # sqrt 6 h_3(G)
        a = y * dz[t]                                  # eta h_3(G) tanh'(Z)
        n1 = np.sqrt(a * a * q + 1.0)
        m1 = (a * s * sq + m) / n1
        z1 = (a * q + z) / n1
        a1 = (e6 * y) / np.cosh(np.clip(z1, -40.0, 40.0)) ** 2
        n2 = np.sqrt(a1 * a1 * np.maximum(ZQ[t] - z1 * z1, 0.0) + 1.0)
        m = _clip1((m1 + a1 * (G - z1 * m1)) / n2, M[t])
    return m.copy(), _first_hits(M, level)[0]


def _clip1(x, out):
    """``x`` clipped to [-1, 1] into ``out`` (the ufuncs, without ``np.clip``'s wrapper)."""
    np.minimum(x, 1.0, out=out)
    return np.maximum(out, -1.0, out=out)


def _drop_done(alive, out, hit, n_groups, need):
    """The paths still to run: those of ``alive`` not escaped in this block (``out``) whose
    group has fewer than ``need`` escapes (a group's median is final once it has them)."""
    done = np.isfinite(hit).reshape(n_groups, -1).sum(axis=1) >= need
    keep = ~out & ~done[alive // (hit.size // n_groups)]
    return alive[keep]


def median_escape(dims, n_groups: int = 32, group_size: int = 64, c: float = 1.0,
                  level: float = 0.1, tau_max: float = 4.0, frac: float = 0.6,
                  block: int = 256, rng=None) -> MedianEscape:
    r"""SGD with repetition by the exact chain {eq}`eq-ch9-chain` ({prf:ref}`def-ch9-sgd`,
    :math:`\eta = c/d`), run at each d until every group has ``frac`` of its paths escaped (or
    ``tau_max * d`` samples); the median escape time of each group. The draws come in blocks
    of ``block`` samples; a path that has escaped is dropped at the end of its block (its
    later samples do not change its escape time), and so are the paths of a group once
    ``frac`` of it has escaped (its median is then final). Size ``d`` draws from
    ``validate.stream(rng, d, 1)``.

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    n_groups : int
        Groups (axis 0), at least 2.
    group_size : int
        Paths per group.
    c : float
        :math:`\eta d > 0`.
    level : float
        :math:`|m|` that counts as escaped, in (0, 1).
    tau_max : float
        Budget in samples per dimension.
    frac : float
        Fraction of each group to wait for, in (0.5, 1].
    block : int
        Samples drawn at once.
    rng : Generator, int or None
        Parent random state (SPEC 7).

    Returns
    -------
    MedianEscape
    """
    dims = _dims(dims)
    n_groups = V.positive_int(n_groups, "n_groups", minimum=2)
    group_size = V.positive_int(group_size, "group_size")
    c = V.positive_float(c, "c")
    level = _level(level)
    tau_max = V.positive_float(tau_max, "tau_max")
    frac = V.positive_float(frac, "frac")
    block = V.positive_int(block, "block")
    if not 0.5 < frac <= 1:
        raise ValueError(f"frac must lie in (0.5, 1], got {frac}")
    P, need = n_groups * group_size, math.ceil(frac * group_size)
    medians = np.full((n_groups, dims.size), np.inf)
    escaped = np.zeros(dims.size)
    for j, d in enumerate(dims):
        g = V.stream(rng, int(d), 1)
        g1 = g.standard_normal(P)
        m = g1 / np.sqrt(g1 * g1 + g.chisquare(d - 1, P))
        hit = np.full(P, np.inf)
        alive, t, budget = np.arange(P), 0, int(math.ceil(tau_max * d))
        while t < budget and alive.size:
            k = min(block, budget - t)
            Z, S = g.standard_normal((2, k, alive.size))
            Q = S * S + g.chisquare(d - 2, (k, alive.size))
            m[alive], first = _reuse_block(m[alive], Z, S, Q, c / d, level)
            out = first > 0
            hit[alive[out]] = t + first[out]
            alive, t = _drop_done(alive, out, hit, n_groups, need), t + k
        medians[:, j] = np.median(hit.reshape(n_groups, group_size), axis=1)
        escaped[j] = np.mean(np.isfinite(hit))
    return MedianEscape(dims, medians, escaped)


def _one_pass_block(m, Z, S, Q, eta, level):
    r"""``len(Z)`` one-pass steps of the chain {eq}`eq-ch9-chain` (tanh student, :math:`h_3`
    target) for the paths ``m``, with the draws (steps, paths) ``Z``, ``S`` and
    :math:`Q = S^2+\rho`; the same arithmetic as ``chain_step(..., reuse=False)``, without
    its per-call checks. Returns the final overlaps, the first step (1-based) at which
    each path reached ``level`` (0 if none) and the sign of its overlap there (0 if none)."""
    dz = (eta / math.sqrt(6.0)) / np.cosh(Z) ** 2      # eta h_3 normalisation times tanh'
    dzS, dz2Q, M = dz * S, dz * dz * Q, np.empty(Z.shape)  # a S = p dzS, a^2 Q = p^2 dz2Q
    for t in range(Z.shape[0]):
        sq = np.sqrt(1.0 - m * m)
        G = m * Z[t] + sq * S[t]
        p = G * (G * G - 3.0)                          # a = p dz = eta y tanh'(Z)
        m = _clip1((p * dzS[t] * sq + m) / np.sqrt(p * p * dz2Q[t] + 1.0), M[t])
    return (m.copy(), *_first_hits(M, level))


def one_pass_escape(dims, n_groups: int = 16, group_size: int = 16, c: float = 4.0,
                    level: float = 0.1, tau_max: float = 4.0, block: int = 256,
                    rng=None) -> MedianEscape:
    r"""One-pass SGD ({prf:ref}`def-ch9-sgd` without repetition) at chapter 8's step
    :math:`\eta = c\,d^{-3/2}`, by the exact chain {eq}`eq-ch9-chain` with one step per
    fresh sample (``chain_step(..., reuse=False)``), :math:`h_3` target, tanh student: the
    median number of samples to :math:`|m|\ge` ``level`` of each group of paths
    ({prf:ref}`prop-ch9-one-pass`). The draws come in blocks of ``block`` samples; a path
    that has escaped is dropped at the end of its block (its later samples do not change its
    escape time), and size ``d`` stops when more than half of every group has escaped (every
    median is then final) or after ``tau_max * d**2`` samples. Size ``d`` draws from
    ``validate.stream(rng, d, 2)``.

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    n_groups : int
        Groups (axis 0), at least 2.
    group_size : int
        Paths per group.
    c : float
        :math:`\eta\,d^{3/2} > 0`.
    level : float
        :math:`|m|` that counts as escaped, in (0, 1).
    tau_max : float
        Budget in samples per :math:`d^2`.
    block : int
        Samples drawn at once.
    rng : Generator, int or None
        Parent random state (SPEC 7).

    Returns
    -------
    MedianEscape
        ``medians`` of shape (groups, dims), ``inf`` where a group's median was not reached;
        ``drift_side``, the fraction of each group's first half that escapes on the side of
        the drift.
    """
    dims = _dims(dims)
    n_groups = V.positive_int(n_groups, "n_groups", minimum=2)
    group_size = V.positive_int(group_size, "group_size")
    c = V.positive_float(c, "c")
    level = _level(level)
    tau_max = V.positive_float(tau_max, "tau_max")
    block = V.positive_int(block, "block")
    P, need = n_groups * group_size, group_size // 2 + 1
    medians, sides = np.full((n_groups, dims.size), np.inf), np.zeros((n_groups, dims.size))
    escaped, kappa_sign = np.zeros(dims.size), np.sign(_kappa_power()[0])
    for j, d in enumerate(dims):
        g = V.stream(rng, int(d), 2)
        g1 = g.standard_normal(P)
        m = g1 / np.sqrt(g1 * g1 + g.chisquare(d - 1, P))
        hit, sign = np.full(P, np.inf), np.zeros(P)
        alive, t, budget = np.arange(P), 0, int(math.ceil(tau_max * d * d))
        while t < budget and alive.size:
            k = min(block, budget - t)
            Z, S = g.standard_normal((2, k, alive.size))
            Q = S * S + g.chisquare(d - 2, (k, alive.size))
            m[alive], first, side = _one_pass_block(m[alive], Z, S, Q, c * float(d) ** -1.5,
                                                    level)
            out = first > 0
            hit[alive[out]], sign[alive[out]] = t + first[out], side[out]
            alive, t = alive[~out], t + k
            if np.isfinite(hit).reshape(n_groups, -1).sum(axis=1).min() >= need:
                break
        medians[:, j] = np.median(hit.reshape(n_groups, group_size), axis=1)
        escaped[j] = np.mean(np.isfinite(hit))
        sides[:, j] = _side_fraction(hit, sign == kappa_sign, n_groups)
    return MedianEscape(dims, medians, escaped, sides)


def _side_fraction(hit, favoured, n_groups):
    """Per group, the fraction of ``favoured`` among the paths that hit by the group median."""
    h, f = hit.reshape(n_groups, -1), favoured.reshape(n_groups, -1)
    first = h <= np.median(h, axis=1, keepdims=True)
    return np.sum(first & f, axis=1) / np.maximum(np.sum(first, axis=1), 1)


class OnePassLimit(NamedTuple):
    r"""The diffusion limit of one-pass SGD ({prf:ref}`prop-ch9-one-pass`)."""

    dims: np.ndarray
    tau: np.ndarray
    r"""Median time (samples per :math:`d^2`) of the diffusion to :math:`|y| = \ell\sqrt d`,
    per d."""
    tau_inf: float
    """Median blow-up time: the limit of ``tau`` as d grows."""
    drift: float
    r""":math:`\kappa = \sqrt3\,\E[\sigma'(z)h_2(z)]`."""
    power: float
    r""":math:`\E[\sigma'(z)^2]`."""
    group_log: np.ndarray
    """The statistic of the chain's groups: the log of the median time of each group of
    ``group_size`` paths, (dims, groups)."""
    drift_side: np.ndarray
    r"""Mean over groups of the fraction of the paths that reach :math:`|y| = \ell\sqrt d` by
    the group median with :math:`y` of the sign of :math:`\kappa`, per d."""


def one_pass_limit(dims, c: float = 4.0, level: float = 0.1, n_paths: int = 4000,
                   h: float = 1e-3, y_max: float = 100.0, drift: bool = True,
                   group_size: int | None = 16, rng=None) -> OnePassLimit:
    r"""The :math:`d`-free diffusion of one-pass SGD, eq. {eq}`eq-ch9-one-pass-sde`
    (:math:`y = \sqrt d\,m`, :math:`\tau = t/d^2`, :math:`\eta = c\,d^{-3/2}`, tanh student,
    :math:`h_3` target), from :math:`y_0\sim\N(0,1)`, by Euler-Maruyama with step
    :math:`h/c` and the discrete-monitoring correction of the barrier (shifted by
    :math:`0.5826` times the noise of one step): the median time to :math:`|y| = \ell\sqrt d`
    at each d and the median blow-up time (:math:`|y|` = ``y_max``, plus the deterministic
    rest :math:`1/(c|\kappa|y_{\max})`).

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    c : float
        :math:`\eta\,d^{3/2} > 0`.
    level : float
        :math:`\ell` in (0, 1).
    n_paths : int
        Paths of the diffusion (at least 100).
    h : float
        Step of the time :math:`c\tau`, in (0, 0.1].
    y_max : float
        Blow-up proxy, above :math:`\ell\sqrt d` for every d.
    drift : bool
        Keep the drift :math:`c\kappa y^2`; ``False`` gives the competitor without it, the
        Ornstein-Uhlenbeck process of the noise and the retraction alone, which does not blow
        up (``tau_inf`` is then ``nan``; keep its levels low).
    group_size : int or None
        Paths per group for ``group_log`` and ``drift_side`` (the chain's groups, formed from
        the first paths); the run goes on until more than half of every group has reached
        every level. ``None``: no groups (those two fields are ``None``), and the run stops
        when more than half of all paths have reached every level.
    rng : Generator, int or None
        Random state (SPEC 7).

    Returns
    -------
    OnePassLimit
    """
    if not isinstance(drift, bool):
        raise TypeError(f"drift must be True or False, got {drift!r}")
    dims = _dims(dims)
    c = V.positive_float(c, "c")
    level = _level(level)
    n_paths = V.positive_int(n_paths, "n_paths", minimum=100)
    h = V.positive_float(h, "h")
    if h > 0.1:
        raise ValueError(f"h must lie in (0, 0.1], got {h}")
    levels = np.append(level * np.sqrt(dims.astype(float)), V.positive_float(y_max, "y_max"))
    if np.any(np.diff(levels) <= 0):
        raise ValueError("y_max must exceed level * sqrt(d) for every d (and dims increase)")
    grouping = group_size is not None
    group_size = V.positive_int(group_size if grouping else 2, "group_size", minimum=2)
    if n_paths < 2 * group_size:
        raise ValueError(f"n_paths ({n_paths}) must be at least 2 * group_size ({group_size})")
    kappa, power = _kappa_power()
    noise = c * math.sqrt(7.0 * power)      # E[h_3(G)^2 G^2] = 7
    dt = h / c
    shift = 0.5826 * noise * math.sqrt(dt)
    gen = V.generator(rng)
    y = gen.standard_normal(n_paths)
    hit, sign = np.full((levels.size, n_paths), np.inf), np.zeros((levels.size, n_paths))
    t, need = 0.0, group_size // 2 + 1
    k_y = c * kappa if drift else 0.0
    by_group = (dims.size, n_paths // group_size, group_size)
    grouped = slice(0, by_group[1] * group_size)
    rows = slice(None) if drift else slice(0, -1)

    def running():
        fin = np.isfinite(hit)
        groups = grouping and np.min(fin[:-1, grouped].reshape(by_group).sum(axis=2)) < need
        return groups or np.min(fin[rows].sum(axis=1)) <= n_paths // 2

    while running():
        if t > 1e3 / c:
            raise ValueError("the diffusion does not reach its levels within 1000 / c")
        y = y + (k_y * y * y - 0.5 * c * c * power * y) * dt \
            + noise * math.sqrt(dt) * gen.standard_normal(n_paths)
        y = np.clip(y, -2 * y_max, 2 * y_max)
        t += dt
        new = np.isinf(hit) & (np.abs(y) >= levels[:, None] - shift)
        hit[new], sign[new] = t, np.broadcast_to(np.sign(y), hit.shape)[new]
    hit[-1] += 1.0 / (c * abs(kappa) * y_max)
    med = np.median(hit, axis=1)
    grp = np.log(np.median(hit[:-1, grouped].reshape(by_group), axis=2)) if grouping else None
    side = np.array([np.mean(_side_fraction(hit[i, grouped], sign[i, grouped] == np.sign(kappa),
                                            by_group[1])) for i in range(dims.size)])
    return OnePassLimit(dims, med[:-1], float(med[-1]) if drift else math.nan, kappa, power,
                        grp, side if grouping else None)

