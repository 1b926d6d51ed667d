r"""Chapter 6, giant steps: several steps on fresh batches, staircases and leap 2 in many steps.

{prf:ref}`thm-ch6-staircase`: :func:`fresh_steps` (one run) and :func:`fresh_steps_sweep`
(over dimensions and seeds) take square-loss giant steps on fresh batches of a multi-index
target; :func:`staircase_runs` the correlation-loss staircase protocol with renormalised
rows; :func:`barrier_runs` the symmetric and asymmetric targets of the symmetric barrier;
:func:`leap2_many_steps` the number of steps a leap-2 direction needs. Arrays have seeds on
axis 0; seed ``s`` at dimension ``d`` draws from the stream ``V.stream(rng, d, s)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation
from lecnotes.core.overlaps import overlap_gram
from lecnotes.core.targets import random_orthonormal, staircase
from lecnotes.giant_steps.procedure import check_callable, init_network
from lecnotes.giant_steps.theory import (
    CUBIC,
    asymmetric_target,
    h2,
    rotated,
    steps_to_level,
    symmetric_target,
)
from lecnotes.models.layerwise import giant_step

__all__ = [
    "fresh_steps",
    "fresh_steps_sweep",
    "STAIRCASE_RUNS",
    "staircase_runs",
    "staircase_runs_in_law",
    "BarrierRuns",
    "barrier_runs",
    "Leap2ManySteps",
    "leap2_many_steps",
]


def fresh_steps(target: Callable, k: int, d: int, steps: int, rng=None, activation="relu",
                p: int = 128, delta: int = 8, eta_bar: float = 2.0) -> np.ndarray:
    r"""Giant steps on fresh batches of :math:`n = \delta d` samples ({prf:ref}`thm-ch6-staircase`).

    From one stream: ``k`` orthonormal directions, the network (signs), then per step a
    fresh batch of the multi-index ``target`` and a step of :math:`\eta = \bar\eta p`.

    Parameters
    ----------
    target : callable
        ``target(Z)`` of the projections ``Z`` (n, k).
    k, d, steps, p, delta : int
    rng : Generator, int or None
    activation : str, pair or Activation
    eta_bar : float

    Returns
    -------
    ndarray (steps, k + 1)
        Per step, the mean squared overlap with each direction (diagonal of
        :func:`lecnotes.core.overlaps.overlap_gram`) and :math:`\|W_t\|/\|W_0\|`; after an
        overflow the overlaps are NaN and the norm inf.
    """
    check_callable(target, "target")
    k, d, steps = V.positive_int(k, "k"), V.positive_int(d, "d"), V.positive_int(steps, "steps")
    p, delta = V.positive_int(p, "p"), V.positive_int(delta, "delta")
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    if k > d:
        raise ValueError(f"k must be at most d = {d}, got {k}")
    rng = V.generator(rng)
    W_star = random_orthonormal(k, d, rng)
    W, a0 = init_network(p, d, rng)
    norm0, out = np.linalg.norm(W), np.full((steps, k + 1), np.nan)
    out[:, -1] = np.inf
    with np.errstate(all="ignore"):  # a diverging run must not print warnings
        for t in range(steps):
            X = rng.standard_normal((delta * d, d))
            W = giant_step(W, a0, X, target(X @ W_star.T), eta_bar * p, activation,
                           scaling=p**-0.5)
            if not np.all(np.isfinite(W)):
                break
            out[t] = [*np.diag(overlap_gram(W, W_star)), np.linalg.norm(W) / norm0]
    return out


def fresh_steps_sweep(target: Callable, k: int, dims, steps: int, seeds: int,
                      activation="relu", eta_bar: float = 2.0, rng=None, **kw) -> np.ndarray:
    r""":func:`fresh_steps` over dimensions and seeds ({prf:ref}`thm-ch6-staircase`).

    Seed ``s`` at dimension ``d`` uses the stream ``V.stream(rng, d, s)``.

    Parameters
    ----------
    target, k, steps, activation, eta_bar
        As in :func:`fresh_steps`.
    dims : sequence of int
    seeds : int
    rng : Generator, int or None
    **kw
        ``p``, ``delta`` of :func:`fresh_steps`.

    Returns
    -------
    ndarray (seeds, len(dims), steps, k + 1)
    """
    dims, seeds = V.sizes(dims, "dims"), V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    return np.array([[fresh_steps(target, k, d, steps, V.stream(rng, d, s),
                                  activation, eta_bar=eta_bar, **kw) for d in dims]
                     for s in range(seeds)])


STAIRCASE_RUNS = (("cubic", 32), ("relu", 32), ("cubic", 8))
"""The (activation, sample ratio) of the networks of :func:`staircase_runs`."""


def staircase_runs(dims, seeds: int, steps: int = 4, rng=None, p: int = 128,
                   eta_bar: float = 2.0, runs=STAIRCASE_RUNS, first: int = 0) -> np.ndarray:
    r"""Fresh giant steps on :math:`z_1+z_1z_2+z_1z_2z_3` with the output under control.

    The protocol of the staircase section ({prf:ref}`thm-ch6-staircase`): per step a fresh
    batch, one step of the correlation loss (:func:`lecnotes.models.layerwise.giant_step` with
    ``loss="correlation"``: :math:`w_i \leftarrow w_i+\frac{\bar\eta b_i}{n}\sum_\nu y_\nu
    \sigma'(\langle w_i,x_\nu\rangle)x_\nu`, which does not involve the output), then every
    row renormalised to the unit sphere. The networks of ``runs`` (activation ``"cubic"``
    = :data:`lecnotes.giant_steps.theory.CUBIC` or ``"relu"``, sample ratio
    :math:`\delta`) start from the same rows and see the first :math:`\delta d` samples of one
    shared batch per step. Seed ``s`` at dimension ``d`` uses the stream
    ``V.stream(rng, d, s)``: the directions, the network, then the batches. The products
    are in single precision (the overlaps are statistical quantities).

    Parameters
    ----------
    dims : sequence of int
    seeds, steps, p : int
    first : int, default 0
        Index of the first seed: ``seeds`` seeds ``first, ..., first + seeds - 1`` (more seeds
        for one run without recomputing the others: seed ``s`` is the same whatever
        ``first``, ``runs`` and ``steps``, as long as the largest sample ratio of ``runs``
        is the same, since every batch has that many rows).
    rng : Generator, int or None
    eta_bar : float
    runs : sequence of (str, int)

    Returns
    -------
    ndarray (seeds, len(dims), len(runs), steps, 3)
        Mean squared overlap :math:`\cos^2(w_i^t, w^\star_k)` over neurons, per step and
        direction.
    """
    seeds, steps = V.positive_int(seeds, "seeds"), V.positive_int(steps, "steps")
    first = V.positive_int(first, "first", minimum=0)
    dims, p = V.sizes(dims, "dims", minimum=3), V.positive_int(p, "p")
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    rng, target = V.generator(rng), staircase(3)  # rng: the root of the streams
    acts = [get_activation(CUBIC if a == "cubic" else a).dsigma for a, _ in runs]
    deltas = [V.positive_int(delta, "delta") for _, delta in runs]
    out = np.zeros((seeds, len(dims), len(runs), steps, 3))
    for i, s in enumerate(range(first, first + seeds)):
        for j, d in enumerate(dims):
            gen = V.stream(rng, d, s)
            W_star = random_orthonormal(3, d, gen).astype(np.float32)
            W0, a0 = init_network(p, d, gen)
            b = np.sign(a0).astype(np.float32)[:, None]
            Ws = [(W0 / np.linalg.norm(W0, axis=1, keepdims=True)).astype(np.float32)
                  for _ in runs]
            for t in range(steps):
                X = gen.standard_normal((max(deltas) * d, d), dtype=np.float32)
                y = target(X @ W_star.T).astype(np.float32)
                for r, (dsigma, delta) in enumerate(zip(acts, deltas, strict=True)):
                    Xr, yr = X[: delta * d], y[: delta * d]
                    G = np.asarray(dsigma(Xr @ Ws[r].T), dtype=np.float32) * yr[:, None]
                    W = Ws[r] + (eta_bar / len(yr)) * b * (G.T @ Xr)
                    Ws[r] = W / np.linalg.norm(W, axis=1, keepdims=True)
                    out[i, j, r, t] = np.mean((Ws[r] @ W_star.T) ** 2, axis=0)
    return out




def staircase_runs_in_law(dims, seeds: int, steps: int = 3, rng=None, p: int = 128,
                          eta_bar: float = 2.0, activation: str = "cubic", delta: int = 32,
                          first: int = 0) -> np.ndarray:
    r""":func:`staircase_runs` for one network, each fresh batch drawn in distribution.

    The same protocol and law as :func:`staircase_runs` with ``runs=((activation, delta),)``,
    for less. A fresh batch :math:`X` (:math:`n=\delta d` rows) is independent
    of the network, so with :math:`Q` an orthonormal basis (:math:`d\times k`,
    :math:`k=\min(d, 3+p)`) of the span of the directions and of the rows of :math:`W_t`:
    :math:`U=XQ` has i.i.d. :math:`N(0,1)` entries, the labels and :math:`G=\sigma'(XW_t^\top)
    \odot y` depend on :math:`X` through :math:`U` alone, and the rest of the update,
    :math:`G^\top X(I-QQ^\top)`, is given :math:`U` a Gaussian matrix in the complement of
    :math:`Q` whose rows :math:`i, j` have cross-covariance :math:`(G^\top G)_{ij}
    (I-QQ^\top)`: it is drawn as
    :math:`L\,Z(I-QQ^\top)` with :math:`LL^\top=G^\top G` and :math:`Z` a :math:`p\times d`
    Gaussian matrix (no rest when :math:`3+p\ge d`). So a step draws :math:`nk` numbers, plus
    :math:`pd` when :math:`k<d`, instead of :math:`nd`, and its products are :math:`n\times k`
    instead of :math:`n\times d`: a third of the cost at :math:`d=512`, :math:`p=128`, none
    saved when :math:`k=d` (exact in law, not draw by
    draw: seed ``s`` uses the stream ``V.stream(rng, d, s)`` for the directions and the
    network, as :func:`staircase_runs`, then for the projections).

    Parameters
    ----------
    dims : sequence of int
    seeds, steps, p, delta : int
    rng : Generator, int or None
    eta_bar : float
    activation : {"cubic", "relu"}
    first : int
        Index of the first seed.

    Returns
    -------
    ndarray (seeds, len(dims), 1, steps, 3)
        As :func:`staircase_runs` for its one network.
    """
    seeds, steps = V.positive_int(seeds, "seeds"), V.positive_int(steps, "steps")
    first = V.positive_int(first, "first", minimum=0)
    dims, p = V.sizes(dims, "dims", minimum=3), V.positive_int(p, "p")
    eta_bar, delta = V.positive_float(eta_bar, "eta_bar"), V.positive_int(delta, "delta")
    rng, target = V.generator(rng), staircase(3)
    dsigma = get_activation(CUBIC if activation == "cubic" else activation).dsigma
    out = np.zeros((seeds, len(dims), 1, steps, 3))
    for i, s in enumerate(range(first, first + seeds)):
        for j, d in enumerate(dims):
            gen = V.stream(rng, d, s)
            W_star = random_orthonormal(3, d, gen)
            W0, a0 = init_network(p, d, gen)
            b = np.sign(a0)[:, None]
            W = W0 / np.linalg.norm(W0, axis=1, keepdims=True)
            for t in range(steps):
                W = _step_in_law(W, W_star, b, delta * d, eta_bar, dsigma, target, gen)
                out[i, j, 0, t] = np.mean((W @ W_star.T) ** 2, axis=0)
    return out


def _step_in_law(W, W_star, b, n, eta_bar, dsigma, target, gen):
    """One step of :func:`staircase_runs_in_law`: the fresh batch through its law."""
    Q = np.linalg.qr(np.vstack([W_star, W]).T)[0]            # d x k, k = 3 + p
    U = gen.standard_normal((n, Q.shape[1]), dtype=np.float32)  # the batch's projections
    y = target(U @ (Q.T @ W_star.T).astype(np.float32)).astype(np.float32)
    G = np.asarray(dsigma(U @ (Q.T @ W.T).astype(np.float32)), dtype=np.float32) * y[:, None]
    update = (G.T @ U) @ Q.T
    if Q.shape[1] < W.shape[1]:  # the complement of the span (none when 3 + p >= d)
        update += _rest_in_law(G, Q, gen)
    W = W + (eta_bar / n) * b * update
    return W / np.linalg.norm(W, axis=1, keepdims=True)


def _rest_in_law(G, Q, gen):
    r""":math:`G^\top X(I-QQ^\top)` in law for a Gaussian :math:`X` independent of :math:`G`:
    :math:`LZ(I-QQ^\top)` with :math:`LL^\top=G^\top G`, :math:`Z` Gaussian (p, d); rows
    :math:`i, j` have cross-covariance :math:`(G^\top G)_{ij}(I-QQ^\top)`."""
    Z = gen.standard_normal((G.shape[1], Q.shape[0]))
    return np.linalg.cholesky((G.T @ G).astype(float)) @ (Z - (Z @ Q) @ Q.T)


class BarrierRuns(NamedTuple):
    """Outcome of :func:`barrier_runs`: (seeds, len(dims), steps, 3) arrays of
    :func:`fresh_steps_sweep` in the basis :math:`(s, t)` of the two directions.

    ``symmetric`` for :func:`~lecnotes.giant_steps.theory.symmetric_target`, ``asymmetric``
    for :func:`~lecnotes.giant_steps.theory.asymmetric_target` (both
    :func:`~lecnotes.giant_steps.theory.rotated`); the last axis holds the mean
    :math:`\\cos^2` with :math:`s`, with :math:`t` and the norm ratio.
    """

    symmetric: np.ndarray
    asymmetric: np.ndarray


def barrier_runs(dims, steps: int = 4, seeds_symmetric: int = 4, seeds_asymmetric: int = 10,
                 rng=None) -> BarrierRuns:
    r"""The symmetric barrier of {prf:ref}`thm-ch6-staircase`: fresh steps on two targets.

    :func:`fresh_steps_sweep` with the paper's protocol (square loss, ReLU, :math:`b_i=\pm1`,
    :math:`n = 8d`, :math:`ar\eta = 2`, :math:`p = 128`) on the symmetric and the
    asymmetric two-direction target, both from the same ``rng`` (streams keyed by
    :math:`(d, s)`: the two targets see the same directions, networks and batches).

    Parameters
    ----------
    dims : sequence of int
    steps, seeds_symmetric, seeds_asymmetric : int
    rng : Generator, int or None

    Returns
    -------
    BarrierRuns
    """
    dims, steps = V.sizes(dims, "dims", minimum=2), V.positive_int(steps, "steps")
    seeds_symmetric = V.positive_int(seeds_symmetric, "seeds_symmetric")
    seeds_asymmetric = V.positive_int(seeds_asymmetric, "seeds_asymmetric")
    sym, asym = rotated(symmetric_target), rotated(asymmetric_target)
    return BarrierRuns(fresh_steps_sweep(sym, 2, dims, steps, seeds_symmetric, rng=rng),
                       fresh_steps_sweep(asym, 2, dims, steps, seeds_asymmetric, rng=rng))


class Leap2ManySteps(NamedTuple):
    """Outcome of :func:`leap2_many_steps`.

    ``curves`` (seeds, len(dims), steps) mean :math:`\\cos^2` after each step; ``tau`` (seeds,
    len(dims)) the first step reaching ``level``
    (:func:`~lecnotes.giant_steps.theory.steps_to_level`); ``growth`` the early growth factor
    per step of the mean :math:`\\cos^2` at the largest dimension (geometric mean over its
    first three steps and the seeds); ``per_doubling`` (seeds,) the slope of ``tau`` in
    :math:`\\log_2 d`.
    """

    curves: np.ndarray
    tau: np.ndarray
    growth: float
    per_doubling: np.ndarray


def leap2_many_steps(dims, steps: int = 10, seeds: int = 10, level: float = 0.2,
                     rng=None) -> Leap2ManySteps:
    r"""Leap 2 with many steps of :math:`n = 8d`: how many steps the direction needs.

    :func:`fresh_steps_sweep` on :math:`\mathrm{He}_2(z)/\sqrt2`
    (:data:`lecnotes.giant_steps.theory.h2`) with the paper's protocol; the early phase
    multiplies the squared overlap by a factor :math:`r^2` per step from :math:`1/d`, so
    reaching a fixed level takes :math:`\log d/\log r^2` steps ({prf:ref}`thm-ch6-leap`).

    Parameters
    ----------
    dims : sequence of int
        At least two dimensions.
    steps, seeds : int
    level : float
        In (0, 1).
    rng : Generator, int or None

    Returns
    -------
    Leap2ManySteps
    """
    dims = V.sizes(dims, "dims", minimum=2)
    if len(dims) < 2:
        raise ValueError("dims must hold at least two dimensions (a slope in log d)")
    steps = V.positive_int(steps, "steps", minimum=3)
    level = V.positive_float(level, "level")
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    curves = fresh_steps_sweep(lambda Z: h2(Z[:, 0]), 1, dims, steps, seeds, rng=rng)[..., 0]
    tau = steps_to_level(curves, level=level)
    growth = float(np.exp(np.mean(np.diff(np.log(curves[:, -1, :3]), axis=1))))
    per_doubling = np.array([np.polyfit(np.log2(dims), row, 1)[0] for row in tau])
    return Leap2ManySteps(curves, tau, growth, per_doubling)
