"""Working on the pieces of a link: inverse branches, derivatives, atoms, label intervals.

:mod:`lecnotes.core.label_law` decomposes a link :math:`\varphi` into monotone pieces, flat
pieces (atoms of the label law) and jumps; this module answers the questions that
:mod:`lecnotes.core.conditional_hermite` asks of that decomposition: the root of
:math:`\varphi(g)=u` on a piece, :math:`|\varphi'|` there, the Hermite numerators of the atoms,
and which pieces a label falls in.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from lecnotes.core.hermite import hermite_polys
from lecnotes.core.label_law import Pieces, evaluate, gauss


def invert(P: Pieces, j: int, u: np.ndarray) -> np.ndarray:
    """The g in monotone piece j with phi(g) = u (u clipped to the piece's image).

    The tabulated scan brackets each root in a cell of width 1e-3; the Illinois variant of
    regula falsi (superlinear, bracketing, so safe at kinks and turning points) then converges
    to rounding in a handful of steps; stragglers finish by bisection.

    Parameters
    ----------
    P : Pieces
        The decomposition.
    j : int
        Index of a monotone piece.
    u : ndarray
        Labels.

    Returns
    -------
    ndarray shaped like ``u``
        The preimages in piece ``j``.
    """
    d = P.mono_dir[j]
    target = d * np.clip(u, P.mono_ylo[j], P.mono_yhi[j])
    tg, tf = P.mono_tab_g[j], P.mono_tab_f[j]
    i = np.clip(np.searchsorted(tf, target, side="left"), 1, tg.size - 1)
    a, b = tg[i - 1].copy(), tg[i].copy()
    fa, fb = tf[i - 1] - target, tf[i] - target
    side = np.zeros(a.shape, dtype=np.int8)
    act = np.nonzero((fa < 0) & (fb > 0))[0]
    for it in range(60):
        if act.size == 0:
            break
        A, B, FA, FB = a[act], b[act], fa[act], fb[act]
        if it < 30:
            c = (A * FB - B * FA) / (FB - FA)
            bad = ~((c > A) & (c < B))
            c[bad] = 0.5 * (A[bad] + B[bad])
        else:  # bisection for the few that regula falsi has not finished
            c = 0.5 * (A + B)
        fc = d * evaluate(P.phi, c) - target[act]
        left = fc < 0
        sd = side[act]
        # Illinois: halve the stale end's value when the same side moves twice in a row
        FB = np.where(left & (sd == -1), 0.5 * FB, FB)
        FA = np.where(~left & (sd == 1), 0.5 * FA, FA)
        a[act] = np.where(left, c, A)
        fa[act] = np.where(left, fc, FA)
        b[act] = np.where(left, B, c)
        fb[act] = np.where(left, FB, fc)
        side[act] = np.where(left, -1, 1)
        done = (fc == 0) | (b[act] - a[act] <= 4 * np.finfo(float).eps * (1 + np.abs(c)))
        exact = fc == 0
        a[act[exact]] = c[exact]
        b[act[exact]] = c[exact]
        act = act[~done]
    out = np.where(fa == 0, a, np.where(fb == 0, b, 0.5 * (a + b)))
    return out


def abs_derivative(P: Pieces, j: int, g: np.ndarray) -> np.ndarray:
    """|phi'(g)| on monotone piece j by the fourth-order centred difference.

    Step ``h = 1e-3 (1 + |g|)`` (truncation ~h^4, rounding ~eps |phi| / h: about 1e-12
    relative), shrunk to keep the stencil [g - 2h, g + 2h] away from the non-smooth ends of
    the piece (jumps, kinks, edges of flat stretches). Smooth ends (located extrema) may be
    straddled, which keeps the derivative accurate next to a turning point, where it is small.

    Parameters
    ----------
    P : Pieces
        The decomposition.
    j : int
        Index of a monotone piece.
    g : ndarray
        Points of the piece.

    Returns
    -------
    ndarray shaped like ``g``
        :math:`|\varphi'(g)|`, at least 1e-300.
    """
    lo, hi = P.mono_lo[j], P.mono_hi[j]
    dist = np.full(g.shape, np.inf)
    if not P.mono_smooth_lo[j]:
        dist = np.minimum(dist, 0.4 * (g - lo))
    if not P.mono_smooth_hi[j]:
        dist = np.minimum(dist, 0.4 * (hi - g))
    h = np.minimum(1e-3 * (1.0 + np.abs(g)), dist)
    h = np.maximum(h, 1e-12 * (1.0 + np.abs(g)))
    f = evaluate(P.phi, np.concatenate([g + h, g - h, g + 2 * h, g - 2 * h])).reshape(4, -1)
    num = 8.0 * (f[0] - f[1]) - (f[2] - f[3])
    return np.maximum(np.abs(num) / (12.0 * h), 1e-300)


def atom_tables(P: Pieces, kmax: int):
    r"""Masses (A,) and numerators E[h_k(G) 1{phi(G)=c}] (A, kmax+1) of the atoms, exactly.

    By :math:`\int_\alpha^\beta \mathrm{He}_k\gamma = \mathrm{He}_{k-1}(\alpha)\gamma(\alpha)
    - \mathrm{He}_{k-1}(\beta)\gamma(\beta)` (module doc).

    Parameters
    ----------
    P : Pieces
        The decomposition.
    kmax : int
        Largest degree.

    Returns
    -------
    (mass, num) : tuple of ndarray
        Shapes (A,) and (A, kmax + 1).
    """
    A = P.atoms.size
    mass = np.zeros(A)
    num = np.zeros((A, kmax + 1))
    if A == 0:
        return mass, num
    lo, hi = P.flat_lo, P.flat_hi
    # Phi(hi) - Phi(lo) without cancellation in the upper tail
    upper = lo >= 0
    pm = np.where(upper, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))
    lo_f = np.where(np.isfinite(lo), lo, 0.0)
    hi_f = np.where(np.isfinite(hi), hi, 0.0)
    g_lo = np.where(np.isfinite(lo), gauss(lo_f), 0.0)
    g_hi = np.where(np.isfinite(hi), gauss(hi_f), 0.0)
    H_lo = hermite_polys(lo_f, kmax, normalized=True)  # (kmax+1, F)
    H_hi = hermite_polys(hi_f, kmax, normalized=True)
    per = np.zeros((lo.size, kmax + 1))
    per[:, 0] = pm
    for k in range(1, kmax + 1):  # int_lo^hi h_k gamma = (h_{k-1}gamma|lo - h_{k-1}gamma|hi)/sqrt k
        per[:, k] = (H_lo[k - 1] * g_lo - H_hi[k - 1] * g_hi) / math.sqrt(k)
    np.add.at(num, P.atom_of_flat, per)
    mass = num[:, 0].copy()
    return mass, num


def label_interval(P: Pieces, y: np.ndarray) -> np.ndarray:
    """Index i of the label interval [yv[i], yv[i+1]) holding y (-1 outside).

    Parameters
    ----------
    P : Pieces
        The decomposition.
    y : ndarray
        Labels.

    Returns
    -------
    ndarray of int shaped like ``y``
    """
    if P.yv.size < 2:
        return np.full(y.shape, -1)
    i = np.searchsorted(P.yv, y, side="right") - 1
    i = np.where(y == P.yv[-1], P.yv.size - 2, i)
    return np.where((i < 0) | (i > P.yv.size - 2), -1, i)
