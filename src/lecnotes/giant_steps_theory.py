r"""Closed forms of chapter 6: the one-step theory of a giant step.

The overlap of a neuron with :math:`w_\star` after one giant step (:func:`one_step_neuron_overlap`,
:func:`leap2_neuron_overlap`), the bulk of :math:`W_1` (:func:`one_step_bulk_variance`) and its
spike (:func:`one_step_spike`, through :func:`lecnotes.rmt.spiked_rectangular`).
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as V
from .activations import activation_moments
from .hermite import gaussian_expectation
from .rmt import spiked_rectangular
from .targets import link_moments

__all__ = [
    "one_step_neuron_overlap",
    "leap2_neuron_overlap",
    "one_step_bulk_variance",
    "one_step_spike",
]


def one_step_neuron_overlap(link, eta_bar: float, delta: float, activation="relu",
                            b: float = 1.0) -> float:
    r"""Overlap of one neuron with :math:`w_\star` after one giant step, :math:`n=\delta d`.

    Chapter 6, eq. (one-step overlap). Neuron :math:`i` with :math:`a_i = b_i/\sqrt p` moves
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
        The single-index link :math:`\varphi` (a name from :data:`lecnotes.targets.LINKS`).
    eta_bar : float
        :math:`\eta/p > 0`.
    delta : float
        :math:`n/d > 0`.
    activation : str or pair
    b : float
        :math:`\sqrt p\,a_i` (non-zero).
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


def leap2_neuron_overlap(link, eta_bar: float, n: int, d: int, activation="relu") -> float:
    r"""Mean squared overlap :math:`\mathbb E[\cos^2(w_i^1,w_\star)]` after one step, leap-2 link.

    Chapter 6, eq. (leap-2 overlap), for a centred link with :math:`c_1 = 0` and neurons with
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

    Parameters
    ----------
    link : callable or str
        Centred link with vanishing first Hermite coefficient (checked).
    eta_bar : float
        :math:`\eta/p`.
    n, d : int
    activation : str or pair
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

    def cos2(z):
        out = 0.0
        for b in (1.0, -1.0):
            out = out + 0.5 * ((z * z / d) * (1 + eta_bar * b * a) ** 2 + noise) / (
                base + eta_bar**2 * a * a * z * z / d)
        return out

    return float(gaussian_expectation(cos2))


def one_step_bulk_variance(link, eta_bar: float, delta: float, activation="relu") -> float:
    r"""Entry variance (times :math:`d`) of the bulk of :math:`W_1` (chapter 6, eq. (bulk)).

    Besides its rank-one part, the giant step moves neuron :math:`i` by
    :math:`\bar\eta b_ir_i`, :math:`r_i = \frac1n\sum_\nu y_\nu(\sigma'(\langle w_i^0,
    x_\nu\rangle)-\mu_1)x_\nu`, a nearly isotropic vector of squared norm
    :math:`\mathbb E[y^2]\mathrm{Var}\,\sigma'(G)/\delta`. For :math:`b_i=\pm1` and centred,
    light-tailed labels the bulk of :math:`W_1` is therefore that of a Gaussian matrix with
    entries of variance :math:`v/d`,

    .. math:: v = 1+\bar\eta^2\,\mathbb E[y^2]\,\mathrm{Var}\,\sigma'(G)/\delta ,

    a Marchenko-Pastur law inflated by :math:`v` (:math:`v = 1` is the bulk of :math:`W_0`).
    Heavy-tailed labels (e.g. a degree-2 link) add outliers driven by single samples.
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    mean, _, _, ey2, _ = link_moments(link)
    if abs(mean) > 1e-8 * max(1.0, math.sqrt(ey2)):
        raise ValueError(f"the bulk formula needs centred labels (E[phi] = {mean:.3g})")
    return 1.0 + eta_bar**2 * ey2 * activation_moments(activation).var / delta


def one_step_spike(link, eta_bar: float, delta: float, p: int, d: int, activation="relu"):
    r"""Predicted spike of :math:`W_1` after one giant step on a single-index target (chapter 6).

    The rank-one part of the update is :math:`\bar\eta\mu_1\,b\,u^\top`,
    :math:`u = \frac1n X^\top y`, of strength :math:`\theta = \bar\eta\mu_1\sqrt p\,\|u\|`
    (:math:`b_i=\pm1`), with :math:`\|u\|^2\to c_1^2+\mathbb E[y^2]/\delta`; the direction
    :math:`u/\|u\|` is the first-moment estimator of chapter 3, with
    :math:`\rho_u^2 = \delta c_1^2/(\delta c_1^2+\mathbb E[y^2])`. The bulk has variance
    :func:`one_step_bulk_variance`; :func:`spiked_rectangular` then gives the top singular value
    and the overlap of the top right singular vector with :math:`u`, and the overlap with
    :math:`w_\star` is the product of the two overlaps.

    Returns
    -------
    dict with keys ``theta``, ``s1``, ``rho_u`` (overlap of :math:`u` with :math:`w_\star`),
    ``rho`` (overlap of the top right singular vector with :math:`w_\star`), ``variance``.
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
    return {"theta": theta, "s1": s1, "rho_u": rho_u, "rho": math.sqrt(rho_right2) * rho_u,
            "variance": v}
