r"""Closed forms of chapter 7: spike counts after one and two steps, reused batches.

The exponents and counts of the spikes of the feature matrix after one step (Moniri, Lee,
Hassani, Dobriban 2024) and of the new outliers of :math:`W_2` after a second step (Moniri and
Hassani), the effective number of neurons of a spike, and the effective preprocessing of a
reused batch with its Stein coefficient ({eq}`eq-ch7-reuse-preprocessing`); and the Taylor
terms of one and two steps ({eq}`eq-ch7-feature-taylor`, {eq}`eq-ch7-second-taylor`), exact
expansions of the updates whose sizes carry the exponents.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation, sincos_derivative
from lecnotes.core.hermite import gauss_hermite, gaussian_expectation, split_gaussian_rule
from lecnotes.core.targets import get_link, link_moments
from lecnotes.models.networks import check_params, output_scale
from lecnotes.two_steps.finite import (  # noqa: F401
    OneStepComparison,
    compare_one_step_counts,
    finite_n_spike_strengths,
    finite_n_spikes,
    kernel_singular_values,
    run_kernel_strengths,
    square_bbp,
    taylor_spike_strengths,
)

__all__ = [
    "check_alpha",
    "expected_max_abs_gaussian",
    "rank_one_ratio_slope",
    "one_step_exponents",
    "one_step_spike_count",
    "one_step_spike_intervals",
    "kernel_singular_values",
    "run_kernel_strengths",
    "finite_n_spike_strengths",
    "square_bbp",
    "taylor_spike_strengths",
    "OneStepComparison",
    "compare_one_step_counts",
    "finite_n_spikes",
    "two_step_exponents",
    "two_step_new_outliers",
    "feature_taylor_terms",
    "second_step_taylor_terms",
    "effective_neurons",
    "reuse_preprocessing",
    "reuse_stein_coefficient",
]


def expected_max_abs_gaussian(N: int) -> float:
    r""":math:`\mathbb E\max_{j\le N}|a_j|` for :math:`N` independent standard Gaussians.

    By quadrature of :math:`\int_0^\infty 1-(2\Phi(x)-1)^N\,dx`; it grows like
    :math:`\sqrt{2\ln N}`.

    Parameters
    ----------
    N : int

    Returns
    -------
    float
    """
    N = V.positive_int(N, "N")
    x = np.linspace(0.0, 12.0, 24001)
    f = 1.0 - (2.0 * ndtr(x) - 1.0) ** N
    return float(np.sum((f[1:] + f[:-1]) * np.diff(x)) / 2)


def rank_one_ratio_slope(sizes) -> float:
    r"""Log-log slope over ``sizes`` of :math:`s_2/s_1` of the first update, to leading order.

    {prf:ref}`prop-ch7-rank-one`: :math:`s_1` is of order one and :math:`s_2\asymp
    N^{-1/2}\max_j|a_j|` (the largest entry of the Gaussian second layer scales the
    largest row of :math:`\mathrm{diag}(a)R`). The slope is :math:`-1/2` plus the
    least-squares slope of :math:`\log\mathbb E\max_j|a_j|` against :math:`\log N`
    (about :math:`1/(2\ln N)`).

    Parameters
    ----------
    sizes : sequence of int
        At least two distinct widths.

    Returns
    -------
    float
    """
    sizes = [V.positive_int(n, "size") for n in sizes]
    if len(set(sizes)) < 2:
        raise ValueError("need at least two distinct sizes")
    lx = np.log(np.asarray(sizes, dtype=float))
    ly = np.log([expected_max_abs_gaussian(n) for n in sizes])
    return float(-0.5 + np.polyfit(lx, ly, 1)[0])


def check_alpha(alpha, name="alpha"):
    r"""Validate step-size exponents: finite and in :math:`[0, 1/2)` ({prf:ref}`def-ch7-two-steps`).

    Parameters
    ----------
    alpha : float or array_like
    name : str
        Name used in the error message.

    Returns
    -------
    ndarray
    """
    a = V.finite_array(alpha, name)
    if np.any(a < 0) or np.any(a >= 0.5):
        raise ValueError(f"{name} must lie in [0, 1/2), got {alpha!r}")
    return a


def one_step_exponents(alpha: float, kmax: int) -> np.ndarray:
    r"""Exponents :math:`e_k = \frac12 + k(\alpha-\frac12)`, :math:`k = 1..k_{\max}` (chapter 7).

    {eq}`eq-ch7-one-step-exponents`. After one step with :math:`\eta = N^\alpha`, the
    :math:`k`-th Taylor term of the feature matrix :math:`\sigma(\tilde XW_1^\top)/\sqrt n`
    in the pre-activation shift is a rank-one matrix of size :math:`N^{e_k}` against a bulk of
    order one (Moniri, Lee, Hassani, Dobriban 2024).

    Parameters
    ----------
    alpha : float
        In :math:`[0, 1/2)`.
    kmax : int

    Returns
    -------
    ndarray (kmax,)
    """
    a = float(check_alpha(alpha))
    kmax = V.positive_int(kmax, "kmax")
    k = np.arange(1, kmax + 1)
    return 0.5 + k * (a - 0.5)


def one_step_spike_count(alpha, degree: int | None = None):
    r"""Number of spikes of the feature matrix after one step, :math:`\eta\asymp N^\alpha`.

    {prf:ref}`thm-ch7-one-step-spikes`: :math:`\ell` spikes for
    :math:`\alpha\in(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2})`, i.e. the number of
    :math:`k\ge1` with :math:`e_k>0`, :math:`\ell = \lceil 1/(1-2\alpha)\rceil - 1`
    (0 at :math:`\alpha = 0`, where the first term is of order one and whether it separates is
    a BBP question). Capped by ``degree`` (a polynomial activation of degree :math:`L` has
    no term beyond :math:`k = L`). Vectorised over ``alpha``.

    Parameters
    ----------
    alpha : float or array_like
    degree : int, optional

    Returns
    -------
    int or ndarray of int
    """
    a = check_alpha(alpha)
    out = np.ceil(1.0 / (1.0 - 2.0 * a) - 1e-12) - 1.0
    if degree is not None:
        out = np.minimum(out, V.positive_int(degree, "degree"))
    out = out.astype(int)
    return int(out) if out.ndim == 0 else out


def one_step_spike_intervals(lmax: int) -> list[tuple[float, float]]:
    r"""The spike intervals :math:`(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2})` (chapter 7).

    For :math:`\ell = 1..\ell_{\max}`: on the :math:`\ell`-th interval one step creates
    exactly :math:`\ell` spikes.
    They tile :math:`(0, 1/2)` and shrink like :math:`1/(2\ell^2)`
    ({prf:ref}`thm-ch7-one-step-spikes`).

    Parameters
    ----------
    lmax : int

    Returns
    -------
    list of (float, float)
    """
    lmax = V.positive_int(lmax, "lmax")
    return [((l - 1) / (2 * l), l / (2 * l + 2)) for l in range(1, lmax + 1)]


def two_step_exponents(alpha1: float, alpha2: float, kmax: int) -> np.ndarray:
    r"""Exponents :math:`\alpha_2 - k(\frac12-\alpha_1)`, :math:`k = 0..k_{\max}` (chapter 7).

    {eq}`eq-ch7-two-step-exponents`: the :math:`k`-th Taylor term of the second update
    :math:`\eta_2\nabla` in the shift of the pre-activations caused by the first step is a
    rank-one matrix of operator norm :math:`N^{\alpha_2-k(1/2-\alpha_1)}`, against the bulk of
    :math:`W_0`, of order one. The term :math:`k = 0` has the left vector of the first step
    and merges with its spike.

    Parameters
    ----------
    alpha1, alpha2 : float
        In :math:`[0, 1/2)`.
    kmax : int

    Returns
    -------
    ndarray (kmax + 1,)
    """
    a1, a2 = float(check_alpha(alpha1, "alpha1")), float(check_alpha(alpha2, "alpha2"))
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    k = np.arange(0, kmax + 1)
    return a2 - k * (0.5 - a1)


def two_step_new_outliers(alpha1, alpha2, degree: int | None = None):
    r"""New outliers of :math:`W_2`: :math:`\Lambda = \lfloor\alpha_2/(\frac12-\alpha_1)\rfloor`.

    {prf:ref}`thm-ch7-two-step-outliers`, {eq}`eq-ch7-outlier-count` (Moniri and Hassani):
    besides the spike of the first step, :math:`W_2` has :math:`\Lambda` outliers, capped at
    :math:`L-1` for a polynomial
    activation of degree :math:`L` = ``degree`` (the :math:`k`-th term needs
    :math:`\sigma^{(k+1)}\neq0`). At an integer ratio the last term is of order one and the
    formula is the paper's convention. Vectorised (broadcasting) over both exponents.

    Parameters
    ----------
    alpha1, alpha2 : float or array_like
    degree : int, optional

    Returns
    -------
    int or ndarray of int
    """
    a1, a2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
    out = np.floor(a2 / (0.5 - a1) + 1e-12)
    if degree is not None:
        out = np.minimum(out, V.positive_int(degree, "degree") - 1)
    out = out.astype(int)
    return int(out) if out.ndim == 0 else out


def _derivative_source(derivative):
    if derivative is None:
        return sincos_derivative
    if not callable(derivative):
        raise ValueError("derivative must map k to the k-th derivative of the activation")
    return derivative


def feature_taylor_terms(W0, D, X, kmax: int, derivative=None) -> list[np.ndarray]:
    r"""Taylor terms of the features after one step, per unit step: {eq}`eq-ch7-feature-taylor`.

    With :math:`W_1 = W_0+\eta D` and :math:`\Delta = \tilde XD^\top`,

    .. math:: \sigma(\tilde XW_1^\top) = \sum_{k\ge0}\eta^k\,F_k,\qquad
              F_k = \frac1{k!}\,\sigma^{(k)}(\tilde XW_0^\top)\odot\Delta^{\circ k},

    returned column-centred and divided by :math:`\sqrt n` for :math:`k = 1..k_{\max}`. The
    rank-one part of :math:`F_k` is :math:`\frac{\mu_k}{k!}(\tilde Xu)^{\circ k}(s\,a^{\circ k})
    ^\top` when :math:`D\approx s\,a\,u^\top`, of size :math:`N^{(1-k)/2}`
    ({eq}`eq-ch7-one-step-exponents`).

    Parameters
    ----------
    W0, D : ndarray (N, d)
    X : ndarray (n, d)
        Inputs on which the features are evaluated (test inputs).
    kmax : int
    derivative : callable, optional
        ``derivative(k)`` returns :math:`\sigma^{(k)}`; default :func:`sincos_derivative`.

    Returns
    -------
    list of ndarray (n, N)
        :math:`F_1, \dots, F_{k_{\max}}`.
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
    r"""Taylor terms of the second update in the shift of the first, {eq}`eq-ch7-second-taylor`.

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
    :math:`W_2` has norm :math:`N^{\alpha_2-k(1/2-\alpha_1)}`
    ({eq}`eq-ch7-two-step-exponents`).

    Parameters
    ----------
    W0, a : array_like
        Initial first layer (N, d) and second layer (N,).
    D1 : array_like (N, d)
        First update per unit step.
    X, y : array_like
        The batch of the second step.
    kmax : int
    derivative : callable, optional
        As in :func:`feature_taylor_terms`.
    scaling : float
        Output scale (``N**-0.5`` in the chapter).

    Returns
    -------
    list of ndarray (N, d)
        :math:`T_0,\dots,T_{k_{\max}}`.
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


def _double_factorial(m: int) -> int:
    return math.prod(range(m, 0, -2)) if m > 0 else 1


def effective_neurons(k: int, N: int) -> float:
    r"""Effective number of neurons carrying the vector :math:`a^{\circ k}`, :math:`a\sim N(0,I_N)`.

    Chapter 7 (finite size, the outliers of {prf:ref}`thm-ch7-two-step-outliers`): the
    participation ratio
    :math:`(\sum_ja_j^{2k})^2/\sum_ja_j^{4k}\approx N\,((2k-1)!!)^2/(4k-1)!!`. The :math:`k`-th
    Taylor term has left vector :math:`a^{\circ k}` (features) or :math:`a^{\circ(k+1)}`
    (second step); when this number is small the outlier lives on a handful of neurons.

    Parameters
    ----------
    k, N : int
        Power and width.

    Returns
    -------
    float
    """
    k = V.positive_int(k, "k")
    N = V.positive_int(N, "N")
    return N * _double_factorial(2 * k - 1) ** 2 / _double_factorial(4 * k - 1)


def reuse_preprocessing(activation, c: float, delta: float, *, label_energy: float = 1.0,
                        self_factor: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    r"""Effective preprocessing of a reused batch, {eq}`eq-ch7-reuse-preprocessing`.

    In the protocol of :func:`lecnotes.two_steps.experiments.simulate_reuse` (:math:`a_j = b_j/p`,
    :math:`b_j=\pm1`,
    :math:`\eta = c\,p\,\delta`) sample :math:`i` enters the second gradient of neuron
    :math:`j` through :math:`y_i\sigma'(z_{ij}+b_jc(y_i\sigma'(z_{ij})+\nu_{ij}))`: its own label
    (:func:`lecnotes.two_steps.experiments.self_term`, {prf:ref}`prop-ch7-self-term`,
    :math:`\|x_i\|^2/n\approx1/\delta`) and the other samples, a Gaussian
    :math:`\nu` of variance :math:`\delta\,\mathbb E[y^2]\,\mathbb E[\sigma'(G)^2]` for a link
    with :math:`\mathbb E[y] = \mathbb E[yG] = 0`. Averaging over the neurons
    (:math:`z\sim N(0,1)`, :math:`\nu`, :math:`b`) gives

    .. math:: T(y) = y\,\mathbb E_{z,\nu,b}\big[\sigma'\big(z+bc(y\,\sigma'(z)+\nu)\big)\big],

    and the mean second update is the first-moment estimator of chapter 3 with this
    preprocessing. ``self_factor=False`` drops :math:`\sigma'(z)` from the own-label term
    (the simplified mechanism :math:`y\,\sigma'(z+bc(y+\nu))`). Expectations by quadrature:
    Gauss-Legendre in :math:`z` split at 0, Gauss-Hermite in :math:`\nu` (exactly, through
    :math:`\Phi`, for ReLU).

    Parameters
    ----------
    activation : str, pair or Activation
    c, delta : float
        Step constant (:math:`\eta = c\,p\,\delta`) and :math:`n/d`.
    label_energy : float
        :math:`\mathbb E[y^2]`.
    self_factor : bool
        Keep :math:`\sigma'(z)` in the own-label term.

    Returns
    -------
    callable
        The vectorised :math:`T`.
    """

    act = get_activation(activation)
    c = V.positive_float(c, "c")
    delta = V.positive_float(delta, "delta")
    label_energy = V.positive_float(label_energy, "label_energy")
    zs, wz = split_gaussian_rule()
    with np.errstate(over="ignore"):
        dz = np.asarray(act.dsigma(zs), dtype=float) * np.ones_like(zs)
    m2 = float(wz @ dz**2)
    s_nu = math.sqrt(delta * label_energy * m2)
    xn, wn = gauss_hermite(48)

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
                            self_factor: bool = True, nodes: int | None = 200) -> float:
    r"""The Stein coefficient :math:`\mu_T = \mathbb E[T(Y)G]` of {eq}`eq-ch7-reuse-preprocessing`.

    :math:`T` is :func:`reuse_preprocessing`, :math:`Y = \varphi(G)`. It is the limit of the
    component along :math:`w_\star` of the mean second update per unit :math:`\bar\eta`
    (``along`` in :func:`lecnotes.two_steps.simulate_reuse`). The link must be centred with
    vanishing first Hermite coefficient (information exponent at least 2): with a fresh batch
    the same coefficient is :math:`\mathbb E[\sigma']\,\mathbb E[YG] = 0`
    ({prf:ref}`lem-ch7-symmetry` says which activations make it non-zero).

    Parameters
    ----------
    link : callable or str
    activation : str, pair or Activation
    c, delta : float
    self_factor : bool
        As in :func:`reuse_preprocessing`.
    nodes : int or None
        Gauss-Hermite rule in :math:`G` for a link without breakpoints (about 1e-9 accurate
        at 200 nodes for the chapter's links); ``None`` or a link with breakpoints: adaptive
        quadrature to 1e-8, ten times slower.

    Returns
    -------
    float
    """

    phi = get_link(link)
    bp = getattr(phi, "breakpoints", ())
    mean, c1, _, ey2, _ = link_moments(phi)
    scale = math.sqrt(ey2) if ey2 > 0 else 1.0
    if abs(mean) > 1e-8 * scale or abs(c1) > 1e-8 * scale:
        raise ValueError("reuse_stein_coefficient needs a centred link with E[phi(G) G] = 0 "
                         f"(got E[phi] = {mean:.3g}, c_1 = {c1:.3g})")
    T = reuse_preprocessing(activation, c, delta, label_energy=ey2, self_factor=self_factor)
    if nodes is not None and not bp:
        g, w = gauss_hermite(V.positive_int(nodes, "nodes"))
        return float(w @ (T(phi(g)) * g))
    return float(gaussian_expectation(lambda g: T(phi(g)) * g, breakpoints=bp, tol=1e-8))
