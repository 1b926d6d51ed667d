r"""AMP and its state evolution for the sparse k-cluster mixture (chapter 11).

The model ({prf:ref}`def-ch11-sparse-gmm`): :math:`X = \sqrt{\lambda/d}\,U V^\top + Z\in
\R^{n\times d}`, :math:`n = \alpha d`, the rows of :math:`U` centred one-hot vectors
:math:`u_c = e_c - \mathbf 1/k` (uniform cluster :math:`c`), the rows of :math:`V\in\R^{d\times
k}` i.i.d. Gauss-Bernoulli entries (zero with probability :math:`1-\rho`, else
:math:`\N(0, 1/\rho)`), :math:`Z` standard Gaussian. AMP is the low-rank matrix estimation
algorithm of Lesieur, Krzakala and Zdeborova with the Bayes denoisers of the two priors
({prf:ref}`alg-ch11-amp`); its state evolution {eq}`eq-ch11-se` is evaluated by Monte Carlo
with a fixed sample (common random numbers, so that curves over :math:`\lambda` are smooth).
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V

__all__ = [
    "check_k",
    "check_rho",
    "centring",
    "cluster_denoiser",
    "sparse_denoiser",
    "sample_sparse_gmm",
    "AMPResult",
    "amp",
    "subspace_overlap",
    "SEState",
    "state_evolution",
    "free_entropy",
    "lambda_alg",
    "se_curve",
]


def check_k(k) -> int:
    """The number of clusters ``k`` of {prf:ref}`def-ch11-sparse-gmm`, checked.

    Parameters
    ----------
    k : int
        The number of clusters, at least 2.

    Returns
    -------
    int
    """
    return V.positive_int(k, "k", minimum=2)


def check_rho(rho) -> float:
    """The density ``rho`` of {prf:ref}`def-ch11-sparse-gmm`, checked.

    Parameters
    ----------
    rho : float
        The fraction of non-zero rows of the means, in (0, 1].

    Returns
    -------
    float
    """
    rho = V.positive_float(rho, "rho")
    if rho > 1:
        raise ValueError(f"rho must lie in (0, 1], got {rho}")
    return rho


def centring(k) -> np.ndarray:
    r"""The (k, k) matrix :math:`I - \mathbf 1\mathbf 1^\top/k` whose rows are the centred
    one-hot vectors :math:`u_c = e_c - \mathbf 1/k` of {prf:ref}`def-ch11-sparse-gmm`.

    Parameters
    ----------
    k : int
        The number of clusters.

    Returns
    -------
    ndarray (k, k)
    """
    return np.eye(k) - 1.0 / k


def cluster_denoiser(A, B):
    r"""Posterior mean and covariance of a centred one-hot vector :math:`u_c = e_c - \mathbf
    1/k`, uniform prior, given the Gaussian channel :math:`\exp(\ip Bu - u^\top Au/2)`
    ({eq}`eq-ch11-denoisers`).

    Parameters
    ----------
    A : ndarray (k, k)
        Symmetric precision of the channel.
    B : ndarray (m, k)
        Fields, one row per sample.

    Returns
    -------
    mean : ndarray (m, k)
    cov : ndarray (k, k)
        The posterior covariance averaged over the rows.
    """
    A = V.finite_array(A, "A", ndim=2)
    B = V.finite_array(B, "B", ndim=2)
    k = A.shape[0]
    if A.shape != (k, k) or B.shape[1] != k or k < 2 or B.shape[0] < 1:
        raise ValueError(f"A must be (k, k) with k >= 2 and B (m, k), got {A.shape}, {B.shape}")
    P = centring(k)  # row c is u_c
    logits = B @ P.T - 0.5 * np.einsum("ci,ij,cj->c", P, A, P)
    logits -= logits.max(axis=-1, keepdims=True)
    w = np.exp(logits)
    w /= w.sum(axis=-1, keepdims=True)
    mean = w @ P
    m = B.shape[0]
    cov = (P.T * w.mean(axis=0)) @ P - mean.T @ mean / m
    return mean, cov


_PATTERNS: dict = {}


def _patterns(k):
    if k not in _PATTERNS:
        _PATTERNS[k] = [np.array(s, dtype=bool) for s in itertools.product([0, 1], repeat=k)]
    return _PATTERNS[k]


def _support_masks(k):
    """The :math:`2^k` supports as rows of 0/1 floats (the order of :func:`_patterns`)."""
    return np.array(_patterns(k), dtype=float)


def sparse_denoiser(A, B, rho, log_z=False):
    r"""Posterior mean and covariance of a row :math:`v\in\R^k` of i.i.d. Gauss-Bernoulli
    entries (zero w.p. :math:`1-\rho`, else :math:`\N(0,1/\rho)`) given the channel
    :math:`\exp(\ip Bv - v^\top Av/2)`: a sum over the :math:`2^k` supports, each a Gaussian
    integral ({eq}`eq-ch11-denoisers`).

    Parameters
    ----------
    A : ndarray (k, k)
        Symmetric positive semi-definite precision.
    B : ndarray (m, k)
        Fields, one row per coordinate.
    rho : float
        Density of the non-zero entries, in (0, 1].
    log_z : bool
        Also return the log-partition function of each row.

    Returns
    -------
    mean : ndarray (m, k)
    cov : ndarray (k, k)
        The posterior covariance averaged over the rows.
    logz : ndarray (m,), only if ``log_z``
    """
    A = V.finite_array(A, "A", ndim=2)
    B = V.finite_array(B, "B", ndim=2)
    rho = check_rho(rho)
    if not isinstance(log_z, bool):
        raise TypeError("log_z must be a bool")
    k = A.shape[0]
    if A.shape != (k, k) or B.shape[1] != k:
        raise ValueError(f"A must be (k, k) and B (m, k), got {A.shape}, {B.shape}")
    m = B.shape[0]
    # every support S at once: Minv[p] is (A_SS + rho I)^{-1} embedded in k x k (zero off S),
    # const[p] the prior weight of S and the Gaussian normalisation
    # (all supports in one batch: A restricted to S plus rho I is block diagonal with rho off
    # S, so its inverse restricted to S and its log-determinant less (k - |S|) log rho are
    # those of A_SS + rho I)
    S = _support_masks(k)                                  # (patterns, k), 0 or 1
    s = S.sum(axis=1)
    full = S[:, :, None] * A * S[:, None, :] + rho * np.eye(k)
    Minv = S[:, :, None] * np.linalg.inv(full) * S[:, None, :]
    logdet = np.linalg.slogdet(full)[1] - (k - s) * math.log(rho)
    if rho < 1:
        const = s * math.log(rho) + (k - s) * math.log1p(-rho)
    else:
        const = np.where(s == k, 0.0, -np.inf)
    const = const + 0.5 * s * math.log(rho) - 0.5 * logdet
    mus = B @ Minv                                         # (patterns, m, k)
    L = const[:, None] + 0.5 * np.sum(mus * B, axis=2)     # (patterns, m)
    top = L.max(axis=0, keepdims=True)
    W = np.exp(L - top)
    Zs = W.sum(axis=0, keepdims=True)
    W /= Zs
    Wmu = W[:, :, None] * mus
    mean = Wmu.sum(axis=0)
    cov = (np.tensordot(W.mean(axis=1), Minv, axes=1)
           + np.sum(Wmu.transpose(0, 2, 1) @ mus, axis=0) / m - mean.T @ mean / m)
    if log_z:
        return mean, cov, (top + np.log(Zs))[0]
    return mean, cov


def sample_sparse_gmm(n, d, k, rho, lam, rng=None):
    r"""Draw the sparse k-cluster mixture {prf:ref}`def-ch11-sparse-gmm`.

    Parameters
    ----------
    n, d : int
        Samples and dimension.
    k : int
        Clusters, >= 2.
    rho : float
        Density of the means, in (0, 1].
    lam : float
        Signal-to-noise ratio, >= 0.
    rng : Generator, int or None
        Random state (SPEC 7).

    Returns
    -------
    X : ndarray (n, d)
    U : ndarray (n, k)
        Centred one-hot rows.
    Vm : ndarray (d, k)
        The means' columns (before the centring).
    """
    n, d, k = V.positive_int(n, "n"), V.positive_int(d, "d"), check_k(k)
    rho, lam = check_rho(rho), V.nonneg_float(lam, "lam")
    rng = V.generator(rng)
    Vm = (rng.random((d, k)) < rho) * rng.standard_normal((d, k)) / math.sqrt(rho)
    U = centring(k)[rng.integers(0, k, n)]
    X = math.sqrt(lam / d) * U @ Vm.T + rng.standard_normal((n, d))
    return X, U, Vm


def subspace_overlap(Vhat, Vm):
    r"""Overlap :math:`q = \lVert P\,\hat V^\top V P\rVert_F / \lVert P\,V^\top V P\rVert_F`
    of an estimate with the centred means, :math:`P = I - \mathbf 1\mathbf 1^\top/k`
    (invariant under a relabelling of the clusters; normalised by the sample's own means,
    whose norm fluctuates for a sparse prior; the :math:`m` of :math:`M_v = mP` in
    {prf:ref}`prop-ch11-lambda-alg`).

    Parameters
    ----------
    Vhat, Vm : ndarray (d, k)

    Returns
    -------
    float
    """
    Vhat = V.finite_array(Vhat, "Vhat", ndim=2)
    Vm = V.finite_array(Vm, "Vm", ndim=2)
    if Vhat.shape != Vm.shape or Vm.shape[1] < 2:
        raise ValueError("Vhat and Vm must have the same shape (d, k), k >= 2")
    P = centring(Vm.shape[1])
    return float(np.linalg.norm(P @ Vhat.T @ Vm @ P) / np.linalg.norm(P @ Vm.T @ Vm @ P))


class AMPResult(NamedTuple):
    """One AMP run ({prf:ref}`alg-ch11-amp`)."""

    overlaps: np.ndarray
    """Overlap with the centred means after each iteration (iterations + 1,)."""
    V: np.ndarray
    """Final estimate of the means (d, k)."""


def amp(X, k, rho, lam, iterations=50, eps=1e-3, Vm=None, rng=None) -> AMPResult:
    r"""AMP {prf:ref}`alg-ch11-amp` for the sparse k-cluster mixture, started from a Bayes
    estimate of :math:`V` given a side channel of precision :math:`\epsilon P` (small
    :math:`\epsilon`: an almost uninformed start).

    Parameters
    ----------
    X : ndarray (n, d)
        Data.
    k : int
        Clusters.
    rho : float
        Density of the means.
    lam : float
        Signal-to-noise ratio (> 0).
    iterations : int
        Number of iterations.
    eps : float
        Precision of the side channel of the start (> 0).
    Vm : ndarray (d, k)
        The true means: to build the start and to record the overlaps.
    rng : Generator, int or None
        Random state of the start.

    Returns
    -------
    AMPResult
    """
    X = V.finite_array(X, "X", ndim=2)
    k, rho, lam = check_k(k), check_rho(rho), V.positive_float(lam, "lam")
    iterations = V.positive_int(iterations, "iterations")
    eps = V.positive_float(eps, "eps")
    rng = V.generator(rng)
    n, d = X.shape
    if Vm is None:
        raise ValueError("Vm (the true means) is needed to record the overlap")
    Vm = V.finite_array(Vm, "Vm", ndim=2)
    if Vm.shape != (d, k):
        raise ValueError(f"Vm must have shape ({d}, {k})")
    P = centring(k)
    A0 = eps * P
    root = np.linalg.cholesky(A0 + 1e-12 * np.eye(k))
    B0 = Vm @ A0 + rng.standard_normal((d, k)) @ root.T
    v, cov_v = sparse_denoiser(A0, B0, rho)
    s = math.sqrt(lam / d)
    u_old = np.zeros((n, k))
    over = [subspace_overlap(v, Vm)]
    for _ in range(iterations):
        Bu = s * (X @ v) - (lam / d) * d * u_old @ cov_v
        Au = (lam / d) * v.T @ v
        u, cov_u = cluster_denoiser(Au, Bu)
        Bv = s * (X.T @ u) - (lam / d) * n * v @ cov_u
        Av = (lam / d) * u.T @ u
        v, cov_v = sparse_denoiser(Av, Bv, rho)
        u_old = u
        over.append(subspace_overlap(v, Vm))
    return AMPResult(np.array(over), v)


class SEState(NamedTuple):
    """State evolution trajectory ({eq}`eq-ch11-se`)."""

    mv: np.ndarray
    r"""Overlap :math:`m_v` of the means after each iteration (iterations + 1,)."""
    mu: np.ndarray
    r"""Overlap :math:`m_u` of the assignments (iterations,)."""


def _se_sample(k, rho, n_mc, rng):
    """A stratified sample: ``n_mc`` draws per support pattern of v, weighted by its prior
    probability (the rare patterns of a sparse prior are not left to chance)."""
    r = V.stream(rng, k, n_mc)
    pats = _patterns(k)
    v = np.concatenate([S * r.standard_normal((n_mc, k)) / math.sqrt(rho) for S in pats])
    wts = np.concatenate([np.full(n_mc, rho ** S.sum() * (1 - rho) ** (k - S.sum()) / n_mc)
                          for S in pats])
    xi_v = r.standard_normal((len(v), k))
    xi_u = r.standard_normal((n_mc, k))
    c = np.arange(n_mc) % k
    return v, xi_v, centring(k)[c], xi_u, wts


def _channel(x, xi, mhat):
    """b = mhat x + mhat^{1/2} xi for mhat = a P (P a projector): sqrt(a) P xi."""
    return mhat * (x @ centring(x.shape[1])) + math.sqrt(max(mhat, 0.0)) * (
        xi @ centring(x.shape[1]))


def _mv_of(mhat_v, sample, rho):
    v, xi_v, _, _, wts = sample
    k = v.shape[1]
    f, _ = sparse_denoiser(mhat_v * centring(k), _channel(v, xi_v, mhat_v), rho)
    fp = f @ centring(k)  # Nishimori: E[f v^T] = E[f f^T], the lower-variance estimate
    return float(wts @ np.sum(fp * fp, axis=1) / (k - 1))


def _mu_of(mhat_u, sample):
    _, _, u, xi_u, _ = sample
    k = u.shape[1]
    f, _ = cluster_denoiser(mhat_u * centring(k), _channel(u, xi_u, mhat_u))
    return float(np.sum(f * f) / (len(u) * (k - 1)))


def state_evolution(k, rho, lam, alpha, iterations=50, eps=1e-3, n_mc=4000,
                    rng=0, mv0=None) -> SEState:
    r"""State evolution {eq}`eq-ch11-se` with the overlaps :math:`M = mP` (the symmetric
    solution): :math:`\hat m_v = \lambda\alpha m_u`, :math:`\hat m_u = \lambda m_v`, each
    overlap the Monte-Carlo average of its Bayes denoiser on a fixed sample.

    Parameters
    ----------
    k : int
        Clusters.
    rho : float
        Density of the means.
    lam : float
        Signal-to-noise ratio, >= 0.
    alpha : float
        Samples per dimension.
    iterations : int
        Iterations.
    eps : float
        Precision of the side channel of the start, as in :func:`amp` (> 0; ``inf``: the
        informed start, overlap 1).
    n_mc : int
        Monte-Carlo draws per support pattern of the means' prior.
    rng : Generator, int or None
        The Monte-Carlo sample's random state (the same sample for every lam).
    mv0 : float, optional
        Start from this overlap :math:`m_v^0\in[0, 1]` instead of the one of the side
        channel ``eps`` (e.g. the chance overlap of AMP's start at finite :math:`d`).

    Returns
    -------
    SEState
    """
    k, rho = check_k(k), check_rho(rho)
    lam, alpha = V.nonneg_float(lam, "lam"), V.positive_float(alpha, "alpha")
    iterations = V.positive_int(iterations, "iterations")
    if not (isinstance(eps, (int, float)) and eps > 0):
        raise ValueError(f"eps must be a positive number (inf: informed), got {eps!r}")
    sample = _se_sample(k, rho, V.positive_int(n_mc, "n_mc"), rng)
    if mv0 is not None:
        mv0 = V.nonneg_float(mv0, "mv0")
        if mv0 > 1:
            raise ValueError(f"mv0 must lie in [0, 1], got {mv0}")
        mv = [mv0]
    else:
        mv = [1.0 if math.isinf(eps) else _mv_of(float(eps), sample, rho)]
    mu = []
    for _ in range(iterations):
        mu.append(max(_mu_of(lam * mv[-1], sample), 0.0))
        mv.append(max(_mv_of(lam * alpha * mu[-1], sample, rho), 0.0))
    return SEState(np.array(mv), np.array(mu))


def free_entropy(mu, mv, k, rho, lam, alpha, n_mc=4000, rng=0) -> float:
    r"""Replica-symmetric free entropy per dimension {eq}`eq-ch11-free-entropy` at overlaps
    :math:`M_u = m_uP`, :math:`M_v = m_vP` (zero at the uninformative point).

    Parameters
    ----------
    mu, mv : float
        Overlaps of the assignments and of the means, >= 0.
    k : int
        Clusters.
    rho : float
        Density of the means.
    lam : float
        Signal-to-noise ratio.
    alpha : float
        Samples per dimension.
    n_mc : int
        Monte-Carlo draws per support pattern of the means' prior.
    rng : Generator, int or None
        The Monte-Carlo sample's random state.

    Returns
    -------
    float
    """
    mu, mv = V.nonneg_float(mu, "mu"), V.nonneg_float(mv, "mv")
    k, rho = check_k(k), check_rho(rho)
    lam, alpha = V.nonneg_float(lam, "lam"), V.positive_float(alpha, "alpha")
    v, xi_v, u, xi_u, wts = _se_sample(k, rho, V.positive_int(n_mc, "n_mc"), rng)
    P = centring(k)
    hu, hv = lam * mv, lam * alpha * mu
    logits = _channel(u, xi_u, hu) @ P.T - 0.5 * hu * np.einsum("ci,ij,cj->c", P, P, P)
    top = logits.max(axis=1)
    psi_u = float(np.mean(top + np.log(np.mean(np.exp(logits - top[:, None]), axis=1))))
    _, _, logz = sparse_denoiser(hv * P, _channel(v, xi_v, hv), rho, log_z=True)
    psi_v = float(wts @ logz)
    return alpha * psi_u + psi_v - 0.5 * lam * alpha * (k - 1) * mu * mv


def lambda_alg(k, alpha) -> float:
    r"""The algorithmic threshold :math:`\lambda_{\rm alg} = k/\sqrt\alpha`
    ({prf:ref}`prop-ch11-lambda-alg`).

    Parameters
    ----------
    k : int
        Clusters.
    alpha : float
        Samples per dimension.

    Returns
    -------
    float
    """
    return check_k(k) / math.sqrt(V.positive_float(alpha, "alpha"))


def se_curve(k, rho, lams, alpha, iterations, mv0, n_mc=2000, rng=0) -> np.ndarray:
    r"""The overlap :math:`m_v` of the state evolution {eq}`eq-ch11-se` after ``iterations``
    steps from the overlap ``mv0`` at every :math:`\lambda` of ``lams`` (one Monte-Carlo
    sample for all): what AMP started from a chance overlap ``mv0`` should reach after as
    many iterations ({prf:ref}`prop-ch11-lambda-alg`).

    Parameters
    ----------
    k : int
        Clusters.
    rho : float
        Density of the means.
    lams : sequence of float
        Signal-to-noise ratios, >= 0.
    alpha : float
        Samples per dimension.
    iterations : int
        Iterations.
    mv0 : float
        Starting overlap in [0, 1].
    n_mc : int
        Monte-Carlo draws per support pattern.
    rng : Generator, int or None
        The Monte-Carlo sample's random state.

    Returns
    -------
    ndarray (len(lams),)
    """
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    return np.array([state_evolution(k, rho, float(x), alpha, iterations, n_mc=n_mc, rng=rng,
                                     mv0=float(mv0)).mv[-1] for x in lams])
