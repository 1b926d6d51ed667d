r"""One giant step of chapter 6 on mixture inputs (chapter 11, {prf:ref}`def-ch11-gs`).

The inputs are the two-cluster means mixture of {prf:ref}`def-ch11-means` with the means on
the target direction, :math:`x = c\,m\,e_1 + z`, and the label is a third Hermite polynomial
of the standardised coordinate, :math:`y = \mathrm{He}_3(s)`, :math:`s = x_1/\sigma`,
:math:`\sigma^2 = 1 + m^2`. On a Gaussian input this target has information exponent 3 and
one step with :math:`n = \delta d` samples learns nothing; on the mixture
:math:`\kappa_1 = \E[y\,x_1] = \sigma\kappa`, :math:`\kappa = \E[\mathrm{He}_3(s)s] =
-2m^4/(1+m^2)^2` ({eq}`eq-ch11-gs-kappa`), is not zero and the step learns :math:`e_1`
({prf:ref}`prop-ch11-gs`, {eq}`eq-ch11-gs-overlap`). Three laws are compared on the same
noise: the mixture, the single Gaussian of the same mean and covariance (:math:`c\sim
N(0,1)`), and the mixture with a label drawn from an independent sample (the anisotropy of
the inputs without a relation to the label).

The update is the one of chapter 6 ({eq}`eq-ch6-update`): width :math:`p`, rows
:math:`w_i^0\sim N(0, I_d/d)`, :math:`a_i = b_i/\sqrt p`, :math:`b_i=\pm1`, output scaling
:math:`p^{-1/2}`, square loss, learning rate :math:`\eta = \eta_0\,p\sqrt{n/d}`, so that
neuron :math:`i` moves to :math:`w_i^0 + \bar\eta\,b_i g_i`, :math:`\bar\eta = \eta_0
\sqrt{n/d}`, :math:`g_i = \frac1n\sum_\nu (y_\nu - f_\nu)\sigma'(\ip{w_i^0}{x_\nu})x_\nu`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import integrate
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.core.activations import activation_moments
from lecnotes.core.hermite import he
from lecnotes.core.overlaps import neuron_overlaps
from lecnotes.models.layerwise import giant_step
from lecnotes.models.networks import init_params

__all__ = ["LAWS", "kappa", "StepMoments", "step_moments", "step_overlap", "noise_overlap",
           "decay_exponent", "sample_step_data", "StepSweep", "step_sweep"]

LAWS = ("mixture", "gaussian", "independent")
"""The three input-label laws of {prf:ref}`def-ch11-gs`."""


def _check_law(law):
    if not isinstance(law, str):
        raise TypeError(f"law must be a string, got {type(law).__name__}")
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    return law


def kappa(m) -> float:
    r""":math:`\kappa = \E[\mathrm{He}_3(s)\,s] = \E s^4 - 3 = -2m^4/(1+m^2)^2` for
    :math:`s = (c\,m + g)/\sqrt{1+m^2}`, :math:`c=\pm1` ({eq}`eq-ch11-gs-kappa`).

    Parameters
    ----------
    m : float
        Norm of the means, >= 0.

    Returns
    -------
    float
    """
    m = V.nonneg_float(m, "m")
    return -2.0 * m**4 / (1.0 + m * m) ** 2


class StepMoments(NamedTuple):
    r"""The label moments of {eq}`eq-ch11-gs-overlap`."""

    k1: float
    r""":math:`\kappa_1 = \E[y\,x_1]`."""
    y2: float
    r""":math:`\E[y^2]`."""
    y2x2: float
    r""":math:`\E[y^2x_1^2]` (the variance of the step along :math:`e_1`)."""


def step_moments(m, law="mixture") -> StepMoments:
    r"""The moments :math:`(\kappa_1, \E y^2, \E y^2x_1^2)` of the three laws, exactly: the
    integrands are polynomials of degree at most 8 in :math:`x_1 = c\,m + g`, so a 12-point
    Gauss-Hermite rule in :math:`g` (and :math:`c=\pm1`, or :math:`c` Gaussian) is exact.

    Parameters
    ----------
    m : float
        Norm of the means, >= 0.
    law : str
        One of :data:`LAWS`.

    Returns
    -------
    StepMoments
    """
    m = V.nonneg_float(m, "m")
    law = _check_law(law)
    sig = math.sqrt(1.0 + m * m)
    g, w = np.polynomial.hermite_e.hermegauss(12)
    w = w / w.sum()
    if law == "gaussian":
        x1, wt = sig * g, w
    else:
        x1 = np.concatenate([m + g, -m + g])
        wt = np.concatenate([w, w]) / 2
    y = he(3, x1 / sig)
    y2 = float(wt @ y**2)
    if law == "independent":  # the label of another sample: no relation to x_1
        return StepMoments(0.0, y2, y2 * sig * sig)
    return StepMoments(float(wt @ (y * x1)), y2, float(wt @ (y * x1) ** 2))


def step_overlap(m, eta_bar, delta, law="mixture", d=None, activation="relu",
                 bulk_norm=False) -> float:
    r"""The mean over neurons of :math:`|\cos(w_i^1, e_1)|` after one step
    ({eq}`eq-ch11-gs-overlap`, {prf:ref}`prop-ch11-gs`). Along :math:`e_1` the neuron is
    :math:`X = \mu + \tau G`, :math:`\mu = \bar\eta\mu_1|\kappa_1|`, :math:`\tau^2 = 1/d +
    \bar\eta^2(m_2\E[y^2x_1^2] - \mu_1^2\kappa_1^2)/n` (the initial coordinate and the
    variance of the average); the rest of the neuron has squared norm :math:`R = 1 +
    \bar\eta^2m_2\E[y^2]/\delta`, so the overlap is :math:`\E|X|/\sqrt{X^2 + R}` (one
    quadrature in :math:`G`). With ``d=None`` the limit :math:`\tau = 0`: chapter 6's
    {eq}`eq-ch6-neuron-overlap` with :math:`c_1` replaced by :math:`\kappa_1` (0 for the
    matched Gaussian and the independent label).

    Parameters
    ----------
    m : float
        Norm of the means, >= 0.
    eta_bar : float
        :math:`\bar\eta = \eta_0\sqrt{\delta} > 0`.
    delta : float
        :math:`n/d > 0`.
    law : str
        One of :data:`LAWS`.
    d : int or None
        Dimension (None: the limit).
    activation : str
        The activation (moments :math:`\mu_1, m_2` of :func:`activation_moments`).
    bulk_norm : bool
        The leading-order form instead: the folded-normal mean :math:`\E|X|` over
        :math:`\sqrt{R + \mu^2}` (the fluctuation along :math:`e_1` left out of the norm), with
        the second moment :math:`m_2\E[y^2x_1^2]` in :math:`\tau^2`; valid for
        :math:`\tau\ll1`, too large otherwise.

    Returns
    -------
    float
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    if not isinstance(bulk_norm, bool):
        raise TypeError("bulk_norm must be a bool")
    k1, y2, y2x2 = step_moments(m, law)
    mo = activation_moments(activation)
    mu = eta_bar * mo.mu1 * abs(k1)
    rest = 1.0 + eta_bar**2 * y2 * mo.m2 / delta
    if d is None:
        return mu / math.sqrt(mu * mu + rest)
    d = V.positive_int(d, "d")
    if bulk_norm:
        tau = math.sqrt(1.0 / d + eta_bar**2 * mo.m2 * y2x2 / (delta * d))
        return _folded_mean(mu, tau) / math.sqrt(mu * mu + rest)
    var = mo.m2 * y2x2 - (mo.mu1 * k1) ** 2
    tau = math.sqrt(1.0 / d + eta_bar**2 * var / (delta * d))
    return _cos_mean(mu, tau, rest)


def _folded_mean(mu, tau):
    """E|mu + tau G| for G standard Gaussian."""
    return tau * math.sqrt(2 / math.pi) * math.exp(-mu * mu / (2 * tau * tau)) + mu * (
        1.0 - 2.0 * float(ndtr(-mu / tau)))


def _cos_mean(mu, tau, rest):
    """E|X| / sqrt(X^2 + rest) for X = mu + tau G, G standard Gaussian (quadrature on each
    side of the kink X = 0)."""
    def f(g):
        x = mu + tau * g
        return abs(x) / math.sqrt(x * x + rest) * math.exp(-g * g / 2) / math.sqrt(2 * math.pi)

    kink = -mu / tau
    lo, hi = min(kink, -12.0), max(kink, 12.0)
    return float(integrate.quad(f, lo, kink, epsabs=1e-13)[0]
                 + integrate.quad(f, kink, hi, epsabs=1e-13)[0])


def noise_overlap(y2, x2, eta_bar, delta, d, activation="relu") -> float:
    r"""The overlap of {eq}`eq-ch11-gs-overlap` when the step has no mean along :math:`e_1`
    (:math:`\kappa_1 = 0`) and the label is independent of the inputs: :math:`\tau^2 = 1/d +
    \bar\eta^2m_2\,\E[y^2]\,\E[x_1^2]/n`, and the overlap
    :math:`\E|\tau G|/\sqrt{\tau^2G^2 + R}` of :func:`step_overlap`. With :math:`\E x_1^2 = 1`
    it is the value for isotropic inputs, the reference of the independent label of
    {prf:ref}`def-ch11-gs`.

    Parameters
    ----------
    y2 : float
        :math:`\E[y^2] > 0`.
    x2 : float
        :math:`\E[x_1^2] > 0`.
    eta_bar, delta : float
        As for :func:`step_overlap`.
    d : int
        Dimension.
    activation : str

    Returns
    -------
    float
    """
    y2, x2 = V.positive_float(y2, "y2"), V.positive_float(x2, "x2")
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    d = V.positive_int(d, "d")
    mo = activation_moments(activation)
    rest = 1.0 + eta_bar**2 * y2 * mo.m2 / delta
    tau = math.sqrt(1.0 / d + eta_bar**2 * mo.m2 * y2 * x2 / (delta * d))
    return _cos_mean(0.0, tau, rest)


def sample_step_data(n, d, m, rng=None):
    r"""Inputs and labels of the three laws of {prf:ref}`def-ch11-gs` on one noise: the
    same :math:`z` and latent :math:`c_0\sim N(0,1)` (:math:`c = \sign c_0` for the mixture,
    :math:`c = c_0` for the Gaussian); the independent label is
    :math:`\mathrm{He}_3` of another mixture sample's standardised first coordinate.

    Parameters
    ----------
    n, d : int
        Samples and dimension.
    m : float
        Norm of the means.
    rng : Generator, int or None

    Returns
    -------
    dict
        law -> (X, y).
    """
    n, d = V.positive_int(n, "n"), V.positive_int(d, "d")
    m = V.nonneg_float(m, "m")
    rng = V.generator(rng)
    sig = math.sqrt(1.0 + m * m)
    Z = rng.standard_normal((n, d))
    c0 = rng.standard_normal(n)
    other = np.sign(rng.standard_normal(n)) * m + rng.standard_normal(n)
    out = {}
    for law, c in (("mixture", np.sign(c0)), ("gaussian", c0)):
        X = Z.copy()
        X[:, 0] += c * m
        out[law] = (X, he(3, X[:, 0] / sig))
    out["independent"] = (out["mixture"][0], he(3, other / sig))
    return out


class StepSweep(NamedTuple):
    """Mean neuron overlaps with :math:`e_1` after one step: law -> (seeds, dims)."""

    dims: np.ndarray
    overlaps: dict


def step_sweep(dims, seeds, m=2.0, delta=4, eta0=1.0, p_over_d=2, rng=None,
               laws=LAWS) -> StepSweep:
    r"""One giant step ({eq}`eq-ch6-update`) from the same initial network on the three laws
    of {prf:ref}`def-ch11-gs`, :math:`n = \delta d`, :math:`p = ` ``p_over_d`` :math:`d`,
    ReLU. Seed ``s`` at size ``d`` draws the network, then the data, from stream
    ``V.stream(rng, d, s)``.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    seeds : int
        Seeds.
    m : float
        Norm of the means.
    delta : int
        :math:`n/d`.
    eta0 : float
        :math:`\eta_0`.
    p_over_d : int
        Width over dimension.
    rng : Generator, int or None
    laws : sequence of str
        The laws to step on (a subset of :data:`LAWS`; the draws do not depend on it).

    Returns
    -------
    StepSweep
    """
    dims, seeds = V.sizes(dims, "dims", minimum=2), V.positive_int(seeds, "seeds")
    delta, eta0 = V.positive_int(delta, "delta"), V.positive_float(eta0, "eta0")
    p_over_d = V.positive_int(p_over_d, "p_over_d")
    laws = tuple(_check_law(law) for law in laws)
    out = {law: np.zeros((seeds, len(dims))) for law in laws}
    for j, d in enumerate(dims):
        d = int(d)
        p, n = p_over_d * d, delta * d
        e1 = np.zeros(d)
        e1[0] = 1.0
        for s in range(seeds):
            gen = V.stream(rng, d, s)
            W0, a0 = init_params(p, d, rng=gen, symmetric=False, second_layer="sign",
                                 a_scale=p**-0.5)
            data = sample_step_data(n, d, m, rng=gen)
            eta = eta0 * p * math.sqrt(n / d)
            for law in laws:
                X, y = data[law]
                W1 = giant_step(W0, a0, X, y, eta, scaling=p**-0.5)
                out[law][s, j] = np.abs(neuron_overlaps(W1, e1)).mean()
    return StepSweep(np.asarray(dims), out)


def decay_exponent(dims, overlaps):
    r"""The exponent :math:`b` of :math:`\bar o(d)\propto d^{\,b}`, fitted by least squares to
    the logarithm of the mean overlap over seeds at each size, and its standard error
    propagated from the standard errors of the means (the sizes are independent); the decay
    of the fluctuation of {prf:ref}`prop-ch11-gs`.

    Parameters
    ----------
    dims : sequence of int
        At least two sizes.
    overlaps : ndarray (seeds, len(dims))
        Positive overlaps, at least two seeds.

    Returns
    -------
    exponent, stderr : float
    """
    x = np.log(V.sizes(dims, "dims", minimum=1)).astype(float)
    o = V.finite_array(overlaps, "overlaps", ndim=2)
    if o.shape[1] != x.size or x.size < 2 or o.shape[0] < 2 or np.any(o <= 0):
        raise ValueError("overlaps must be positive, (seeds >= 2, len(dims) >= 2)")
    mean = o.mean(axis=0)
    rel = o.std(axis=0, ddof=1) / math.sqrt(o.shape[0]) / mean
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    return float(c @ np.log(mean)), float(math.sqrt(np.sum((c * rel) ** 2)))
