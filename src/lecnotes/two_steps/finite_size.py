r"""Chapter 7's finite-size effects, measured: the bulk of :math:`W_1` and the localised powers.

Two measurements behind the chapter's finite-size discussion (re-exported by
:mod:`lecnotes.two_steps.studies`, which the notebook calls):

* :func:`edge_attribution`: which part of the first step widens the bulk of :math:`W_1` beyond
  the first-order :math:`\sqrt{1+\tau}` (the rows scaled by :math:`a_j`, or the residual's
  dependence on :math:`W_0`), with surrogates of the same norm ({prf:ref}`prop-ch7-rank-one`);
* :func:`power_localisation`: the realised participation ratio of the powers
  :math:`a^{\circ(k+1)}` of a second layer, the left vectors of the terms of
  {eq}`eq-ch7-second-taylor`, against the ratio of expectations.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import SINCOS
from lecnotes.core.targets import single_index
from lecnotes.models.layerwise import multi_step
from lecnotes.models.networks import init_params
from lecnotes.two_steps import theory as SP
from lecnotes.two_steps.theory import check_alpha

__all__ = ["EdgeAttribution", "edge_attribution", "PowerLocalisation", "power_localisation"]


class EdgeAttribution(NamedTuple):
    r"""Outcome of :func:`edge_attribution`, arrays (seeds,): the mean ratio of the singular
    values of ranks 11-50 to those of :math:`W_0` for ``iid`` (:math:`W_0` + an iid Gaussian
    residual), ``rows`` (:math:`W_0` + :math:`\mathrm{diag}(a)` times an iid residual) and
    ``actual`` (:math:`W_0` + the step's own residual); ``first_order`` is
    :math:`\sqrt{1+\tau}` and ``edge`` the fitted bulk edge of :math:`W_1`."""

    iid: np.ndarray
    rows: np.ndarray
    actual: np.ndarray
    first_order: float


def edge_attribution(N: int, alpha: float, seeds: int, *, ranks=(10, 50),
                     rng=None) -> EdgeAttribution:
    r"""Which part of the first step widens the bulk of :math:`W_1` beyond first order.

    The step of :func:`first_step_spectrum` minus its spike (the component along
    :math:`X^\top y`) is the residual :math:`\frac{\eta_1}{\sqrt N}\mathrm{diag}(a)R`
    ({prf:ref}`prop-ch7-rank-one`). Two surrogates with the same Frobenius norm separate its
    effects on the bulk: an iid Gaussian matrix (the first-order inflation
    :math:`\sqrt{1+\tau}`), and :math:`\mathrm{diag}(a)` times an iid matrix (the rows scaled
    by the realised :math:`a_j`, with the norm of :math:`R`); what the actual residual adds
    beyond the second is its dependence on :math:`W_0` (through :math:`\sigma'(\langle
    w_j,x_i\rangle)`). Seed ``r`` draws the data and :math:`W_0, a` from
    ``V.stream(rng, 0, r)`` and the surrogates' Gaussian matrix from ``V.stream(rng, 1, r)``.

    Parameters
    ----------
    N : int
    alpha : float
        Exponent of the step, in [0, 1/2).
    seeds : int
    ranks : (int, int), default (10, 50)
        The singular values ``s[ranks[0]:ranks[1]]`` (decreasing) that are compared.
    rng : Generator, int or None

    Returns
    -------
    EdgeAttribution
    """
    N = V.positive_int(N, "N", minimum=60)
    alpha = float(check_alpha(alpha))
    seeds = V.positive_int(seeds, "seeds", minimum=2)
    lo, hi = (V.positive_int(r, "ranks", minimum=0) for r in ranks)
    if not lo < hi <= N:
        raise ValueError(f"ranks must satisfy 0 <= ranks[0] < ranks[1] <= N, got {ranks}")
    root = V.generator(rng)
    out = np.empty((3, seeds))
    for r in range(seeds):
        g = V.stream(root, 0, r)
        X, y, _ = single_index(N, N, "linear", rng=g)
        W0, a = init_params(N, N, rng=g, symmetric=False, second_layer="gaussian")
        (W1,) = multi_step(W0, a, [(X, y)], N**alpha, SINCOS, "correlation", scaling=N**-0.5)
        u = X.T @ y / np.linalg.norm(X.T @ y)
        R = (W1 - W0) - np.outer((W1 - W0) @ u, u)  # the step without its spike direction
        Z = V.stream(root, 1, r).standard_normal(R.shape)
        iid = Z * np.sqrt(np.mean(R**2))
        rows = a[:, None] * Z * np.sqrt(np.mean((R / a[:, None]) ** 2))
        s0 = np.linalg.svd(W0, compute_uv=False)[lo:hi]
        out[:3, r] = [np.mean(np.linalg.svd(W0 + M, compute_uv=False)[lo:hi] / s0)
                      for M in (iid, rows, R)]
    tau = N ** (2 * alpha - 1) * (1 - np.exp(-1.0))
    return EdgeAttribution(out[0], out[1], out[2], float(np.sqrt(1 + tau)))


class PowerLocalisation(NamedTuple):
    r"""Outcome of :func:`power_localisation`: participation ratios (draws, kmax) of
    :math:`a^{\circ(k+1)}`, :math:`k = 1..k_{\max}`, for a Gaussian layer (``gaussian``) and a
    bounded one of variance one (``bounded``), and the ratio of expectations ``expectation``
    (kmax,) of :func:`lecnotes.two_steps.theory.effective_neurons`."""

    gaussian: np.ndarray
    bounded: np.ndarray
    expectation: np.ndarray


def power_localisation(N: int, draws: int, kmax: int = 3, *, rng=None) -> PowerLocalisation:
    r"""The realised participation ratio of the powers of a second layer, over many layers.

    The left vectors :math:`a^{\circ(k+1)}` of the terms of {eq}`eq-ch7-second-taylor`: their
    participation ratio :math:`(\sum_ja_j^{2k+2})^2/\sum_ja_j^{4k+4}` for ``draws`` independent
    layers :math:`a\sim N(0,I_N)` (stream ``V.stream(rng, 0)``) and :math:`a_j\sim
    U[-\sqrt3,\sqrt3]` (stream ``V.stream(rng, 1)``), beside the ratio of expectations
    :math:`N((2k+1)!!)^2/(4k+3)!!`, which the heavy moments of the Gaussian make much smaller
    than the typical value.

    Parameters
    ----------
    N : int
        Width.
    draws : int
        Number of independent layers of each kind.
    kmax : int, default 3
    rng : Generator, int or None

    Returns
    -------
    PowerLocalisation
    """
    N = V.positive_int(N, "N", minimum=2)
    draws = V.positive_int(draws, "draws")
    kmax = V.positive_int(kmax, "kmax")
    root = V.generator(rng)
    layers = (V.stream(root, 0).standard_normal((draws, N)),
              np.sqrt(3.0) * (2.0 * V.stream(root, 1).random((draws, N)) - 1.0))

    def pr(A):
        P = np.stack([A ** (k + 1) for k in range(1, kmax + 1)], axis=-1)  # (draws, N, kmax)
        return np.sum(P**2, axis=1) ** 2 / np.sum(P**4, axis=1)

    expectation = np.array([SP.effective_neurons(k + 1, N) for k in range(1, kmax + 1)])
    return PowerLocalisation(pr(layers[0]), pr(layers[1]), expectation)
