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

__all__ = ["chain_step", "EscapeRuns", "sgd_escape", "reuse_limit_rate", "reuse_limit_time",
           "MedianEscape", "median_escape"]


def _dims(dims):
    dims = np.asarray(dims)
    if dims.ndim != 1 or dims.size == 0:
        raise ValueError("dims must be a non-empty sequence of integers >= 8")
    return np.array([V.positive_int(int(d) if float(d) == int(d) else d, "dims", minimum=8)
                     for d in dims.tolist()])


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
    """Fraction of the paths escaped when the run stopped, per d."""


def median_escape(dims, n_groups: int = 32, group_size: int = 64, c: float = 1.0,
                  level: float = 0.1, tau_max: float = 4.0, frac: float = 0.6,
                  rng=None) -> MedianEscape:
    r"""SGD with repetition by the exact chain {eq}`eq-ch9-chain` ({prf:ref}`def-ch9-sgd`,
    :math:`\eta = c/d`), run at each d until every group has ``frac`` of its paths escaped (or
    ``tau_max * d`` samples); the median escape time of each group. Size ``d`` draws from
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
    if not 0.5 < frac <= 1:
        raise ValueError(f"frac must lie in (0.5, 1], got {frac}")
    P = n_groups * group_size
    medians = np.full((n_groups, dims.size), np.inf)
    escaped = np.zeros(dims.size)
    for j, d in enumerate(dims):
        g = V.stream(rng, int(d), 1)
        g1 = g.standard_normal(P)
        m = g1 / np.sqrt(g1 * g1 + g.chisquare(d - 1, P))
        hit = np.full(P, np.inf)
        for t in range(int(math.ceil(tau_max * d))):
            Z, S, rho = g.standard_normal(P), g.standard_normal(P), g.chisquare(d - 2, P)
            m = chain_step(m, Z, S, rho, c / d, True)
            hit[np.isinf(hit) & (np.abs(m) >= level)] = t + 1
            if t % 16 == 0 and np.min(np.mean(np.isfinite(hit.reshape(n_groups, -1)),
                                              axis=1)) >= frac:
                break
        medians[:, j] = np.median(hit.reshape(n_groups, group_size), axis=1)
        escaped[j] = np.mean(np.isfinite(hit))
    return MedianEscape(dims, medians, escaped)
