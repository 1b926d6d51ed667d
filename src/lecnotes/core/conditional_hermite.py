r"""The conditional Hermite functions :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]` and their norms.

:func:`conditional_hermite` and :func:`conditional_hermite_norms` compute, without Monte
Carlo, :math:`\zeta_k` and :math:`\mathbb E[\zeta_k(Y)^2]` for :math:`Y=\varphi(G)+\tau Z`
(chapters 2-4: the generative exponent, the optimal first-moment preprocessing
:math:`\mathbb E[G\mid Y]`, the weak-recovery threshold of spectral methods). The law of
:math:`Y` comes from the piece decomposition of :mod:`lecnotes.core.label_law`, where the method and
its accuracy are described.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_legendre, gaussian_expectation, hermite_polys
from lecnotes.core.label_inverse import abs_derivative, atom_tables, invert, label_interval
from lecnotes.core.label_law import (
    CHUNK,
    GH32_NODES,
    GH32_WEIGHTS,
    GL12_NODES,
    GL12_WEIGHTS,
    KMAX_LIMIT,
    LINE_HALF_WIDTH,
    N_GPANELS,
    N_UPANELS,
    NOISE_WINDOW,
    Pieces,
    evaluate,
    gauss,
    pieces,
)
from lecnotes.core.targets import get_link

__all__ = [
    "check_kmax",
    "conditional_hermite_norms",
    "conditional_hermite",
    "weak_recovery_ratio",
]


def _zeta_continuous(P: Pieces, y: np.ndarray, kmax: int, g_own=None, own=None):
    """Sums over preimages on the continuous part: num (m, kmax+1) = sum_j w_j h_k(g_j),
    den (m,) = sum_j w_j, w_j = gamma(g_j)/|phi'(g_j)|, for the pieces covering y.

    If ``g_own`` and ``own`` are given, the preimage in piece ``own`` is ``g_own`` itself and
    the weight of that piece is returned too (used by the quadrature of the norms).
    """
    num = np.zeros((y.size, kmax + 1))
    den = np.zeros(y.size)
    w_own = None
    iv = label_interval(P, y)
    ok = iv >= 0
    for j in range(P.n_mono):  # loop over pieces (a handful)
        inside = ok & P.member[np.maximum(iv, 0), j]
        if not inside.any():
            continue
        gj = g_own[inside] if own == j else invert(P, j, y[inside])
        w = gauss(gj) / abs_derivative(P, j, gj)
        num[inside] += w[:, None] * hermite_polys(gj, kmax, normalized=True).T
        den[inside] += w
        if own == j:
            w_own = np.zeros(y.size)
            w_own[inside] = w
    return num, den, w_own


def _zeta_noisy(P: Pieces, y: np.ndarray, kmax: int, tau: float, atom_num: np.ndarray):
    """N_k(y) = E[h_k(G) p_tau(y - phi(G))], k = 0..kmax, shape (m, kmax+1)."""
    out = np.zeros((y.size, kmax + 1))
    if P.atoms.size:
        kern = gauss((y[:, None] - P.atoms[None, :]) / tau) / tau  # (m, A)
        out += kern @ atom_num
    R = NOISE_WINDOW * tau
    t = np.linspace(0.0, 1.0, N_UPANELS + 1)
    t_g = np.linspace(0.0, 1.0, N_GPANELS + 1)
    for j in range(P.n_mono):
        u0 = np.maximum(y - R, P.mono_ylo[j])
        u1 = np.minimum(y + R, P.mono_yhi[j])
        ok = u1 > u0
        if not ok.any():
            continue
        yy, u0, u1 = y[ok], u0[ok], u1[ok]
        us = u0[:, None] + (u1 - u0)[:, None] * t[None, :]  # (m, P+1) equal steps in phi
        gs = invert(P, j, us.ravel()).reshape(us.shape)
        # where the window reaches an end of the piece's image use the end of the piece itself
        # (next to a turning point the inversion is only accurate to sqrt(machine epsilon))
        g_at_ylo, g_at_yhi = (
            (P.mono_lo[j], P.mono_hi[j]) if P.mono_dir[j] > 0 else (P.mono_hi[j], P.mono_lo[j])
        )
        gs[:, 0] = np.where(u0 <= P.mono_ylo[j], g_at_ylo, gs[:, 0])
        gs[:, -1] = np.where(u1 >= P.mono_yhi[j], g_at_yhi, gs[:, -1])
        # add equal steps in g, so that a window stretched over a flat part of the link (where
        # phi barely moves but the Gaussian weight does) is also cut finely enough
        g_lo = gs.min(axis=1, keepdims=True)
        g_hi = gs.max(axis=1, keepdims=True)
        g_eq = g_lo + (g_hi - g_lo) * t_g[None, 1:-1]
        gs = np.sort(np.concatenate([gs, g_eq], axis=1), axis=1)
        a, b = gs[:, :-1], gs[:, 1:]
        half = 0.5 * (b - a)
        nodes = 0.5 * (a + b)[..., None] + half[..., None] * GL12_NODES  # (m, P, n)
        wts = np.abs(half)[..., None] * GL12_WEIGHTS
        fv = evaluate(P.phi, nodes.ravel()).reshape(nodes.shape)
        base = wts * gauss(nodes) * gauss((yy[:, None, None] - fv) / tau) / tau
        H = hermite_polys(nodes.ravel(), kmax, normalized=True).reshape((kmax + 1,) + nodes.shape)
        out[ok] += np.einsum("kmpn,mpn->mk", H, base)
    return out


def _zeta_values(P: Pieces, y: np.ndarray, kmax: int, tau: float) -> np.ndarray:
    """zeta_k(y) for k = 0..kmax, shape (m, kmax+1); NaN where y is off the support."""
    y = np.asarray(y, dtype=float)
    out = np.full((y.size, kmax + 1), np.nan)
    mass, atom_num = atom_tables(P, kmax)
    for s in range(0, y.size, CHUNK):
        yc = y[s : s + CHUNK]
        if tau > 0:
            N = _zeta_noisy(P, yc, kmax, tau, atom_num)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s : s + CHUNK] = N / N[:, :1]
            out[s : s + CHUNK][N[:, 0] <= 0] = np.nan
            continue
        num, den, _ = _zeta_continuous(P, yc, kmax)
        with np.errstate(invalid="ignore", divide="ignore"):
            val = num / den[:, None]
        val[den <= 0] = np.nan
        if P.atoms.size:  # atoms take precedence (exact match of the flat value)
            idx = np.searchsorted(P.atoms, yc)
            idx_c = np.clip(idx, 0, P.atoms.size - 1)
            hit = P.atoms[idx_c] == yc
            val[hit] = atom_num[idx_c[hit]] / mass[idx_c[hit], None]
        out[s : s + CHUNK] = val
    return out


_GL20_N, _GL20_W = gauss_legendre(20)


def _composite_rule(a: np.ndarray, b: np.ndarray, width: float = 0.25):
    """Nodes and weights of composite 20-point Gauss-Legendre on the intervals [a_i, b_i]."""
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    npan = np.maximum(np.ceil((b - a) / width).astype(int), 1)
    owner = np.repeat(np.arange(a.size), npan)
    step = np.repeat((b - a) / npan, npan)
    idx = np.arange(npan.sum()) - np.repeat(np.cumsum(npan) - npan, npan)
    left = a[owner] + idx * step
    nodes = (left + 0.5 * step)[:, None] + 0.5 * step[:, None] * _GL20_N[None, :]
    wts = 0.5 * step[:, None] * _GL20_W[None, :]
    return nodes.ravel(), wts.ravel()


def _halves(P: Pieces):
    """Split the continuous part of the law of Y into label half-intervals, each carried by a
    reference piece r (with a turning point at the interval's end when there is one).

    Returns arrays (ga, gb, r, i): the g-range [ga, gb] of the half in piece r, and the label
    interval index i. Integrating over g in [ga, gb] with weight gamma(g) the function
    zeta(phi(g))^2 * sum_j w_j / w_r gives the contribution of that half to E[zeta_k(Y)^2].
    """
    ga, gb, rr, ii = [], [], [], []
    for i in range(P.yv.size - 1):  # loop over label intervals (a handful)
        S = np.nonzero(P.member[i])[0]
        if S.size == 0:
            continue
        lo_v, hi_v = P.yv[i], P.yv[i + 1]
        mid = 0.5 * (lo_v + hi_v)
        for a_v, b_v, end_v in ((lo_v, mid, lo_v), (mid, hi_v, hi_v)):
            # pieces whose turning point sits at end_v: the natural variable there
            gs = np.array([invert(P, j, np.array([end_v]))[0] for j in S])
            is_turn = np.array(
                [
                    (P.mono_turn_lo[j] and abs(g - P.mono_lo[j]) < 1e-6)
                    or (P.mono_turn_hi[j] and abs(g - P.mono_hi[j]) < 1e-6)
                    for j, g in zip(S, gs, strict=True)
                ]
            )
            r = S[np.argmax(is_turn)] if is_turn.any() else S[0]
            g2 = invert(P, r, np.array([a_v, b_v]))
            # at an end of r's image take the end of the piece itself: next to a turning point
            # the bisection stops where phi rounds onto the extremum value, up to 1e-8 short
            ends_v = np.array([P.mono_ylo[r], P.mono_yhi[r]])
            ends_g = np.array([P.mono_lo[r], P.mono_hi[r]])
            if P.mono_dir[r] < 0:
                ends_g = ends_g[::-1]
            close = 256 * np.finfo(float).eps * max(1.0, abs(a_v), abs(b_v))
            for t, v in enumerate((a_v, b_v)):
                hit = np.abs(ends_v - v) <= close
                if hit.any():
                    g2[t] = ends_g[np.argmax(hit)]
            ga.append(min(g2))
            gb.append(max(g2))
            rr.append(r)
            ii.append(i)
    return np.array(ga), np.array(gb), np.array(rr, dtype=int), np.array(ii, dtype=int)


def _norms(P: Pieces, kmax: int, tau: float) -> np.ndarray:
    """E[zeta_k(Y)^2] for k = 0..kmax (entry 0 is the total mass, 1 up to ~1e-15)."""
    mass, atom_num = atom_tables(P, kmax)
    total = np.zeros(kmax + 1)
    if tau == 0:
        nz = mass > 0
        total += np.sum(atom_num[nz] ** 2 / mass[nz, None], axis=0)
    elif P.atoms.size:
        # atoms: E[zeta(c + tau Z)^2] by adaptive quadrature in Z, cut where the label sits
        # half-way between two atoms (where the posterior switches from one to the other)
        A = P.atoms.size

        def f_atoms(z):
            y = (P.atoms[None, :] + tau * z[:, None]).ravel()
            zz = _zeta_values(P, y, kmax, tau).reshape(z.size, A, kmax + 1)
            return np.einsum("a,mak->mk", mass, np.nan_to_num(zz) ** 2)

        mids = 0.5 * (P.atoms[:, None] + P.atoms[None, :])
        brk_z = ((mids[None, :, :] - P.atoms[:, None, None]) / tau).ravel()
        total += gaussian_expectation(f_atoms, breakpoints=brk_z, cutoff=LINE_HALF_WIDTH, tol=1e-11)
    if P.n_mono == 0:
        return total
    if tau == 0:
        # the continuous part, half-interval by half-interval, in the natural variable g of the
        # reference piece: there the integrand zeta(phi(g))^2 sum_j w_j / w_r is smooth, so a
        # fixed composite Gauss-Legendre rule (panels <= 0.25, 20 nodes) is accurate to ~1e-12
        # and never samples the rounding-dominated neighbourhood of a turning point
        ga, gb, rr, _ = _halves(P)
        for r in np.unique(rr):  # loop over reference pieces (a handful)
            nodes, wts = _composite_rule(ga[rr == r], gb[rr == r])
            y = evaluate(P.phi, nodes)
            num, den, w_r = _zeta_continuous(P, y, kmax, g_own=nodes, own=r)
            good = (den > 0) & (w_r > 0)
            zeta = num[good] / den[good, None]
            dens = gauss(nodes[good]) * wts[good]
            total += np.sum((dens * den[good] / w_r[good])[:, None] * zeta**2, axis=0)
        return total

    def integrand_noisy(g):
        out = np.zeros((g.size, kmax + 1))
        inm = np.zeros(g.shape, dtype=bool)
        for j in range(P.n_mono):
            inm |= (g > P.mono_lo[j]) & (g < P.mono_hi[j])
        if not inm.any():
            return out
        y = evaluate(P.phi, g[inm])
        yy = (y[:, None] + tau * GH32_NODES[None, :]).ravel()
        z = _zeta_values(P, yy, kmax, tau).reshape(y.size, GH32_NODES.size, kmax + 1)
        out[inm] = np.einsum("z,mzk->mk", GH32_WEIGHTS, np.nan_to_num(z) ** 2)
        return out

    ga, gb, _, _ = _halves(P)
    brk = np.unique(np.concatenate([ga, gb, P.breaks]))
    total += gaussian_expectation(integrand_noisy, breakpoints=brk, cutoff=10.0, tol=1e-11)
    return total


def check_kmax(kmax) -> int:
    """Validate a largest degree: an integer in ``1..KMAX_LIMIT``.

    Parameters
    ----------
    kmax : int
        Largest degree.

    Returns
    -------
    int
    """
    kmax = V.positive_int(kmax, "kmax", minimum=1)
    if kmax > KMAX_LIMIT:
        raise ValueError(f"kmax must be <= {KMAX_LIMIT}, got {kmax}")
    return kmax


def conditional_hermite_norms(link, kmax: int = 8, noise: float = 0.0) -> np.ndarray:
    r""":math:`\mathbb E[\zeta_k(Y)^2]` for ``k = 1..kmax`` (chapter 2).

    The quantities of {eq}`eq-ch2-generative-exponent`.

    :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`, :math:`Y=\varphi(G)+\tau Z`. Each value lies in
    :math:`[0,1]`: it is the squared norm of the projection of :math:`h_k(G)` on the functions of
    :math:`Y`, i.e. :math:`\sup_T \mathbb E[T(Y)h_k(G)]^2/\mathbb E[T(Y)^2]`
    ({eq}`eq-ch2-zeta-variational`). Computed by exact
    quadrature on the pieces of the link (module doc), never by Monte Carlo: closed forms on
    the flat pieces, preimages on the monotone ones, a ratio of Gaussian integrals with noise.
    Accuracy: about 1e-11 absolute without noise; about 1e-6 relative with noise (measured
    against refined rules); zeros by symmetry or construction come out below 1e-18.

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    kmax : int
        ``1 <= kmax <= 12``.
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    ndarray of shape ``(kmax,)``; entry ``k - 1`` is :math:`\mathbb E[\zeta_k(Y)^2]`.
    """
    phi = get_link(link)
    kmax = check_kmax(kmax)
    tau = V.nonneg_float(noise, "noise")
    P = pieces(phi)
    return np.clip(_norms(P, kmax, tau)[1:], 0.0, None)


def conditional_hermite(link, k: int, noise: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    r"""The optimal degree-k label preprocessing :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`.

    Chapter 2, {prf:ref}`def-ch2-generative-exponent`; for :math:`k = 1` the optimal
    preprocessing :math:`T^\star` of chapter 3, {prf:ref}`thm-optimal-preprocessing`.
    Returns a vectorised callable of the labels. Noiseless links: on an atom
    :math:`c` of :math:`Y` (a flat stretch of the link, matched by exact equality of the label)
    the closed form :math:`\int h_k\gamma/\text{mass}` over the flat pieces; on the continuous
    part the preimage formula :math:`\sum_j w_jh_k(g_j)/\sum_j w_j`,
    :math:`w_j=\gamma(g_j)/|\varphi'(g_j)|`. With noise :math:`\tau>0`,
    :math:`\zeta_k(y)=\mathbb E[h_k(G)p_\tau(y-\varphi(G))]/\mathbb E[p_\tau(y-\varphi(G))]`, a
    ratio of two Gaussian integrals (module doc). The value is ``NaN`` for labels that
    cannot occur (off the support of :math:`Y`, or farther than :math:`10\tau` from it).

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    k : int
        Degree, ``0 <= k <= 12`` (:math:`\zeta_0\equiv1`).
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    callable
        ``zeta(y)`` for array-like ``y`` (any shape), returning an array of the same shape.
    """
    phi = get_link(link)
    k = V.positive_int(k, "k", minimum=0)
    if k > KMAX_LIMIT:
        raise ValueError(f"k must be <= {KMAX_LIMIT}, got {k}")
    tau = V.nonneg_float(noise, "noise")
    P = pieces(phi)

    def zeta(y):
        y = V.finite_array(y, "y")
        flat = y.ravel()
        if flat.size == 0:
            return np.zeros(y.shape)
        return _zeta_values(P, flat, max(k, 1), tau)[:, k].reshape(y.shape)

    zeta.__doc__ = f"zeta_{k}(y) = E[h_{k}(G) | Y = y] for the link {phi!r}, noise {tau:g}"
    return zeta


def weak_recovery_ratio(link, noise: float = 0.0) -> float:
    r"""The weak-recovery ratio :math:`\delta_u=1/\mathbb E[(\mathbb E[G^2\mid Y]-1)^2]`.

    Chapter 4, {eq}`eq-ch4-delta-u`: the smallest threshold :math:`\delta_c(T)` of any spectral
    estimator :math:`D_T` (Cauchy-Schwarz, {prf:ref}`prop-threshold`), and for real phase
    retrieval also the information-theoretic limit of every estimator
    ({prf:ref}`thm-it-limit`). Since :math:`\mathbb E[G^2\mid Y]-1=\sqrt2\,\zeta_2(Y)`, it is
    :math:`1/(2\,\mathbb E[\zeta_2(Y)^2])`, computed by :func:`conditional_hermite_norms`
    (exact quadrature, no Monte Carlo). The one implementation used by
    :mod:`lecnotes.spectral.theory` and :mod:`lecnotes.spectral.optimal_theory`.

    Parameters
    ----------
    link : callable or str
        The link :math:`\varphi`.
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    float
        ``inf`` when :math:`\zeta_2\equiv0` (no second-order signal, e.g. the sign link);
        ``1/2`` for phase retrieval, ``1`` for the ReLU link.
    """
    q = float(conditional_hermite_norms(link, 2, noise)[1])
    return float("inf") if q <= 1e-14 else 1.0 / (2.0 * q)
