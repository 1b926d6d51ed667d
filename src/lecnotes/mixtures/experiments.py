r"""Simulations of chapter 11: ridge and least squares on mixtures, and one giant step.

Seeds on axis 0; the data of size ``d`` and seed ``s`` of a model come from
``validate.stream(rng, d, s)``, so adding a size or a seed changes no other draw. The mixture
and its matched Gaussian are drawn from the same stream (the same within-cluster noise, only
the cluster variable differs), which pairs them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import eigsh
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.mixtures.amp import check_k, check_rho, sample_sparse_gmm, subspace_overlap
from lecnotes.mixtures.ridge import TARGETS, Mixture, label_moments
from lecnotes.mixtures.sparse import amp_lams
from lecnotes.mixtures.thresholds import realised_pca_overlap, subspace_cosine

__all__ = ["sample", "RidgeRun", "ridge_fit", "RidgeSweep", "ridge_sweep", "AMPSweep",
           "amp_sweep", "at_record", "join_sizes", "PCASweep", "pca_sweep"]


def _check_model(model):
    if not isinstance(model, Mixture):
        raise TypeError(f"model must be a Mixture, got {type(model).__name__}")
    return model


def sample(model, n, d, rng=None):
    r"""Draw :math:`n` samples of a mixture ({prf:ref}`def-ch11-means`,
    {prf:ref}`def-ch11-scales`), :math:`\wstar = e_1`.

    Parameters
    ----------
    model : Mixture
        The data law.
    n, d : int
        Samples and dimension (d >= 2).
    rng : Generator, int or None
        Random state (SPEC 7).

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    """
    model = _check_model(model)
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d", minimum=2)
    rng = V.generator(rng)
    Z = rng.standard_normal((n, d))
    latent = rng.standard_normal(n)  # the cluster variable: its sign, or itself (Gaussian)
    xi = rng.standard_normal(n)
    if model.kind == "means":
        c = latent if model.gaussian else np.sign(latent)
        X = Z
        X[:, 0] += c * model.m * np.cos(model.theta)
        X[:, 1] += c * model.m * np.sin(model.theta)
        y = TARGETS[model.target](X[:, 0]) + model.noise * xi
        return X, y
    taus, w = np.array(model.taus), np.array(model.weights)
    if model.gaussian:
        scale = np.full(n, np.sqrt(model.tau_bar))
    else:  # cluster by the quantile of the latent Gaussian (one draw per sample)
        u = ndtr(latent)
        cl = np.minimum(np.searchsorted(np.cumsum(w), u), len(w) - 1)
        scale = np.sqrt(taus[cl])
    X = Z * scale[:, None]
    return X, X[:, 0] + model.noise * xi


class RidgeRun(NamedTuple):
    """Errors of one fit ({prf:ref}`thm-ch11-lowrank`, {prf:ref}`thm-ch11-scales`)."""

    train: float
    test: float


def _test_error(model, w):
    """Exact population test error of the linear predictor w under ``model``."""
    if model.kind == "scales":
        return model.tau_bar * ((w[0] - 1) ** 2 + np.sum(w[1:] ** 2)) + model.noise**2
    C, b, y2 = label_moments(model)
    a = w[:2]
    return y2 - 2 * a @ b + a @ C @ a + np.sum(w[2:] ** 2)


def ridge_fit(X, y, lam, model):
    r"""Ridge :math:`\hat w = (X^\top X/n + \lambda)^{-1}X^\top y/n` (least squares at
    :math:`\lambda = 0`) and its training and exact test errors under ``model``
    ({prf:ref}`def-ch11-ridge`).

    Parameters
    ----------
    X : ndarray (n, d)
    y : ndarray (n,)
    lam : float
        Ridge, >= 0 (0 needs n > d).
    model : Mixture
        The law of the data, for the test error.

    Returns
    -------
    RidgeRun
    """
    X, y = V.data_pair(X, y)
    lam = V.nonneg_float(lam, "lam")
    model = _check_model(model)
    n, d = X.shape
    if lam == 0 and n <= d:
        raise ValueError("least squares (lam = 0) needs more samples than dimensions")
    w = np.linalg.solve(X.T @ X / n + lam * np.eye(d), X.T @ y / n)
    return RidgeRun(float(np.mean((y - X @ w) ** 2)), float(_test_error(model, w)))


class RidgeSweep(NamedTuple):
    """Errors over seeds and sizes: arrays (seeds, dims) keyed by ridge value."""

    dims: np.ndarray
    lams: tuple
    train: dict
    """lam -> (seeds, dims)."""
    test: dict
    """lam -> (seeds, dims)."""


def ridge_sweep(model, dims, alpha, lams, seeds, rng=None) -> RidgeSweep:
    r"""Ridge at every :math:`\lambda` of ``lams`` on the same data, :math:`n = \alpha d`,
    over ``seeds`` and ``dims`` ({prf:ref}`def-ch11-ridge`).

    Parameters
    ----------
    model : Mixture
        The data law.
    dims : sequence of int
        Dimensions.
    alpha : float
        Samples per dimension.
    lams : sequence of float
        Ridge values (0: least squares, needs alpha > 1).
    seeds : int
        Number of seeds.
    rng : Generator, int or None
        Parent random state; stream ``(d, s)`` per size and seed.

    Returns
    -------
    RidgeSweep
    """
    model = _check_model(model)
    dims = np.array([V.positive_int(int(d) if float(d).is_integer() else d, "dims", minimum=2)
                     for d in np.atleast_1d(dims)])
    alpha = V.positive_float(alpha, "alpha")
    lams = tuple(V.nonneg_float(lam, "lams") for lam in np.atleast_1d(lams))
    seeds = V.positive_int(seeds, "seeds")
    train = {lam: np.zeros((seeds, dims.size)) for lam in lams}
    test = {lam: np.zeros((seeds, dims.size)) for lam in lams}
    for j, d in enumerate(dims):
        n = int(round(alpha * d))
        for s in range(seeds):
            X, y = sample(model, n, int(d), rng=V.stream(rng, int(d), s))
            for lam in lams:
                r = ridge_fit(X, y, lam, model)
                train[lam][s, j], test[lam][s, j] = r
    return RidgeSweep(dims, lams, train, test)


class AMPSweep(NamedTuple):
    """Final AMP overlaps over seeds, sizes and signal strengths ({prf:ref}`alg-ch11-amp`)."""

    dims: np.ndarray
    lams: np.ndarray
    uninformed: np.ndarray
    """(seeds, dims, lams): start from a side channel of precision ``eps``."""
    informed: np.ndarray
    """(seeds, dims, lams): start from the side channel of precision 1."""
    start: np.ndarray
    """(seeds, dims, lams): overlap of the uninformed start (chance, at finite d)."""
    trace: dict | None = None
    """``{"uninformed": ..., "informed": ...}``, each (len(record), seeds, dims, lams): the
    overlaps of the same runs after the iterations of ``record`` (None without ``record``)."""


def amp_sweep(dims, lams, seeds, k, rho, alpha, iterations=40, eps=1e-3, informed=False,
              rng=None, record=()) -> AMPSweep:
    r"""AMP on the sparse k-cluster mixture ({prf:ref}`def-ch11-sparse-gmm`) at every size,
    signal strength and seed, from an almost uninformed and an informed start. The noise,
    assignments and means of size ``d`` and seed ``s`` come from stream ``(d, s)`` and are
    shared by all ``lams`` (only the signal's strength changes: paired curves).

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    lams : sequence of float
        Signal-to-noise ratios, > 0.
    seeds : int
        Seeds.
    k : int
        Clusters.
    rho : float
        Density of the means.
    alpha : float
        Samples per dimension.
    iterations : int
        AMP iterations.
    eps : float
        Precision of the uninformed start's side channel.
    informed : bool
        Also run from the informed start (otherwise ``informed`` holds NaN).
    rng : Generator, int or None
        Parent random state.
    record : sequence of int
        Iterations (at most ``iterations``) after which the overlaps are also kept
        (``trace``): the same runs at earlier times.

    Returns
    -------
    AMPSweep
    """
    dims = np.array([V.positive_int(int(d) if float(d).is_integer() else d, "dims", minimum=2)
                     for d in np.atleast_1d(dims)])
    lams = np.array([V.positive_float(lam, "lams") for lam in np.atleast_1d(lams)])
    seeds = V.positive_int(seeds, "seeds")
    k, rho, alpha = check_k(k), check_rho(rho), V.positive_float(alpha, "alpha")
    record = tuple(V.positive_int(t, "record") for t in record)
    if not isinstance(informed, bool):
        raise TypeError("informed must be a bool")
    out = {key: np.full((seeds, dims.size, lams.size), np.nan) for key in ("u", "i", "0")}
    keys = ("u", "i") if informed else ("u",)
    L = lams.size
    trace = {key: np.full((len(record), seeds, dims.size, L), np.nan) for key in ("u", "i")}
    for j, d in enumerate(dims):
        n = int(round(alpha * d))
        for s in range(seeds):
            r = V.stream(rng, int(d), s)
            X0, U, Vm = sample_sparse_gmm(n, int(d), k, rho, 0.0, rng=r)
            # amp() on X0 + sqrt(lam / d) U Vm^T for all lams and both starts at once
            gens = [V.stream(r, i, ord(key)) for key in keys for i in range(L)]
            Vh, V0, *Vt = amp_lams(X0, U, Vm, np.tile(lams, len(keys)), rho, iterations,
                                   [eps] * L + [1.0] * L * (len(keys) - 1), gens, starts=True,
                                   record=record)
            for c, key in enumerate(keys):
                out[key][s, j] = [subspace_overlap(v, Vm) for v in Vh[c * L:(c + 1) * L]]
                for m, Vr in enumerate(Vt[0] if record else []):
                    trace[key][m, s, j] = [subspace_overlap(v, Vm) for v in Vr[c * L:(c + 1) * L]]
            out["0"][s, j] = [subspace_overlap(v, Vm) for v in V0[:L]]
    trace = {"uninformed": trace["u"], "informed": trace["i"]} if record else None
    return AMPSweep(dims, lams, out["u"], out["i"], out["0"], trace)


def at_record(sweep, m) -> AMPSweep:
    """The runs of an :class:`AMPSweep` seen after the ``m``-th recorded iteration.

    Parameters
    ----------
    sweep : AMPSweep
        From :func:`amp_sweep` with ``record``.
    m : int
        Index into its ``record``.

    Returns
    -------
    AMPSweep
        The same sweep with ``uninformed`` and ``informed`` taken from its trace (no trace).
    """
    if not isinstance(sweep, AMPSweep) or sweep.trace is None:
        raise ValueError("sweep must be an AMPSweep from amp_sweep(..., record=...)")
    return sweep._replace(uninformed=sweep.trace["uninformed"][m],
                          informed=sweep.trace["informed"][m], trace=None)


def join_sizes(*sweeps) -> AMPSweep:
    """Sweeps at the same signal strengths and different sizes, as one (sizes in the order
    given; traces dropped).

    Parameters
    ----------
    *sweeps : AMPSweep
        With equal ``lams`` and seeds.

    Returns
    -------
    AMPSweep
    """
    if not sweeps or not all(isinstance(s, AMPSweep) for s in sweeps):
        raise ValueError("join_sizes takes AMPSweeps")
    if any(not np.array_equal(s.lams, sweeps[0].lams) for s in sweeps):
        raise ValueError("the sweeps must share their signal strengths")
    runs = [np.concatenate([getattr(s, key) for s in sweeps], axis=1)
            for key in ("uninformed", "informed", "start")]
    return AMPSweep(np.concatenate([s.dims for s in sweeps]), sweeps[0].lams, *runs)


class PCASweep(NamedTuple):
    """PCA on the sparse mixture over seeds, sizes and signal strengths
    ({prf:ref}`prop-ch11-pca`): arrays (seeds, dims, lams)."""

    cos2: np.ndarray
    """The measured mean squared cosine with the span of the centred means."""
    realised: np.ndarray
    """The limit at the draw's own spikes
    (:func:`~lecnotes.mixtures.thresholds.realised_pca_overlap`)."""
    realised_k1: np.ndarray
    r"""The same with the spikes :math:`\lambda/(k-1)` (a competing normalisation)."""


def pca_sweep(dims, lams, seeds, k, rho, alpha, rng=None) -> PCASweep:
    r"""PCA on the data of :func:`amp_sweep` (the same streams, so the same data): the mean
    squared cosine between the top :math:`k-1` eigenvectors of :math:`X^\top X/n` (Lanczos)
    and the span of the centred means ({prf:ref}`prop-ch11-pca`), beside its limit at the
    draw's own spikes.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    lams : sequence of float
        Signal-to-noise ratios, > 0.
    seeds : int
        Seeds.
    k : int
        Clusters.
    rho : float
        Density of the means.
    alpha : float
        Samples per dimension.
    rng : Generator, int or None
        Parent random state (as for :func:`amp_sweep`).

    Returns
    -------
    PCASweep
    """
    dims = np.array([V.positive_int(int(d) if float(d).is_integer() else d, "dims", minimum=2)
                     for d in np.atleast_1d(dims)])
    lams = np.array([V.positive_float(lam, "lams") for lam in np.atleast_1d(lams)])
    seeds = V.positive_int(seeds, "seeds")
    k, rho, alpha = check_k(k), check_rho(rho), V.positive_float(alpha, "alpha")
    out = np.zeros((3, seeds, dims.size, lams.size))
    for j, d in enumerate(dims):
        n = int(round(alpha * d))
        for s in range(seeds):
            X0, U, Vm = sample_sparse_gmm(n, int(d), k, rho, 0.0, rng=V.stream(rng, int(d), s))
            G0 = X0.T @ X0 / n
            W = X0.T @ U / (n * np.sqrt(d))  # X0^T S / n = W Vm^T for the signal S
            SS = Vm @ (U.T @ U / (n * d)) @ Vm.T
            for i, lam in enumerate(lams):
                cross = np.sqrt(lam) * W @ Vm.T
                C = G0 + cross + cross.T + lam * SS
                E = eigsh(C, k=k - 1, which="LA", v0=np.ones(int(d)))[1]
                out[:, s, j, i] = (subspace_cosine(E, Vm),
                                   realised_pca_overlap(Vm, lam, alpha),
                                   realised_pca_overlap(Vm, lam, alpha, divisor=k - 1))
    return PCASweep(*out)
