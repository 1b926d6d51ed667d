r"""The law of a label :math:`Y=\varphi(G)`: the decomposition of a link into pieces.

Foundation of :mod:`lecnotes.core.conditional_hermite` (chapters 2-5).

How :math:`\zeta_k` and :math:`\mathbb E[\zeta_k(Y)^2]` are computed (no Monte Carlo)
-------------------------------------------------------------------------------------
The link is first cut into *pieces* on :math:`[-12, 12]` (the Gaussian mass outside is
:math:`3.6\times10^{-33}`): it is scanned on a grid of spacing :math:`10^{-3}` (plus the
link's declared ``breakpoints``); jumps are located by bisection to machine precision,
turning points by bisection on the sign of a centred difference, the ends of flat stretches
by bisection. Each piece is either *flat* (:math:`\varphi\equiv c`) or *strictly monotone
and continuous*. Then :math:`Y=\varphi(G)` has

* atoms at the flat values :math:`c` with mass :math:`\sum[\Phi(\beta)-\Phi(\alpha)]` over the
  flat pieces :math:`(\alpha,\beta)` with value :math:`c`, and there
  :math:`\zeta_k(c)=\sum\int_\alpha^\beta h_k\gamma\,/\,\text{mass}` in closed form, using
  :math:`\int_\alpha^\beta \mathrm{He}_k\gamma = \mathrm{He}_{k-1}(\alpha)\gamma(\alpha) -
  \mathrm{He}_{k-1}(\beta)\gamma(\beta)` (exact for piecewise-constant links such as
  ``sign`` or indicators of sets);
* a density on the images of the monotone pieces: for such a value :math:`y` with
  preimages :math:`g_j(y)` (one per monotone piece whose image contains :math:`y`, found by
  bisection) :math:`\zeta_k(y)=\sum_j w_j h_k(g_j)/\sum_j w_j` with
  :math:`w_j=\gamma(g_j)/|\varphi'(g_j)|` (:math:`\varphi'` by central differences).

Then :math:`\mathbb E[\zeta_k(Y)^2] = \sum_c \text{mass}_c\,\zeta_k(c)^2 +
\mathbb E[\zeta_k(\varphi(G))^2\,\mathbb 1\{G\text{ in a monotone piece}\}]`, the second term by the
quadrature over the label intervals on which the set of preimages is constant: each half of
such an interval is parametrised by :math:`g` on one *reference* piece (one with a turning
point at the interval's end, when there is one), where the integrand
:math:`\zeta_k(\varphi(g))^2\sum_jw_j/w_r` is smooth, and integrated by composite 20-point
Gauss-Legendre (panels of width at most 0.25). Errors enter squared, so a :math:`\zeta_k` that
vanishes by symmetry comes out below :math:`10^{-20}`.

With noise :math:`\tau>0`, :math:`\zeta_k(y)=N_k(y)/N_0(y)` with
:math:`N_k(y)=\mathbb E[h_k(G)p_\tau(y-\varphi(G))]` (a ratio of two Gaussian integrals):
atoms contribute :math:`\text{mass}_c\,\zeta_k(c)\,p_\tau(y-c)` exactly, each monotone piece an
integral over the window of :math:`g` where :math:`|\varphi(g)-y|\le 10\tau`, cut at three
equal steps in :math:`\varphi` and three in :math:`g`, 12-point Gauss-Legendre on each panel
(about 1e-15 relative). The outer 2-d integral :math:`\mathbb E[\zeta_k(\varphi(G)+\tau Z)^2]`
uses adaptive quadrature in :math:`G` and 32-point Gauss-Hermite in :math:`Z` on the monotone
pieces (relative accuracy about 1e-6 down to :math:`\tau=0.05`, measured against 96 points),
adaptive quadrature in :math:`Z` on the atoms.

Limitations: the link must be vectorised, finite on :math:`[-12,12]`, and piecewise monotone
with pieces (and wiggles) longer than the scanning grid spacing :math:`10^{-3}`; declare finer
features through ``Link.breakpoints``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lecnotes.core.hermite import gauss_hermite, gauss_legendre

__all__ = [
    "KMAX_LIMIT",
    "LINE_HALF_WIDTH",
    "NGRID",
    "NOISE_WINDOW",
    "N_UPANELS",
    "N_GPANELS",
    "GL12_NODES",
    "GL12_WEIGHTS",
    "GH32_NODES",
    "GH32_WEIGHTS",
    "CHUNK",
    "gauss",
    "evaluate",
    "Pieces",
    "pieces",
]


KMAX_LIMIT = 12
"""Largest degree accepted (the tails of :math:`h_k^2` beyond :math:`|g|=12` stay negligible)."""


LINE_HALF_WIDTH = 12.0  # half-width of the analysed line


NGRID = 24_000  # cells of the scanning grid (spacing 1e-3)


_SQRT_2PI = math.sqrt(2.0 * math.pi)


NOISE_WINDOW = 10.0  # noisy case: integrate over |phi(g) - y| <= R * tau


N_UPANELS = 3  # noisy case: window cut at equal steps in phi ...


N_GPANELS = 3  # ... and at equal steps in g


GL12_NODES, GL12_WEIGHTS = gauss_legendre(12)  # noisy case: rule on each panel of the window


GH32_NODES, GH32_WEIGHTS = gauss_hermite(32)  # noisy case: outer rule in Z (weights sum to 1)


CHUNK = 4096


def gauss(x):
    r"""The standard Gaussian density :math:`\gamma(x)`.

    Parameters
    ----------
    x : array_like
        Points.

    Returns
    -------
    ndarray shaped like ``x``
    """
    return np.exp(-0.5 * x * x) / _SQRT_2PI


def evaluate(phi: Callable, x: np.ndarray) -> np.ndarray:
    """Evaluate a link on an array of points, checking shape and finiteness.

    A 0-d result (a constant link) is broadcast to the points.

    Parameters
    ----------
    phi : callable
        Vectorised link.
    x : ndarray
        Points.

    Returns
    -------
    ndarray shaped like ``x``
    """
    val = np.asarray(phi(x), dtype=float)
    if val.shape != x.shape:
        if val.ndim == 0:
            val = np.full(x.shape, float(val))
        else:
            raise ValueError(
                f"the link must be vectorised: on {x.shape[0]} points it returned shape {val.shape}"
            )
    if not np.all(np.isfinite(val)):
        raise ValueError("the link returned NaN or infinite values on [-12, 12]")
    return val


@dataclass(frozen=True)
class Pieces:
    """The decomposition of a link on [-12, 12] into flat and strictly monotone pieces.

    Built by :func:`pieces` (module doc); the law of :math:`Y = \varphi(G)` of chapter 2,
    {prf:ref}`def-ch2-generative-exponent`, is read off it: atoms from the flat pieces, a
    density from the monotone ones.
    """

    phi: Callable
    mono_lo: np.ndarray  # (J,) ends of the strictly monotone pieces
    mono_hi: np.ndarray
    mono_dir: np.ndarray  # +1 increasing, -1 decreasing
    mono_ylo: np.ndarray  # image [ylo, yhi]
    mono_yhi: np.ndarray
    mono_tab_g: tuple  # per piece: grid of g in [lo, hi] ...
    mono_tab_f: tuple  # ... and dir * phi there (increasing), for bracketing
    flat_lo: np.ndarray  # (F,) flat pieces, ends may be -inf / +inf
    flat_hi: np.ndarray
    flat_val: np.ndarray
    atoms: np.ndarray  # (A,) distinct flat values
    atom_of_flat: np.ndarray  # (F,) index of each flat piece's atom
    breaks: np.ndarray  # finite piece ends (for quadrature)
    mono_turn_lo: np.ndarray  # (J,) the piece's lower end is a turning point
    mono_turn_hi: np.ndarray
    mono_smooth_lo: np.ndarray  # (J,) phi is smooth across the lower end (located extremum)
    mono_smooth_hi: np.ndarray
    yv: np.ndarray  # (V,) sorted image end values, near-equal ones merged
    member: np.ndarray  # (V-1, J) piece j covers the label interval (yv[i], yv[i+1])

    @property
    def n_mono(self) -> int:
        """Number of strictly monotone pieces."""
        return self.mono_lo.shape[0]


def _jump_search(phi, a, b, fa, fb):
    """Bisect each cell towards its largest increment; flag cells holding a jump."""
    a, b, fa, fb = a.copy(), b.copy(), fa.copy(), fb.copy()
    d_early = None
    for it in range(64):
        m = 0.5 * (a + b)
        fm = evaluate(phi, m)
        left = np.abs(fm - fa) >= np.abs(fb - fm)
        b = np.where(left, m, b)
        fb = np.where(left, fm, fb)
        a = np.where(left, a, m)
        fa = np.where(left, fa, fm)
        if it == 24:
            d_early = np.abs(fb - fa)
    d_end = np.abs(fb - fa)
    scale = np.maximum(np.maximum(np.abs(fa), np.abs(fb)), 1e-300)
    jump = (d_end > 0.5 * d_early) & (d_end > 64 * np.finfo(float).eps * scale)
    return jump, a, b, fa, fb


def _extremum(phi, a, b, sign):
    """Locate the maximum (sign=+1) or minimum (sign=-1) of phi in each bracket [a, b].

    Bisection on the sign of the centred difference phi(t + h) - phi(t - h), h = 1e-5: for a
    smooth extremum the result is within about 1e-10 of the true point (a golden-section
    search would stop at sqrt(machine epsilon) ~ 1e-8), for a kink within rounding.
    """
    a, b = a.copy(), b.copy()
    h = 1e-5
    for _ in range(64):
        m = 0.5 * (a + b)
        rising = sign * (evaluate(phi, m + h) - evaluate(phi, m - h)) > 0
        a = np.where(rising, m, a)
        b = np.where(rising, b, m)
    return 0.5 * (a + b)


def _flat_edge(phi, a, b, value, flat_on_right):
    """Bisect for the end of a flat stretch (phi == value) inside [a, b]."""
    a, b = a.copy(), b.copy()
    for _ in range(64):
        m = 0.5 * (a + b)
        eq = evaluate(phi, m) == value
        # the midpoint replaces the end on its side of the edge: the flat side is b when
        # flat_on_right (phi != value at a, == value at b), a otherwise
        to_b = eq if flat_on_right else ~eq
        b = np.where(to_b, m, b)
        a = np.where(to_b, a, m)
    return a, b


def _insert_cells(pos, cells, new):
    """Insert ``new[i]`` before index ``pos`` in each array of ``cells`` (np.insert)."""
    return [np.insert(c, pos, v) for c, v in zip(cells, new, strict=True)]


def _decompose(phi: Callable, declared=()) -> Pieces:
    """Cut ``phi`` on [-12, 12] into flat and strictly monotone pieces (see module doc)."""
    L = LINE_HALF_WIDTH
    declared = np.asarray([float(t) for t in declared if -L < float(t) < L], dtype=float)
    x = np.unique(np.concatenate([np.linspace(-L, L, NGRID + 1), declared]))
    f = evaluate(phi, x)
    jump, ja, jb, jfa, jfb = _jump_search(phi, x[:-1], x[1:], f[:-1], f[1:])

    # cells: a jump cell [x_i, x_{i+1}] becomes [x_i, ja] and [jb, x_{i+1}] with a cut between
    lo = x[:-1].copy()
    hi = np.where(jump, ja, x[1:])
    flo, fhi = f[:-1], np.where(jump, jfa, f[1:])
    cut = np.zeros(lo.shape, dtype=bool)
    cut[0] = True
    cut |= np.isin(lo, declared)
    pos = np.nonzero(jump)[0] + 1
    lo, hi, flo, fhi, cut = _insert_cells(
        pos, (lo, hi, flo, fhi, cut), (jb[jump], x[1:][jump], jfb[jump], f[1:][jump], True))
    if declared.size:  # a cut right after a declared break point sits on the cell starting there
        cut |= np.isin(lo, declared)
    # drop zero-length cells, carrying their cut to the next cell
    keep = hi > lo
    carry = np.cumsum(cut)
    kept_idx = np.nonzero(keep)[0]
    prev_carry = np.concatenate([[0], carry[kept_idx[:-1]]])
    cut = (carry[kept_idx] - prev_carry) > 0
    lo, hi, flo, fhi = lo[keep], hi[keep], flo[keep], fhi[keep]
    s = np.sign(fhi - flo)
    # an 'equal-ends' cell that is not flat inside straddles a turning point: split it
    z = np.nonzero(s == 0)[0]
    if z.size:
        mid = 0.5 * (lo[z] + hi[z])
        fm = evaluate(phi, mid)
        bad = fm != flo[z]
        if bad.any():
            zb, mid_b, fm_b = z[bad], mid[bad], fm[bad]
            hi2, fhi2 = hi[zb].copy(), fhi[zb].copy()
            hi[zb], fhi[zb] = mid_b, fm_b
            s[zb] = np.sign(fm_b - flo[zb])
            lo, hi, flo, fhi, s, cut = _insert_cells(
                zb + 1, (lo, hi, flo, fhi, s, cut),
                (mid_b, hi2, fm_b, fhi2, np.sign(fhi2 - fm_b), False))
    n = lo.size
    # runs of equal class not separated by a cut
    start = np.ones(n, dtype=bool)
    start[1:] = cut[1:] | (s[1:] != s[:-1])
    run_id = np.cumsum(start) - 1
    starts = np.nonzero(start)[0]
    ends = np.concatenate([starts[1:] - 1, [n - 1]])
    r_lo, r_hi, r_s = lo[starts].copy(), hi[ends].copy(), s[starts]
    # refine the boundaries between adjacent runs (no cut in between)
    bnd = starts[1:][~cut[starts[1:]]]  # first cells of runs that continue the previous run
    if bnd.size:
        prev_run = run_id[bnd - 1]
        this_run = run_id[bnd]
        sp, sn = s[bnd - 1], s[bnd]
        turn = (sp != 0) & (sn != 0)
        if turn.any():
            i = bnd[turn]
            m = _extremum(phi, lo[i - 1], hi[i], sp[turn])
            r_hi[prev_run[turn]] = m
            r_lo[this_run[turn]] = m
        # a monotone run into a flat one (edge in the last cell of the first run, flat on the
        # right), and a flat run into a monotone one (edge in the first cell of the second)
        for sel, into in (((sp != 0) & (sn == 0), True), ((sp == 0) & (sn != 0), False)):
            if sel.any():
                i = bnd[sel]
                c = i - 1 if into else i
                value = flo[i] if into else fhi[i - 1]
                ea, eb = _flat_edge(phi, lo[c], hi[c], value, flat_on_right=into)
                r_hi[prev_run[sel]] = ea
                r_lo[this_run[sel]] = eb
    good = r_hi > r_lo
    r_lo, r_hi, r_s = r_lo[good], r_hi[good], r_s[good]
    flat = r_s == 0
    mono = ~flat
    # flat pieces: value, extended to infinity at the ends of the line
    f_lo, f_hi = r_lo[flat].copy(), r_hi[flat].copy()
    f_val = evaluate(phi, 0.5 * (f_lo + f_hi)) if f_lo.size else np.zeros(0)
    f_lo[f_lo <= -L] = -np.inf
    f_hi[f_hi >= L] = np.inf
    atoms, atom_of_flat = np.unique(f_val, return_inverse=True)
    # monotone pieces
    m_lo, m_hi, m_dir = r_lo[mono], r_hi[mono], r_s[mono]
    if m_lo.size:
        y_lo_end, y_hi_end = evaluate(phi, m_lo), evaluate(phi, m_hi)
    else:
        y_lo_end = y_hi_end = np.zeros(0)
    m_ylo = np.minimum(y_lo_end, y_hi_end)
    m_yhi = np.maximum(y_lo_end, y_hi_end)
    tab_g, tab_f = [], []
    for j in range(m_lo.size):  # loop over pieces (a handful), not over samples
        inner = x[(x > m_lo[j]) & (x < m_hi[j])]
        gj = np.concatenate([[m_lo[j]], inner, [m_hi[j]]])
        fj = m_dir[j] * np.concatenate([[y_lo_end[j]], evaluate(phi, inner), [y_hi_end[j]]])
        fj = np.maximum.accumulate(fj)  # guard against rounding plateaus
        tab_g.append(gj)
        tab_f.append(fj)
    ends_all = np.concatenate([r_lo, r_hi])
    breaks = np.unique(ends_all[np.abs(ends_all) < L])
    # turning points: adjacent monotone runs sharing an end, with opposite directions
    shared = r_hi[:-1] == r_lo[1:]
    turn_after = shared & (r_s[:-1] * r_s[1:] == -1)
    t_hi = np.concatenate([turn_after, [False]])[mono]
    t_lo = np.concatenate([[False], turn_after])[mono]
    # ends across which phi is smooth: located extrema (not declared break points) and +-L
    smooth_after = turn_after & ~np.isin(r_hi[:-1], declared)
    sm_hi = np.concatenate([smooth_after, [True]])[mono] | (r_hi[mono] >= L)
    sm_lo = np.concatenate([[True], smooth_after])[mono] | (r_lo[mono] <= -L)
    # label intervals on which the set of preimages is constant; values that differ by a few
    # ulps (equal extrema found at different points) are merged, so that membership is decided
    # per interval, never by comparing a label with an extremum value it rounds onto
    vals = np.sort(np.concatenate([m_ylo, m_yhi]))
    if vals.size:
        gap = np.diff(vals) > 64 * np.finfo(float).eps * np.maximum(1.0, np.abs(vals[1:]))
        cid = np.concatenate([[0], np.cumsum(gap)])
        yv = np.array([vals[cid == c].mean() for c in range(cid[-1] + 1)])
        slack = 128 * np.finfo(float).eps

        def snap(v):
            i = np.searchsorted(yv, v - slack * np.maximum(1.0, np.abs(v)))
            return yv[np.clip(i, 0, yv.size - 1)]

        s_lo, s_hi = snap(m_ylo), snap(m_yhi)
        member = (s_lo[None, :] <= yv[:-1, None]) & (yv[1:, None] <= s_hi[None, :])
    else:
        yv, member = np.zeros(0), np.zeros((0, 0), dtype=bool)
    return Pieces(
        phi=phi,
        mono_lo=m_lo,
        mono_hi=m_hi,
        mono_dir=m_dir.astype(float),
        mono_ylo=m_ylo,
        mono_yhi=m_yhi,
        mono_tab_g=tuple(tab_g),
        mono_tab_f=tuple(tab_f),
        flat_lo=f_lo,
        flat_hi=f_hi,
        flat_val=f_val,
        atoms=atoms,
        atom_of_flat=atom_of_flat,
        breaks=breaks,
        mono_turn_lo=t_lo,
        mono_turn_hi=t_hi,
        mono_smooth_lo=sm_lo,
        mono_smooth_hi=sm_hi,
        yv=yv,
        member=member,
    )


def _decompose_link(link) -> Pieces:
    return _decompose(link, getattr(link, "breakpoints", ()))


_pieces_cached = functools.lru_cache(maxsize=64)(_decompose_link)


def pieces(link) -> Pieces:
    """The :class:`Pieces` of a link (cached for hashable links; module doc).

    Parameters
    ----------
    link : callable
        Vectorised link; its ``breakpoints`` attribute, if any, is used.

    Returns
    -------
    Pieces
    """
    try:
        return _pieces_cached(link)
    except TypeError:  # unhashable callable
        return _decompose_link(link)


