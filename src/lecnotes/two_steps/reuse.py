r"""Chapter 7's sections on the reused batch, as the notebook runs them.

The effective preprocessing of a reused batch and its Stein coefficient
({eq}`eq-ch7-reuse-preprocessing`), the simulations of reused against fresh second batches,
and the decay of the fresh batch's overlap (re-exported by :mod:`lecnotes.two_steps.studies`,
which the notebook calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.core.targets import HE3
from lecnotes.two_steps import theory as SP
from lecnotes.two_steps.experiments import ReuseResult, simulate_reuse

__all__ = ["SteinCurves", "stein_curves", "reuse_runs", "fresh_decay_ratio", "fresh_learned_part"]


class SteinCurves(NamedTuple):
    """Outcome of :func:`stein_curves`, dicts keyed by (activation, exact): the Stein
    coefficients ``mu`` over ``cs`` and the preprocessings ``T`` over ``y`` at c = 1."""

    cs: np.ndarray
    mu: dict
    y: np.ndarray
    T: dict


def stein_curves(cs, y, delta: float, activations=("tanh", "relu")) -> SteinCurves:
    r"""Stein coefficient and effective preprocessing of a reused batch, exact and simplified.

    {eq}`eq-ch7-reuse-preprocessing` for the :math:`\mathrm{He}_3/\sqrt6` target, with the
    exact own-label term :math:`c\,y\,\sigma'(z)` and the simplified :math:`c\,y`.

    Parameters
    ----------
    cs : array_like
        Step constants :math:`c > 0`.
    y : array_like
        Labels where :math:`T(y)` is evaluated (at :math:`c = 1`).
    delta : float
        Sample ratio.
    activations : sequence of str

    Returns
    -------
    SteinCurves
    """
    cs = V.finite_array(cs, "cs", ndim=1)
    if cs.size == 0 or np.any(cs <= 0):
        raise ValueError("cs must be a non-empty 1-d array of positive step constants")
    y = V.finite_array(y, "y", ndim=1)
    delta = V.positive_float(delta, "delta")
    keys = [(act, exact) for act in activations for exact in (True, False)]
    mu = {(act, ex): np.array([SP.reuse_stein_coefficient(HE3, act, c, delta, self_factor=ex)
                               for c in cs]) for act, ex in keys}
    T = {(act, ex): SP.reuse_preprocessing(act, 1.0, delta, self_factor=ex)(y)
         for act, ex in keys}
    return SteinCurves(cs, mu, y, T)


def reuse_runs(dims: Sequence[int], delta: float, p: int, c: float, configs, seeds: dict,
               *, rng: int = 21) -> dict:
    r"""Reused against fresh second batches for several (activation, link) configurations.

    {eq}`eq-ch7-reuse-preprocessing`: configuration ``i`` of ``configs`` runs
    :func:`lecnotes.two_steps.experiments.simulate_reuse` with the seed ``rng + i``.

    Parameters
    ----------
    dims : sequence of int
    delta : float
    p : int
        Width.
    c : float
        Step constant.
    configs : sequence of (str, str or None)
        (activation, link) pairs, link None for the :math:`\mathrm{He}_3` target.
    seeds : dict
        Number of seeds by link.
    rng : int, default 21

    Returns
    -------
    dict
        :class:`~lecnotes.two_steps.experiments.ReuseResult` by configuration.
    """
    dims = V.sizes(dims, "dims", count=2)
    if len(configs) == 0:
        raise ValueError("configs must hold at least one (activation, link) pair")
    rng = V.positive_int(rng, "rng", minimum=0)
    out: dict[tuple, ReuseResult] = {}
    for i, (act, link) in enumerate(configs):
        if link not in seeds:
            raise ValueError(f"seeds must give a number of seeds for the link {link!r}")
        out[(act, link)] = simulate_reuse(dims, delta, p, c, seeds[link], activation=act,
                                          link=link, rng=rng + i)
    return out


def fresh_decay_ratio(fresh, dims) -> tuple[float, float]:
    r"""Ratio of :math:`d\,\mathrm{overlap}^2` at the largest and smallest ``d``, with its error.

    One for an overlap :math:`\propto d^{-1/2}` (the fresh batch of
    {eq}`eq-ch7-reuse-preprocessing`), ``dims[-1] / dims[0]`` for an order-one overlap; the
    standard error by the delta method.

    Parameters
    ----------
    fresh : array_like (seeds, dims)
        Overlaps of the fresh arm.
    dims : sequence of int

    Returns
    -------
    (float, float)
        Ratio and standard error.
    """
    dims = V.sizes(dims, "dims", count=2)
    fresh = V.finite_array(fresh, "fresh", ndim=2)
    if fresh.shape[1] != dims.size or fresh.shape[0] < 2:
        raise ValueError(f"fresh must have shape (seeds >= 2, {dims.size}), got {fresh.shape}")
    dq = dims * fresh**2
    (m_hi, se_hi), (m_lo, se_lo) = (stats.mean_and_error(dq[:, j]) for j in (-1, 0))
    r = m_hi / m_lo
    return float(r), float(r * np.hypot(se_hi / m_hi, se_lo / m_lo))



def fresh_learned_part(fresh, reused, dims) -> tuple[float, float, float]:
    r"""The learned part :math:`\kappa^2` of the fresh arm's squared overlap, and the value a
    learned part one third of the reused overlap would have.

    With :math:`q^2 = F/d + \kappa^2` (a noise floor of constant :math:`F`, as
    {eq}`eq-ch7-reuse-preprocessing` gives, plus an order-one learned part),
    :math:`\kappa^2 = (\overline{d q^2}(d_{\max}) - \overline{d q^2}(d_{\min}))/(d_{\max} -
    d_{\min})` for each configuration; the estimates are averaged over configurations, with
    independent standard errors. The competitor is the largest learned part that the ratio
    claim "reused at least 3 times fresh" allows: :math:`(\bar q_{\rm reused}/3)^2` at
    :math:`d_{\max}`, averaged the same way.

    Parameters
    ----------
    fresh, reused : sequence of array_like (seeds, dims)
        Overlaps of the fresh and reused arms, one array per configuration.
    dims : sequence of int

    Returns
    -------
    (float, float, float)
        :math:`\hat\kappa^2`, its standard error, and the competitor's :math:`\kappa^2`.
    """
    dims = V.sizes(dims, "dims", count=2)
    if len(fresh) != len(reused) or not len(fresh):
        raise ValueError("fresh and reused must list the same configurations")
    span = float(dims[-1] - dims[0])
    est, var, alt = [], [], []
    for f, r in zip(fresh, reused, strict=True):
        f = V.finite_array(f, "fresh", ndim=2)
        r = V.finite_array(r, "reused", ndim=2)
        if f.shape[1] != dims.size or r.shape[1] != dims.size or f.shape[0] < 2:
            raise ValueError(f"each array must have shape (seeds >= 2, {dims.size})")
        dq = dims * f**2
        (m_hi, se_hi), (m_lo, se_lo) = (stats.mean_and_error(dq[:, j]) for j in (-1, 0))
        est.append((m_hi - m_lo) / span)
        var.append((se_hi**2 + se_lo**2) / span**2)
        alt.append((r[:, -1].mean() / 3) ** 2)
    k = len(est)
    return float(np.mean(est)), float(np.sqrt(np.sum(var)) / k), float(np.mean(alt))
