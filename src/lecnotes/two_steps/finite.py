r"""Finite-width spike counts of chapter 7: the centred kernel of one step and square BBP.

{eq}`eq-ch7-finite-kernel`: after one step with :math:`\eta = N^\alpha` the pre-activation of
test input :math:`i` in neuron :math:`j` is :math:`z_{ij}+c\,a_jg_i+s\,a_j\xi_{ij}`, with a
common shift along the learned direction (:math:`g_i` standard Gaussian) and a neuron-specific
one (:math:`\xi_{ij}` approximately independent standard Gaussians). Averaging the activation
over :math:`z` and :math:`\xi` leaves a kernel :math:`K(a_j,g_i)`; the spikes of the features
are :math:`\sqrt N` times its singular values, seen through the BBP rule of a square matrix
against the bulk edge of the features at initialisation ({eq}`eq-ch7-square-bbp`). Re-exported
by :mod:`lecnotes.two_steps.theory`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import SINCOS, get_activation
from lecnotes.core.hermite import gauss_hermite, split_gaussian_rule
from lecnotes.core.rmt import fit_bulk_edge
from lecnotes.core.stats import CLAIM_LEVEL, t_factor

__all__ = ["kernel_singular_values", "finite_n_spike_strengths", "taylor_spike_strengths",
           "run_kernel_strengths", "square_bbp", "finite_n_spikes", "OneStepComparison",
           "compare_one_step_counts"]


def _alpha(alpha) -> float:
    a = float(V.finite_array(alpha, "alpha", ndim=0))
    if not 0 <= a < 0.5:
        raise ValueError(f"alpha must lie in [0, 1/2), got {alpha!r}")
    return a


def _shifts(N, alpha, delta, label_energy, c1, activation):
    """mu_1, c and s of {eq}`eq-ch7-finite-kernel`."""
    N = V.positive_int(N, "N")
    a = _alpha(alpha)
    delta = V.positive_float(delta, "delta")
    ey2 = V.positive_float(label_energy, "label_energy")
    c1 = float(V.finite_array(c1, "c1", ndim=0))
    act = SINCOS if activation is None else get_activation(activation)
    zs, wz = split_gaussian_rule()
    with np.errstate(over="ignore"):
        ds = np.asarray(act.dsigma(zs), dtype=float) * np.ones_like(zs)
    mu1, var1 = float(wz @ ds), float(wz @ ds**2) - float(wz @ ds) ** 2
    c = abs(mu1) * math.sqrt(c1**2 + ey2 / delta) * N ** (a - 0.5)
    s = math.sqrt(N ** (2 * a - 1) * ey2 * max(var1, 0.0) / delta)
    return act, c, s


def kernel_singular_values(c: float, s: float, kmax: int, activation=None,
                           nodes: int = 60) -> np.ndarray:
    r"""Singular values of the centred kernel of one step, {eq}`eq-ch7-finite-kernel`.

    :math:`K(a,g) = \tilde K(a,g)-\mathbb E_g\tilde K(a,g)` with
    :math:`\tilde K(a,g) = \mathbb E_Z\,\sigma\big(c\,a\,g+\sqrt{1+s^2a^2}\,Z\big)`, as an
    operator :math:`L^2(\gamma)\to L^2(\gamma)` (:math:`\gamma = N(0,1)` in :math:`a` and in
    :math:`g`). For :math:`\sigma = \sin+\cos`,
    :math:`K = e^{-(1+s^2a^2)/2}\big[(\sin+\cos)(cag)-e^{-c^2a^2/2}\big]`. Gauss-Hermite rules
    with ``nodes`` points in :math:`a` and :math:`g` (and 40 in :math:`Z`) discretise it.

    Parameters
    ----------
    c, s : float
        Common and neuron-specific shift, :math:`c\ge0`, :math:`s\ge0`.
    kmax : int
    activation : str, pair or Activation, optional
        Default :data:`lecnotes.core.activations.SINCOS`.
    nodes : int

    Returns
    -------
    ndarray (kmax,)
        :math:`\sigma_1\ge\dots\ge\sigma_{k_{\max}}`.
    """
    c = V.nonneg_float(c, "c")
    s = V.nonneg_float(s, "s")
    kmax = V.positive_int(kmax, "kmax")
    nodes = V.positive_int(nodes, "nodes", minimum=kmax + 1)
    act = SINCOS if activation is None else get_activation(activation)
    x, w = gauss_hermite(nodes)
    zn, zw = gauss_hermite(40)
    A, G = x[:, None], x[None, :]
    scale = np.sqrt(1.0 + s**2 * A**2)
    Kt = np.asarray(act.sigma(c * A[..., None] * G[..., None]
                              + scale[..., None] * zn), dtype=float) @ zw
    K = Kt - Kt @ w[:, None]                       # centred in g
    M = np.sqrt(w)[:, None] * K * np.sqrt(w)[None, :]
    return np.linalg.svd(M, compute_uv=False)[:kmax]


def finite_n_spike_strengths(N: int, alpha: float, *, delta: float = 1.0,
                             label_energy: float = 1.0, c1: float = 1.0, activation=None,
                             kmax: int = 8) -> np.ndarray:
    r"""Strengths :math:`\theta_k = \sqrt N\,\sigma_k(K)` of the spikes after one step.

    {eq}`eq-ch7-finite-kernel` at width :math:`N` with :math:`\eta = N^\alpha`, :math:`n = N`
    test inputs: :math:`c = \mu_1\lVert u\rVert N^{\alpha-1/2}`,
    :math:`\lVert u\rVert^2 = c_1^2+\mathbb E[y^2]/\delta`, and
    :math:`s^2 = N^{2\alpha-1}\mathbb E[y^2]\operatorname{Var}\sigma'(G)/\delta`.

    Parameters
    ----------
    N : int
    alpha : float
        In :math:`[0, 1/2)`.
    delta, label_energy, c1 : float
        :math:`n/d`, :math:`\mathbb E[y^2]` and :math:`\mathbb E[yG]` of the link.
    activation : optional
        As in :func:`kernel_singular_values`.
    kmax : int

    Returns
    -------
    ndarray (kmax,)
    """
    act, c, s = _shifts(N, alpha, delta, label_energy, c1, activation)
    return math.sqrt(N) * kernel_singular_values(c, s, kmax, act)


def taylor_spike_strengths(N: int, alpha: float, *, delta: float = 1.0,
                           label_energy: float = 1.0, c1: float = 1.0,
                           kmax: int = 8) -> np.ndarray:
    r"""Sizes of the rank-one Taylor terms of one step for :math:`\sigma = \sin+\cos`.

    The :math:`k`-th term of {eq}`eq-ch7-feature-taylor` with :math:`\sigma^{(k)}` replaced by
    :math:`\mu_k = \pm e^{-1/2}` has operator norm
    :math:`\sqrt N\,e^{-1/2}c^k\,(2k-1)!!/k!` (:math:`c` as in :func:`finite_n_spike_strengths`,
    :math:`\mathbb E G^{2k} = (2k-1)!!` for both factors): the asymptotic theorem's spikes,
    without the damping by the neuron-specific shift nor the orthogonalisation of the terms.

    Parameters
    ----------
    N, alpha, delta, label_energy, c1, kmax
        As in :func:`finite_n_spike_strengths`.

    Returns
    -------
    ndarray (kmax,)
    """
    _, c, _ = _shifts(N, alpha, delta, label_energy, c1, SINCOS)
    kmax = V.positive_int(kmax, "kmax")
    k = np.arange(1, kmax + 1)
    dfact = np.array([math.prod(range(2 * m - 1, 0, -2)) for m in k], dtype=float)
    fact = np.array([math.factorial(m) for m in k], dtype=float)
    return math.sqrt(N) * math.exp(-0.5) * c**k * dfact / fact


def run_kernel_strengths(W0, D, Xt, alpha: float, kmax: int = 4, u=None) -> np.ndarray:
    r"""Spike strengths of one run's own kernel, {eq}`eq-ch7-finite-kernel` given the draw.

    The population kernel averages over the second layer, the batch and the test inputs; one
    run has its own. Here the common direction :math:`\hat u` is the top right singular vector
    of the update ``D`` (per unit step), the common shift of neuron :math:`j` is
    :math:`b_j = N^\alpha\langle D_j,\hat u\rangle` (:math:`c\,a_j` of the population),
    :math:`g_i = \langle\tilde x_i,\hat u\rangle`, and the variance of the rest of the
    pre-activation is :math:`\tau_j^2 = \lVert w_j+N^\alpha r_j\rVert^2`
    (:math:`r_j = D_j-\langle D_j,\hat u\rangle\hat u`). The strengths are the singular
    values of the column-centred :math:`(K_{ij})/\sqrt n`,
    :math:`K_{ij} = e^{-\tau_j^2/2}(\sin+\cos)(b_jg_i)`, for :math:`\sigma = \sin+\cos`.
    They differ from :func:`finite_n_spike_strengths` by the run's fluctuations of order
    :math:`N^{-1/2}` in :math:`\lVert u\rVert` and in the :math:`a_j`, shared by all
    exponents of the run. A rank-``kmax + 4`` subspace iteration (two passes, started on
    powers of :math:`b`) finds them: the kernel is smooth, its singular values fall fast.

    Parameters
    ----------
    W0 : array_like (N, d)
        First layer at initialisation.
    D : array_like (N, d)
        The first update per unit step.
    Xt : array_like (n, d)
        Test inputs.
    alpha : float
        The step is :math:`N^\alpha` with :math:`N` the number of rows of ``W0``.
    kmax : int
    u : array_like (d,), optional
        The top right singular vector of ``D`` if known (computed otherwise).

    Returns
    -------
    ndarray (kmax,)
    """
    W0 = V.finite_array(W0, "W0", ndim=2)
    D = V.finite_array(D, "D", ndim=2)
    Xt = V.finite_array(Xt, "Xt", ndim=2)
    if D.shape != W0.shape or Xt.shape[1] != W0.shape[1]:
        raise ValueError(f"W0 and D must have one shape and Xt as many columns; got {W0.shape}, "
                         f"{D.shape}, {Xt.shape}")
    a = _alpha(alpha)
    kmax = V.positive_int(kmax, "kmax")
    eta = W0.shape[0] ** a
    u = np.linalg.svd(D, full_matrices=False)[2][0] if u is None else V.finite_array(u, "u")
    proj = D @ u
    b = eta * proj
    tau2 = np.sum((W0 + eta * (D - np.outer(proj, u))) ** 2, axis=1)
    arg = np.outer(Xt @ u, b)
    K = np.exp(-tau2 / 2) * (np.sin(arg) + np.cos(arg))
    K = (K - K.mean(axis=0)) / math.sqrt(K.shape[0])
    r = min(kmax + 4, *K.shape)
    Q = np.linalg.qr(K @ np.vander(b / np.std(b), r, increasing=True))[0]
    for _ in range(2):
        Q = np.linalg.qr(K @ (K.T @ Q))[0]
    return np.linalg.svd(Q.T @ K, compute_uv=False)[:kmax]


def square_bbp(theta, edge: float) -> np.ndarray:
    r"""Outlier positions of square spiked matrices, {eq}`eq-ch7-square-bbp`.

    A rank-one term of strength :math:`\theta` added to an :math:`N\times N` noise matrix with
    bulk edge :math:`2b` gives an outlier at :math:`\theta+b^2/\theta` if :math:`\theta>b`,
    and none otherwise (NaN). Vectorised.

    Parameters
    ----------
    theta : array_like
        Strengths, non-negative.
    edge : float
        Bulk edge :math:`2b`, positive.

    Returns
    -------
    ndarray
    """
    theta = V.finite_array(theta, "theta")
    if np.any(theta < 0):
        raise ValueError("theta must be non-negative")
    b = V.positive_float(edge, "edge") / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(theta > b, theta + b**2 / theta, np.nan)


def finite_n_spikes(N: int, alpha: float, edge: float, threshold: float | None = None,
                    **kwargs) -> tuple[int, np.ndarray]:
    r"""Finite-:math:`N` number and positions of the feature spikes after one step.

    :func:`finite_n_spike_strengths` passed through :func:`square_bbp` against the bulk edge of
    the features at initialisation; a spike is counted if its position exceeds ``threshold``
    (the detection threshold of the counting rule; default ``edge``).

    Parameters
    ----------
    N : int
    alpha : float
    edge : float
        Bulk edge of the initial features.
    threshold : float, optional
    **kwargs
        Passed to :func:`finite_n_spike_strengths`.

    Returns
    -------
    (int, ndarray)
        The count and the positions of the counted spikes, decreasing.
    """
    edge = V.positive_float(edge, "edge")
    thr = edge if threshold is None else float(V.finite_array(threshold, "threshold", ndim=0))
    pos = square_bbp(finite_n_spike_strengths(N, alpha, **kwargs), edge)
    pos = pos[np.isfinite(pos) & (pos > thr)]
    return int(pos.size), pos


class OneStepComparison(NamedTuple):
    """Outcome of :func:`compare_one_step_counts` (sizes on axis 0, exponents on axis 1).

    ``threshold`` and ``edge`` (S,) the detection threshold and bulk edge of the initial
    features; ``predicted``, ``low``, ``high`` (S, A) the predicted count and its range when
    the threshold moves by the position band; ``band`` (S,) the relative band;
    ``positions`` nested lists of predicted positions; ``deviation`` and ``deviation_taylor``
    (S,) arrays of relative deviations of the simulated outliers from the finite-:math:`N`
    and from the Taylor-term positions; ``agree`` (S, A) every seed's count in its range.
    """

    threshold: np.ndarray
    edge: np.ndarray
    predicted: np.ndarray
    low: np.ndarray
    high: np.ndarray
    band: np.ndarray
    positions: list
    deviation: list
    deviation_taylor: list
    agree: np.ndarray


def _run_positions(sim, population, edge, margin):
    """Each run's predicted positions (its own kernel, else the population's) and threshold."""
    S, A = sim.edge.shape
    thr = sim.edge + margin * sim.scale
    pos = [[square_bbp(sim.kernel[r, j], edge) if np.all(np.isfinite(sim.kernel[r, j]))
            else population[j] for j in range(A)] for r in range(S)]
    return [[p[np.isfinite(p)] for p in row] for row in pos], thr


def compare_one_step_counts(sims, counts, alphas, margin: float, *, kmax: int = 8,
                            level: float | None = None) -> OneStepComparison:
    r"""Compare simulated spike counts and positions with :func:`finite_n_spikes`.

    For each width :math:`N` (keys of ``sims``, values
    :class:`lecnotes.two_steps.experiments.OneStepSpikes`): the bulk edge and scale of the initial
    features are fitted on the null spectra (means over seeds), the detection threshold is
    edge + ``margin`` :math:`\times` scale (the counting rule), and the predicted spikes are
    those of :func:`finite_n_spikes` above it (linear link, :math:`\delta = 1`): ``predicted``
    and ``positions``, and the deviations of the simulated outliers from them (matched by rank).
    The counts are compared run by run: each run's own kernel
    (:func:`run_kernel_strengths`, ``sims[N].kernel``) through the square BBP rule against the
    run's own threshold (its fitted edge + ``margin`` :math:`\times` scale, the counting rule
    itself). The relative deviations of the simulated outliers from these positions give a
    band, :math:`t\,\times` their standard deviation (Student factor at ``level``), and a
    predicted spike within the band of the threshold may or may not be counted; ``low`` and
    ``high`` are the extremes of the runs' ranges.

    Parameters
    ----------
    sims : dict int -> OneStepSpikes
    counts : dict int -> ndarray (seeds, A)
        Simulated counts (:func:`lecnotes.core.rmt.outlier_counts`).
    alphas : array_like (A,)
    margin : float
    kmax : int
    level : float, optional
        Default :data:`lecnotes.core.stats.CLAIM_LEVEL`.

    Returns
    -------
    OneStepComparison
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    sizes = sorted(sims)
    S, A = len(sizes), alphas.size
    out = {k: np.zeros((S, A), int) for k in ("predicted", "low", "high")}
    thr, edges, band = np.empty(S), np.empty(S), np.empty(S)
    positions, dev, dev_t, agree = [], [], [], np.zeros((S, A), bool)
    for i, N in enumerate(sizes):
        fits = [fit_bulk_edge(s) for s in sims[N].null]
        edges[i] = np.mean([f.edge for f in fits])
        thr[i] = edges[i] + margin * np.mean([f.scale for f in fits])
        pos = [square_bbp(finite_n_spike_strengths(N, al, kmax=kmax), edges[i]) for al in alphas]
        tay = [square_bbp(taylor_spike_strengths(N, al, kmax=kmax), edges[i]) for al in alphas]
        positions.append([p[np.isfinite(p) & (p > thr[i])] for p in pos])
        d, dt, dr = [], [], []
        for j in range(A):
            for r in range(counts[N].shape[0]):
                m = min(int(counts[N][r, j]), positions[i][j].size)
                sim = sims[N].s[r, j, :m]
                d += list(sim / positions[i][j][:m] - 1)
                ref = np.nan_to_num(tay[j][:m], nan=edges[i])
                dt += list(sim / ref - 1)
        run_pos, run_thr = _run_positions(sims[N], pos, edges[i], margin)
        for r, j in np.ndindex(run_thr.shape):
            p = run_pos[r][j]
            m = min(int(counts[N][r, j]), int(np.sum(p > run_thr[r, j])))
            dr += list(sims[N].s[r, j, :m] / p[:m] - 1)
        dev.append(np.asarray(d))
        dev_t.append(np.asarray(dt))
        dr = dr if len(dr) >= 2 else d  # too few counted outliers: the population's scatter
        band[i] = t_factor(len(dr), level or CLAIM_LEVEL) * np.std(dr, ddof=1)
        for j, p in enumerate(pos):
            p = p[np.isfinite(p)]
            out["predicted"][i, j] = np.sum(p > thr[i])
        c = np.asarray(counts[N])
        lo = np.array([[np.sum(run_pos[r][j] > run_thr[r, j] * (1 + band[i]))
                        for j in range(A)] for r in range(c.shape[0])])
        hi = np.array([[np.sum(run_pos[r][j] > run_thr[r, j] * (1 - band[i]))
                        for j in range(A)] for r in range(c.shape[0])])
        out["low"][i], out["high"][i] = lo.min(axis=0), hi.max(axis=0)
        agree[i] = np.all((c >= lo) & (c <= hi), axis=0)
    return OneStepComparison(thr, edges, out["predicted"], out["low"], out["high"], band,
                             positions, dev, dev_t, agree)
