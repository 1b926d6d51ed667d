r"""Chapter 7, two steps: spectral outliers after one or two gradient steps, reused or fresh.

The linear-width setting of chapter 7: width :math:`N`, samples :math:`n` and dimension
:math:`d` grow proportionally; the network is :math:`f(x) = N^{-1/2}\sum_j a_j\sigma(\langle
w_j,x\rangle)` with :math:`w_j\sim N(0,I_d/d)`, :math:`a_j\sim N(0,1)` fixed, trained on the
first layer with the correlation loss :math:`-\frac1n\sum_iy_if(x_i)` and step sizes
:math:`\eta_i = N^{\alpha_i}` (``lecnotes.networks.multi_step(..., loss="correlation",
scaling=N**-0.5)``). This module holds the experiments of the chapter:

* the **Taylor terms** of a step in the pre-activation shift, whose sizes carry the exponents
  (:func:`feature_taylor_terms`, :func:`second_step_taylor_terms`, :func:`projected_strength`);
* the alignment of singular vectors with Hermite features (:func:`hermite_alignment`);
* the own-label term of a reused batch (:func:`self_term`);
* the **simulations** of the chapter, vectorised over neurons and samples.

The theory counts and the preprocessing of a reused batch are in
:mod:`lecnotes.two_steps_theory`; bulk edges and outlier counts in :mod:`lecnotes.rmt`; the
activation ``sincos`` in :mod:`lecnotes.activations`, the two-direction link in
:mod:`lecnotes.targets`.

Conventions: singular values are returned in decreasing order; "strength" of a term is an
operator norm or the norm of a projection on the predicted direction, as documented.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _validate as V
from .activations import SINCOS, get_activation, sincos_derivative
from .hermite import hermite_polys
from .linalg import singular_values, top_singular_vectors
from .networks import check_params, features, linear_width_init, multi_step, output_scale
from .overlaps import mean_update
from .rmt import fit_bulk_edge, localisation
from .targets import HE3, multi_index, single_index, two_direction_link
from .two_steps_theory import check_alpha

__all__ = [
    "hermite_alignment",
    "feature_matrix",
    "feature_taylor_terms",
    "second_step_taylor_terms",
    "projected_strength",
    "rank_one_ratio",
    "simulate_one_step_spikes",
    "simulate_two_step_counts",
    "taylor_strengths",
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
    spike of Moniri, Lee, Hassani and Dobriban carries :math:`\hat h_k`.
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

    Centring each neuron's column removes the rank-one mean :math:`\mathbb E\sigma`, which is
    not a learned feature; dividing by :math:`\sqrt n` puts the bulk at order one.
    """
    F = features(W, X, activation)
    F = F - F.mean(axis=0)
    return F / math.sqrt(F.shape[0])


def _derivative_source(derivative):
    if derivative is None:
        return sincos_derivative
    if not callable(derivative):
        raise ValueError("derivative must map k to the k-th derivative of the activation")
    return derivative


def feature_taylor_terms(W0, D, X, kmax: int, derivative=None) -> list[np.ndarray]:
    r"""Taylor terms of the features after one step, per unit step (chapter 7).

    With :math:`W_1 = W_0+\eta D` and :math:`\Delta = \tilde XD^\top`,

    .. math:: \sigma(\tilde XW_1^\top) = \sum_{k\ge0}\eta^k\,F_k,\qquad
              F_k = \frac1{k!}\,\sigma^{(k)}(\tilde XW_0^\top)\odot\Delta^{\circ k},

    returned column-centred and divided by :math:`\sqrt n` for :math:`k = 1..k_{\max}`. The
    rank-one part of :math:`F_k` is :math:`\frac{\mu_k}{k!}(\tilde Xu)^{\circ k}(s\,a^{\circ k})
    ^\top` when :math:`D\approx s\,a\,u^\top`, of size :math:`N^{(1-k)/2}` (chapter 7,
    eq. (one-step exponents)).

    Parameters
    ----------
    W0, D : ndarray (N, d)
    X : ndarray (n, d)
        Inputs on which the features are evaluated (test inputs).
    kmax : int
    derivative : callable, optional
        ``derivative(k)`` returns :math:`\sigma^{(k)}`; default :func:`sincos_derivative`.
    """
    W0 = V.finite_array(W0, "W0", ndim=2)
    D = V.finite_array(D, "D", ndim=2)
    X = V.finite_array(X, "X", ndim=2)
    if D.shape != W0.shape or X.shape[1] != W0.shape[1]:
        raise ValueError(f"shapes do not match: W0 {W0.shape}, D {D.shape}, X {X.shape}")
    kmax = V.positive_int(kmax, "kmax")
    der = _derivative_source(derivative)
    Z, Dz = X @ W0.T, X @ D.T
    out, power = [], np.ones_like(Dz)
    for k in range(1, kmax + 1):
        power = power * Dz
        F = np.asarray(der(k)(Z), dtype=float) * power / math.factorial(k)
        F -= F.mean(axis=0)
        out.append(F / math.sqrt(X.shape[0]))
    return out


def second_step_taylor_terms(W0, a, D1, X, y, kmax: int, derivative=None, *,
                             scaling=1.0) -> list[np.ndarray]:
    r"""Taylor terms of the second update in the shift caused by the first (chapter 7).

    Let :math:`W_1 = W_0+\eta_1D_1` (:math:`D_1` the first update per unit step) and let the
    second step use the batch ``(X, y)`` (the first batch again when it is reused). With the
    correlation loss the second update per unit step is
    :math:`U_2 = s\,\mathrm{diag}(a)\,\frac1n[y\odot\sigma'(XW_1^\top)]^\top X`, and the
    expansion of :math:`\sigma'` around :math:`XW_0^\top` in :math:`\eta_1XD_1^\top` gives

    .. math:: U_2 = \sum_{k\ge0}\eta_1^k\,T_k,\qquad
              T_k = \frac{s}{k!}\,\mathrm{diag}(a)\,\frac1n\big[y\odot\sigma^{(k+1)}(XW_0^\top)
              \odot(XD_1^\top)^{\circ k}\big]^\top X .

    Since :math:`D_1\approx s\,a\,u^\top`, the left vector of :math:`T_k` is
    :math:`a^{\circ(k+1)}` and its size :math:`N^{-k/2}`: the term :math:`\eta_2\eta_1^kT_k` of
    :math:`W_2` has norm :math:`N^{\alpha_2-k(1/2-\alpha_1)}` (chapter 7, eq. (two-step
    exponents)). Returns :math:`T_0,\dots,T_{k_{\max}}`, each (N, d).
    """
    W0, a = check_params(W0, a)
    D1 = V.finite_array(D1, "D1", ndim=2)
    X, y = V.data_pair(X, y)
    if D1.shape != W0.shape or X.shape[1] != W0.shape[1]:
        raise ValueError(f"shapes do not match: W0 {W0.shape}, D1 {D1.shape}, X {X.shape}")
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    der = _derivative_source(derivative)
    s = output_scale(W0.shape[0], scaling)
    n = X.shape[0]
    Z, Dz = X @ W0.T, X @ D1.T
    out, power = [], np.ones_like(Dz)
    for k in range(kmax + 1):
        if k:
            power = power * Dz
        M = np.asarray(der(k + 1)(Z), dtype=float) * power * (y[:, None] / math.factorial(k))
        out.append((s / n) * a[:, None] * (M.T @ X))
    return out


def projected_strength(M, direction, side: str = "left") -> float:
    r"""Norm of the projection of a matrix on a predicted singular direction (chapter 7).

    ``side="left"``: :math:`\|v^\top M\|/\|v\|` for ``direction`` :math:`v` (one entry per
    row); ``side="right"``: :math:`\|Mv\|/\|v\|`. For a rank-one term :math:`\theta\,lr^\top`
    plus noise it measures :math:`\theta|\cos(l,v)|`, without the bulk that inflates the top
    singular value.
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


def rank_one_ratio(sizes: Sequence[int], seeds: int, *, link="linear", activation=None,
                   rng=0) -> np.ndarray:
    r"""Ratio :math:`s_2/s_1` of the two largest singular values of the first update (chapter 7).

    For each width :math:`N` in ``sizes`` (with :math:`n = d = N`) and each seed: one gradient
    of the correlation loss at initialisation (:func:`lecnotes.networks.multi_step`, unit step,
    ``scaling = N**-0.5``) on a single-index target. Theory: :math:`s_1` is of order one
    (the rank-one part :math:`\mu_1\,s\,a\,u^\top`), :math:`s_2` of order :math:`N^{-1/2}`.

    Returns
    -------
    ndarray (seeds, len(sizes))
    """

    seeds = V.positive_int(seeds, "seeds")
    act = _activation_of(activation)
    sizes = [V.positive_int(N, "size") for N in sizes]
    if not sizes:
        raise ValueError("sizes must be non-empty")
    rng = V.generator(rng)
    out = np.empty((seeds, len(sizes)))
    for j, N in enumerate(sizes):
        for r in range(seeds):
            X, y, _ = single_index(N, N, link, rng=rng)
            W0, a = linear_width_init(N, N, rng)
            (W1,) = multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
            s = np.linalg.svd(W1 - W0, compute_uv=False)
            out[r, j] = s[1] / s[0]
    return out


def simulate_one_step_spikes(N: int, alphas, seeds: int, *, link="linear", activation=None,
                             fit_range=(10, 50), kmax: int = 4, rng=0) -> dict:
    r"""Spectra of the features after one step for several step-size exponents (chapter 7).

    :math:`n = d = N`; per seed: a training batch and independent test inputs
    :math:`\tilde X`, :math:`W_0, a` from :func:`linear_width_init`, the first update
    :math:`D` (unit step, :func:`lecnotes.networks.multi_step`), and for each
    :math:`\alpha` the centred features :func:`feature_matrix` of
    :math:`W_0+N^{\alpha}D` on :math:`\tilde X`, with their fitted bulk edge.

    Returns
    -------
    dict with ``s`` (seeds, len(alphas), 12) largest singular values, ``edge`` and ``scale``
    (seeds, len(alphas)) from :func:`fit_bulk_edge`, ``null`` (seeds, N) spectra at
    initialisation, ``align`` (seeds, len(alphas), kmax, 6) :func:`hermite_alignment` of the
    six top left singular vectors with :math:`\mathrm{He}_k(\tilde X\hat u)`, and
    ``localisation`` (seeds, len(alphas), 6) of their right singular vectors.
    """

    N = V.positive_int(N, "N", minimum=fit_range[1] if isinstance(fit_range, Sequence) else 1)
    seeds = V.positive_int(seeds, "seeds")
    alphas = check_alpha(np.atleast_1d(alphas), "alphas")
    act = _activation_of(activation)
    rng = V.generator(rng)
    A = len(alphas)
    out = {key: np.empty((seeds, A)) for key in ("edge", "scale")}
    out["s"] = np.empty((seeds, A, 12))
    out["null"] = np.empty((seeds, N))
    out["align"] = np.empty((seeds, A, kmax, 6))
    out["localisation"] = np.empty((seeds, A, 6))
    for r in range(seeds):
        X, y, w = single_index(N, N, link, rng=rng)
        Xt = rng.standard_normal((N, N))
        W0, a = linear_width_init(N, N, rng)
        (W1,) = multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
        D = W1 - W0
        u = np.linalg.svd(D, full_matrices=False)[2][0]
        t = Xt @ u
        out["null"][r] = singular_values(feature_matrix(W0, Xt, act))
        for j, al in enumerate(alphas):
            F = feature_matrix(W0 + N**al * D, Xt, act)
            s = singular_values(F)
            U, Vt = top_singular_vectors(F, 6)
            b = fit_bulk_edge(s, fit_range)
            out["s"][r, j], out["edge"][r, j], out["scale"][r, j] = s[:12], b.edge, b.scale
            out["align"][r, j] = hermite_alignment(U, t, kmax)
            out["localisation"][r, j] = [localisation(v) for v in Vt]
    return out


def simulate_two_step_counts(N: int, alphas1, alphas2, seeds: int, *, reuse: bool = True,
                             link="linear", activation=None, fit_range=(10, 50),
                             rng=0) -> dict:
    r"""Spectra of :math:`W_2` over a grid of step-size exponents (chapter 7).

    :math:`n = d = N`, :math:`\eta_i = N^{\alpha_i}`, correlation loss, second layer fixed,
    ``scaling = N**-0.5``. For each seed and :math:`\alpha_1`, one call of
    :func:`lecnotes.networks.multi_step` with steps :math:`(N^{\alpha_1}, 1)` returns
    :math:`W_1` and :math:`W_1+U_2`; since the second update is linear in :math:`\eta_2`,
    :math:`W_2 = W_1+N^{\alpha_2}U_2` for every :math:`\alpha_2`. ``reuse`` selects the same
    batch twice or a fresh second batch.

    Returns
    -------
    dict with ``s2`` (seeds, A1, A2, 12) largest singular values of :math:`W_2`, ``edge2``,
    ``scale2`` (seeds, A1, A2), ``s1``, ``edge1``, ``scale1`` (seeds, A1) for :math:`W_1`,
    and ``null`` (seeds, N) the spectra of :math:`W_0`.
    """

    N = V.positive_int(N, "N")
    seeds = V.positive_int(seeds, "seeds")
    al1 = check_alpha(np.atleast_1d(alphas1), "alphas1")
    al2 = check_alpha(np.atleast_1d(alphas2), "alphas2")
    act = _activation_of(activation)
    rng = V.generator(rng)
    A1, A2 = len(al1), len(al2)
    out = {"s2": np.empty((seeds, A1, A2, 12)), "edge2": np.empty((seeds, A1, A2)),
           "scale2": np.empty((seeds, A1, A2)), "s1": np.empty((seeds, A1, 12)),
           "edge1": np.empty((seeds, A1)), "scale1": np.empty((seeds, A1)),
           "null": np.empty((seeds, N))}
    for r in range(seeds):
        X, y, w = single_index(N, N, link, rng=rng)
        second = (X, y) if reuse else single_index(N, N, link, rng=rng, w_star=w)[:2]
        W0, a = linear_width_init(N, N, rng)
        out["null"][r] = singular_values(W0)
        for i, a1 in enumerate(al1):
            W1, W2u = multi_step(W0, a, [(X, y), second], [N**a1, 1.0], act, "correlation",
                                    scaling=N**-0.5)
            s = singular_values(W1)
            b = fit_bulk_edge(s, fit_range)
            out["s1"][r, i], out["edge1"][r, i], out["scale1"][r, i] = s[:12], b.edge, b.scale
            U2 = W2u - W1
            for j, a2 in enumerate(al2):
                s = singular_values(W1 + N**a2 * U2)
                b = fit_bulk_edge(s, fit_range)
                out["s2"][r, i, j], out["edge2"][r, i, j] = s[:12], b.edge
                out["scale2"][r, i, j] = b.scale
    return out


def taylor_strengths(sizes: Sequence[int], seeds: int, kmax: int = 3, *, link="linear",
                     activation=None, derivative=None, second_layer: str = "gaussian",
                     rng=0) -> dict:
    r"""Sizes of the Taylor terms of one and two steps across widths (chapter 7).

    For each :math:`N` in ``sizes`` (:math:`n = d = N`) and seed: :math:`W_0, a` from
    :func:`linear_width_init`, a batch, independent test inputs, and the first update per unit
    step :math:`D` (:func:`lecnotes.networks.multi_step`). Then

    * ``features[r, j, k-1]``: :func:`projected_strength` of the term :math:`F_k` of
      :func:`feature_taylor_terms` on its predicted right vector :math:`a^{\circ k}`,
      :math:`k = 1..k_{\max}`; theory :math:`\propto N^{(1-k)/2}`;
    * ``second[r, j, k]``: :func:`projected_strength` of the term :math:`T_k` of
      :func:`second_step_taylor_terms` (reused batch) on its predicted left vector
      :math:`a^{\circ(k+1)}`, :math:`k = 0..k_{\max}`; theory :math:`\propto N^{-k/2}`.

    Multiplied by :math:`\eta^k` (features) or :math:`\eta_2\eta_1^k` (second step) they give
    the sizes whose exponents are :func:`one_step_exponents` and :func:`two_step_exponents`.
    ``second_layer`` as in :func:`linear_width_init`: with signs the predicted vectors
    :math:`a^{\circ k}` are flat, with Gaussian weights they concentrate on the largest
    :math:`|a_j|` (:func:`effective_neurons`).
    """

    seeds = V.positive_int(seeds, "seeds")
    kmax = V.positive_int(kmax, "kmax")
    sizes = [V.positive_int(N, "size") for N in sizes]
    if not sizes:
        raise ValueError("sizes must be non-empty")
    act = _activation_of(activation)
    rng = V.generator(rng)
    out = {"features": np.empty((seeds, len(sizes), kmax)),
           "second": np.empty((seeds, len(sizes), kmax + 1))}
    for j, N in enumerate(sizes):
        for r in range(seeds):
            X, y, _ = single_index(N, N, link, rng=rng)
            Xt = rng.standard_normal((N, N))
            W0, a = linear_width_init(N, N, rng, second_layer)
            (W1,) = multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
            D = W1 - W0
            for k, F in enumerate(feature_taylor_terms(W0, D, Xt, kmax, derivative), start=1):
                out["features"][r, j, k - 1] = projected_strength(F, a**k, side="right")
            terms = second_step_taylor_terms(W0, a, D, X, y, kmax, derivative,
                                             scaling=N**-0.5)
            for k, T in enumerate(terms):
                out["second"][r, j, k] = projected_strength(T, a ** (k + 1), side="left")
    return out


def simulate_reuse(dims: Sequence[int], delta: float, p: int, c: float, seeds: int, *,
                   activation="tanh", link=None, rng=0) -> dict:
    r"""What the second step learns with a reused and with a fresh batch (chapter 7).

    The protocol of chapter 7, section (reuse): :math:`f = \sum_ja_j\sigma(\langle w_j,x\rangle)`
    with :math:`a_j = \pm1/p` (balanced signs), :math:`w_j\sim N(0,I_d/d)`, correlation loss,
    two first-layer steps of size :math:`\eta = c\,p\,\delta`
    (:func:`lecnotes.networks.multi_step`, ``scaling=1.0``), :math:`n = \delta d`. Per seed,
    one first step on a batch, then the second step twice from the same :math:`W_1`: on the
    same batch (``"reuse"``) and on a fresh one (``"fresh"``). ``link`` is a single-index link
    (default :data:`HE3`; the measured direction is :math:`w_\star`) or ``"two-direction"``
    (:func:`two_direction_link`; the measured direction is the He_3 one, :math:`w_2`).

    Returns
    -------
    dict with ``"reuse"`` and ``"fresh"``, each a dict of (seeds, len(dims)) arrays:
    ``new`` (overlap with the measured direction of the part of the mean second update
    :math:`m_2` (:func:`mean_update`) orthogonal to the first, :math:`m_1`: what the second
    step adds), ``overlap`` (overlap of :math:`m_2` itself), ``along``
    (:math:`\langle m_2^\perp,w\rangle/\bar\eta`, :math:`\bar\eta = \eta/p`, for the part
    :math:`m_2^\perp` of :math:`m_2` orthogonal to :math:`m_1`; it estimates
    :func:`reuse_stein_coefficient`: removing :math:`m_1`, whose overlap with :math:`w` is
    :math:`O(d^{-1/2})`, does not change the limit and removes the noise
    :math:`\langle m_2,\hat m_1\rangle\langle\hat m_1,w\rangle`); and ``"first"``, the overlap
    of :math:`m_1` with :math:`w_\star` (:math:`w_1` for the two-direction target).
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
    rng = V.generator(rng)
    keys = ("new", "overlap", "along")
    out = {kind: {key: np.empty((seeds, len(dims))) for key in keys}
           for kind in ("reuse", "fresh")}
    out["first"] = np.empty((seeds, len(dims)))
    eta = c * p * delta
    for j, d in enumerate(dims):
        n = max(1, int(round(delta * d)))
        for r in range(seeds):
            if two:
                X, y, Ws = multi_index(2 * n, d, two_direction_link, 2, rng=rng)
                w_first, w = Ws[0], Ws[1]
            else:
                X, y, w = single_index(2 * n, d, link, rng=rng)
                w_first = w
            batch, fresh = (X[:n], y[:n]), (X[n:], y[n:])
            W0 = rng.standard_normal((p, d)) / math.sqrt(d)
            b = np.where(np.arange(p) % 2 == 0, 1.0, -1.0)
            rng.shuffle(b)
            a = b / p
            with np.errstate(over="ignore"):  # tanh' = 1/cosh^2 -> 0 for huge arguments
                (W1,) = multi_step(W0, a, [batch], eta, act, "correlation", scaling=1.0)
            m1 = mean_update(W0, W1, a)
            out["first"][r, j] = abs(m1 @ w_first) / np.linalg.norm(m1)
            m1 /= np.linalg.norm(m1)
            for kind, second in (("reuse", batch), ("fresh", fresh)):
                with np.errstate(over="ignore"):
                    (W2,) = multi_step(W1, a, [second], eta, act, "correlation",
                                          scaling=1.0)
                m = mean_update(W1, W2, a)
                new = m - (m @ m1) * m1
                res = out[kind]
                res["new"][r, j] = abs(new @ w) / np.linalg.norm(new)
                res["overlap"][r, j] = abs(m @ w) / np.linalg.norm(m)
                res["along"][r, j] = (new @ w) / (c * delta)
    return out


def self_term(X, y, W0, a, eta, dsigma) -> np.ndarray:
    r"""Own-label part of the pre-activation shift after one step on a batch (chapter 7).

    With :math:`f = \sum_ja_j\sigma(\langle w_j,x\rangle)`, the correlation loss and
    :math:`W_1 = W_0-\eta\nabla\hat R`, the shift of the pre-activation of sample :math:`i` in
    neuron :math:`j` is :math:`\eta a_j\frac1n\sum_ky_k\sigma'(z_{kj})\langle x_k,x_i\rangle`;
    its :math:`k = i` term

    .. math:: \eta\,a_j\,y_i\,\sigma'(z_{ij})\,\|x_i\|^2/n

    is the sample's own label, seen again when the batch is reused (chapter 7, eq. (self
    term)). Returns the (n, p) matrix.
    """
    X, y = V.data_pair(X, y)
    W0, a, X = check_params(W0, a, X)
    eta = V.nonneg_float(eta, "eta")
    if not callable(dsigma):
        raise ValueError("dsigma must be a vectorised callable")
    sq = np.einsum("ij,ij->i", X, X)
    return eta * np.asarray(dsigma(X @ W0.T), dtype=float) * (y * sq / X.shape[0])[:, None] * a
