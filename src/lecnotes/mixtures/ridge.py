r"""Sharp asymptotics of ridge regression on Gaussian mixtures (chapter 11).

Two families of mixtures, both with :math:`n = \alpha d` samples and :math:`\wstar = e_1`:

* **means** ({prf:ref}`def-ch11-means`): :math:`x = c\,m\,v + z`, :math:`z\sim\N(0, I_d)`,
  a cluster variable :math:`c = \pm1` (the mixture) or :math:`c\sim\N(0,1)` (the single
  Gaussian with the same mean and covariance), :math:`v = \cos\theta\,e_1 + \sin\theta\,e_2`;
  label :math:`y = f(\ip{\wstar}{x}) + \sigma\xi`.
* **scales** ({prf:ref}`def-ch11-scales`): :math:`x = \sqrt{\tau_c}\,z` with cluster
  variances :math:`\tau_c` of weights :math:`p_c` (the single Gaussian: :math:`\tau\equiv
  \bar\tau`), linear label :math:`y = \ip{\wstar}{x} + \sigma\xi`.

The means family is a low-dimensional non-Gaussian part :math:`h = (x_1, x_2)` beside an
isotropic Gaussian bulk independent of it, and ridge sees :math:`h` through second moments
only ({prf:ref}`thm-ch11-lowrank`); the scales family changes the bulk itself, and the
resolvent solves a fixed point ({prf:ref}`thm-ch11-scales`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V

__all__ = [
    "TARGETS",
    "Mixture",
    "means_mixture",
    "scales_mixture",
    "Moments",
    "label_moments",
    "MPFunctions",
    "mp_functions",
    "scale_resolvent",
    "RidgeErrors",
    "ridge_theory",
    "linear_residual",
]

TARGETS = {"linear": lambda s: s, "sign": np.sign}
"""Label functions f of the means family: a linear teacher and the sign (a class label)."""


@dataclass(frozen=True)
class Mixture:
    """A mixture of the chapter ({prf:ref}`def-ch11-means`, {prf:ref}`def-ch11-scales`)."""

    kind: str
    """``"means"`` or ``"scales"``."""
    gaussian: bool = False
    """The single Gaussian with the mixture's mean and covariance instead of the mixture."""
    m: float = 0.0
    """Norm of the cluster means (means family)."""
    theta: float = 0.0
    r"""Angle between the means and :math:`\wstar` (means family)."""
    target: str = "linear"
    """A key of :data:`TARGETS` (the scales family is linear)."""
    noise: float = 0.0
    r"""Label noise :math:`\sigma`."""
    taus: tuple = (1.0,)
    """Cluster variances (scales family)."""
    weights: tuple = (1.0,)
    """Cluster weights (scales family)."""

    def matched_gaussian(self) -> Mixture:
        """The single Gaussian with the same first two moments of x (same label function).

        Returns
        -------
        Mixture
        """
        return replace(self, gaussian=True)

    @property
    def tau_bar(self) -> float:
        """Mean cluster variance (scales family)."""
        return float(np.dot(self.weights, self.taus))


def means_mixture(m, theta, target="linear", noise=0.0) -> Mixture:
    r"""Two clusters :math:`\pm m v` of identity covariance ({prf:ref}`def-ch11-means`).

    Parameters
    ----------
    m : float
        Norm of the means, >= 0.
    theta : float
        Angle between the means and the target direction, in [0, pi/2].
    target : str
        A key of :data:`TARGETS`.
    noise : float
        Label noise, >= 0.

    Returns
    -------
    Mixture
    """
    m = V.nonneg_float(m, "m")
    theta = V.nonneg_float(theta, "theta")
    if theta > math.pi / 2 + 1e-12:
        raise ValueError(f"theta must lie in [0, pi/2], got {theta}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a string, got {type(target).__name__}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {sorted(TARGETS)}, got {target!r}")
    return Mixture("means", m=m, theta=theta, target=target, noise=V.nonneg_float(noise, "noise"))


def scales_mixture(taus, weights, noise=0.0) -> Mixture:
    r"""Centred clusters of covariance :math:`\tau_c I` and a linear label
    ({prf:ref}`def-ch11-scales`).

    Parameters
    ----------
    taus : sequence of float
        Cluster variances, > 0.
    weights : sequence of float
        Cluster weights, >= 0, summing to 1.
    noise : float
        Label noise, >= 0.

    Returns
    -------
    Mixture
    """
    taus = V.finite_array(taus, "taus", ndim=1)
    weights = V.finite_array(weights, "weights", ndim=1)
    if taus.size < 1 or taus.shape != weights.shape or np.any(taus <= 0):
        raise ValueError("taus must be positive, one per weight")
    if np.any(weights < 0) or abs(weights.sum() - 1) > 1e-9:
        raise ValueError("weights must be non-negative and sum to 1")
    return Mixture("scales", taus=tuple(taus.tolist()), weights=tuple(weights.tolist()),
                   noise=V.nonneg_float(noise, "noise"))


def _check_mixture(model):
    if not isinstance(model, Mixture):
        raise TypeError(f"model must be a Mixture, got {type(model).__name__}")
    return model


class Moments(NamedTuple):
    r"""Second moments of the non-Gaussian part :math:`h = (x_1, x_2)` and the label
    ({eq}`eq-ch11-lowrank`)."""

    C: np.ndarray
    r""":math:`\E[hh^\top]`."""
    b: np.ndarray
    r""":math:`\E[h\,y]`."""
    y2: float
    r""":math:`\E[y^2]`."""


def _shifted_moments(target, mu):
    """E[s f(s)], E[f(s)], E[f(s)^2] for s = mu + g, g standard Gaussian (closed forms)."""
    if target == "linear":
        return mu * mu + 1.0, mu, mu * mu + 1.0
    erf = math.erf(mu / math.sqrt(2.0))
    return mu * erf + 2.0 * math.exp(-mu * mu / 2) / math.sqrt(2 * math.pi), erf, 1.0


def label_moments(model) -> Moments:
    r"""The moments :math:`(C, b, \E y^2)` of the means family ({eq}`eq-ch11-lowrank`) in
    closed form: a sum over :math:`c = \pm1` of Gaussian moments for the mixture, the moments
    of a Gaussian :math:`x_1` of variance :math:`C_{11}` for the single Gaussian (for
    :math:`f = \sign`, :math:`\E|\mu + g| = \mu\,\mathrm{erf}(\mu/\sqrt2) + 2\varphi(\mu)`).

    Parameters
    ----------
    model : Mixture
        A means mixture.

    Returns
    -------
    Moments
    """
    model = _check_mixture(model)
    if model.kind != "means":
        raise ValueError("label_moments needs a means mixture")
    a = np.array([math.cos(model.theta), math.sin(model.theta)])
    C = np.eye(2) + model.m**2 * np.outer(a, a)
    if model.gaussian:
        v = C[0, 0]
        b1 = v if model.target == "linear" else math.sqrt(2 * v / math.pi)
        f2 = v if model.target == "linear" else 1.0
        b = np.array([b1, C[1, 0] / C[0, 0] * b1])
    else:
        b, f2 = np.zeros(2), 0.0
        for c in (-1.0, 1.0):
            sf, ef, ff = _shifted_moments(model.target, c * model.m * a[0])
            b += 0.5 * np.array([sf, c * model.m * a[1] * ef])
            f2 += 0.5 * ff
    return Moments(C, b, f2 + model.noise**2)


class MPFunctions(NamedTuple):
    r"""The four numbers of an isotropic Gaussian bulk ({eq}`eq-ch11-mp`)."""

    e: float
    r""":math:`e = \frac1n\tr(Z^\top Z/n + \lambda)^{-1}`."""
    phi: float
    r"""Profile factor :math:`\phi = 1/(1+e)`: effective ridge :math:`\lambda/\phi`."""
    psi: float
    r"""Training factor :math:`\psi = \lambda^2\frac1n\tr(ZZ^\top/n + \lambda)^{-2}`."""
    chi: float
    r"""Variance factor :math:`\chi = \frac1n\tr ZZ^\top/n\,(ZZ^\top/n + \lambda)^{-2}`."""


def _lam_alpha(lam, alpha):
    lam = V.nonneg_float(lam, "lam")
    alpha = V.positive_float(alpha, "alpha")
    if lam == 0 and alpha <= 1:
        raise ValueError(f"lam = 0 (least squares) needs alpha > 1, got alpha = {alpha}")
    return lam, alpha


def mp_functions(lam, alpha) -> MPFunctions:
    r"""Closed forms {eq}`eq-ch11-mp` of the Marchenko-Pastur resolvent at :math:`-\lambda`,
    ratio :math:`\gamma = 1/\alpha`: :math:`g = (1/d)\tr(S+\lambda)^{-1}` solves
    :math:`\lambda\gamma g^2 + (\lambda + 1 - \gamma)g = 1`.

    Parameters
    ----------
    lam : float
        Ridge, >= 0 (0 needs alpha > 1: least squares).
    alpha : float
        Samples per dimension, > 0.

    Returns
    -------
    MPFunctions
    """
    lam, alpha = _lam_alpha(lam, alpha)
    gam = 1.0 / alpha
    if lam == 0:
        g, dg = 1 / (1 - gam), None
        e = gam * g
        return MPFunctions(e, 1 / (1 + e), 1 - gam, gam / (1 - gam))
    bq = lam + 1 - gam
    g = (-bq + math.sqrt(bq * bq + 4 * lam * gam)) / (2 * lam * gam)
    dg = -(gam * g * g + g) / (2 * lam * gam * g + bq)
    e = gam * g
    return MPFunctions(e, 1 / (1 + e), (1 - gam) - lam**2 * gam * dg, gam * (g + lam * dg))


def scale_resolvent(lam, alpha, taus, weights, tol=1e-13, max_iter=10_000):
    r"""The fixed point {eq}`eq-ch11-scales-fp`
    :math:`q = 1/(\lambda + \E_\tau[\tau/(1+\tau q/\alpha)])` of the scales family and its
    derivative :math:`q'(\lambda)`, by damped iteration with a convergence check.

    Parameters
    ----------
    lam : float
        Ridge, >= 0 (0 needs alpha > 1).
    alpha : float
        Samples per dimension, > 0.
    taus, weights : sequence of float
        Cluster variances and weights.
    tol : float
        Relative change at which the iteration stops.
    max_iter : int
        Iteration budget (a ``RuntimeError`` if exhausted).

    Returns
    -------
    q, dq : float
        :math:`q = (1/d)\tr(S+\lambda)^{-1}` and :math:`dq/d\lambda`.
    """
    lam, alpha = _lam_alpha(lam, alpha)
    model = scales_mixture(taus, weights)
    t, p = np.array(model.taus), np.array(model.weights)
    gam = 1 / alpha
    q = 1.0 / (lam + model.tau_bar)
    for _ in range(V.positive_int(max_iter, "max_iter")):
        new = 1.0 / (lam + np.sum(p * t / (1 + t * gam * q)))
        if abs(new - q) <= tol * abs(q):
            q = new
            break
        q = 0.5 * q + 0.5 * new
    else:
        raise RuntimeError("the fixed point of the scales family did not converge")
    dF = lam + np.sum(p * t / (1 + gam * t * q)) - q * np.sum(p * gam * t**2 / (1 + gam * t * q)
                                                              ** 2)
    return float(q), float(-q / dF)


class RidgeErrors(NamedTuple):
    """Asymptotic errors of ridge ({prf:ref}`thm-ch11-lowrank`, {prf:ref}`thm-ch11-scales`)."""

    train: float
    """Training error (1/n) sum (y - <w, x>)^2, without the penalty."""
    test: float
    """Test error E (y - <w, x>)^2 on a fresh sample of the same law."""


def ridge_theory(model, lam, alpha) -> RidgeErrors:
    r"""Training and test errors of ridge in the limit :math:`d\to\infty`, :math:`n = \alpha d`:
    {eq}`eq-ch11-lowrank` for the means family, {eq}`eq-ch11-scales` for the scales family.

    Parameters
    ----------
    model : Mixture
        The data law (mixture or its matched Gaussian).
    lam : float
        Ridge, >= 0 (0 needs alpha > 1: least squares).
    alpha : float
        Samples per dimension, > 0.

    Returns
    -------
    RidgeErrors
    """
    model = _check_mixture(model)
    lam, alpha = _lam_alpha(lam, alpha)
    if model.kind == "means":
        mp = mp_functions(lam, alpha)
        C, b, y2 = label_moments(model)
        a = np.linalg.solve(C + lam / mp.phi * np.eye(2), b)
        R = y2 - 2 * a @ b + a @ C @ a
        return RidgeErrors(mp.psi * R, (1 + mp.chi) * R)
    taus = (model.tau_bar,) if model.gaussian else model.taus
    weights = (1.0,) if model.gaussian else model.weights
    q, dq = scale_resolvent(lam, alpha, taus, weights)
    gam, s2 = 1 / alpha, model.noise**2
    test = model.tau_bar * (lam**2 * (-dq) + s2 * gam * (q + lam * dq)) + s2
    train = lam**2 * (q + lam * dq) + s2 * ((1 - gam) - gam * lam**2 * dq)
    return RidgeErrors(float(train), float(test))


def linear_residual(model) -> float:
    r"""The population residual :math:`R_{\rm lin} = \min_\beta\E(y - \ip\beta x)^2` of the
    best linear predictor ({prf:ref}`thm-ch11-ls-train`).

    Parameters
    ----------
    model : Mixture
        The data law.

    Returns
    -------
    float
    """
    model = _check_mixture(model)
    if model.kind == "scales":
        return model.noise**2
    C, b, y2 = label_moments(model)
    return float(y2 - b @ np.linalg.solve(C, b))
