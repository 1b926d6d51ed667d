r"""Chapter 4: optimal preprocessings for a general link, the edge below the threshold, and the
spectral estimator as the initialisation of gradient descent.

The general forms of the optimal preprocessings through :math:`z(y)=\mathbb E[G^2\mid Y=y]`
(:func:`second_moment_z`, :func:`threshold_optimal`, :func:`overlap_optimal`), a matrix-free
sweep of the top eigenpair of :math:`D_T` at one ratio up to :math:`d` of a few thousand
(:func:`edge_sweep`), and spectral initialisation followed by gradient descent for noiseless
phase retrieval (:func:`spectral_then_descent`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse.linalg as spla

from . import _validate as V
from .conditional_hermite import conditional_hermite, conditional_hermite_norms
from .linalg import lanczos_start
from .preprocessing import label_weights
from .targets import get_link

__all__ = [
    "second_moment_z",
    "weak_recovery_ratio",
    "threshold_optimal",
    "overlap_optimal",
    "EdgeSweep",
    "edge_sweep",
    "DescentResult",
    "spectral_then_descent",
]


def second_moment_z(link):
    r"""The function :math:`z(y)=\mathbb E[G^2\mid Y=y]=1+\sqrt2\,\zeta_2(y)` of a link.

    Chapter 4, {prf:ref}`thm-ch4-optimal-general`; :math:`\zeta_2` is the conditional Hermite
    function of chapter 2 (:func:`lecnotes.conditional_hermite.conditional_hermite`).

    Parameters
    ----------
    link : str or callable
        A noiseless link.

    Returns
    -------
    callable
        ``z(y)`` for array-like ``y``.
    """
    zeta2 = conditional_hermite(link, 2)
    return lambda y: 1.0 + np.sqrt(2.0) * zeta2(np.asarray(y, dtype=float))


def weak_recovery_ratio(link) -> float:
    r"""The weak-recovery ratio :math:`\delta_u=1/\mathbb E[(z(Y)-1)^2]` ({eq}`eq-ch4-delta-u`).

    Equal to :math:`1/(2\,\mathbb E[\zeta_2(Y)^2])`.

    Parameters
    ----------
    link : str or callable

    Returns
    -------
    float
        ``inf`` when :math:`\zeta_2\equiv0` (no second-order signal).
    """
    q = float(conditional_hermite_norms(link, 2)[1])
    return np.inf if q <= 0 else 1.0 / (2.0 * q)


def threshold_optimal(link, delta):
    r"""Threshold-optimal preprocessing :math:`T^\star_\delta=(z-1)/(z-1+\sqrt{\delta/\delta_u})`.

    The equality case of {prf:ref}`prop-threshold` for a general link
    ({prf:ref}`thm-ch4-optimal-general`); for phase retrieval, :math:`z(y)=y` and
    :math:`\delta_u=1/2`, it is the Mondelli-Montanari :math:`T_\delta`.

    Parameters
    ----------
    link : str or callable
    delta : float
        Sample ratio, :math:`>\delta_u` (so that the denominator stays positive).

    Returns
    -------
    callable
        ``T(y)``; where :math:`\zeta_2` is not computable (``NaN``: a label so far in the
        tail that its conditional law underflows) the limit 1 of :math:`z\to\infty`.
    """
    delta = V.positive_float(delta, "delta")
    du = weak_recovery_ratio(link)
    if not delta > du:
        raise ValueError(f"threshold_optimal needs delta > delta_u = {du:.6g}, got {delta}")
    z, c = second_moment_z(link), np.sqrt(delta / du)

    def T(y):
        zy = z(y)
        return np.where(np.isnan(zy), 1.0, (zy - 1.0) / (zy - 1.0 + c))

    return T


def overlap_optimal(link):
    r"""Overlap-optimal preprocessing :math:`T^\star=1-1/z(y)` (Luo-Alghamdi-Lu), any link.

    {prf:ref}`thm-ch4-optimal-general`; for phase retrieval it is :math:`1-1/y`.

    Parameters
    ----------
    link : str or callable

    Returns
    -------
    callable
        ``T(y)`` (``-inf`` where :math:`z(y)=0`; the limit 1 where :math:`\zeta_2` is
        ``NaN``, as in :func:`threshold_optimal`).
    """
    z = second_moment_z(link)

    def T(y):
        zy = z(y)
        with np.errstate(divide="ignore"):
            return np.where(np.isnan(zy), 1.0, 1.0 - 1.0 / zy)

    return T


class EdgeSweep(NamedTuple):
    """Top eigenpair of :math:`D_T` at one ratio over dimensions and seeds (:func:`edge_sweep`).

    Arrays of shape (seeds, len(dims)): the top eigenvalue, the squared overlap, the largest
    squared alignment :math:`\\max_i\\langle\\hat w,x_i\\rangle^2/\\|x_i\\|^2` with a single
    sample and the label of that sample.
    """

    dims: np.ndarray
    top: np.ndarray
    rho2: np.ndarray
    align: np.ndarray
    label: np.ndarray


def edge_sweep(delta, dims, seeds, T, link="quadratic", rng=None) -> EdgeSweep:
    r"""Matrix-free top eigenpair of :math:`D_T` ({eq}`eq-ch4-dt`) at one ratio, large ``d``.

    For the edge below the threshold ({prf:ref}`thm-spectral-asymptotics`): Lanczos
    (:func:`scipy.sparse.linalg.eigsh`, relative tolerance :math:`10^{-6}`) on
    :math:`v\mapsto X^\top(T(y)\odot Xv)/n`, :math:`w_\star=e_1`.

    Parameters
    ----------
    delta : float
    dims : sequence of int
    seeds : int
    T : callable
        A fixed preprocessing.
    link : str or callable
    rng : Generator, int or None
        Seed ``s`` of dimension ``d`` uses ``V.stream(rng, d, s)``.

    Returns
    -------
    EdgeSweep
    """
    delta = V.positive_float(delta, "delta")
    dims = np.array([V.positive_int(d, "d", minimum=2) for d in dims])
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    base = V.generator(rng)
    out = {k: np.empty((seeds, dims.size)) for k in ("top", "rho2", "align", "label")}
    for j, d in enumerate(dims):
        n = max(2, int(round(delta * d)))
        for s in range(seeds):
            X = V.stream(base, int(d), s).standard_normal((n, int(d)))
            y = np.asarray(phi(X[:, 0]), dtype=float)
            t = label_weights(y, T, None)
            op = spla.LinearOperator(
                (d, d), matvec=lambda v, X=X, t=t, n=n: X.T @ (t * (X @ v)) / n, dtype=float)
            val, vec = spla.eigsh(op, k=1, which="LA", tol=1e-6, ncv=40, maxiter=5000,
                                  v0=lanczos_start(int(d)))
            v = vec[:, 0]
            a = (X @ v) ** 2 / np.einsum("ij,ij->i", X, X)
            i = int(np.argmax(a))
            out["top"][s, j], out["rho2"][s, j] = val[0], v[0] ** 2
            out["align"][s, j], out["label"][s, j] = a[i], y[i]
    return EdgeSweep(dims, out["top"], out["rho2"], out["align"], out["label"])


class DescentResult(NamedTuple):
    """Spectral initialisation then gradient descent (:func:`spectral_then_descent`).

    ``init`` and ``final``: squared overlap of the initialisation and of the last iterate;
    ``error``: :math:`\\min_\\pm\\|w\\pm w_\\star\\|/\\|w_\\star\\|` at the last iterate; arrays
    over seeds. ``path``: the mean over seeds of the error after each step.
    """

    init: np.ndarray
    final: np.ndarray
    error: np.ndarray
    path: np.ndarray


def spectral_then_descent(d, delta, seeds, T, steps: int = 300, step: float = 0.2,
                          start: str = "spectral", rng=None) -> DescentResult:
    r"""Noiseless phase retrieval: spectral initialisation, then gradient descent.

    Chapter 4, {ref}`sec-ch4-initialisation`. Labels :math:`y_i=\langle w_\star,x_i\rangle^2`
    with :math:`w_\star=e_1`; the start is the top eigenvector of :math:`D_T` scaled to the
    norm :math:`\sqrt{\bar y}` (``start="spectral"``) or a uniformly random direction with
    the same norm (``start="random"``); then ``steps`` steps of gradient descent with step
    ``step`` on :math:`f(w)=\frac1{4n}\sum_i(\langle w,x_i\rangle^2-y_i)^2`, whose gradient is
    :math:`\frac1n\sum_i(\langle w,x_i\rangle^2-y_i)\langle w,x_i\rangle x_i`.

    Parameters
    ----------
    d : int
    delta : float
        :math:`n/d`.
    seeds : int
    T : callable
        Preprocessing of the spectral start.
    steps : int
    step : float
        Step size, in units of :math:`1/\bar y`.
    start : {"spectral", "random"}
    rng : Generator, int or None
        Seed ``s`` uses ``V.stream(rng, s)`` (the same data for both starts).

    Returns
    -------
    DescentResult
    """
    d = V.positive_int(d, "d", minimum=2)
    delta = V.positive_float(delta, "delta")
    seeds = V.positive_int(seeds, "seeds")
    steps = V.positive_int(steps, "steps")
    step = V.positive_float(step, "step")
    if start not in ("spectral", "random"):
        raise ValueError(f"start must be 'spectral' or 'random', got {start!r}")
    n = max(2, int(round(delta * d)))
    base = V.generator(rng)
    init, final, error = np.empty(seeds), np.empty(seeds), np.empty(seeds)
    path = np.zeros(steps)
    for s in range(seeds):
        gen = V.stream(base, s)
        X = gen.standard_normal((n, d))
        y = X[:, 0] ** 2
        scale = np.sqrt(np.mean(y))
        if start == "spectral":
            t = label_weights(y, T, None)
            op = spla.LinearOperator((d, d), matvec=lambda v, X=X, t=t: X.T @ (t * (X @ v)) / n,
                                     dtype=float)
            w = spla.eigsh(op, k=1, which="LA", tol=1e-8, ncv=40, v0=lanczos_start(d))[1][:, 0]
        else:
            w = gen.standard_normal(d)
        w = scale * w / np.linalg.norm(w)
        init[s] = w[0] ** 2 / (w @ w)
        eta = step / np.mean(y)
        for k in range(steps):
            u = X @ w
            w = w - eta * (X.T @ ((u * u - y) * u)) / n
            path[k] += min(np.hypot(w[0] - 1, np.linalg.norm(w[1:])),
                           np.hypot(w[0] + 1, np.linalg.norm(w[1:]))) / seeds
        final[s] = w[0] ** 2 / (w @ w)
        error[s] = min(np.hypot(w[0] - 1, np.linalg.norm(w[1:])),
                       np.hypot(w[0] + 1, np.linalg.norm(w[1:])))
    return DescentResult(init, final, error, path)
