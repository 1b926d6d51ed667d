r"""Spectral outliers of weight and feature matrices after one or two gradient steps (chapter 7).

The linear-width setting of chapter 7: width :math:`N`, samples :math:`n` and dimension
:math:`d` grow proportionally; the network is :math:`f(x) = N^{-1/2}\sum_j a_j\sigma(\langle
w_j,x\rangle)` with :math:`w_j\sim N(0,I_d/d)`, :math:`a_j\sim N(0,1)` fixed, trained on the
first layer with the correlation loss :math:`-\frac1n\sum_iy_if(x_i)` and step sizes
:math:`\eta_i = N^{\alpha_i}` (``lecnotes.networks.multi_step(..., loss="correlation",
scaling=N**-0.5)``). This module holds

* the **theory counts**: the number of spikes of the feature matrix after one step
  (Moniri, Lee, Hassani, Dobriban 2024) and of new outliers of :math:`W_2` after a second step
  (Moniri and Hassani), with the exponents they come from (chapter 7, eqs. (one-step
  exponents) and (two-step exponents));
* **outlier counting against an estimated bulk edge**: a fit of the square-root edge law to the
  largest bulk singular values (:func:`fit_bulk_edge`), a Marchenko-Pastur fit
  (:func:`marchenko_pastur_edge`), and a margin calibrated on null runs (:func:`null_margin`);
* the **Taylor terms** of a step in the pre-activation shift, whose sizes carry the exponents
  (:func:`feature_taylor_terms`, :func:`second_step_taylor_terms`);
* **alignment measures**: of singular vectors with Hermite features, of the mean second update
  with a target direction, and the localisation of a vector;
* the **effective preprocessing of a reused batch** (chapter 7, eq. (reuse preprocessing)) and
  its Stein coefficient (:func:`reuse_stein_coefficient`);
* the **simulations** of the chapter, vectorised over neurons and samples.

Conventions: singular values are returned in decreasing order; "strength" of a term is an
operator norm or the norm of a projection on the predicted direction, as documented.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from . import networks as NW
from .targets import Link

__all__ = [
    "SINCOS",
    "sincos_derivative",
    "derivative_means",
    "one_step_exponents",
    "one_step_spike_count",
    "one_step_spike_intervals",
    "two_step_exponents",
    "two_step_new_outliers",
    "effective_neurons",
    "BulkEdge",
    "singular_values",
    "fit_bulk_edge",
    "marchenko_pastur_edge",
    "null_margin",
    "count_outliers",
    "outlier_counts",
    "localisation",
    "mean_update",
    "update_alignment",
    "hermite_alignment",
    "feature_matrix",
    "feature_taylor_terms",
    "second_step_taylor_terms",
    "projected_strength",
    "HE3",
    "two_direction_link",
    "linear_width_init",
    "rank_one_ratio",
    "taylor_strengths",
    "simulate_one_step_spikes",
    "simulate_two_step_counts",
    "simulate_reuse",
    "reuse_preprocessing",
    "reuse_stein_coefficient",
    "self_term",
]


# ---------------------------------------------------------------------------------------
# An activation with no vanishing Hermite coefficient
# ---------------------------------------------------------------------------------------
def sincos_derivative(k: int) -> Callable[[np.ndarray], np.ndarray]:
    r"""The ``k``-th derivative of :math:`\sigma(z) = \sin z+\cos z` (chapter 7).

    :math:`\sigma(z) = \sqrt2\sin(z+\pi/4)`, so
    :math:`\sigma^{(k)}(z) = \sqrt2\sin(z+\pi/4+k\pi/2)`. Returns a vectorised callable.
    """
    k = V.positive_int(k, "k", minimum=0)
    phase = math.pi / 4 + k * math.pi / 2

    def f(z):
        return math.sqrt(2.0) * np.sin(np.asarray(z, dtype=float) + phase)

    return f


SINCOS = NW.Activation("sincos", sincos_derivative(0), sincos_derivative(1),
                       r"\sin u+\cos u")
r""":math:`\sigma(z)=\sin z+\cos z`: every derivative has Gaussian mean
:math:`\mathbb E[\sigma^{(k)}(G)] = \pm e^{-1/2}` (chapter 7), so no Hermite coefficient vanishes
and every term of the expansions of the chapter is present; bounded with bounded derivatives."""


def derivative_means(activation, kmax: int, breakpoints=()) -> np.ndarray:
    r"""Gaussian means :math:`\mu_k = \mathbb E[\sigma^{(k)}(G)]` of the derivatives (chapter 7).

    The coefficients of the Taylor terms, :math:`k = 0..k_{\max}`. By Stein's lemma
    they are the unnormalised Hermite coefficients of :math:`\sigma`, computed by adaptive
    quadrature (:func:`lecnotes.hermite.hermite_coefficients`); for :data:`SINCOS` they are
    :math:`\sqrt2 e^{-1/2}\sin(\pi/4+k\pi/2) = \pm e^{-1/2}`. ReLU: :math:`\mu_k = 0` for odd
    :math:`k\ge3`; tanh: :math:`\mu_k = 0` for even :math:`k`.
    """
    from .hermite import hermite_coefficients

    kmax = V.positive_int(kmax, "kmax", minimum=0)
    act = NW.get_activation(activation)
    if act.name == "relu" and not breakpoints:
        breakpoints = (0.0,)
    return np.asarray(hermite_coefficients(act.sigma, kmax, normalized=False,
                                           breakpoints=tuple(breakpoints)), dtype=float)


# ---------------------------------------------------------------------------------------
# Theory: exponents and counts
# ---------------------------------------------------------------------------------------
def _alpha(alpha, name="alpha"):
    a = V.finite_array(alpha, name)
    if np.any(a < 0) or np.any(a >= 0.5):
        raise ValueError(f"{name} must lie in [0, 1/2), got {alpha!r}")
    return a


def one_step_exponents(alpha: float, kmax: int) -> np.ndarray:
    r"""Exponents :math:`e_k = \frac12 + k(\alpha-\frac12)`, :math:`k = 1..k_{\max}` (chapter 7).

    Chapter 7, eq. (one-step exponents). After one step with :math:`\eta = N^\alpha`, the
    :math:`k`-th Taylor term of the feature matrix :math:`\sigma(\tilde XW_1^\top)/\sqrt n`
    in the pre-activation shift is a rank-one matrix of size :math:`N^{e_k}` against a bulk of
    order one (Moniri, Lee, Hassani, Dobriban 2024).
    """
    a = float(_alpha(alpha))
    kmax = V.positive_int(kmax, "kmax")
    k = np.arange(1, kmax + 1)
    return 0.5 + k * (a - 0.5)


def one_step_spike_count(alpha, degree: int | None = None):
    r"""Number of spikes of the feature matrix after one step, :math:`\eta\asymp N^\alpha`.

    Chapter 7, theorem (one-step spikes): :math:`\ell` spikes for
    :math:`\alpha\in(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2})`, i.e. the number of
    :math:`k\ge1` with :math:`e_k>0`, :math:`\ell = \lceil 1/(1-2\alpha)\rceil - 1`
    (0 at :math:`\alpha = 0`, where the first term is of order one and whether it separates is
    a BBP question). Capped by ``degree`` (a polynomial activation of degree :math:`L` has
    no term beyond :math:`k = L`). Vectorised over ``alpha``.
    """
    a = _alpha(alpha)
    out = np.ceil(1.0 / (1.0 - 2.0 * a) - 1e-12) - 1.0
    if degree is not None:
        out = np.minimum(out, V.positive_int(degree, "degree"))
    out = out.astype(int)
    return int(out) if out.ndim == 0 else out


def one_step_spike_intervals(lmax: int) -> list[tuple[float, float]]:
    r"""The spike intervals :math:`(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2})` (chapter 7).

    For :math:`\ell = 1..\ell_{\max}`: on the :math:`\ell`-th interval one step creates
    exactly :math:`\ell` spikes.
    They tile :math:`(0, 1/2)` and shrink like :math:`1/(2\ell^2)`.
    """
    lmax = V.positive_int(lmax, "lmax")
    return [((l - 1) / (2 * l), l / (2 * l + 2)) for l in range(1, lmax + 1)]


def two_step_exponents(alpha1: float, alpha2: float, kmax: int) -> np.ndarray:
    r"""Exponents :math:`\alpha_2 - k(\frac12-\alpha_1)`, :math:`k = 0..k_{\max}` (chapter 7).

    Chapter 7, eq. (two-step exponents): the :math:`k`-th Taylor term of the second update
    :math:`\eta_2\nabla` in the shift of the pre-activations caused by the first step is a
    rank-one matrix of operator norm :math:`N^{\alpha_2-k(1/2-\alpha_1)}`, against the bulk of
    :math:`W_0`, of order one. The term :math:`k = 0` has the left vector of the first step
    and merges with its spike.
    """
    a1, a2 = float(_alpha(alpha1, "alpha1")), float(_alpha(alpha2, "alpha2"))
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    k = np.arange(0, kmax + 1)
    return a2 - k * (0.5 - a1)


def two_step_new_outliers(alpha1, alpha2, degree: int | None = None):
    r"""New outliers of :math:`W_2`: :math:`\Lambda = \lfloor\alpha_2/(\frac12-\alpha_1)\rfloor`.

    Chapter 7, theorem (two-step outliers) (Moniri and Hassani): besides the spike of the first
    step, :math:`W_2` has :math:`\Lambda` outliers, capped at :math:`L-1` for a polynomial
    activation of degree :math:`L` = ``degree`` (the :math:`k`-th term needs
    :math:`\sigma^{(k+1)}\neq0`). At an integer ratio the last term is of order one and the
    formula is the paper's convention. Vectorised (broadcasting) over both exponents.
    """
    a1, a2 = _alpha(alpha1, "alpha1"), _alpha(alpha2, "alpha2")
    out = np.floor(a2 / (0.5 - a1) + 1e-12)
    if degree is not None:
        out = np.minimum(out, V.positive_int(degree, "degree") - 1)
    out = out.astype(int)
    return int(out) if out.ndim == 0 else out


def _double_factorial(m: int) -> int:
    return math.prod(range(m, 0, -2)) if m > 0 else 1


def effective_neurons(k: int, N: int) -> float:
    r"""Effective number of neurons carrying the vector :math:`a^{\circ k}`, :math:`a\sim N(0,I_N)`.

    Chapter 7 (finite size): the participation ratio
    :math:`(\sum_ja_j^{2k})^2/\sum_ja_j^{4k}\approx N\,((2k-1)!!)^2/(4k-1)!!`. The :math:`k`-th
    Taylor term has left vector :math:`a^{\circ k}` (features) or :math:`a^{\circ(k+1)}`
    (second step); when this number is small the outlier lives on a handful of neurons.
    """
    k = V.positive_int(k, "k")
    N = V.positive_int(N, "N")
    return N * _double_factorial(2 * k - 1) ** 2 / _double_factorial(4 * k - 1)


# ---------------------------------------------------------------------------------------
# Bulk edge and outliers
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BulkEdge:
    """An estimated right edge of the bulk of singular values (chapter 7).

    Attributes
    ----------
    edge : float
        Estimated edge :math:`s_+`.
    scale : float
        Spacing scale of the largest bulk singular values (of order :math:`N^{-2/3}` times the
        edge): margins are stated in this unit.
    method : str
    """

    edge: float
    scale: float
    method: str

    def threshold(self, margin: float = 0.0) -> float:
        """``edge + margin * scale``: singular values above it are counted as outliers."""
        return float(self.edge + float(margin) * self.scale)


def singular_values(M) -> np.ndarray:
    """All singular values of a matrix, decreasing (dense LAPACK; chapter 7)."""
    M = V.finite_array(M, "M", ndim=2)
    if min(M.shape) < 1:
        raise ValueError(f"M must be non-empty, got shape {M.shape}")
    return np.linalg.svd(M, compute_uv=False)


def _sorted_spectrum(s, need: int) -> np.ndarray:
    s = V.finite_array(s, "s", ndim=1)
    if np.any(s < 0):
        raise ValueError("singular values must be non-negative")
    if s.size < need:
        raise ValueError(f"need at least {need} singular values, got {s.size}")
    return np.sort(s)[::-1]


def fit_bulk_edge(s, fit_range: tuple[int, int] = (10, 50)) -> BulkEdge:
    r"""Estimate the bulk edge by fitting the square-root edge law (chapter 7).

    Near a soft edge :math:`s_+` the density of singular values vanishes like
    :math:`\sqrt{s_+-s}`, so the number of singular values above :math:`s` grows like
    :math:`(s_+-s)^{3/2}` and the :math:`k`-th largest bulk value is
    :math:`s_{(k)}\approx s_+ - A\,k^{2/3}`. Least squares on
    :math:`k\in` ``fit_range`` (1-based ranks, to be chosen beyond the possible outliers)
    give :math:`s_+` and the scale :math:`A`. Outliers move the bulk down the ranking, so the
    fit uses :math:`k-m` with :math:`m` the number of values above the fitted edge, found by a
    fixed-point iteration (at most ``lo - 1``). The law holds for Marchenko-Pastur as for the
    deformed bulks of trained weights and features, so the edge is estimated from the
    spectrum itself, not assumed. On :math:`N\times N` Gaussian matrices it is accurate to
    about 0.5% at :math:`N = 400`-:math:`800` (tests).

    Parameters
    ----------
    s : array_like
        Singular values (any order).
    fit_range : (int, int)
        First and last rank used, ``1 <= lo < hi``, ``hi - lo >= 4``.

    Returns
    -------
    BulkEdge
    """
    if (not isinstance(fit_range, Sequence) or len(fit_range) != 2):
        raise ValueError(f"fit_range must be a pair (lo, hi), got {fit_range!r}")
    lo = V.positive_int(fit_range[0], "fit_range[0]")
    hi = V.positive_int(fit_range[1], "fit_range[1]")
    if hi - lo < 4:
        raise ValueError(f"fit_range must span at least 5 ranks, got {fit_range!r}")
    s = _sorted_spectrum(s, hi)
    k = np.arange(lo, hi + 1, dtype=float)
    shift = 0
    for _ in range(8):  # outliers push the bulk down the ranking: fit against k - shift
        A = np.vstack([np.ones_like(k), (k - shift) ** (2.0 / 3.0)]).T
        (edge, slope), *_ = np.linalg.lstsq(A, s[lo - 1:hi], rcond=None)
        new = min(int(np.sum(s > edge)), lo - 1)
        if new == shift:
            break
        shift = new
    return BulkEdge(float(edge), float(max(-slope, 0.0)), "square-root edge fit")


def marchenko_pastur_edge(s, p: int, d: int) -> BulkEdge:
    r"""Marchenko-Pastur edge with the variance fitted on the median singular value (chapter 7).

    For a :math:`p\times d` matrix with i.i.d. entries of variance :math:`v/d` (the law of
    :math:`W_0` with :math:`v = 1`), the median of the squared singular values is :math:`v`
    times the median :math:`m_{MP}` of the Marchenko-Pastur law; :math:`\hat v =
    \mathrm{median}(s^2)/m_{MP}` is insensitive to a few outliers. The edge is
    :math:`\sqrt{\hat v}(1+\sqrt{p/d})` (:func:`lecnotes.networks.gaussian_singular_value_edges`)
    and the scale :math:`\sqrt{\hat v}\,(1+\sqrt{p/d})\,\min(p,d)^{-2/3}`. Needs all
    :math:`\min(p, d)` singular values.
    """
    from scipy.optimize import brentq

    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    m = min(p, d)
    s = _sorted_spectrum(s, m)
    if s.size != m:
        raise ValueError(f"expected all min(p, d) = {m} singular values, got {s.size}")
    lo, hi = NW.gaussian_singular_value_edges(p, d, 1.0)
    med_s = brentq(lambda x: NW.gaussian_singular_value_cdf(np.array([x]), p, d)[0] - 0.5,
                   max(lo, 1e-9), hi)
    v = float(np.median(s**2)) / med_s**2
    if v <= 0:
        raise ValueError("the median singular value is zero: no bulk to fit")
    edge = NW.gaussian_singular_value_edges(p, d, v)[1]
    return BulkEdge(float(edge), float(edge * m ** (-2.0 / 3.0)), "Marchenko-Pastur fit")


def null_margin(null_spectra: Sequence, fit_range: tuple[int, int] = (10, 50),
                n_sd: float = 4.0) -> float:
    r"""Outlier margin calibrated on spectra without spikes (chapter 7).

    For each null spectrum (e.g. of :math:`W_0`, or of the features at initialisation) the
    largest singular value is compared with the fitted edge: :math:`z = (s_1-\hat s_+)/\hat A`.
    Returns :math:`\bar z + n_{sd}\,\mathrm{sd}(z)`, so that a bulk singular value exceeds
    :math:`\hat s_+ + m\hat A` with small probability (Tracy-Widom fluctuations). Needs at
    least two null spectra.
    """
    if not isinstance(null_spectra, Sequence) or len(null_spectra) < 2:
        raise ValueError("null_spectra must be a sequence of at least two spectra")
    n_sd = V.nonneg_float(n_sd, "n_sd")
    z = []
    for s in null_spectra:
        b = fit_bulk_edge(s, fit_range)
        if b.scale <= 0:
            raise ValueError("a null spectrum has no spread near its edge")
        z.append((np.max(s) - b.edge) / b.scale)
    z = np.asarray(z)
    return float(z.mean() + n_sd * z.std(ddof=1))


def count_outliers(s, bulk: BulkEdge, margin: float = 0.0) -> int:
    """Number of singular values above ``bulk.threshold(margin)`` (chapter 7)."""
    s = V.finite_array(s, "s", ndim=1)
    if not isinstance(bulk, BulkEdge):
        raise ValueError(f"bulk must be a BulkEdge, got {bulk!r}")
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError("margin must be finite")
    return int(np.sum(s > bulk.threshold(margin)))


def outlier_counts(s, edge, scale, margin: float = 0.0) -> np.ndarray:
    r"""Vectorised :func:`count_outliers` for many spectra at once (chapter 7).

    ``s`` has shape (..., k) (the k largest singular values of each matrix), ``edge`` and
    ``scale`` shape (...) (the fitted :class:`BulkEdge` of each); returns the (...) array of
    the numbers of values above ``edge + margin * scale``. Counts saturate at ``k``.
    """
    s = V.finite_array(s, "s")
    edge = V.finite_array(edge, "edge")
    scale = V.finite_array(scale, "scale")
    if s.ndim < 1 or edge.shape != s.shape[:-1] or scale.shape != edge.shape:
        raise ValueError(f"s must have shape (..., k) and edge, scale shape (...); got "
                         f"{s.shape}, {edge.shape}, {scale.shape}")
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError("margin must be finite")
    return np.sum(s > (edge + margin * scale)[..., None], axis=-1)


# ---------------------------------------------------------------------------------------
# Alignment measures
# ---------------------------------------------------------------------------------------
def localisation(v) -> float:
    r"""Participation ratio :math:`(\sum_iv_i^2)^2/\sum_iv_i^4` of a vector (chapter 7).

    Between 1 (one coordinate) and the length (flat). A spike carried by a handful of
    neurons has a small participation ratio (:func:`effective_neurons`).
    """
    v = V.finite_array(v, "v", ndim=1)
    q = np.sum(v**4)
    if q == 0:
        raise ValueError("the participation ratio of a zero vector is undefined")
    return float(np.sum(v**2) ** 2 / q)


def mean_update(W_prev, W_next, a) -> np.ndarray:
    r"""Sign-corrected mean update :math:`m = \frac1p\sum_j\mathrm{sign}(a_j)(w_j^{+}-w_j)`.

    Chapter 7. Neuron :math:`j` moves by :math:`\eta a_j g_j` (its gradient times its
    second-layer weight); multiplying by the sign of :math:`a_j` before averaging keeps the
    common part of the :math:`g_j`, which a plain average would cancel.
    """
    W_prev = V.finite_array(W_prev, "W_prev", ndim=2)
    W_next = V.finite_array(W_next, "W_next", ndim=2)
    a = V.finite_array(a, "a", ndim=1)
    if W_prev.shape != W_next.shape:
        raise ValueError(f"shapes differ: {W_prev.shape} vs {W_next.shape}")
    if a.shape != (W_prev.shape[0],):
        raise ValueError(f"a must have one entry per neuron ({W_prev.shape[0]})")
    if np.all(a == 0):
        raise ValueError("a is zero: the update has no sign to correct")
    return np.sign(a) @ (W_next - W_prev) / W_prev.shape[0]


def update_alignment(W_prev, W_next, a, w_star) -> float:
    r"""Overlap :math:`|\langle m,w_\star\rangle|/(\|m\|\|w_\star\|)` of the mean update (ch. 7).

    :math:`m` is :func:`mean_update`. Of order one when the step learns :math:`w_\star`, of
    order :math:`d^{-1/2}` when :math:`m` is noise.
    """
    from .estimators import overlap

    return overlap(mean_update(W_prev, W_next, a), w_star)


def hermite_alignment(U, t, kmax: int) -> np.ndarray:
    r"""Alignment of vectors with the Hermite features :math:`\mathrm{He}_k(\hat t)` (chapter 7).

    ``U`` (n, r) holds unit vectors in sample space (left singular vectors of a feature
    matrix), ``t`` (n,) the projections :math:`\langle\hat u,\tilde x_i\rangle` on the learned
    direction, standardised here. Returns the (kmax, r) matrix of
    :math:`|\langle U_{:,c},\hat h_k\rangle|`, :math:`\hat h_k` the centred and normalised
    vector :math:`(\mathrm{He}_k(\hat t_i))_i`, :math:`k = 1..k_{\max}`: the :math:`k`-th
    spike of Moniri, Lee, Hassani and Dobriban carries :math:`\hat h_k`.
    """
    from .hermite import hermite_polys

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
    H = np.asarray(hermite_polys((t - t.mean()) / sd, kmax))
    H = (H if H.shape[0] == t.shape[0] else H.T)[:, 1:]
    H = H - H.mean(axis=0)
    H /= np.linalg.norm(H, axis=0)
    Un = U / np.linalg.norm(U, axis=0)
    return np.abs(H.T @ Un)


# ---------------------------------------------------------------------------------------
# Features and Taylor terms
# ---------------------------------------------------------------------------------------
def feature_matrix(W, X, activation="relu") -> np.ndarray:
    r"""Column-centred features :math:`(\sigma(XW^\top)-\mathbf 1\bar f^\top)/\sqrt n` (chapter 7).

    Centring each neuron's column removes the rank-one mean :math:`\mathbb E\sigma`, which is
    not a learned feature; dividing by :math:`\sqrt n` puts the bulk at order one.
    """
    F = NW.features(W, X, activation)
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
    W0, a = NW._check_params(W0, a)
    D1 = V.finite_array(D1, "D1", ndim=2)
    X, y = V.data_pair(X, y)
    if D1.shape != W0.shape or X.shape[1] != W0.shape[1]:
        raise ValueError(f"shapes do not match: W0 {W0.shape}, D1 {D1.shape}, X {X.shape}")
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    der = _derivative_source(derivative)
    s = NW.output_scale(W0.shape[0], scaling)
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


# ---------------------------------------------------------------------------------------
# Targets, initialisation, simulations
# ---------------------------------------------------------------------------------------
def _he3_normalised(u):
    u = np.asarray(u, dtype=float)
    return (u**3 - 3 * u) / math.sqrt(6.0)


HE3 = Link("he3-normalised", _he3_normalised, r"\mathrm{He}_3(u)/\sqrt6")
r"""The link :math:`\mathrm{He}_3(u)/\sqrt6` (unit variance; information exponent 3, generative
exponent 1): the target of the reuse experiments of chapter 7."""


def two_direction_link(Z) -> np.ndarray:
    r""":math:`g(z) = (z_1+\mathrm{He}_3(z_2)/\sqrt6)/\sqrt2` (chapter 7).

    One direction with information exponent 1 and one with information exponent 3
    (generative exponent 1); unit variance. Use with :func:`lecnotes.targets.multi_index`
    (``k = 2``).
    """
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or Z.shape[1] < 2:
        raise ValueError(f"two_direction_link needs Z of shape (n, >= 2), got {Z.shape}")
    z1, z2 = Z[:, 0], Z[:, 1]
    return (z1 + (z2**3 - 3 * z2) / math.sqrt(6.0)) / math.sqrt(2.0)


def linear_width_init(N: int, d: int, rng=None, second_layer: str = "gaussian"):
    r"""Linear-width initialisation: :math:`w_j\sim N(0,I_d/d)`, :math:`a_j\sim N(0,1)` (chapter 7).

    Chapter 7. Gaussian second-layer weights, as in Moniri et al.: with :math:`a_j=\pm1` the
    vectors :math:`a^{\circ(k+1)}` take only two values and the second step can add at most
    one outlier (exercise). ``second_layer="sign"`` draws :math:`a_j=\pm1` instead.
    """
    N = V.positive_int(N, "N")
    d = V.positive_int(d, "d")
    if second_layer not in ("gaussian", "sign"):
        raise ValueError(f"second_layer must be 'gaussian' or 'sign', got {second_layer!r}")
    rng = V.generator(rng)
    W0 = rng.standard_normal((N, d)) / math.sqrt(d)
    if second_layer == "sign":
        return W0, rng.choice([-1.0, 1.0], size=N)
    return W0, rng.standard_normal(N)


def _activation_of(activation):
    return SINCOS if activation is None else NW.get_activation(activation)


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
    from .targets import single_index

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
            (W1,) = NW.multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
            s = np.linalg.svd(W1 - W0, compute_uv=False)
            out[r, j] = s[1] / s[0]
    return out


def _top_singular_vectors(M, k):
    """Top ``k`` left and right singular vectors (Lanczos, deterministic start)."""
    from scipy.sparse.linalg import svds

    v0 = np.ones(min(M.shape)) / math.sqrt(min(M.shape))
    U, s, Vt = svds(M, k=k, v0=v0, tol=1e-8)
    order = np.argsort(s)[::-1]
    return U[:, order], Vt[order]


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
    from .targets import single_index

    N = V.positive_int(N, "N", minimum=fit_range[1] if isinstance(fit_range, Sequence) else 1)
    seeds = V.positive_int(seeds, "seeds")
    alphas = _alpha(np.atleast_1d(alphas), "alphas")
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
        (W1,) = NW.multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
        D = W1 - W0
        u = np.linalg.svd(D, full_matrices=False)[2][0]
        t = Xt @ u
        out["null"][r] = singular_values(feature_matrix(W0, Xt, act))
        for j, al in enumerate(alphas):
            F = feature_matrix(W0 + N**al * D, Xt, act)
            s = singular_values(F)
            U, Vt = _top_singular_vectors(F, 6)
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
    from .targets import single_index

    N = V.positive_int(N, "N")
    seeds = V.positive_int(seeds, "seeds")
    al1 = _alpha(np.atleast_1d(alphas1), "alphas1")
    al2 = _alpha(np.atleast_1d(alphas2), "alphas2")
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
            W1, W2u = NW.multi_step(W0, a, [(X, y), second], [N**a1, 1.0], act, "correlation",
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
    from .targets import single_index

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
            (W1,) = NW.multi_step(W0, a, [(X, y)], 1.0, act, "correlation", scaling=N**-0.5)
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
    from .targets import multi_index, single_index

    delta = V.positive_float(delta, "delta")
    p = V.positive_int(p, "p", minimum=2)
    c = V.positive_float(c, "c")
    seeds = V.positive_int(seeds, "seeds")
    dims = [V.positive_int(d, "dimension") for d in dims]
    if not dims:
        raise ValueError("dims must be non-empty")
    act = NW.get_activation(activation)
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
                (W1,) = NW.multi_step(W0, a, [batch], eta, act, "correlation", scaling=1.0)
            m1 = mean_update(W0, W1, a)
            out["first"][r, j] = abs(m1 @ w_first) / np.linalg.norm(m1)
            m1 /= np.linalg.norm(m1)
            for kind, second in (("reuse", batch), ("fresh", fresh)):
                with np.errstate(over="ignore"):
                    (W2,) = NW.multi_step(W1, a, [second], eta, act, "correlation",
                                          scaling=1.0)
                m = mean_update(W1, W2, a)
                new = m - (m @ m1) * m1
                res = out[kind]
                res["new"][r, j] = abs(new @ w) / np.linalg.norm(new)
                res["overlap"][r, j] = abs(m @ w) / np.linalg.norm(m)
                res["along"][r, j] = (new @ w) / (c * delta)
    return out


# ---------------------------------------------------------------------------------------
# The reused batch as a label preprocessing
# ---------------------------------------------------------------------------------------
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
    W0, a, X = NW._check_params(W0, a, X)
    eta = V.nonneg_float(eta, "eta")
    if not callable(dsigma):
        raise ValueError("dsigma must be a vectorised callable")
    sq = np.einsum("ij,ij->i", X, X)
    return eta * np.asarray(dsigma(X @ W0.T), dtype=float) * (y * sq / X.shape[0])[:, None] * a


_GH_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _gauss_hermite(m: int):
    if m not in _GH_CACHE:
        x, w = np.polynomial.hermite_e.hermegauss(m)
        _GH_CACHE[m] = (x, w / math.sqrt(2 * math.pi))
    return _GH_CACHE[m]


def _z_rule(m: int = 160, cutoff: float = 9.0):
    """Gauss-Legendre on [-cutoff, 0] and [0, cutoff] with the Gaussian density (kink at 0)."""
    x, w = np.polynomial.legendre.leggauss(m)
    xs = np.concatenate([(x - 1) * cutoff / 2, (x + 1) * cutoff / 2])
    ws = np.concatenate([w, w]) * cutoff / 2 * np.exp(-0.5 * xs**2) / math.sqrt(2 * math.pi)
    return xs, ws


def reuse_preprocessing(activation, c: float, delta: float, *, label_energy: float = 1.0,
                        self_factor: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    r"""Effective label preprocessing of the second step on a reused batch (chapter 7).

    In the protocol of :func:`simulate_reuse` (:math:`a_j = b_j/p`, :math:`b_j=\pm1`,
    :math:`\eta = c\,p\,\delta`) sample :math:`i` enters the second gradient of neuron
    :math:`j` through :math:`y_i\sigma'(z_{ij}+b_jc(y_i\sigma'(z_{ij})+\nu_{ij}))`: its own label
    (:func:`self_term`, :math:`\|x_i\|^2/n\approx1/\delta`) and the other samples, a Gaussian
    :math:`\nu` of variance :math:`\delta\,\mathbb E[y^2]\,\mathbb E[\sigma'(G)^2]` for a link
    with :math:`\mathbb E[y] = \mathbb E[yG] = 0`. Averaging over the neurons
    (:math:`z\sim N(0,1)`, :math:`\nu`, :math:`b`) gives

    .. math:: T(y) = y\,\mathbb E_{z,\nu,b}\big[\sigma'\big(z+bc(y\,\sigma'(z)+\nu)\big)\big],

    and the mean second update is the first-moment estimator of chapter 3 with this
    preprocessing. ``self_factor=False`` drops :math:`\sigma'(z)` from the own-label term
    (the simplified mechanism :math:`y\,\sigma'(z+bc(y+\nu))`). Expectations by quadrature:
    Gauss-Legendre in :math:`z` split at 0, Gauss-Hermite in :math:`\nu` (exactly, through
    :math:`\Phi`, for ReLU).
    """
    from scipy.special import ndtr

    act = NW.get_activation(activation)
    c = V.positive_float(c, "c")
    delta = V.positive_float(delta, "delta")
    label_energy = V.positive_float(label_energy, "label_energy")
    zs, wz = _z_rule()
    with np.errstate(over="ignore"):
        dz = np.asarray(act.dsigma(zs), dtype=float) * np.ones_like(zs)
    m2 = float(wz @ dz**2)
    s_nu = math.sqrt(delta * label_energy * m2)
    xn, wn = _gauss_hermite(48)

    def T(y):
        y = V.finite_array(y, "y")
        shape = y.shape
        yv = y.reshape(-1, 1)
        own = yv * (dz[None, :] if self_factor else 1.0)
        total = np.zeros((yv.shape[0], zs.size))
        for b in (1.0, -1.0):
            shift = zs[None, :] + b * c * own
            if act.name == "relu":
                total += ndtr(shift / (c * s_nu))
            else:
                arg = shift[:, :, None] + b * c * s_nu * xn[None, None, :]
                with np.errstate(over="ignore"):
                    total += np.asarray(act.dsigma(arg), dtype=float) @ wn
        return (yv[:, 0] * (0.5 * total @ wz)).reshape(shape)

    return T


def reuse_stein_coefficient(link, activation, c: float, delta: float, *,
                            self_factor: bool = True) -> float:
    r""":math:`\mu_T = \mathbb E[T(Y)G]` for the preprocessing of a reused batch (chapter 7).

    :math:`T` is :func:`reuse_preprocessing`, :math:`Y = \varphi(G)`. It is the limit of the
    component along :math:`w_\star` of the mean second update per unit :math:`\bar\eta`
    (``along`` in :func:`simulate_reuse`). The link must be centred with vanishing first
    Hermite coefficient (information exponent at least 2): with a fresh batch the same
    coefficient is :math:`\mathbb E[\sigma']\,\mathbb E[YG] = 0`.
    """
    from .hermite import gaussian_expectation
    from .targets import get_link

    phi = get_link(link)
    bp = getattr(phi, "breakpoints", ())
    mean, c1, ey2 = (float(v) for v in gaussian_expectation(
        lambda g: np.stack([phi(g), phi(g) * g, phi(g) ** 2], axis=1), breakpoints=bp))
    scale = math.sqrt(ey2) if ey2 > 0 else 1.0
    if abs(mean) > 1e-8 * scale or abs(c1) > 1e-8 * scale:
        raise ValueError("reuse_stein_coefficient needs a centred link with E[phi(G) G] = 0 "
                         f"(got E[phi] = {mean:.3g}, c_1 = {c1:.3g})")
    T = reuse_preprocessing(activation, c, delta, label_energy=ey2, self_factor=self_factor)
    return float(gaussian_expectation(lambda g: T(phi(g)) * g, breakpoints=bp, tol=1e-8))
