r"""Information and generative exponents of a single-index link (chapter 2).

Setting (chapter 2): :math:`G\sim N(0,1)` and the label :math:`Y=\varphi(G)+\tau Z` with
:math:`Z\sim N(0,1)` independent of :math:`G` (``noise`` :math:`=\tau\ge 0`). With the
normalised Hermite polynomials :math:`h_k=\mathrm{He}_k/\sqrt{k!}`:

* the **information exponent** (chapter 2, eq. (IE)) is the index of the first non-zero
  Hermite coefficient :math:`c_k=\mathbb E[\varphi(G)h_k(G)]`, :math:`k\ge1`;
* the **generative exponent** (chapter 2, eq. (GE); Damian, Pillaud-Vivien, Lee, Bruna 2024)
  is :math:`k_\star=\min\{k\ge1:\ \mathbb E[\zeta_k(Y)^2]>0\}` with
  :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`, equivalently the smallest information
  exponent of :math:`T(Y)` over square-integrable label transformations :math:`T`.

Additive independent label noise changes neither exponent (chapter 2, proposition
(noise)); it only shrinks :math:`\mathbb E[\zeta_k(Y)^2]`, like :math:`C\tau^{-2m}` for large
:math:`\tau` (:func:`large_noise_asymptotics`).

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

Tolerances (documented, tested)
-------------------------------
* :data:`INFO_RTOL`: :math:`c_k` counts as non-zero when
  :math:`|c_k| > 10^{-9}\,\mathrm{sd}(\varphi(G))` (quadrature error is below
  :math:`10^{-11}\,\mathrm{sd}` for the catalogue links, discontinuous ones included);
* :data:`GEN_TOL`: :math:`\mathbb E[\zeta_k(Y)^2]\in[0,1]` counts as non-zero when it exceeds
  :math:`10^{-10}` (zeros come out below :math:`10^{-18}`); e.g.
  :math:`\varphi(u)=u^2+\varepsilon u` has :math:`\mathbb E[\zeta_1^2]\approx\varepsilon^2/2`,
  so :math:`k_\star=1` is detected for :math:`|\varepsilon|\gtrsim1.5\times10^{-5}`.

When no :math:`k\le` ``kmax`` qualifies (a constant link, or an exponent beyond ``kmax``) the
exponent functions raise :class:`ExponentNotFound`; they never return ``kmax``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from . import _validate as V
from .hermite import gaussian_expectation, hermite_coefficients, hermite_polys
from .targets import get_link

__all__ = [
    "INFO_RTOL",
    "GEN_TOL",
    "KMAX_LIMIT",
    "ExponentNotFound",
    "information_exponent",
    "generative_exponent",
    "conditional_hermite",
    "conditional_hermite_norms",
    "large_noise_asymptotics",
    "gen4_interval",
    "GEN4_A",
]

INFO_RTOL = 1e-9
"""Relative tolerance of :func:`information_exponent`: ``|c_k| > 1e-9 sd(phi(G))``."""

GEN_TOL = 1e-10
"""Absolute tolerance of :func:`generative_exponent` on ``E[zeta_k(Y)^2]`` (in [0, 1])."""

GEN4_A = 0.2254
r"""The ``a`` of ``LINKS["gen4"]``: the maximiser of :math:`\mathbb E[\zeta_4(Y)^2]`, rounded."""

KMAX_LIMIT = 12
"""Largest degree accepted (the tails of :math:`h_k^2` beyond :math:`|g|=12` stay negligible)."""

_L = 12.0  # half-width of the analysed line
_NGRID = 24_000  # cells of the scanning grid (spacing 1e-3)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_R_WINDOW = 10.0  # noisy case: integrate over |phi(g) - y| <= R * tau
_N_UPANELS = 3  # noisy case: window cut at equal steps in phi ...
_N_GPANELS = 3  # ... and at equal steps in g
_GL_N, _GL_W = np.polynomial.legendre.leggauss(12)
_GH_Z, _GH_W = np.polynomial.hermite_e.hermegauss(32)
_GH_W = _GH_W / _SQRT_2PI
_CHUNK = 4096


class ExponentNotFound(ValueError):
    """No degree ``k <= kmax`` qualifies: the exponent exceeds ``kmax`` or is infinite.

    Attributes
    ----------
    kmax : int
        The largest degree examined.
    values : ndarray
        The quantities that were compared with the tolerance (``|c_k|/sd`` for the
        information exponent, :math:`\\mathbb E[\\zeta_k(Y)^2]` for the generative one),
        for ``k = 1..kmax``.
    """

    def __init__(self, message: str, kmax: int, values):
        super().__init__(message)
        self.kmax = kmax
        self.values = np.asarray(values)


def _gauss(x):
    return np.exp(-0.5 * x * x) / _SQRT_2PI


def _evaluate(phi: Callable, x: np.ndarray) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------
# Decomposition of a link into flat and strictly monotone pieces
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Pieces:
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
        return self.mono_lo.shape[0]


def _jump_search(phi, a, b, fa, fb):
    """Bisect each cell towards its largest increment; flag cells holding a jump."""
    a, b, fa, fb = a.copy(), b.copy(), fa.copy(), fb.copy()
    d_early = None
    for it in range(64):
        m = 0.5 * (a + b)
        fm = _evaluate(phi, m)
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
        rising = sign * (_evaluate(phi, m + h) - _evaluate(phi, m - h)) > 0
        a = np.where(rising, m, a)
        b = np.where(rising, b, m)
    return 0.5 * (a + b)


def _flat_edge(phi, a, b, value, flat_on_right):
    """Bisect for the end of a flat stretch (phi == value) inside [a, b]."""
    a, b = a.copy(), b.copy()
    for _ in range(64):
        m = 0.5 * (a + b)
        eq = _evaluate(phi, m) == value
        if flat_on_right:  # phi != value at a, == value at b
            b = np.where(eq, m, b)
            a = np.where(eq, a, m)
        else:  # phi == value at a, != value at b
            a = np.where(eq, m, a)
            b = np.where(eq, b, m)
    return a, b


def _decompose(phi: Callable, declared=()) -> _Pieces:
    """Cut ``phi`` on [-12, 12] into flat and strictly monotone pieces (see module doc)."""
    L = _L
    declared = np.asarray([float(t) for t in declared if -L < float(t) < L], dtype=float)
    x = np.unique(np.concatenate([np.linspace(-L, L, _NGRID + 1), declared]))
    f = _evaluate(phi, x)
    jump, ja, jb, jfa, jfb = _jump_search(phi, x[:-1], x[1:], f[:-1], f[1:])

    # cells: a jump cell [x_i, x_{i+1}] becomes [x_i, ja] and [jb, x_{i+1}] with a cut between
    lo = x[:-1].copy()
    hi = np.where(jump, ja, x[1:])
    flo, fhi = f[:-1], np.where(jump, jfa, f[1:])
    cut = np.zeros(lo.shape, dtype=bool)
    cut[0] = True
    cut |= np.isin(lo, declared)
    lo2, hi2, flo2, fhi2 = jb[jump], x[1:][jump], jfb[jump], f[1:][jump]
    pos = np.nonzero(jump)[0] + 1
    lo = np.insert(lo, pos, lo2)
    hi = np.insert(hi, pos, hi2)
    flo = np.insert(flo, pos, flo2)
    fhi = np.insert(fhi, pos, fhi2)
    cut = np.insert(cut, pos, True)
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
        fm = _evaluate(phi, mid)
        bad = fm != flo[z]
        if bad.any():
            zb, mid_b, fm_b = z[bad], mid[bad], fm[bad]
            lo2, hi2, flo2, fhi2 = mid_b, hi[zb].copy(), fm_b, fhi[zb].copy()
            hi[zb], fhi[zb] = mid_b, fm_b
            s[zb] = np.sign(fm_b - flo[zb])
            ins = zb + 1
            lo, hi = np.insert(lo, ins, lo2), np.insert(hi, ins, hi2)
            flo, fhi = np.insert(flo, ins, flo2), np.insert(fhi, ins, fhi2)
            s = np.insert(s, ins, np.sign(fhi2 - flo2))
            cut = np.insert(cut, ins, False)
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
        into_flat = (sp != 0) & (sn == 0)
        if into_flat.any():
            i = bnd[into_flat]
            ea, eb = _flat_edge(phi, lo[i - 1], hi[i - 1], flo[i], flat_on_right=True)
            r_hi[prev_run[into_flat]] = ea
            r_lo[this_run[into_flat]] = eb
        out_flat = (sp == 0) & (sn != 0)
        if out_flat.any():
            i = bnd[out_flat]
            ea, eb = _flat_edge(phi, lo[i], hi[i], fhi[i - 1], flat_on_right=False)
            r_hi[prev_run[out_flat]] = ea
            r_lo[this_run[out_flat]] = eb
    good = r_hi > r_lo
    r_lo, r_hi, r_s = r_lo[good], r_hi[good], r_s[good]
    flat = r_s == 0
    mono = ~flat
    # flat pieces: value, extended to infinity at the ends of the line
    f_lo, f_hi = r_lo[flat].copy(), r_hi[flat].copy()
    f_val = _evaluate(phi, 0.5 * (f_lo + f_hi)) if f_lo.size else np.zeros(0)
    f_lo[f_lo <= -L] = -np.inf
    f_hi[f_hi >= L] = np.inf
    atoms, atom_of_flat = np.unique(f_val, return_inverse=True)
    # monotone pieces
    m_lo, m_hi, m_dir = r_lo[mono], r_hi[mono], r_s[mono]
    if m_lo.size:
        y_lo_end, y_hi_end = _evaluate(phi, m_lo), _evaluate(phi, m_hi)
    else:
        y_lo_end = y_hi_end = np.zeros(0)
    m_ylo = np.minimum(y_lo_end, y_hi_end)
    m_yhi = np.maximum(y_lo_end, y_hi_end)
    tab_g, tab_f = [], []
    for j in range(m_lo.size):  # loop over pieces (a handful), not over samples
        inner = x[(x > m_lo[j]) & (x < m_hi[j])]
        gj = np.concatenate([[m_lo[j]], inner, [m_hi[j]]])
        fj = m_dir[j] * np.concatenate([[y_lo_end[j]], _evaluate(phi, inner), [y_hi_end[j]]])
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
    return _Pieces(
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


@functools.lru_cache(maxsize=64)
def _pieces_cached(link) -> _Pieces:
    return _decompose(link, getattr(link, "breakpoints", ()))


def _pieces(link) -> _Pieces:
    try:
        return _pieces_cached(link)
    except TypeError:  # unhashable callable
        return _decompose(link, getattr(link, "breakpoints", ()))


# ---------------------------------------------------------------------------------------
# Building blocks: inversion on a monotone piece, derivative, atoms
# ---------------------------------------------------------------------------------------
def _invert(P: _Pieces, j: int, u: np.ndarray) -> np.ndarray:
    """The g in monotone piece j with phi(g) = u (u clipped to the piece's image).

    The tabulated scan brackets each root in a cell of width 1e-3; the Illinois variant of
    regula falsi (superlinear, bracketing, so safe at kinks and turning points) then converges
    to rounding in a handful of steps; stragglers finish by bisection.
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
        fc = d * _evaluate(P.phi, c) - target[act]
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


def _abs_derivative(P: _Pieces, j: int, g: np.ndarray) -> np.ndarray:
    """|phi'(g)| on monotone piece j by the fourth-order centred difference.

    Step ``h = 1e-3 (1 + |g|)`` (truncation ~h^4, rounding ~eps |phi| / h: about 1e-12
    relative), shrunk to keep the stencil [g - 2h, g + 2h] away from the non-smooth ends of
    the piece (jumps, kinks, edges of flat stretches). Smooth ends (located extrema) may be
    straddled, which keeps the derivative accurate next to a turning point, where it is small.
    """
    lo, hi = P.mono_lo[j], P.mono_hi[j]
    dist = np.full(g.shape, np.inf)
    if not P.mono_smooth_lo[j]:
        dist = np.minimum(dist, 0.4 * (g - lo))
    if not P.mono_smooth_hi[j]:
        dist = np.minimum(dist, 0.4 * (hi - g))
    h = np.minimum(1e-3 * (1.0 + np.abs(g)), dist)
    h = np.maximum(h, 1e-12 * (1.0 + np.abs(g)))
    f = _evaluate(P.phi, np.concatenate([g + h, g - h, g + 2 * h, g - 2 * h])).reshape(4, -1)
    num = 8.0 * (f[0] - f[1]) - (f[2] - f[3])
    return np.maximum(np.abs(num) / (12.0 * h), 1e-300)


def _atom_tables(P: _Pieces, kmax: int):
    """Masses (A,) and numerators E[h_k(G) 1{phi(G)=c}] (A, kmax+1) of the atoms, exactly."""
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
    g_lo = np.where(np.isfinite(lo), _gauss(lo_f), 0.0)
    g_hi = np.where(np.isfinite(hi), _gauss(hi_f), 0.0)
    H_lo = hermite_polys(lo_f, kmax, normalized=True)  # (kmax+1, F)
    H_hi = hermite_polys(hi_f, kmax, normalized=True)
    per = np.zeros((lo.size, kmax + 1))
    per[:, 0] = pm
    for k in range(1, kmax + 1):  # int_lo^hi h_k gamma = (h_{k-1}gamma|lo - h_{k-1}gamma|hi)/sqrt k
        per[:, k] = (H_lo[k - 1] * g_lo - H_hi[k - 1] * g_hi) / math.sqrt(k)
    np.add.at(num, P.atom_of_flat, per)
    mass = num[:, 0].copy()
    return mass, num


def _label_interval(P: _Pieces, y: np.ndarray) -> np.ndarray:
    """Index i of the label interval [yv[i], yv[i+1]) holding y (-1 outside)."""
    if P.yv.size < 2:
        return np.full(y.shape, -1)
    i = np.searchsorted(P.yv, y, side="right") - 1
    i = np.where(y == P.yv[-1], P.yv.size - 2, i)
    return np.where((i < 0) | (i > P.yv.size - 2), -1, i)


def _zeta_continuous(P: _Pieces, y: np.ndarray, kmax: int, g_own=None, own=None):
    """Sums over preimages on the continuous part: num (m, kmax+1) = sum_j w_j h_k(g_j),
    den (m,) = sum_j w_j, w_j = gamma(g_j)/|phi'(g_j)|, for the pieces covering y.

    If ``g_own`` and ``own`` are given, the preimage in piece ``own`` is ``g_own`` itself and
    the weight of that piece is returned too (used by the quadrature of the norms).
    """
    num = np.zeros((y.size, kmax + 1))
    den = np.zeros(y.size)
    w_own = None
    iv = _label_interval(P, y)
    ok = iv >= 0
    for j in range(P.n_mono):  # loop over pieces (a handful)
        inside = ok & P.member[np.maximum(iv, 0), j]
        if not inside.any():
            continue
        gj = g_own[inside] if own == j else _invert(P, j, y[inside])
        w = _gauss(gj) / _abs_derivative(P, j, gj)
        num[inside] += w[:, None] * hermite_polys(gj, kmax, normalized=True).T
        den[inside] += w
        if own == j:
            w_own = np.zeros(y.size)
            w_own[inside] = w
    return num, den, w_own


def _zeta_noisy(P: _Pieces, y: np.ndarray, kmax: int, tau: float, atom_num: np.ndarray):
    """N_k(y) = E[h_k(G) p_tau(y - phi(G))], k = 0..kmax, shape (m, kmax+1)."""
    out = np.zeros((y.size, kmax + 1))
    if P.atoms.size:
        kern = _gauss((y[:, None] - P.atoms[None, :]) / tau) / tau  # (m, A)
        out += kern @ atom_num
    R = _R_WINDOW * tau
    t = np.linspace(0.0, 1.0, _N_UPANELS + 1)
    t_g = np.linspace(0.0, 1.0, _N_GPANELS + 1)
    for j in range(P.n_mono):
        u0 = np.maximum(y - R, P.mono_ylo[j])
        u1 = np.minimum(y + R, P.mono_yhi[j])
        ok = u1 > u0
        if not ok.any():
            continue
        yy, u0, u1 = y[ok], u0[ok], u1[ok]
        us = u0[:, None] + (u1 - u0)[:, None] * t[None, :]  # (m, P+1) equal steps in phi
        gs = _invert(P, j, us.ravel()).reshape(us.shape)
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
        nodes = 0.5 * (a + b)[..., None] + half[..., None] * _GL_N  # (m, P, n)
        wts = np.abs(half)[..., None] * _GL_W
        fv = _evaluate(P.phi, nodes.ravel()).reshape(nodes.shape)
        base = wts * _gauss(nodes) * _gauss((yy[:, None, None] - fv) / tau) / tau
        H = hermite_polys(nodes.ravel(), kmax, normalized=True).reshape((kmax + 1,) + nodes.shape)
        out[ok] += np.einsum("kmpn,mpn->mk", H, base)
    return out


def _zeta_values(P: _Pieces, y: np.ndarray, kmax: int, tau: float) -> np.ndarray:
    """zeta_k(y) for k = 0..kmax, shape (m, kmax+1); NaN where y is off the support."""
    y = np.asarray(y, dtype=float)
    out = np.full((y.size, kmax + 1), np.nan)
    mass, atom_num = _atom_tables(P, kmax)
    for s in range(0, y.size, _CHUNK):
        yc = y[s : s + _CHUNK]
        if tau > 0:
            N = _zeta_noisy(P, yc, kmax, tau, atom_num)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s : s + _CHUNK] = N / N[:, :1]
            out[s : s + _CHUNK][N[:, 0] <= 0] = np.nan
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
        out[s : s + _CHUNK] = val
    return out


_GL20_N, _GL20_W = np.polynomial.legendre.leggauss(20)


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


def _halves(P: _Pieces):
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
            gs = np.array([_invert(P, j, np.array([end_v]))[0] for j in S])
            is_turn = np.array(
                [
                    (P.mono_turn_lo[j] and abs(g - P.mono_lo[j]) < 1e-6)
                    or (P.mono_turn_hi[j] and abs(g - P.mono_hi[j]) < 1e-6)
                    for j, g in zip(S, gs, strict=True)
                ]
            )
            r = S[np.argmax(is_turn)] if is_turn.any() else S[0]
            g2 = _invert(P, r, np.array([a_v, b_v]))
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


def _norms(P: _Pieces, kmax: int, tau: float) -> np.ndarray:
    """E[zeta_k(Y)^2] for k = 0..kmax (entry 0 is the total mass, 1 up to ~1e-15)."""
    mass, atom_num = _atom_tables(P, kmax)
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
        total += gaussian_expectation(f_atoms, breakpoints=brk_z, cutoff=_L, tol=1e-11)
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
            y = _evaluate(P.phi, nodes)
            num, den, w_r = _zeta_continuous(P, y, kmax, g_own=nodes, own=r)
            good = (den > 0) & (w_r > 0)
            zeta = num[good] / den[good, None]
            dens = _gauss(nodes[good]) * wts[good]
            total += np.sum((dens * den[good] / w_r[good])[:, None] * zeta**2, axis=0)
        return total

    def integrand_noisy(g):
        out = np.zeros((g.size, kmax + 1))
        inm = np.zeros(g.shape, dtype=bool)
        for j in range(P.n_mono):
            inm |= (g > P.mono_lo[j]) & (g < P.mono_hi[j])
        if not inm.any():
            return out
        y = _evaluate(P.phi, g[inm])
        yy = (y[:, None] + tau * _GH_Z[None, :]).ravel()
        z = _zeta_values(P, yy, kmax, tau).reshape(y.size, _GH_Z.size, kmax + 1)
        out[inm] = np.einsum("z,mzk->mk", _GH_W, np.nan_to_num(z) ** 2)
        return out

    ga, gb, _, _ = _halves(P)
    brk = np.unique(np.concatenate([ga, gb, P.breaks]))
    total += gaussian_expectation(integrand_noisy, breakpoints=brk, cutoff=10.0, tol=1e-11)
    return total


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------
def _resolve(link):
    phi = get_link(link)
    return phi


def _check_kmax(kmax) -> int:
    kmax = V.positive_int(kmax, "kmax", minimum=1)
    if kmax > KMAX_LIMIT:
        raise ValueError(f"kmax must be <= {KMAX_LIMIT}, got {kmax}")
    return kmax


def information_exponent(link, kmax: int = 8, *, rtol: float = INFO_RTOL) -> int:
    r"""The information exponent of a link (chapter 2, eq. (IE)).

    :math:`\min\{k\ge1: c_k\neq0\}`, :math:`c_k=\mathbb E[\varphi(G)h_k(G)]`, where
    :math:`c_k` counts as non-zero when :math:`|c_k| > \mathrm{rtol}\cdot\mathrm{sd}(\varphi(G))`
    (scale-free: multiplying or shifting the link does not change the answer). The
    coefficients come from :func:`lecnotes.hermite.hermite_coefficients` with the jumps and
    kinks located by the piece decomposition (module doc) as break points, so discontinuous
    links are integrated exactly piece by piece. Additive label noise does not change the
    information exponent (:math:`\mathbb E[(\varphi(G)+\tau Z)h_k(G)]=c_k`).

    Parameters
    ----------
    link : callable or str
        Vectorised link or a name from :data:`lecnotes.targets.LINKS`.
    kmax : int
        Largest degree examined, ``1 <= kmax <= 12``.
    rtol : float
        Relative tolerance, default :data:`INFO_RTOL` = 1e-9.

    Returns
    -------
    int
        The information exponent, in ``1..kmax``.

    Raises
    ------
    ExponentNotFound
        If ``c_1 = ... = c_kmax = 0`` within tolerance (also for a constant link).
    ValueError
        For an unknown name, a non-callable link, or a bad ``kmax`` / ``rtol``.
    """
    phi = _resolve(link)
    kmax = _check_kmax(kmax)
    rtol = V.positive_float(rtol, "rtol")
    P = _pieces(phi)
    # centre first, so that a large constant part does not swamp the quadrature error
    c0 = float(gaussian_expectation(lambda g: _evaluate(phi, g), breakpoints=P.breaks))

    def centred(g):
        return _evaluate(phi, g) - c0

    coef = hermite_coefficients(centred, kmax, normalized=True, breakpoints=P.breaks)
    var = float(gaussian_expectation(lambda g: centred(g) ** 2, breakpoints=P.breaks))
    sd = math.sqrt(max(var, 0.0))
    rel = np.abs(coef[1:]) / sd if sd > 0 else np.zeros(kmax)
    hits = np.nonzero(rel > rtol)[0]
    if sd == 0 or hits.size == 0:
        raise ExponentNotFound(
            f"no Hermite coefficient c_k, 1 <= k <= {kmax}, exceeds {rtol:g} sd(phi(G)): the "
            "information exponent is larger than kmax (or infinite for a constant link)",
            kmax,
            rel,
        )
    return int(hits[0] + 1)


def conditional_hermite_norms(link, kmax: int = 8, noise: float = 0.0) -> np.ndarray:
    r""":math:`\mathbb E[\zeta_k(Y)^2]` for ``k = 1..kmax`` (chapter 2, eq. (GE)).

    :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`, :math:`Y=\varphi(G)+\tau Z`. Each value lies in
    :math:`[0,1]`: it is the squared norm of the projection of :math:`h_k(G)` on the functions of
    :math:`Y`, i.e. :math:`\sup_T \mathbb E[T(Y)h_k(G)]^2/\mathbb E[T(Y)^2]`. Computed by exact
    quadrature on the pieces of the link (module doc), never by Monte Carlo: closed forms on
    the flat pieces, preimages on the monotone ones, a ratio of Gaussian integrals with noise.
    Accuracy: about 1e-11 absolute without noise; about 1e-6 relative with noise (measured
    against refined rules); zeros by symmetry or construction come out below 1e-18.

    Parameters
    ----------
    link : callable or str
    kmax : int
        ``1 <= kmax <= 12``.
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    ndarray of shape ``(kmax,)``; entry ``k - 1`` is :math:`\mathbb E[\zeta_k(Y)^2]`.
    """
    phi = _resolve(link)
    kmax = _check_kmax(kmax)
    tau = V.nonneg_float(noise, "noise")
    P = _pieces(phi)
    return np.clip(_norms(P, kmax, tau)[1:], 0.0, None)


def generative_exponent(link, kmax: int = 8, noise: float = 0.0, *, tol: float = GEN_TOL) -> int:
    r"""The generative exponent :math:`k_\star` (chapter 2, eq. (GE); Damian et al. 2024).

    :math:`k_\star=\min\{k\ge1:\mathbb E[\zeta_k(Y)^2]>\mathrm{tol}\}` with
    :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]` and :math:`Y=\varphi(G)+\tau Z`; equivalently
    the smallest information exponent of :math:`T(Y)` over all square-integrable :math:`T`
    (:math:`T=\zeta_{k_\star}` attains it). Always :math:`k_\star\le` the information exponent;
    every non-constant polynomial has :math:`k_\star\le2`; Gaussian label noise changes
    neither exponent. The values :math:`\mathbb E[\zeta_k(Y)^2]` come from
    :func:`conditional_hermite_norms`.

    Parameters
    ----------
    link : callable or str
        Vectorised link or a name from :data:`lecnotes.targets.LINKS`.
    kmax : int
        Largest degree examined, ``1 <= kmax <= 12``.
    noise : float
        Standard deviation :math:`\tau\ge0` of the additive Gaussian label noise.
    tol : float
        Absolute tolerance on :math:`\mathbb E[\zeta_k(Y)^2]\in[0,1]`, default
        :data:`GEN_TOL` = 1e-10.

    Returns
    -------
    int
        :math:`k_\star` in ``1..kmax``.

    Raises
    ------
    ExponentNotFound
        If :math:`\mathbb E[\zeta_k(Y)^2]\le` ``tol`` for all ``k <= kmax`` (e.g. a constant
        link, for which :math:`Y` is independent of :math:`G`).
    ValueError
        For an unknown name, a non-callable link, or a bad ``kmax`` / ``noise`` / ``tol``.
    """
    tol = V.positive_float(tol, "tol")
    norms = conditional_hermite_norms(link, kmax, noise)
    hits = np.nonzero(norms > tol)[0]
    if hits.size == 0:
        raise ExponentNotFound(
            f"E[zeta_k(Y)^2] <= {tol:g} for every k <= {len(norms)}: the generative exponent "
            "is larger than kmax (or infinite if Y is independent of G)",
            len(norms),
            norms,
        )
    return int(hits[0] + 1)


def conditional_hermite(link, k: int, noise: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    r"""The optimal degree-k label preprocessing :math:`\zeta_k(y)=\mathbb E[h_k(G)\mid Y=y]`.

    Chapter 2, eq. (zeta). Returns a vectorised callable of the labels. Noiseless links: on
    an atom :math:`c` of :math:`Y` (a flat stretch of the link, matched by exact equality of
    the label) the closed form :math:`\int h_k\gamma/\text{mass}` over the flat pieces; on the
    continuous part the preimage formula :math:`\sum_j w_jh_k(g_j)/\sum_j w_j`,
    :math:`w_j=\gamma(g_j)/|\varphi'(g_j)|`. With noise :math:`\tau>0`,
    :math:`\zeta_k(y)=\mathbb E[h_k(G)p_\tau(y-\varphi(G))]/\mathbb E[p_\tau(y-\varphi(G))]`, a
    ratio of two Gaussian integrals (module doc). The value is ``NaN`` for labels that
    cannot occur (off the support of :math:`Y`, or farther than :math:`10\tau` from it).

    Parameters
    ----------
    link : callable or str
    k : int
        Degree, ``0 <= k <= 12`` (:math:`\zeta_0\equiv1`).
    noise : float
        Label-noise standard deviation :math:`\tau\ge0`.

    Returns
    -------
    callable
        ``zeta(y)`` for array-like ``y`` (any shape), returning an array of the same shape.
    """
    phi = _resolve(link)
    k = V.positive_int(k, "k", minimum=0)
    if k > KMAX_LIMIT:
        raise ValueError(f"k must be <= {KMAX_LIMIT}, got {k}")
    tau = V.nonneg_float(noise, "noise")
    P = _pieces(phi)

    def zeta(y):
        y = V.finite_array(y, "y")
        flat = y.ravel()
        if flat.size == 0:
            return np.zeros(y.shape)
        return _zeta_values(P, flat, max(k, 1), tau)[:, k].reshape(y.shape)

    zeta.__doc__ = f"zeta_{k}(y) = E[h_{k}(G) | Y = y] for the link {phi!r}, noise {tau:g}"
    return zeta


def large_noise_asymptotics(link, k: int, mmax: int = 8):
    r"""Leading large-noise behaviour :math:`\mathbb E[\zeta_k(Y)^2]\sim C\tau^{-2m}` (chapter 2).

    Expanding :math:`p_\tau(y-\varphi)/p_\tau(y)=\sum_m \mathrm{He}_m(y/\tau)(\varphi/\tau)^m/m!`
    gives, as :math:`\tau\to\infty`, :math:`\mathbb E[\zeta_k(Y)^2] = C\tau^{-2m}(1+o(1))` with
    :math:`m=\min\{m\ge1:\mathbb E[\varphi(G)^mh_k(G)]\neq0\}` and
    :math:`C=\mathbb E[\varphi(G)^mh_k(G)]^2/m!` (chapter 2, eq. (large noise)).

    Parameters
    ----------
    link : callable or str
    k : int
        Degree ``>= 1``.
    mmax : int
        Largest power examined.

    Returns
    -------
    (m, C) : (int, float)

    Raises
    ------
    ExponentNotFound
        If :math:`\mathbb E[\varphi^m h_k]=0` (relative to :data:`INFO_RTOL`) for all
        ``m <= mmax``.
    """
    phi = _resolve(link)
    k = V.positive_int(k, "k", minimum=1)
    if k > KMAX_LIMIT:
        raise ValueError(f"k must be <= {KMAX_LIMIT}, got {k}")
    mmax = V.positive_int(mmax, "mmax", minimum=1)
    P = _pieces(phi)
    vals = []
    for m in range(1, mmax + 1):  # a loop over powers, each a vectorised quadrature
        def pm(g, m=m):
            return _evaluate(phi, g) ** m

        c = hermite_coefficients(pm, k, normalized=True, breakpoints=P.breaks)
        sq = gaussian_expectation(lambda g, m=m: pm(g) ** 2, breakpoints=P.breaks)
        norm = math.sqrt(float(sq))
        vals.append(abs(float(c[k])) / norm if norm > 0 else 0.0)
        if norm > 0 and abs(float(c[k])) > INFO_RTOL * norm:
            return m, float(c[k]) ** 2 / math.factorial(m)
    raise ExponentNotFound(
        f"E[phi(G)^m h_{k}(G)] = 0 for every m <= {mmax}", mmax, np.asarray(vals)
    )


# ---------------------------------------------------------------------------------------
# The generative-exponent-4 link (chapter 2, section (k* = 4); chapter 5)
# ---------------------------------------------------------------------------------------
def _partner(a: float) -> float:
    """The b > 1 with a exp(-a^2/2) = b exp(-b^2/2) (same value of g*gamma(g))."""
    return brentq(lambda b: a * _gauss(a) - b * _gauss(b), 1.0, 40.0, xtol=1e-15, rtol=1e-15)


def _gen4_stats(a: float):
    b = _partner(a)
    p = 2.0 * (ndtr(b) - ndtr(a))
    n4 = 2.0 * ((a**3 - 3 * a) * _gauss(a) - (b**3 - 3 * b) * _gauss(b)) / math.sqrt(24.0)
    return b, p, n4**2 / (p * (1.0 - p))


def gen4_interval(a="max"):
    r"""The interval :math:`(a,b)` of the generative-exponent-4 link :math:`\mathbb 1\{a<|u|<b\}`.

    Chapter 2, section (a link with :math:`k_\star=4`). With :math:`A=\{a<|G|<b\}` and
    :math:`Y=\mathbb 1_A(G)`: odd :math:`\zeta_k` vanish by symmetry, and
    :math:`\int_a^b\mathrm{He}_2\gamma=a\gamma(a)-b\gamma(b)`, so :math:`\zeta_2\equiv0`
    (equivalently :math:`\mathbb E[G^2\mid Y]=1` on both labels) exactly when
    :math:`ae^{-a^2/2}=be^{-b^2/2}`. For every :math:`a\in(0,1)` there is one such
    :math:`b>1`, and then :math:`\int_a^b\mathrm{He}_4\gamma=a\gamma(a)(a^2-b^2)\neq0`, so
    :math:`k_\star=4`. One family member per choice:

    * ``"max"`` (default; ``LINKS["gen4"]``): the member maximising
      :math:`\mathbb E[\zeta_4(Y)^2]` (maximiser 0.225409..., rounded to :data:`GEN4_A`
      = 0.2254, which loses 8e-11), :math:`b=2.131777344456144`,
      :math:`\mathbb E[\zeta_4^2]=0.155173`, :math:`\mathbb P(Y=1)=0.78864`;
    * ``"balanced"``: :math:`\mathbb P(Y=1)=1/2`, :math:`a\approx0.50897`,
      :math:`b\approx1.59474`, :math:`\mathbb E[\zeta_4^2]\approx0.1107`;
    * a float ``a`` in (0, 1): that member.

    Returns
    -------
    (a, b) : tuple of float
    """
    if isinstance(a, str):
        if a == "max":
            a_val = GEN4_A
        elif a == "balanced":
            a_val = brentq(lambda t: _gen4_stats(t)[1] - 0.5, 0.05, 0.95, xtol=1e-15, rtol=1e-15)
        else:
            raise ValueError(f"a must be 'max', 'balanced' or a number in (0, 1), got {a!r}")
    else:
        a_val = V.positive_float(a, "a")
        if not a_val < 1.0:
            raise ValueError(f"a must lie in (0, 1), got {a!r}")
    return float(a_val), float(_partner(a_val))
