r"""The shared-support model of the authors' code, simulated (chapter 11).

Two clusters with means :math:`\pm v` for one Gauss-Bernoulli vector :math:`v` (entries zero
with probability :math:`1-\rho`, else :math:`\N(0, 1/\rho)`), labels :math:`u = \pm1`:
:math:`X = \sqrt{\lambda/d}\,uv^\top + Z`, :math:`n = \alpha d` ({prf:ref}`def-ch11-shared`).
This is the model of github.com/lucpoisson/SubspaceClustering with :math:`\lambda =
\mathrm{snr}\,\rho`. Rank-one AMP, its scalar state evolution (by quadrature, no Monte
Carlo), the I-MMSE potential and :math:`\lambda_{\rm it}`, and PCA on the same draws.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.mixtures.amp import check_rho, sample_sparse_gmm, subspace_overlap
from lecnotes.mixtures.sparse import amp_lams

__all__ = ["sample_shared", "shared_denoiser", "m_u", "m_v", "shared_se", "shared_potential",
           "shared_lambda_it", "SharedRuns", "shared_runs", "independent_from_truth",
           "median_and_error"]

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(121)
_GH_W = _GH_W / _GH_W.sum()
_Z = np.linspace(-12.0, 12.0, 4801)  # a fine grid for the switch of the sparse posterior
_PHI = np.exp(-0.5 * _Z**2) * (_Z[1] - _Z[0]) / math.sqrt(2 * math.pi)


def sample_shared(n, d, rho, lam, rng=None, normalised=False, dtype=np.float64):
    r"""Draw the shared-support model {prf:ref}`def-ch11-shared`.

    Parameters
    ----------
    n, d : int
        Samples and dimension.
    rho : float
        Density of :math:`v`, in (0, 1].
    lam : float
        Signal strength :math:`\lambda = \mathrm{snr}\,\rho`, >= 0.
    rng : Generator, int or None
        Random state.
    normalised : bool
        Draw instead exactly ``round(rho d)`` non-zero entries and rescale :math:`v` to
        :math:`\lVert v\rVert^2 = d` (the authors' normalised instance): no fluctuation of
        the signal's strength from draw to draw.
    dtype : numpy dtype
        Of the noise and of ``X`` (``float32`` halves the cost of a simulation).

    Returns
    -------
    X : ndarray (n, d)
    u : ndarray (n,)
        The labels, +-1.
    v : ndarray (d,)
        The mean (:math:`\E v_j^2 = 1`).
    """
    n, d = V.positive_int(n, "n"), V.positive_int(d, "d")
    rho, lam, rng = check_rho(rho), V.nonneg_float(lam, "lam"), V.generator(rng)
    v = (rng.random(d) < rho) * rng.standard_normal(d) / math.sqrt(rho)
    if normalised:
        v = np.zeros(d)
        v[rng.choice(d, max(1, round(rho * d)), replace=False)] = rng.standard_normal(
            max(1, round(rho * d)))
        v *= math.sqrt(d) / np.linalg.norm(v)
    u = rng.choice([-1.0, 1.0], n)
    X = rng.standard_normal((n, d), dtype=dtype)
    X += (math.sqrt(lam / d) * np.outer(u, v)).astype(dtype)
    return X, u, v


def shared_denoiser(A, B, rho):
    r"""Posterior mean and variance of a Gauss-Bernoulli entry (zero w.p. :math:`1-\rho`,
    else :math:`\N(0, 1/\rho)`) given the channel :math:`\exp(Bv - Av^2/2)`.

    Parameters
    ----------
    A : float or ndarray
        Precision, >= 0 (an array broadcasts against ``B``: one precision per column).
    B : ndarray
        Fields.
    rho : float
        Density.

    Returns
    -------
    mean, var : ndarray
        Of the shape of ``B``.
    """
    B = np.asarray(B, dtype=float)
    s = np.asarray(A, dtype=float) + rho
    logit = (math.log(rho / (1 - rho)) + 0.5 * np.log(rho / s) + B**2 / (2 * s) if rho < 1
             else np.full(B.shape, np.inf))
    w = 1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700)))
    mean = w * B / s
    return mean, w * (1.0 / s + (B / s) ** 2) - mean**2


def m_u(q) -> float:
    r"""Overlap :math:`\E[\tanh(q + \sqrt q\,\xi)]` of the labels' Bayes estimate at precision
    ``q`` (Gauss-Hermite quadrature).

    Parameters
    ----------
    q : float
        Precision, >= 0.

    Returns
    -------
    float
    """
    return float(_GH_W @ np.tanh(q + math.sqrt(max(q, 0.0)) * _GH_X))


def m_v(h, rho) -> float:
    r"""Overlap :math:`\E[f_v\,v] = \E[f_v^2]` of the mean's Bayes estimate at precision ``h``
    (quadrature on a fine grid over the two branches of the prior).

    Parameters
    ----------
    h : float
        Precision, >= 0.
    rho : float
        Density.

    Returns
    -------
    float
    """
    if h <= 0:
        return 0.0
    out = 0.0
    for weight, var in ((1 - rho, h), (rho, h * h / rho + h)):
        if weight > 0:
            f, _ = shared_denoiser(h, _Z * math.sqrt(var), rho)
            out += weight * float(_PHI @ f**2)
    return out


def shared_se(rho, lam, alpha, iterations=200, mv0=1.0) -> np.ndarray:
    r"""Scalar state evolution :math:`m_u^t = m_u(\lambda m_v^t)`, :math:`m_v^{t+1} =
    m_v(\lambda\alpha m_u^t)` of rank-one AMP on {prf:ref}`def-ch11-shared`; linearised,
    :math:`m_v\mapsto\lambda^2\alpha m_v`, so :math:`\lambda_{\rm alg} = 1/\sqrt\alpha`.

    Parameters
    ----------
    rho, lam, alpha : float
        Density, signal strength, samples per dimension.
    iterations : int
        Iterations.
    mv0 : float
        Start (1: informed).

    Returns
    -------
    ndarray (iterations + 1,)
        :math:`m_v^t`.
    """
    mv = [float(mv0)]
    for _ in range(V.positive_int(iterations, "iterations")):
        mv.append(m_v(lam * alpha * m_u(lam * mv[-1]), rho))
    return np.array(mv)


def shared_potential(mv, rho, lam, alpha, n=120) -> float:
    r"""The I-MMSE potential :math:`\Phi = \frac12[\alpha\int_0^{\lambda m_v}m_u +
    \int_0^{\lambda\alpha m_u}m_v - \lambda\alpha m_um_v]` at :math:`m_u = m_u(\lambda m_v)`
    (the analogue of {eq}`eq-ch11-potential` for {prf:ref}`def-ch11-shared`).

    Parameters
    ----------
    mv : float
        Overlap of the mean.
    rho, lam, alpha : float
        Density, signal strength, samples per dimension.
    n : int
        Points of the Gauss-Legendre rules.

    Returns
    -------
    float
    """
    x, w = np.polynomial.legendre.leggauss(n)
    q = lam * mv
    mu = m_u(q)
    h = lam * alpha * mu
    iu = q / 2 * sum(wi * m_u(q / 2 * (xi + 1)) for xi, wi in zip(x, w, strict=True))
    iv = h / 2 * sum(wi * m_v(h / 2 * (xi + 1), rho) for xi, wi in zip(x, w, strict=True))
    return 0.5 * (alpha * iu + iv - lam * alpha * mu * mv)


def shared_lambda_it(rho, alpha, lo, hi, tol=1e-3):
    r""":math:`\lambda_{\rm it}` of {prf:ref}`def-ch11-shared`: the smallest :math:`\lambda`
    at which the informed fixed point has a positive potential, by bisection in
    ``[lo, hi]`` (as {prf:ref}`def-ch11-lambda-it`).

    Parameters
    ----------
    rho, alpha : float
        Density and samples per dimension.
    lo, hi : float
        A bracket: :math:`\Phi\le0` at ``lo``, :math:`>0` at ``hi``.
    tol : float
        Relative width at which to stop.

    Returns
    -------
    lam_it : float
    mv : float
        The informed fixed point's overlap at :math:`\lambda_{\rm it}`.
    """
    def phi(lam):
        mv = shared_se(rho, lam, alpha, 150)[-1]
        return (shared_potential(mv, rho, lam, alpha) if mv > 1e-6 else 0.0), mv

    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if phi(mid)[0] > 0 else (mid, hi)
    return hi, phi(hi)[1]


class SharedRuns(NamedTuple):
    """AMP and PCA on draws of {prf:ref}`def-ch11-shared` (seeds, sizes, strengths)."""

    dims: tuple
    lams: np.ndarray
    amp: np.ndarray
    """Overlap of AMP from the almost uninformed start after the iterations (S, D, L)."""
    informed: np.ndarray
    """Overlap of AMP from the informed start, the truth (S, D, L)."""
    pca: np.ndarray
    """Squared cosine of the top eigenvector of the sample covariance with v (S, D, L)."""


def _amp(X, v, rho, lam, iterations, eps, rng):
    """Rank-one AMP from a side channel of precision ``eps`` and from the truth at once (two
    columns, one pass over X per half-iteration, X in single precision); the overlaps."""
    n, d = X.shape
    b0 = v * eps + math.sqrt(eps) * rng.standard_normal(d)
    vh = np.stack([shared_denoiser(eps, b0, rho)[0], v], axis=1)
    var_v = np.stack([shared_denoiser(eps, b0, rho)[1], 0 * v], axis=1)
    X32 = X.astype(np.float32, copy=False)
    s, u_old = math.sqrt(lam / d), np.zeros((n, 2))
    for _ in range(iterations):
        u = np.tanh(s * (X32 @ vh.astype(np.float32)) - lam * u_old * var_v.mean(axis=0))
        bv = s * (X32.T @ u.astype(np.float32)) - lam * (n / d) * vh * (1 - u**2).mean(axis=0)
        vh, var_v = shared_denoiser(lam * np.sum(u * u, axis=0) / d, bv, rho)
        u_old = u
    return np.abs(v @ vh) / (v @ v)


def shared_runs(dims, lams, seeds, rho, alpha, iterations=30, eps=1e-3, pca_dims=(),
                rng=0) -> SharedRuns:
    r"""AMP ({prf:ref}`alg-ch11-amp` at rank one, priors :math:`\pm1` and Gauss-Bernoulli)
    from a side channel of precision ``eps`` and from the truth, and PCA, on the same
    normalised draws (``sample_shared(..., normalised=True)``).

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    lams : sequence of float
        Signal strengths.
    seeds : int
        Independent draws per (d, lambda).
    rho, alpha : float
        Density and samples per dimension.
    iterations : int
        AMP iterations.
    eps : float
        Precision of the side channel of the uninformed start.
    pca_dims : sequence of int
        The sizes at which PCA is run too (NaN elsewhere).
    rng : Generator, int or None
        Random state.

    Returns
    -------
    SharedRuns
    """
    dims, lams = tuple(int(d) for d in dims), np.asarray(lams, dtype=float)
    S = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)
    out = np.zeros((3, S, len(dims), len(lams)))
    for j, d in enumerate(dims):
        n = int(round(alpha * d))
        for i in range(S):
            for m, lam in enumerate(lams):
                X, _, v = sample_shared(n, d, rho, lam, rng, True, np.float32)
                out[0, i, j, m], out[1, i, j, m] = _amp(X, v, rho, lam, iterations, eps, rng)
                if d in pca_dims:
                    top = np.linalg.eigh((X.T @ X).astype(float))[1][:, -1]
                    out[2, i, j, m] = (top @ v) ** 2 / (v @ v)
                else:
                    out[2, i, j, m] = np.nan
    return SharedRuns(dims, lams, out[0], out[1], out[2])


def independent_from_truth(dims, lam, seeds, rho, alpha, iterations=30, eps=1e4, rng=0):
    r"""The competitor of the shared support: AMP on the sparse mixture with independent
    supports at :math:`k = 2` ({prf:ref}`def-ch11-sparse-gmm`), started next to the truth (a
    side channel of precision ``eps``), at the same :math:`\lambda/\lambda_{\rm alg}` as the
    shared model at ``lam / 2`` (its :math:`\lambda_{\rm alg} = 2/\sqrt\alpha`). The
    instances are normalised as the shared model's: the means are rescaled so that the
    centred mean :math:`(v_1 - v_2)/\sqrt2` has squared norm exactly :math:`d`, so the
    signal strength does not scatter over draws.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    lam : float
        Signal strength of the independent-support model (twice the shared model's).
    seeds : int
        Independent draws per size.
    rho, alpha : float
        Density and samples per dimension.
    iterations : int
        AMP iterations.
    eps : float
        Precision of the start's side channel (large: the start is the truth up to 1/eps).
    rng : Generator, int or None
        Random state: the draw of size ``d`` and seed ``s`` comes from stream ``(d, s)``.

    Returns
    -------
    ndarray (seeds, len(dims))
        The overlaps with the centred means after the iterations.
    """
    lam = V.positive_float(lam, "lam")
    S = V.positive_int(seeds, "seeds")
    out = np.zeros((S, len(dims)))
    for j, d in enumerate(int(x) for x in dims):
        for s in range(S):
            r = V.stream(rng, d, s)
            X0, U, Vm = sample_sparse_gmm(int(round(alpha * d)), d, 2, rho, 0.0, rng=r)
            Vm = Vm * math.sqrt(2 * d / np.sum((Vm[:, 0] - Vm[:, 1]) ** 2))
            Vh = amp_lams(X0, U, Vm, [lam], rho, iterations, eps, [V.stream(r, 0)])
            out[s, j] = subspace_overlap(Vh[0], Vm)
    return out


def median_and_error(values, n_boot=4000, rng=0):
    """The median over seeds and its bootstrap standard error (resampling the seeds): a level
    that a few seeds far from the rest (AMP runs that fell off a fixed point) do not move.

    Parameters
    ----------
    values : array_like (seeds,)
        One measurement per seed (at least three).
    n_boot : int
        Bootstrap resamples.
    rng : Generator, int or None
        Random state of the resampling.

    Returns
    -------
    float
        The median.
    float
        Its bootstrap standard error.
    """
    x = V.finite_array(values, "values", ndim=1)
    if x.size < 3:
        raise ValueError("at least three values are needed")
    idx = V.generator(rng).integers(0, x.size, (V.positive_int(n_boot, "n_boot"), x.size))
    return float(np.median(x)), float(np.std(np.median(x[idx], axis=1), ddof=1))
