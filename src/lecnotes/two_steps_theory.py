r"""Closed forms of chapter 7: spike counts after one and two steps, reused batches.

The exponents and counts of the spikes of the feature matrix after one step (Moniri, Lee,
Hassani, Dobriban 2024) and of the new outliers of :math:`W_2` after a second step (Moniri and
Hassani), the effective number of neurons of a spike, and the effective preprocessing of a
reused batch with its Stein coefficient (chapter 7, eq. (reuse preprocessing)).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import ndtr

from . import _validate as V
from .activations import get_activation
from .hermite import gauss_hermite, gaussian_expectation, split_gaussian_rule
from .targets import get_link

__all__ = [
    "check_alpha",
    "one_step_exponents",
    "one_step_spike_count",
    "one_step_spike_intervals",
    "two_step_exponents",
    "two_step_new_outliers",
    "effective_neurons",
    "reuse_preprocessing",
    "reuse_stein_coefficient",
]


def check_alpha(alpha, name="alpha"):
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
    a = float(check_alpha(alpha))
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
    a1, a2 = float(check_alpha(alpha1, "alpha1")), float(check_alpha(alpha2, "alpha2"))
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
    a1, a2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
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
                            self_factor: bool = True) -> float:
    r""":math:`\mu_T = \mathbb E[T(Y)G]` for the preprocessing of a reused batch (chapter 7).

    :math:`T` is :func:`reuse_preprocessing`, :math:`Y = \varphi(G)`. It is the limit of the
    component along :math:`w_\star` of the mean second update per unit :math:`\bar\eta`
    (``along`` in :func:`simulate_reuse`). The link must be centred with vanishing first
    Hermite coefficient (information exponent at least 2): with a fresh batch the same
    coefficient is :math:`\mathbb E[\sigma']\,\mathbb E[YG] = 0`.
    """

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
