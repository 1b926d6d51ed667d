r"""Closed forms and models of chapter 6: the one-step theory of a giant step.

The learning rate of a giant step (:func:`giant_step_size`, {eq}`eq-ch6-update`) and the
labels without their linear part (:func:`remove_linear_part`, leap 2); the overlap
of a neuron with :math:`w_\star` after one step (:func:`one_step_neuron_overlap`,
{eq}`eq-ch6-neuron-overlap`; :func:`leap2_neuron_overlap`, {eq}`eq-ch6-leap2`), the bulk of
:math:`W_1` (:func:`one_step_bulk_variance`, :func:`singular_value_ks`) and its spike
(:func:`one_step_spike`, {prf:ref}`prop-ch6-spike-bulk`, through
:func:`lecnotes.core.rmt.spiked_rectangular`); the targets and activations of the chapter
(:func:`tanh2`, :func:`h2`, :func:`two_direction_target`, :func:`symmetric_target`,
:func:`asymmetric_target`, :data:`BIASED_RELU`, :data:`CUBIC`) and the error floors of the
reference target (:func:`two_direction_floors`); the clock of leap 2 with many steps
(:func:`steps_to_level`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import Activation, activation_moments
from lecnotes.core.hermite import gaussian_expectation, he
from lecnotes.core.rmt import gaussian_singular_value_cdf, spiked_rectangular
from lecnotes.core.targets import link_moments

__all__ = [
    "giant_step_size",
    "remove_linear_part",
    "tanh2",
    "h2",
    "psi",
    "two_direction_target",
    "draw_two_direction",
    "rotated",
    "symmetric_target",
    "asymmetric_target",
    "BIASED_RELU",
    "CUBIC",
    "TwoDirectionFloors",
    "two_direction_floors",
    "singular_value_ks",
    "one_step_neuron_overlap",
    "leap2_neuron_overlap",
    "one_step_bulk_variance",
    "OneStepSpike",
    "one_step_spike",
    "steps_to_level",
]


def giant_step_size(p: int, n: int, d: int, eta0: float = 1.0) -> float:
    r"""The giant-step learning rate :math:`\eta = \eta_0\,p\sqrt{n/d}` of {eq}`eq-ch6-update`.

    With :math:`f = p^{-1/2}\sigma(XW^\top)a` and :math:`a_i = b_i/\sqrt p`,
    :math:`b_i = O(1)`, neuron :math:`i` moves by :math:`\bar\eta\,b_i` times its own
    gradient direction, :math:`\bar\eta = \eta/p = \eta_0\sqrt{n/d}` (Dandi et al. 2024).
    The reference code of the paper uses :math:`\eta = 10\sqrt{np}`, i.e.
    :math:`\eta_0 = 10\sqrt{d/p}`.

    Parameters
    ----------
    p, n, d : int
        Width, batch size, dimension.
    eta0 : float
        :math:`\eta_0 > 0`.

    Returns
    -------
    float
    """
    p = V.positive_int(p, "p")
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    eta0 = V.positive_float(eta0, "eta0")
    return eta0 * p * math.sqrt(n / d)



def remove_linear_part(X, y):
    r"""Subtract the empirical constant and linear parts of the labels (leap 2, chapter 6).

    :math:`A = \frac1n\sum_iy_i`, :math:`B = \frac1n\sum_iy_ix_i` (the first-moment estimate
    of :math:`\mathbb E[yx]`, as in the reference code of Dandi et al.), and the residual
    labels :math:`y_i - A - \langle B,x_i\rangle`, whose first Hermite coefficients vanish
    up to :math:`O(\sqrt{d/n})`: a step then sees only the degree-2 part, whose leap
    ({prf:ref}`def-ch6-leap`) is 2.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)

    Returns
    -------
    residual : ndarray (n,)
    A : float
    B : ndarray (d,)
    """
    X, y = V.data_pair(X, y)
    A = float(y.mean())
    B = X.T @ y / X.shape[0]
    return y - A - X @ B, A, B


# --- targets and activations of the chapter ---------------------------------------------------
def tanh2(u):
    r"""The link :math:`\varphi(u) = \tanh(2u)` of the one-step sections (bounded, :math:`c_1\ne0`).

    Parameters
    ----------
    u : ndarray

    Returns
    -------
    ndarray
    """
    return np.tanh(2 * u)


def h2(u):
    r"""The normalised second Hermite polynomial :math:`h_2 = \mathrm{He}_2/\sqrt2` (leap 2).

    Parameters
    ----------
    u : ndarray

    Returns
    -------
    ndarray
    """
    return he(2, u) / np.sqrt(2)


def psi(u):
    r"""The link :math:`\psi` of the reference target {eq}`eq-ch6-two-direction`.

    :math:`\psi = \mathrm{He}_1+\mathrm{He}_2/2+\mathrm{He}_4/24`.

    Parameters
    ----------
    u : ndarray

    Returns
    -------
    ndarray
    """
    return he(1, u) + he(2, u) / 2 + he(4, u) / 24


def two_direction_target(Z):
    r"""The reference target {eq}`eq-ch6-two-direction`, :math:`\frac12(\psi(z_1)+\psi(z_2))`.

    Parameters
    ----------
    Z : ndarray (n, 2)
        Projections on the two directions.

    Returns
    -------
    ndarray (n,)
    """
    return 0.5 * (psi(Z[:, 0]) + psi(Z[:, 1]))


def draw_two_direction(m: int, W_star, rng):
    r"""``m`` fresh samples of :func:`two_direction_target` with directions ``W_star`` (2, d).

    Parameters
    ----------
    m : int
    W_star : ndarray (2, d)
    rng : Generator, int or None

    Returns
    -------
    X : ndarray (m, d)
    y : ndarray (m,)
    """
    m = V.positive_int(m, "m")
    W_star = V.finite_array(W_star, "W_star", ndim=2)
    if W_star.shape[0] != 2:
        raise ValueError(f"W_star must have 2 rows (directions), got {W_star.shape[0]}")
    Xs = V.generator(rng).standard_normal((m, W_star.shape[1]))
    return Xs, two_direction_target(Xs @ W_star.T)


def rotated(g: Callable) -> Callable:
    r"""The target ``g`` seen in the basis :math:`(s, t) = ((w_1 + w_2), (w_1 - w_2))/\sqrt2`.

    Parameters
    ----------
    g : callable
        A target of the projections ``Z`` (n, 2) on :math:`(w_1, w_2)`.

    Returns
    -------
    callable
        ``Z -> g(Z R)``, where ``Z`` holds the projections on :math:`(s, t)`.
    """
    R = np.array([[1.0, 1.0], [1.0, -1.0]]) / np.sqrt(2)
    return lambda Z: g(Z @ R)


def symmetric_target(Z):
    r"""The symmetric target :math:`\frac12\sum_{k=1,2}(\mathrm{He}_1+\mathrm{He}_2)(z_k)`.

    :math:`f_{\rm sym}` of {eq}`eq-ch6-symmetric`: symmetric in the two directions, so
    :math:`t` is never learned ({prf:ref}`thm-ch6-staircase`).

    Parameters
    ----------
    Z : ndarray (n, 2)

    Returns
    -------
    ndarray (n,)
    """
    return 0.5 * (he(1, Z[:, 0]) + he(2, Z[:, 0]) + he(1, Z[:, 1]) + he(2, Z[:, 1]))


def asymmetric_target(Z):
    r"""The asymmetric target :math:`f_{\rm asym}` of {eq}`eq-ch6-symmetric`.

    :math:`\frac12(\mathrm{He}_1+\mathrm{He}_2)(z_1)+\frac12(\mathrm{He}_1-\mathrm{He}_2)(z_2)`.

    Parameters
    ----------
    Z : ndarray (n, 2)

    Returns
    -------
    ndarray (n,)
    """
    return 0.5 * (he(1, Z[:, 0]) + he(2, Z[:, 0]) + he(1, Z[:, 1]) - he(2, Z[:, 1]))


def _relu_b(u):
    return np.maximum(u + 1.0, 0.0)


def _drelu_b(u):
    return (u + 1.0 > 0).astype(float)


def _cubic(u):
    return he(1, u) + he(2, u) / 2 + he(3, u) / 6


def _dcubic(u):
    return 1 + u + (u * u - 1) / 2


BIASED_RELU = Activation("relu+1", _relu_b, _drelu_b, r"\max(u+1,0)", breakpoints=(-1.0,))
r"""The ReLU with bias 1, :math:`\max(u+1, 0)`: :math:`\lambda_3 = -\phi(1)\neq0`."""

CUBIC = Activation("cubic", _cubic, _dcubic, r"\mathrm{He}_1+\mathrm{He}_2/2+\mathrm{He}_3/6")
r"""The cubic activation :math:`\mathrm{He}_1+\mathrm{He}_2/2+\mathrm{He}_3/6` (staircase)."""



def singular_value_ks(s, p: int, d: int, variance: float = 1.0) -> float:
    r"""Kolmogorov distance of singular values to the bulk law of {prf:ref}`prop-ch6-spike-bulk`.

    :math:`\max_i|i/n - F(s_{(i)})|` over the sorted values, :math:`F` the distribution
    function of the singular values of a :math:`p\times d` matrix with i.i.d. entries of
    variance ``variance / d`` (:func:`lecnotes.core.rmt.gaussian_singular_value_cdf`).

    Parameters
    ----------
    s : array_like (n,)
        Singular values.
    p, d : int
        Shape of the matrix.
    variance : float
        Entry variance times ``d``.

    Returns
    -------
    float
    """
    s = np.sort(V.finite_array(s, "s", ndim=1))
    emp = np.arange(1, len(s) + 1) / len(s)
    return float(np.max(np.abs(emp - gaussian_singular_value_cdf(s, p, d, variance))))


class TwoDirectionFloors(NamedTuple):
    r"""The test-error floors of :func:`two_direction_target` (chapter 6, generalisation).

    Attributes
    ----------
    linear : float
        Error of the best linear predictor: the energy of the non-linear part,
        :math:`\frac14\cdot2\,(\frac12+\frac1{24})`.
    one_direction : float
        :math:`\mathbb E[\mathrm{Var}(y\mid s)]`, :math:`s = (z_1+z_2)/\sqrt2`: the error of
        the best predictor that sees only :math:`s`,
        :math:`\frac2{16}+\frac{24+36\cdot4}{96^2}`.
    """

    linear: float
    one_direction: float


def two_direction_floors() -> TwoDirectionFloors:
    r"""The linear and one-direction floors of :func:`two_direction_target` (closed forms).

    With :math:`\psi = \mathrm{He}_1+\mathrm{He}_2/2+\mathrm{He}_4/24` and
    :math:`z_{1,2} = (s\pm t)/\sqrt2`, the part of :math:`y` that depends on :math:`t` is
    :math:`\mathrm{He}_2(t)/4+(\mathrm{He}_4(t)+6\mathrm{He}_2(s)\mathrm{He}_2(t))/96`.

    Returns
    -------
    TwoDirectionFloors
    """
    return TwoDirectionFloors(0.25 * 2 * (0.5 + 1 / 24), 2 / 16 + (24 + 36 * 4) / 96**2)


def one_step_neuron_overlap(link, eta_bar: float, delta: float, activation="relu",
                            b: float = 1.0) -> float:
    r"""Overlap of one neuron with :math:`w_\star` after one giant step, :math:`n=\delta d`.

    {eq}`eq-ch6-neuron-overlap` (with general :math:`b` and :math:`\mathbb E[y]`). Neuron
    :math:`i` with :math:`a_i = b_i/\sqrt p` moves
    to :math:`w_i^1 = w_i^0+\bar\eta b_ig_i`, :math:`\bar\eta=\eta/p`, with
    :math:`g_i = \frac1n\sum_\nu y_\nu\sigma'(\langle w_i^0,x_\nu\rangle)x_\nu`. By Stein's
    lemma :math:`\mathbb E g_i \approx \mu_1c_1w_\star+\mathbb E[y]\beta_1w^0_i`, and the
    fluctuation has squared norm :math:`\mathbb E[y^2]m_2/\delta`, so

    .. math:: |\cos(w_i^1,w_\star)| \to
        \frac{\bar\eta|b|\mu_1|c_1|}{\sqrt{(1+\bar\eta b\,\mathbb E[y]\beta_1)^2
        +\bar\eta^2b^2\big(\mu_1^2c_1^2+\mathbb E[y^2]m_2/\delta\big)}},

    with :math:`c_1 = \mathbb E[\varphi(G)G]` and the moments of :func:`activation_moments`.
    It does not depend on :math:`d` (or :math:`p`): the spike is learned with :math:`n`
    of order :math:`d`. The initial overlap :math:`O(d^{-1/2})` and the output at
    initialisation (:math:`O(p^{-1/2})`) are neglected.

    Parameters
    ----------
    link : callable or str
        The single-index link :math:`\varphi` (a name from :data:`lecnotes.core.targets.LINKS`).
    eta_bar : float
        :math:`\eta/p > 0`.
    delta : float
        :math:`n/d > 0`.
    activation : str or pair
    b : float
        :math:`\sqrt p\,a_i` (non-zero).

    Returns
    -------
    float
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    b = float(b)
    if not np.isfinite(b) or b == 0:
        raise ValueError(f"b must be a finite non-zero number, got {b!r}")
    mo = activation_moments(activation)
    mean, c1, _, ey2, _ = link_moments(link)
    num = eta_bar * abs(b) * mo.mu1 * abs(c1)
    den = (1 + eta_bar * b * mean * mo.beta1) ** 2 + eta_bar**2 * b**2 * (
        mo.mu1**2 * c1**2 + ey2 * mo.m2 / delta)
    return float(num / math.sqrt(den))


def leap2_neuron_overlap(link, eta_bar: float, n: int, d: int, activation="relu",
                         exact_norm: bool = False) -> float:
    r"""Mean squared overlap :math:`\mathbb E[\cos^2(w_i^1,w_\star)]` after one step, leap-2 link.

    {eq}`eq-ch6-leap2`, for a centred link with :math:`c_1 = 0` and neurons with
    :math:`b_i=\pm1`. With :math:`m_i = \langle w_i^0,w_\star\rangle = z_i/\sqrt d`, Stein's
    lemma twice gives :math:`\langle\mathbb E g_i,w_\star\rangle\approx a\,m_i`,
    :math:`a=\sqrt2c_2\beta_1`, :math:`c_2 = \mathbb E[\varphi(G)h_2(G)]`; the fluctuation
    along :math:`w_\star` has variance :math:`\mathbb E[\varphi^2G^2]m_2/n`, the one of the
    whole gradient :math:`\mathbb E[\varphi^2]m_2\,d/n`. Hence

    .. math:: \mathbb E\cos^2 \approx \mathbb E_{z,b}\,
        \frac{\frac{z^2}d(1+\bar\eta ba)^2+\bar\eta^2\mathbb E[\varphi^2G^2]m_2/n}
             {1+\bar\eta^2\mathbb E[\varphi^2]m_2\,d/n+\bar\eta^2a^2z^2/d},

    :math:`z\sim N(0,1)`. With :math:`n=\delta d` and :math:`\bar\eta` of order one this is
    :math:`C/d` (**the step learns nothing**); with :math:`n=\delta_2d^2` and the giant-step
    rate :math:`\bar\eta=\eta_0\sqrt{n/d}` it tends to a :math:`d`-independent constant.

    With ``exact_norm`` the denominator is the squared norm of :math:`w_i^1` itself
    ({eq}`eq-ch6-leap2-norm`): :math:`1-z^2/d` for the part of :math:`w_i^0` orthogonal to
    :math:`w_\star`, the fluctuation orthogonal to :math:`w_\star`,
    :math:`\bar\eta^2\mathbb E[\varphi^2]m_2(d-1)/n`, plus the numerator (the squared
    component along :math:`w_\star`, whose cross term :math:`2\bar\eta ba\,z^2/d` the
    leading form drops). Same limit, smaller at finite :math:`d`.

    Parameters
    ----------
    link : callable or str
        Centred link with vanishing first Hermite coefficient (checked).
    eta_bar : float
        :math:`\eta/p`.
    n, d : int
    activation : str or pair
    exact_norm : bool, default False
        Use the exact squared norm of :math:`w_i^1` in the denominator.

    Returns
    -------
    float
    """

    eta_bar = V.positive_float(eta_bar, "eta_bar")
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    mean, c1, c2, ey2, ey2g2 = link_moments(link)
    scale = math.sqrt(ey2) if ey2 > 0 else 1.0
    if abs(mean) > 1e-8 * scale or abs(c1) > 1e-8 * scale:
        raise ValueError("leap2_neuron_overlap needs a centred link with c_1 = 0 "
                         f"(got E[phi] = {mean:.3g}, c_1 = {c1:.3g})")
    mo = activation_moments(activation)
    a = math.sqrt(2) * c2 * mo.beta1
    noise = eta_bar**2 * ey2g2 * mo.m2 / n
    base = 1 + eta_bar**2 * ey2 * mo.m2 * d / n

    perp = eta_bar**2 * ey2 * mo.m2 * (d - 1) / n  # the fluctuation orthogonal to w*

    def cos2(z):
        out = 0.0
        for b in (1.0, -1.0):
            num = (z * z / d) * (1 + eta_bar * b * a) ** 2 + noise
            den = (1 - z * z / d + perp + num if exact_norm
                   else base + eta_bar**2 * a * a * z * z / d)
            out = out + 0.5 * num / den
        return out

    return float(gaussian_expectation(cos2))


def one_step_bulk_variance(link, eta_bar: float, delta: float, activation="relu") -> float:
    r"""Entry variance (times :math:`d`) of the bulk of :math:`W_1` ({eq}`eq-ch6-spike-bulk`).

    Besides its rank-one part, the giant step moves neuron :math:`i` by
    :math:`\bar\eta b_ir_i`, :math:`r_i = \frac1n\sum_\nu y_\nu(\sigma'(\langle w_i^0,
    x_\nu\rangle)-\mu_1)x_\nu`, a nearly isotropic vector of squared norm
    :math:`\mathbb E[y^2]\mathrm{Var}\,\sigma'(G)/\delta`. For :math:`b_i=\pm1` and centred,
    light-tailed labels the bulk of :math:`W_1` is therefore that of a Gaussian matrix with
    entries of variance :math:`v/d`,

    .. math:: v = 1+\bar\eta^2\,\mathbb E[y^2]\,\mathrm{Var}\,\sigma'(G)/\delta ,

    a Marchenko-Pastur law inflated by :math:`v` (:math:`v = 1` is the bulk of :math:`W_0`).
    Heavy-tailed labels (e.g. a degree-2 link) add outliers driven by single samples
    ({prf:ref}`prop-ch6-spike-bulk`).

    Parameters
    ----------
    link : callable or str
        A centred link (checked).
    eta_bar, delta : float
        :math:`\eta/p` and :math:`n/d`.
    activation : str or pair

    Returns
    -------
    float
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    mean, _, _, ey2, _ = link_moments(link)
    if abs(mean) > 1e-8 * max(1.0, math.sqrt(ey2)):
        raise ValueError(f"the bulk formula needs centred labels (E[phi] = {mean:.3g})")
    return 1.0 + eta_bar**2 * ey2 * activation_moments(activation).var / delta


class OneStepSpike(NamedTuple):
    r"""Outcome of :func:`one_step_spike`.

    Attributes
    ----------
    theta : float
        Strength of the rank-one part of the update.
    s1 : float
        Top singular value of :math:`W_1`.
    rho_u : float
        Overlap of :math:`u = X^\top y/n` with :math:`w_\star`.
    rho : float
        Overlap of the top right singular vector of :math:`W_1` with :math:`w_\star`.
    variance : float
        Bulk variance :func:`one_step_bulk_variance`.
    """

    theta: float
    s1: float
    rho_u: float
    rho: float
    variance: float


def one_step_spike(link, eta_bar: float, delta: float, p: int, d: int, activation="relu"):
    r"""Predicted spike of :math:`W_1` after one giant step ({prf:ref}`prop-ch6-spike-bulk`).

    The rank-one part of the update is :math:`\bar\eta\mu_1\,b\,u^\top`,
    :math:`u = \frac1n X^\top y`, of strength :math:`\theta = \bar\eta\mu_1\sqrt p\,\|u\|`
    (:math:`b_i=\pm1`), with :math:`\|u\|^2\to c_1^2+\mathbb E[y^2]/\delta`; the direction
    :math:`u/\|u\|` is the first-moment estimator of chapter 3, with
    :math:`\rho_u^2 = \delta c_1^2/(\delta c_1^2+\mathbb E[y^2])`. The bulk has variance
    :func:`one_step_bulk_variance`; :func:`spiked_rectangular` then gives the top singular value
    and the overlap of the top right singular vector with :math:`u`, and the overlap with
    :math:`w_\star` is the product of the two overlaps.

    Parameters
    ----------
    link : callable or str
    eta_bar, delta : float
        :math:`\eta/p` and :math:`n/d`.
    p, d : int
        Width and dimension.
    activation : str or pair

    Returns
    -------
    OneStepSpike
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    _, c1, _, ey2, _ = link_moments(link)
    mo = activation_moments(activation)
    v = one_step_bulk_variance(link, eta_bar, delta, activation)
    unorm = math.sqrt(c1**2 + ey2 / delta)
    theta = eta_bar * abs(mo.mu1) * math.sqrt(p) * unorm
    s1, rho_right2, _ = spiked_rectangular(theta, p, d, v)
    rho_u = abs(c1) / unorm
    return OneStepSpike(theta, s1, rho_u, math.sqrt(rho_right2) * rho_u, v)


def steps_to_level(curves, level: float = 0.2) -> np.ndarray:
    r"""First step at which each curve reaches ``level``, interpolated linearly in log.

    For a curve :math:`c_1, c_2, \dots` (step :math:`t = 1, 2, \dots`) first reaching the level
    at index :math:`k`, the crossing :math:`k + 1 - \log(c_k/\ell)/\log(c_k/c_{k-1})`; NaN if
    the curve starts above the level or never reaches it.

    Parameters
    ----------
    curves : array_like (..., steps)
    level : float

    Returns
    -------
    ndarray (...)
    """
    level = V.positive_float(level, "level")
    curves = np.asarray(curves, dtype=float)
    if curves.ndim < 1 or curves.shape[-1] < 1:
        raise ValueError("curves must have at least one step on its last axis")
    flat = curves.reshape(-1, curves.shape[-1])
    out = np.full(flat.shape[0], np.nan)
    for i, c in enumerate(flat):
        if c[0] >= level or not np.any(c >= level):
            continue
        k = int(np.argmax(c >= level))
        out[i] = k + 1 - np.log(c[k] / level) / np.log(c[k] / c[k - 1])
    return out.reshape(curves.shape[:-1])
