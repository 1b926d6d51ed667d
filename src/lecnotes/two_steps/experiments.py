r"""Chapter 7, two steps: spectral outliers after one or two gradient steps, reused or fresh.

The linear-width setting of chapter 7: width :math:`N`, samples :math:`n` and dimension
:math:`d` grow proportionally; the network {eq}`eq-ch7-network` is
:math:`f(x) = N^{-1/2}\sum_j a_j\sigma(\langle w_j,x\rangle)` with :math:`w_j\sim N(0,I_d/d)`,
:math:`a_j\sim N(0,1)` fixed
(:func:`lecnotes.models.networks.init_params` with ``symmetric=False, second_layer="gaussian"``),
trained on the first layer with the correlation loss :math:`-\frac1n\sum_iy_if(x_i)` and step
sizes :math:`\eta_i = N^{\alpha_i}` (``lecnotes.models.layerwise.multi_step(..., loss="correlation",
scaling=N**-0.5)``), {prf:ref}`def-ch7-two-steps`. This module holds the experiments of the
chapter:

* the sizes of the **Taylor terms** of a step (:func:`projected_strength`,
  :func:`taylor_strengths`; the terms themselves are in :mod:`lecnotes.two_steps.theory`);
* the alignment of singular vectors with Hermite features (:func:`hermite_alignment`);
* the own-label term of a reused batch (:func:`self_term`);
* the **simulations** of the chapter, vectorised over neurons and samples.

The theory counts and the preprocessing of a reused batch are in
:mod:`lecnotes.two_steps.theory`; bulk edges and outlier counts in :mod:`lecnotes.core.rmt`; the
activation ``sincos`` in :mod:`lecnotes.core.activations`, the two-direction link in
:mod:`lecnotes.core.targets`.

Conventions: singular values are returned in decreasing order; "strength" of a term is an
operator norm or the norm of a projection on the predicted direction, as documented.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import svds

from lecnotes.core import validate as V
from lecnotes.core.activations import SINCOS, get_activation
from lecnotes.core.hermite import hermite_polys
from lecnotes.core.linalg import singular_values, top_singular_vectors
from lecnotes.core.overlaps import mean_update
from lecnotes.core.rmt import fit_bulk_edge, localisation
from lecnotes.core.targets import HE3, multi_index, single_index, two_direction_link
from lecnotes.models.layerwise import multi_step
from lecnotes.models.networks import check_params, features, init_params
from lecnotes.two_steps.finite import run_kernel_strengths
from lecnotes.two_steps.theory import check_alpha, feature_taylor_terms, second_step_taylor_terms

__all__ = [
    "hermite_alignment",
    "feature_matrix",
    "projected_strength",
    "rank_one_ratio",
    "OneStepSpikes",
    "simulate_one_step_spikes",
    "TwoStepSpectra",  # re-exported from two_steps_phase
    "simulate_two_step_counts",
    "outlier_alignment",
    "TaylorStrengths",
    "taylor_strengths",
    "ReuseArm",
    "ReuseResult",
    "simulate_reuse",
    "self_term",
]


def hermite_alignment(U, t, kmax: int) -> np.ndarray:
    r"""Alignment of vectors with the Hermite features :math:`\mathrm{He}_k(\hat t)` (chapter 7).

    ``U`` (n, r) holds unit vectors in sample space (left singular vectors of a feature
    matrix), ``t`` (n,) the projections :math:`\langle\hat u,\tilde x_i\rangle` on the learned
    direction, standardised here. Returns the (kmax, r) matrix of
    :math:`|\langle U_{:,c},\hat h_k\rangle|`, :math:`\hat h_k` the centred and normalised
    vector :math:`(\mathrm{He}_k(\hat t_i))_i`, :math:`k = 1..k_{\max}`: the :math:`k`-th
    spike of {prf:ref}`thm-ch7-one-step-spikes` carries :math:`\hat h_k`.

    Parameters
    ----------
    U : array_like (n, r) or (n,)
        Vectors in sample space (samples on axis 0).
    t : array_like (n,)
        Projections on the learned direction.
    kmax : int

    Returns
    -------
    ndarray (kmax, r)
    """

    U = V.finite_array(U, "U")
    if U.ndim == 1:
        U = U[:, None]
    t = V.finite_array(t, "t", ndim=1)
    kmax = V.positive_int(kmax, "kmax")
    if U.ndim != 2 or U.shape[0] != t.shape[0]:
        raise ValueError(f"U must have shape (n, r) with n = {t.shape[0]}, got {U.shape}")
    sd = t.std()
    if sd == 0:
        raise ValueError("t is constant")
    # hermite_polys returns shape (kmax + 1, n): samples on axis 1, transposed here so that
    # samples are on axis 0 like U (no guess from the shapes, which fails when n == kmax + 1)
    H = np.asarray(hermite_polys((t - t.mean()) / sd, kmax)).T[:, 1:]
    H = H - H.mean(axis=0)
    H /= np.linalg.norm(H, axis=0)
    Un = U / np.linalg.norm(U, axis=0)
    return np.abs(H.T @ Un)


def feature_matrix(W, X, activation="relu") -> np.ndarray:
    r"""Column-centred features :math:`(\sigma(XW^\top)-\mathbf 1\bar f^\top)/\sqrt n` (chapter 7).

    The matrix whose spikes {prf:ref}`thm-ch7-one-step-spikes` counts. Centring each neuron's
    column removes the rank-one mean :math:`\mathbb E\sigma`, which is not a learned feature;
    dividing by :math:`\sqrt n` puts the bulk at order one.

    Parameters
    ----------
    W : array_like (N, d)
    X : array_like (n, d)
    activation : str, pair or Activation

    Returns
    -------
    ndarray (n, N)
    """
    F = features(W, X, activation)
    F = F - F.mean(axis=0)
    return F / math.sqrt(F.shape[0])


def projected_strength(M, direction, side: str = "left") -> float:
    r"""Norm of the projection of a matrix on a predicted singular direction (chapter 7).

    ``side="left"``: :math:`\|v^\top M\|/\|v\|` for ``direction`` :math:`v` (one entry per
    row); ``side="right"``: :math:`\|Mv\|/\|v\|`. For a rank-one term :math:`\theta\,lr^\top`
    plus noise it measures :math:`\theta|\cos(l,v)|`, without the bulk that inflates the top
    singular value: the sizes of the terms of {eq}`eq-ch7-feature-taylor` and
    {eq}`eq-ch7-second-taylor`.

    Parameters
    ----------
    M : array_like (r, c)
    direction : array_like
        One entry per row (``side="left"``) or per column (``side="right"``).
    side : {"left", "right"}

    Returns
    -------
    float
    """
    M = V.finite_array(M, "M", ndim=2)
    v = V.finite_array(direction, "direction", ndim=1)
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    size = M.shape[0] if side == "left" else M.shape[1]
    if v.shape != (size,):
        raise ValueError(f"direction must have shape ({size},), got {v.shape}")
    nv = np.linalg.norm(v)
    if nv == 0:
        raise ValueError("direction is zero")
    return float(np.linalg.norm(v @ M if side == "left" else M @ v) / nv)


def _activation_of(activation):
    return SINCOS if activation is None else get_activation(activation)


class _FirstUpdate(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    Xt: np.ndarray | None
    W0: np.ndarray
    a: np.ndarray
    D: np.ndarray


def _first_update(N, link, act, rng, test_inputs=False, second_layer="gaussian"):
    """The setting of the chapter at n = d = N: a batch, test inputs, W0 and a, and the first
    update per unit step (correlation loss, scaling N**-0.5), drawn in this order."""
    X, y, w = single_index(N, N, link, rng=rng)
    Xt = rng.standard_normal((N, N)) if test_inputs else None
    W0, a = init_params(N, N, rng=rng, symmetric=False, second_layer=second_layer)
    (W1,) = multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
    return _FirstUpdate(X, y, w, Xt, W0, a, W1 - W0)


def _spectrum(M, fit_range):
    """The 12 largest singular values of M and its fitted bulk edge and scale."""
    s = singular_values(M)
    b = fit_bulk_edge(s, fit_range)
    return s[:12], b.edge, b.scale


def rank_one_ratio(sizes: Sequence[int], seeds: int, *, link="linear", activation=None,
                   rng=None) -> np.ndarray:
    r"""Ratio :math:`s_2/s_1` of the two largest singular values of the first update.

    {prf:ref}`prop-ch7-rank-one`: for each width :math:`N` in ``sizes`` (with
    :math:`n = d = N`) and each seed, one gradient of the correlation loss at initialisation
    (:func:`lecnotes.models.layerwise.multi_step`, unit step, ``scaling = N**-0.5``) on a
    single-index target. Theory: :math:`s_1` is of order one (the rank-one part
    :math:`\mu_1\,s\,a\,u^\top`), :math:`s_2` of order :math:`N^{-1/2}`.

    Parameters
    ----------
    sizes : sequence of int
    seeds : int
    link : str or callable
    activation : str, pair or Activation, optional
        Default :data:`lecnotes.core.activations.SINCOS`.
    rng : Generator, int or None
        Seed ``r`` at width ``N`` uses the stream ``V.stream(rng, N, r)``.

    Returns
    -------
    ndarray (seeds, len(sizes))
    """
    seeds = V.positive_int(seeds, "seeds")
    act = _activation_of(activation)
    sizes = V.sizes(sizes, "sizes").tolist()
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    out = np.empty((seeds, len(sizes)))
    for j, N in enumerate(sizes):
        for r in range(seeds):
            D = _first_update(N, link, act, V.stream(rng, N, r)).D
            s = np.sort(svds(D, k=2, v0=np.ones(D.shape[1]), tol=1e-10,
                             return_singular_vectors=False))  # Lanczos: the top two only
            out[r, j] = s[0] / s[1]
    return out


class OneStepSpikes(NamedTuple):
    """Outcome of :func:`simulate_one_step_spikes` (seeds on axis 0).

    ``s`` (seeds, A, 12) the largest singular values of the features, ``edge`` and ``scale``
    (seeds, A) their fitted bulk edge (:func:`lecnotes.core.rmt.fit_bulk_edge`), ``null``
    (seeds, N) the spectra at initialisation, ``align`` (seeds, A, kmax, 6) the
    :func:`hermite_alignment` of the six top left singular vectors, ``localisation``
    (seeds, A, 6) that of their right singular vectors, ``kernel`` (seeds, A, 4) the spike
    strengths of the run's own kernel (:func:`lecnotes.two_steps.finite.run_kernel_strengths`;
    NaN for an activation other than ``sincos``).
    """

    s: np.ndarray
    edge: np.ndarray
    scale: np.ndarray
    null: np.ndarray
    align: np.ndarray
    localisation: np.ndarray
    kernel: np.ndarray


def simulate_one_step_spikes(N: int, alphas, seeds: int, *, link="linear", activation=None,
                             fit_range=(10, 50), kmax: int = 4, rng=None) -> OneStepSpikes:
    r"""Spectra of the features after one step for several step-size exponents.

    The simulation of {prf:ref}`thm-ch7-one-step-spikes`: :math:`n = d = N`; per seed a
    training batch and independent test inputs :math:`\tilde X`, :math:`W_0, a`
    (Gaussian second layer), the first update :math:`D` (unit step), and for each
    :math:`\alpha` the centred features :func:`feature_matrix` of :math:`W_0+N^{\alpha}D` on
    :math:`\tilde X`, with their fitted bulk edge.

    Parameters
    ----------
    N : int
    alphas : array_like
        Exponents in :math:`[0, 1/2)`.
    seeds : int
    link, activation
        As in :func:`rank_one_ratio`.
    fit_range : (int, int)
        Ranks used by :func:`lecnotes.core.rmt.fit_bulk_edge`.
    kmax : int
        Highest Hermite degree of the alignments.
    rng : Generator, int or None
        Seed ``r`` uses the stream ``V.stream(rng, r)``.

    Returns
    -------
    OneStepSpikes
    """
    N = V.positive_int(N, "N", minimum=fit_range[1] if isinstance(fit_range, Sequence) else 1)
    seeds = V.positive_int(seeds, "seeds")
    alphas = check_alpha(np.atleast_1d(alphas), "alphas")
    act = _activation_of(activation)
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    A = len(alphas)
    out = OneStepSpikes(np.empty((seeds, A, 12)), np.empty((seeds, A)), np.empty((seeds, A)),
                        np.empty((seeds, N)), np.empty((seeds, A, kmax, 6)),
                        np.empty((seeds, A, 6)), np.full((seeds, A, 4), np.nan))
    for r in range(seeds):
        first = _first_update(N, link, act, V.stream(rng, r), test_inputs=True)
        W0, D, Xt = first.W0, first.D, first.Xt
        u = np.linalg.svd(D, full_matrices=False)[2][0]
        t = Xt @ u
        out.null[r] = singular_values(feature_matrix(W0, Xt, act))
        for j, al in enumerate(alphas):
            F = feature_matrix(W0 + N**al * D, Xt, act)
            out.s[r, j], out.edge[r, j], out.scale[r, j] = _spectrum(F, fit_range)
            U, Vt = top_singular_vectors(F, 6)
            out.align[r, j] = hermite_alignment(U, t, kmax)
            out.localisation[r, j] = [localisation(v) for v in Vt]
            if act is SINCOS:
                out.kernel[r, j] = run_kernel_strengths(W0, D, Xt, al, 4, u=u)
    return out


class TaylorStrengths(NamedTuple):
    """Outcome of :func:`taylor_strengths` (seeds on axis 0).

    ``features`` (seeds, len(sizes), kmax): sizes of :math:`F_1..F_{k_{\\max}}`; ``second``
    (seeds, len(sizes), kmax + 1): sizes of :math:`T_0..T_{k_{\\max}}`.
    """

    features: np.ndarray
    second: np.ndarray


def taylor_strengths(sizes: Sequence[int], seeds: int, kmax: int = 3, *, link="linear",
                     activation=None, derivative=None, second_layer: str = "gaussian",
                     rng=None) -> TaylorStrengths:
    r"""Sizes of the Taylor terms of one and two steps across widths.

    For each :math:`N` in ``sizes`` (:math:`n = d = N`) and seed: :math:`W_0, a`, a batch,
    independent test inputs, and the first update per unit step :math:`D`. Then

    * ``features[r, j, k-1]``: :func:`projected_strength` of the term :math:`F_k` of
      :func:`lecnotes.two_steps.theory.feature_taylor_terms` on its predicted right vector
      :math:`a^{\circ k}`,
      :math:`k = 1..k_{\max}`; theory :math:`\propto N^{(1-k)/2}`;
    * ``second[r, j, k]``: :func:`projected_strength` of the term :math:`T_k` of
      :func:`lecnotes.two_steps.theory.second_step_taylor_terms` (reused batch) on its
      predicted left vector
      :math:`a^{\circ(k+1)}`, :math:`k = 0..k_{\max}`; theory :math:`\propto N^{-k/2}`.

    Multiplied by :math:`\eta^k` (features) or :math:`\eta_2\eta_1^k` (second step) they give
    the sizes whose exponents are {eq}`eq-ch7-one-step-exponents` and
    {eq}`eq-ch7-two-step-exponents`. With signs (``second_layer="sign"``) the predicted
    vectors :math:`a^{\circ k}` are flat, with Gaussian weights they concentrate on the
    largest :math:`|a_j|` (:func:`lecnotes.two_steps.theory.effective_neurons`).

    Parameters
    ----------
    sizes : sequence of int
    seeds, kmax : int
    link, activation
        As in :func:`rank_one_ratio`.
    derivative : callable, optional
        As in :func:`lecnotes.two_steps.theory.feature_taylor_terms`.
    second_layer : {"gaussian", "sign"}
        As in :func:`lecnotes.models.networks.init_params`.
    rng : Generator, int or None
        Seed ``r`` at width ``N`` uses the stream ``V.stream(rng, N, r)``.

    Returns
    -------
    TaylorStrengths
    """
    seeds = V.positive_int(seeds, "seeds")
    kmax = V.positive_int(kmax, "kmax")
    sizes = V.sizes(sizes, "sizes").tolist()
    act = _activation_of(activation)
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    out = TaylorStrengths(np.empty((seeds, len(sizes), kmax)),
                          np.empty((seeds, len(sizes), kmax + 1)))
    for j, N in enumerate(sizes):
        for r in range(seeds):
            X, y, _, Xt, W0, a, D = _first_update(N, link, act, V.stream(rng, N, r), True,
                                                  second_layer)
            for k, F in enumerate(feature_taylor_terms(W0, D, Xt, kmax, derivative), start=1):
                out.features[r, j, k - 1] = projected_strength(F, a**k, side="right")
            terms = second_step_taylor_terms(W0, a, D, X, y, kmax, derivative,
                                             scaling=N**-0.5)
            for k, T in enumerate(terms):
                out.second[r, j, k] = projected_strength(T, a ** (k + 1), side="left")
    return out


class ReuseArm(NamedTuple):
    r"""One arm of :func:`simulate_reuse` (reused or fresh second batch), arrays (seeds, dims).

    ``new``: overlap with the measured direction of the part of the mean second update
    :math:`m_2` orthogonal to the first, :math:`m_1` (what the second step adds); ``overlap``:
    that of :math:`m_2` itself; ``along``: :math:`\langle m_2^\perp,w\rangle/\bar\eta`, which
    estimates :func:`lecnotes.two_steps.theory.reuse_stein_coefficient`.
    """

    new: np.ndarray
    overlap: np.ndarray
    along: np.ndarray


class ReuseResult(NamedTuple):
    """Outcome of :func:`simulate_reuse`: the two arms and the overlap of the first update.

    ``first`` (seeds, dims): overlap of :math:`m_1` with :math:`w_\\star` (:math:`w_1` for the
    two-direction target).
    """

    reuse: ReuseArm
    fresh: ReuseArm
    first: np.ndarray


def simulate_reuse(dims: Sequence[int], delta: float, p: int, c: float, seeds: int, *,
                   activation="tanh", link=None, rng=None) -> ReuseResult:
    r"""What the second step learns with a reused and with a fresh batch.

    The protocol of {prf:ref}`prop-ch7-self-term` and {eq}`eq-ch7-reuse-preprocessing`:
    :math:`f = \sum_ja_j\sigma(\langle w_j,x\rangle)` with :math:`a_j = \pm1/p` (balanced
    signs, :func:`lecnotes.models.networks.init_params` with ``second_layer="balanced"``),
    :math:`w_j\sim N(0,I_d/d)`, correlation loss, two first-layer steps of size
    :math:`\eta = c\,p\,\delta` (``scaling=1.0``), :math:`n = \delta d`. Per seed, one first
    step on a batch, then the second step twice from the same :math:`W_1`: on the same batch
    (``reuse``) and on a fresh one (``fresh``). ``link`` is a single-index link (default
    :data:`lecnotes.core.targets.HE3`; the measured direction is :math:`w_\star`) or
    ``"two-direction"`` (:func:`lecnotes.core.targets.two_direction_link`; the measured direction
    is the He_3 one, :math:`w_2`). Removing :math:`m_1` from :math:`m_2`, whose overlap with
    :math:`w` is :math:`O(d^{-1/2})`, does not change the limit of ``along`` and removes the
    noise :math:`\langle m_2,\hat m_1\rangle\langle\hat m_1,w\rangle`.

    Parameters
    ----------
    dims : sequence of int
    delta, c : float
        :math:`n/d` and the step constant.
    p, seeds : int
    activation : str, pair or Activation
    link : callable, str or None
    rng : Generator, int or None
        Seed ``r`` at dimension ``d`` uses the stream ``V.stream(rng, d, r)``.

    Returns
    -------
    ReuseResult
    """
    delta = V.positive_float(delta, "delta")
    p = V.positive_int(p, "p", minimum=2)
    c = V.positive_float(c, "c")
    seeds = V.positive_int(seeds, "seeds")
    dims = [V.positive_int(d, "dimension") for d in dims]
    if not dims:
        raise ValueError("dims must be non-empty")
    act = get_activation(activation)
    two = isinstance(link, str) and link == "two-direction"
    link = HE3 if link is None else link
    root = V.generator(rng)  # the root of the streams V.stream(root, ...)
    shape = (seeds, len(dims))
    out = ReuseResult(*(ReuseArm(*(np.empty(shape) for _ in range(3))) for _ in range(2)),
                      np.empty(shape))
    eta = c * p * delta
    for j, d in enumerate(dims):
        n = max(1, int(round(delta * d)))
        for r in range(seeds):
            rng = V.stream(root, d, r)
            if two:
                X, y, Ws = multi_index(2 * n, d, two_direction_link, 2, rng=rng)
                w_first, w = Ws[0], Ws[1]
            else:
                X, y, w = single_index(2 * n, d, link, rng=rng)
                w_first = w
            batch, fresh = (X[:n], y[:n]), (X[n:], y[n:])
            W0, a = init_params(p, d, rng=rng, symmetric=False, second_layer="balanced",
                                a_scale=1 / p)
            with np.errstate(over="ignore"):  # tanh' = 1/cosh^2 -> 0 for huge arguments
                (W1,) = multi_step(W0, a, [batch], eta, act, "correlation", scaling=1.0)
            m1 = mean_update(W0, W1, a)
            out.first[r, j] = abs(m1 @ w_first) / np.linalg.norm(m1)
            m1 /= np.linalg.norm(m1)
            for arm, second in ((out.reuse, batch), (out.fresh, fresh)):
                m = _mean_correlation_update(W1, a, *second, eta, act)
                new = m - (m @ m1) * m1
                arm.new[r, j] = abs(new @ w) / np.linalg.norm(new)
                arm.overlap[r, j] = abs(m @ w) / np.linalg.norm(m)
                arm.along[r, j] = (new @ w) / (c * delta)
    return out


def _mean_correlation_update(W, a, X, y, eta, act) -> np.ndarray:
    r"""``mean_update(W, W_next, a)`` for one correlation-loss step of ``multi_step`` (scaling
    1), without forming ``W_next``: :math:`\mathrm{sign}(a)^\top\Delta W/p =
    \frac{\eta}{pn}X^\top\big(y\odot\sigma'(XW^\top)|a|\big)`, one matrix product instead of
    two (equal up to rounding)."""
    with np.errstate(over="ignore"):  # tanh' = 1/cosh^2 -> 0 for huge arguments
        dz = np.asarray(act.dsigma(X @ W.T), dtype=float) @ np.abs(a)
    return (eta / (W.shape[0] * X.shape[0])) * ((y * dz) @ X)


def self_term(X, y, W0, a, eta, dsigma) -> np.ndarray:
    r"""Own-label part of the pre-activation shift after one step on a batch (chapter 7).

    With :math:`f = \sum_ja_j\sigma(\langle w_j,x\rangle)`, the correlation loss and
    :math:`W_1 = W_0-\eta\nabla\hat R`, the shift of the pre-activation of sample :math:`i` in
    neuron :math:`j` is :math:`\eta a_j\frac1n\sum_ky_k\sigma'(z_{kj})\langle x_k,x_i\rangle`;
    its :math:`k = i` term

    .. math:: \eta\,a_j\,y_i\,\sigma'(z_{ij})\,\|x_i\|^2/n

    is the sample's own label in {eq}`eq-ch7-self-term`, seen again when the batch is reused
    ({prf:ref}`prop-ch7-self-term`).

    Parameters
    ----------
    X, y : array_like
        The batch (n, d) and its labels (n,).
    W0, a : array_like
        First layer (p, d) and second layer (p,).
    eta : float
        Step size (>= 0).
    dsigma : callable
        Vectorised :math:`\sigma'`.

    Returns
    -------
    ndarray (n, p)
    """
    X, y = V.data_pair(X, y)
    W0, a, X = check_params(W0, a, X)
    eta = V.nonneg_float(eta, "eta")
    if not callable(dsigma):
        raise ValueError("dsigma must be a vectorised callable")
    sq = np.einsum("ij,ij->i", X, X)
    return eta * np.asarray(dsigma(X @ W0.T), dtype=float) * (y * sq / X.shape[0])[:, None] * a


from lecnotes.two_steps.phase import (  # noqa: E402
    TwoStepSpectra,
    outlier_alignment,
    simulate_two_step_counts,
)
