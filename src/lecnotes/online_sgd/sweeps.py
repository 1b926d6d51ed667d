r"""Sweeps of chapter 8: the escape experiments over dimensions, batch sizes and step sizes.

Each function runs one of the chapter's experiments over a grid and returns a named result,
seeds (or paths) on axis 0. They call :mod:`lecnotes.online_sgd.experiments` with the same
generator keys as the experiments' own streams, so a sweep draws exactly what a loop over
its grid would (adding a size changes no other size's draws).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite
from lecnotes.online_sgd import theory
from lecnotes.online_sgd.experiments import (
    dlink,
    escape_runs,
    link,
    overlap_chain,
    smoothed_escape,
)

__all__ = ["search_budget", "EscapeSweep", "escape_sweep", "chain_sweep", "map_escape_sweep",
           "log_time_z",
           "BatchSweep", "batch_sweep", "smoothing_sweep", "reuse_first_coefficient",
           "ReuseLate", "reuse_late", "ChainExponent", "chain_exponent", "chain_step_scan",
           "StepLimit", "chain_step_limit", "ratio_of_means"]


def search_budget(k: int, d: int) -> int:
    r"""The step budget :math:`400\,d^{\max(k-1,1)}` of the escape runs: many times the
    search time of {prf:ref}`thm-ch8-sample-complexity`.

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    d : int
        Dimension.

    Returns
    -------
    int
    """
    k = theory.check_k(k)
    d = V.positive_int(d, "d", minimum=2)
    return int(400 * d ** max(k - 1, 1))


class EscapeSweep(NamedTuple):
    """Outcome of :func:`escape_sweep`."""

    runs: list          # one EscapeResult per dimension
    steps: np.ndarray   # (S, n_dims) steps to escape


def escape_sweep(k: int, dims, n_seeds: int, c: float, *, rng=None) -> EscapeSweep:
    r"""One-pass SGD {prf:ref}`def-ch8-spherical-sgd` (:math:`n_b = 1`) at each dimension of
    ``dims`` with the step :math:`\eta = c\,d^{-k/2}` (:math:`c/d` for k = 1) of
    {prf:ref}`thm-ch8-sample-complexity`, overlaps recorded every :math:`d/16` steps.

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    dims : sequence of int
        Dimensions (at least 2).
    n_seeds : int
        Seeds per dimension.
    c : float
        Constant of the step, > 0.
    rng : Generator, int or None
        Root of the streams (the same for every dimension; the streams are keyed by d).

    Returns
    -------
    EscapeSweep
    """
    k = theory.check_k(k)
    dims = V.sizes(dims, "dims", minimum=2)
    S = V.positive_int(n_seeds, "n_seeds")
    c = V.positive_float(c, "c")
    runs = [escape_runs(k, int(d), S, theory.optimal_batch_step(k, int(d), 1, c),
                        max_steps=search_budget(k, int(d)), record_every=max(1, int(d) // 16),
                        rng=rng) for d in dims]
    return EscapeSweep(runs, np.array([r.steps for r in runs]).T)


def chain_sweep(k: int, dims, n_paths: int, c: float, *, rng=None) -> np.ndarray:
    r"""Escape steps of the exact overlap chain {prf:ref}`lem-ch8-overlap-chain` at each
    dimension, with the step of :func:`escape_sweep`.

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    dims : sequence of int
        Dimensions (at least 3).
    n_paths : int
        Paths per dimension.
    c : float
        Constant of the step, > 0.
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (n_paths, n_dims)
    """
    k = theory.check_k(k)
    dims = V.sizes(dims, "dims", minimum=3)
    n = V.positive_int(n_paths, "n_paths")
    c = V.positive_float(c, "c")
    return np.array([overlap_chain(k, int(d), n, theory.optimal_batch_step(k, int(d), 1, c),
                                   max_steps=search_budget(k, int(d)), rng=rng)
                     for d in dims]).T


def map_escape_sweep(k: int, dims, c: float) -> np.ndarray:
    r"""Escape steps of the mean map {eq}`eq-ch8-mean-map` at each dimension, with the step of
    :func:`escape_sweep`, from :math:`q_0 = 1/d` (:math:`q_0 = 0` for k = 1, whose drift does
    not depend on the sign of :math:`m`).

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    dims : sequence of int
        Dimensions.
    c : float
        Constant of the step, > 0.

    Returns
    -------
    ndarray, shape (n_dims,)
    """
    k = theory.check_k(k)
    dims = V.sizes(dims, "dims", minimum=2)
    c = V.positive_float(c, "c")
    return np.array([theory.escape_steps(k, int(d), theory.optimal_batch_step(k, int(d), 1, c),
                                         q0=0.0 if k == 1 else None) for d in dims])


def log_time_z(steps, chain, reference) -> float:
    r"""Largest :math:`|z|` over the dimensions of the runs' mean log escape time against
    ``reference``, with the spread of the chain's log escape times
    ({prf:ref}`lem-ch8-overlap-chain`) as the yardstick: the runs' own values are skewed
    (lucky starts escape at once), and their sample spread is too noisy.

    Parameters
    ----------
    steps : array_like, shape (S, n_dims)
        Escape steps of the runs (finite, > 0).
    chain : array_like, shape (P, n_dims)
        Escape steps of the chain (finite, > 0).
    reference : array_like, shape (n_dims,)
        The log escape time to test against.

    Returns
    -------
    float
    """
    log_s = np.log(V.finite_array(steps, "steps", ndim=2))
    log_c = np.log(V.finite_array(chain, "chain", ndim=2))
    ref = V.finite_array(reference, "reference", ndim=1)
    if log_s.shape[1] != log_c.shape[1] or ref.shape[0] != log_s.shape[1]:
        raise ValueError("steps, chain and reference must have the same number of dimensions")
    if log_s.shape[0] < 2 or log_c.shape[0] < 2:
        raise ValueError("steps and chain need at least two rows (seeds, paths)")
    se = log_c.std(0, ddof=1) * np.sqrt(1 / len(log_s) + 1 / len(log_c))
    return float(np.max(np.abs(log_s.mean(0) - ref) / se))


class BatchSweep(NamedTuple):
    """Outcome of :func:`batch_sweep`: per protocol ("capped", "correlation")."""

    etas: dict          # protocol -> (n_batches,) step sizes
    steps: dict         # protocol -> (S, n_batches) steps to escape
    pred: dict          # protocol -> (n_batches,) escape steps of the mean map


def batch_sweep(d: int, n_seeds: int, batches, c: float = 1.0, *, eta_max: float = 1.0,
                max_steps: int = 20000, rng=None) -> BatchSweep:
    r"""Escape steps at k = 3 against the batch size ({prf:ref}`thm-ch8-batch`) for two
    protocols on the same streams: the step :math:`\eta = c\,n_bd^{-3/2}` capped at
    ``eta_max`` ("capped") and uncapped ("correlation"), with the mean map's prediction.

    Parameters
    ----------
    d : int
        Dimension.
    n_seeds : int
        Seeds (paired between the protocols).
    batches : sequence of int
        Batch sizes :math:`n_b`.
    c : float
        Constant of the step.
    eta_max : float
        The cap of the capped protocol.
    max_steps : int
        Steps at most per run.
    rng : Generator, int or None

    Returns
    -------
    BatchSweep
    """
    d = V.positive_int(d, "d", minimum=2)
    S = V.positive_int(n_seeds, "n_seeds")
    nbs = V.sizes(batches, "batches")
    c = V.positive_float(c, "c")
    eta_max = V.positive_float(eta_max, "eta_max")
    max_steps = V.positive_int(max_steps, "max_steps")
    eta = np.array([theory.optimal_batch_step(3, d, int(nb), c) for nb in nbs])
    etas = {"capped": np.minimum(eta, eta_max), "correlation": eta}
    steps, pred = {}, {}
    for name, e in etas.items():
        steps[name] = np.array([escape_runs(3, d, S, float(x), batch=int(nb),
                                            max_steps=max_steps, rng=rng).steps
                                for nb, x in zip(nbs, e, strict=True)]).T
        pred[name] = np.array([theory.escape_steps(3, d, float(x), int(nb))
                               for nb, x in zip(nbs, e, strict=True)])
    return BatchSweep(etas, steps, pred)


def smoothing_sweep(dims, n_seeds: int, *, exponent: float = 0.25, rng=None) -> np.ndarray:
    r"""Escape steps of online SGD on the smoothed loss ({prf:ref}`thm-ch8-smoothing`,
    {eq}`eq-ch8-smoothed-link`) at k = 3, with :math:`\lambda = d^{1/4}` and the step
    :math:`\eta = \lambda(1+\lambda^2)^{3/2}d^{-3/2}`, at each dimension.

    Parameters
    ----------
    dims : sequence of int
        Dimensions (at least 3).
    n_seeds : int
        Seeds per dimension.
    exponent : float
        :math:`\lambda = d^{\text{exponent}}`.
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (n_seeds, n_dims)
    """
    dims = V.sizes(dims, "dims", minimum=3)
    S = V.positive_int(n_seeds, "n_seeds")
    exponent = V.nonneg_float(exponent, "exponent")
    lam = dims**exponent
    eta = lam * (1 + lam**2) ** 1.5 / dims**1.5
    return np.array([smoothed_escape(int(d), S, float(e), float(lm),
                                     max_steps=search_budget(3, int(d)), rng=rng)
                     for d, e, lm in zip(dims, eta, lam, strict=True)]).T


def reuse_first_coefficient(c: float, n_nodes: int = 40) -> float:
    r"""The first Hermite coefficient :math:`\E[y\,\sigma'(z_1)\,G]` of the second visit's
    label weight at :math:`m = 0` ({eq}`eq-ch8-reuse-coefficient`), :math:`y = h_3(G)`,
    :math:`\sigma = h_3`, :math:`z_1 = Z + c\,y\,\sigma'(Z)`, by Gauss-Hermite quadrature
    (exact for this polynomial with 40 nodes per axis).

    Parameters
    ----------
    c : float
        :math:`\eta d`, > 0.
    n_nodes : int
        Nodes per axis.

    Returns
    -------
    float
    """
    g, wts = gauss_hermite(V.positive_int(n_nodes, "n_nodes"))
    c = V.positive_float(c, "c")
    G, Z = np.meshgrid(g, g, indexing="ij")
    z1 = Z + c * link(3, G) * dlink(3, Z)
    return float(np.sum(np.outer(wts, wts) * link(3, G) * dlink(3, z1) * G))


class ReuseLate(NamedTuple):
    """Late-time statistics of :func:`lecnotes.online_sgd.experiments.reuse_sweep`."""

    gain: np.ndarray        # (n_dims,) mean paired gain over the late window
    gain_se: np.ndarray     # (n_dims,) its standard error over seeds
    one_pass: np.ndarray    # (n_dims, S) one-pass |m|, mean over the late window
    ode: float              # the ODE's overlap, mean over the late window


def reuse_late(sweep: dict, ode, late_from: float = 3.0) -> ReuseLate:
    r"""The paired gain of repetition over one pass along :math:`-w_\star` and the one-pass
    :math:`|m|`, each averaged over :math:`\tau\ge` ``late_from``, against the ODE
    {eq}`eq-ch8-reuse-ode`.

    Parameters
    ----------
    sweep : dict
        The output of ``reuse_sweep``.
    ode : array_like
        The ODE's overlap along :math:`-w_\star` at ``sweep["tau"]``.
    late_from : float
        Start of the late window (samples / d).

    Returns
    -------
    ReuseLate
    """
    if not isinstance(sweep, dict) or not {"tau", "one pass", "reuse"} <= set(sweep):
        raise ValueError("sweep must be the dict returned by reuse_sweep")
    tau = np.asarray(sweep["tau"])
    ode = V.finite_array(ode, "ode", ndim=1)
    if ode.shape != tau.shape:
        raise ValueError(f"ode must have the shape of sweep['tau'], {tau.shape}")
    late = tau >= V.nonneg_float(late_from, "late_from")
    if not late.any():
        raise ValueError(f"late_from must be at most the last time {tau[-1]}")
    gain = (sweep["one pass"] - sweep["reuse"])[:, :, late].mean(axis=2)
    g_m, g_se = stats.mean_and_error(gain, axis=1)
    one = np.abs(sweep["one pass"][:, :, late]).mean(axis=2)
    return ReuseLate(g_m, g_se, one, float(ode[late].mean()))


class ChainExponent(NamedTuple):
    """Outcome of :func:`chain_exponent`."""

    medians: np.ndarray     # (n_groups, n_dims) median escape steps of each group of paths
    slope: float            # log-log slope of the median escape time against d
    slope_se: float         # its standard error over the groups


def chain_exponent(k: int, dims, c: float, *, n_groups: int = 20, group_size: int = 50,
                   rng=None) -> ChainExponent:
    r"""The exponent of the escape time in :math:`d`, measured on the exact overlap chain
    {prf:ref}`lem-ch8-overlap-chain` (:math:`n_b = 1`, :math:`\eta = c\,d^{-k/2}`): the
    median escape steps of ``n_groups`` independent groups of paths at each dimension, and
    the slope of their logarithm against :math:`\log d` with its error over the groups.
    Paths run until more than half of every group has escaped, when every group's median is
    final (``overlap_chain(..., groups=n_groups)``).

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    dims : sequence of int
        Dimensions (at least 3).
    c : float
        Constant of the step, > 0.
    n_groups, group_size : int
        Groups of paths (the "seeds" of the slope) and paths per group.
    rng : Generator, int or None

    Returns
    -------
    ChainExponent
    """
    k = theory.check_k(k)
    dims = V.sizes(dims, "dims", minimum=3)
    c = V.positive_float(c, "c")
    G = V.positive_int(n_groups, "n_groups", minimum=2)
    P = V.positive_int(group_size, "group_size")
    med = np.empty((G, dims.size))
    for j, d in enumerate(dims):
        t = overlap_chain(k, int(d), G * P, theory.optimal_batch_step(k, int(d), 1, c),
                          max_steps=search_budget(k, int(d)), groups=G, rng=rng)
        med[:, j] = np.median(t.reshape(G, P), axis=1)
    s, se = stats.slopes_over_seeds(dims, med)
    return ChainExponent(med, float(s), float(se))


def chain_step_scan(k: int, d: int, cs, n_paths: int, *, rng=None) -> np.ndarray:
    r"""Escape steps of the exact overlap chain {prf:ref}`lem-ch8-overlap-chain` at one
    dimension for several step constants :math:`c` (:math:`\eta = c\,d^{-k/2}`), every path
    run out (budget :func:`search_budget`).

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    d : int
        Dimension (at least 3).
    cs : sequence of float
        Step constants, > 0.
    n_paths : int
        Paths per constant.
    rng : Generator, int or None
        Root of the streams; constant ``j`` uses the sub-stream ``stream(rng, j)``.

    Returns
    -------
    ndarray, shape (n_paths, n_cs)
    """
    k = theory.check_k(k)
    d = V.positive_int(d, "d", minimum=3)
    n = V.positive_int(n_paths, "n_paths")
    cs = np.atleast_1d(V.finite_array(cs, "cs"))
    if cs.ndim != 1 or cs.size == 0 or np.any(cs <= 0):
        raise ValueError(f"cs must be a non-empty sequence of numbers > 0, got {cs!r}")
    return np.array([overlap_chain(k, d, n, theory.optimal_batch_step(k, d, 1, float(c)),
                                   max_steps=search_budget(k, d), rng=V.stream(rng, j))
                     for j, c in enumerate(cs)]).T


class StepLimit(NamedTuple):
    """Outcome of :func:`chain_step_limit`."""

    median_small: float     # median escape steps at the small step constant
    horizon: float          # factor x median_small, the time both shares are read at
    share_small: float      # share of the small-step paths escaped by the horizon
    share_large: float      # share of the large-step paths escaped by the horizon
    n_paths: int            # paths per constant


def chain_step_limit(k: int, d: int, c_small: float, c_large: float, n_paths: int, *,
                     factor: float = 2.0, rng=None) -> StepLimit:
    r"""Is a larger step constant slower on the exact overlap chain
    {prf:ref}`lem-ch8-overlap-chain`? Runs ``n_paths`` paths at :math:`\eta = c\,d^{-k/2}` for
    ``c_small`` until 90% of them have escaped, takes their median escape step :math:`T`, and
    runs ``n_paths`` paths at ``c_large`` for ``factor`` times :math:`T` steps. If the escape
    time did not depend on :math:`c` (as at :math:`d = 64` for :math:`c` between about 4 and 16),
    both shares escaped by that horizon would be equal; a share at ``c_large`` below 1/2 says
    that its median escape time is more than ``factor`` times longer.

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    d : int
        Dimension (at least 3).
    c_small, c_large : float
        Step constants, > 0.
    n_paths : int
        Paths per constant.
    factor : float
        The horizon in units of the small step's median escape time, > 0.
    rng : Generator, int or None
        Root of the streams; ``c_small`` uses ``stream(rng, 0)``, ``c_large``
        ``stream(rng, 1)``.

    Returns
    -------
    StepLimit
    """
    k = theory.check_k(k)
    d = V.positive_int(d, "d", minimum=3)
    c_small = V.positive_float(c_small, "c_small")
    c_large = V.positive_float(c_large, "c_large")
    n = V.positive_int(n_paths, "n_paths", minimum=2)
    factor = V.positive_float(factor, "factor")
    t_small = overlap_chain(k, d, n, theory.optimal_batch_step(k, d, 1, c_small),
                            max_steps=search_budget(k, d), stop_fraction=0.9,
                            rng=V.stream(rng, 0))
    median = float(np.median(t_small))
    horizon = factor * median
    t_large = overlap_chain(k, d, n, theory.optimal_batch_step(k, d, 1, c_large),
                            max_steps=max(int(horizon), 1), rng=V.stream(rng, 1))
    return StepLimit(median, horizon, float(np.mean(t_small <= horizon)),
                     float(np.mean(t_large <= horizon)), n)


def ratio_of_means(num, den) -> tuple[float, float]:
    r"""The ratio :math:`\bar a/\bar b` of two paired samples and its standard error by the
    delta method (the covariance of the pairs included); the comparison of the two batch
    protocols of {prf:ref}`thm-ch8-batch`, whose per-seed ratios are heavy-tailed (a capped
    run that escapes early by luck divides by a small number).

    Parameters
    ----------
    num, den : array_like, shape (S,)
        Paired values, seeds on axis 0 (at least 2; ``den`` with a positive mean).

    Returns
    -------
    tuple of float
        The ratio and its standard error.
    """
    a = V.finite_array(num, "num")
    b = V.finite_array(den, "den")
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"num and den must be paired 1-d samples of size >= 2, got {a.shape} "
                         f"and {b.shape}")
    if b.mean() <= 0:
        raise ValueError("den must have a positive mean")
    r = a.mean() / b.mean()
    dev = (a - r * b) / b.mean()  # linearised ratio per pair
    return float(r), float(dev.std(ddof=1) / np.sqrt(a.size))
