r"""Chapter 7's studies as the notebook runs them: one function per section, a named result each.

Each function below draws what one section of ``lectures/07_two_steps.ipynb`` measures (with
the same generator keys and in the same order as the chapter's cells always did, so that the
claims keep their values) and returns a named tuple with everything the section's figure and
claims read:

* :func:`first_step_spectrum` and :func:`null_spectra`: :math:`W_1` after one step and the
  spectra of :math:`W_0` that calibrate the margin ({prf:ref}`prop-ch7-rank-one`);
  :func:`edge_attribution`: what widens the bulk of :math:`W_1` beyond first order;
* :func:`one_step_study` and :func:`one_step_curves`: spike counts, positions and alignments of
  the features after one step against the theorem and the finite-:math:`N` calculation
  ({prf:ref}`thm-ch7-one-step-spikes`, {eq}`eq-ch7-square-bbp`);
* :func:`taylor_exponents`: the sizes of the Taylor terms and their slopes
  ({eq}`eq-ch7-feature-taylor`, {eq}`eq-ch7-second-taylor`);
* :func:`two_step_study`, :func:`added_outliers`, :func:`match_fraction`: the phase diagram of
  two steps counted against spike-free nulls ({prf:ref}`thm-ch7-two-step-outliers`,
  {eq}`eq-ch7-null`); :func:`power_localisation`: the realised participation ratio of the
  powers of a second layer;
* :func:`stein_curves`, :func:`reuse_runs`, :func:`fresh_decay_ratio`,
  :func:`fresh_learned_part`: the reused batch and its effective preprocessing
  ({eq}`eq-ch7-reuse-preprocessing`).

The figures of these sections are drawn by :mod:`lecnotes.two_steps.explorer` (the chapter's
book-facing module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.core.activations import SINCOS
from lecnotes.core.linalg import singular_values
from lecnotes.core.rmt import BulkEdge, fit_bulk_edge, null_margin, outlier_counts
from lecnotes.core.targets import single_index
from lecnotes.models.layerwise import multi_step
from lecnotes.models.networks import init_params
from lecnotes.two_steps import theory as SP
from lecnotes.two_steps.experiments import (
    feature_matrix,
    simulate_one_step_spikes,
    taylor_strengths,
)
from lecnotes.two_steps.finite_size import (
    EdgeAttribution,
    PowerLocalisation,
    edge_attribution,
    power_localisation,
)
from lecnotes.two_steps.phase import simulate_two_step_counts
from lecnotes.two_steps.reuse import (
    SteinCurves,
    fresh_decay_ratio,
    fresh_learned_part,
    reuse_runs,
    stein_curves,
)
from lecnotes.two_steps.theory import check_alpha

__all__ = [
    "FirstStep",
    "first_step_spectrum",
    "null_spectra",
    "OneStepStudy",
    "one_step_study",
    "OneStepCurves",
    "one_step_curves",
    "count_table",
    "TaylorExponents",
    "taylor_exponents",
    "TwoStepStudy",
    "two_step_study",
    "added_outliers",
    "MatchFraction",
    "match_fraction",
    "SteinCurves",
    "stein_curves",
    "reuse_runs",
    "fresh_decay_ratio",
    "fresh_learned_part",
    "EdgeAttribution",
    "edge_attribution",
    "PowerLocalisation",
    "power_localisation",
]


def _alphas(alphas, name: str) -> np.ndarray:
    out = np.atleast_1d(np.asarray(alphas, dtype=float))
    if out.ndim != 1 or out.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of exponents in [0, 1/2)")
    check_alpha(out, name)
    return out


class FirstStep(NamedTuple):
    """Outcome of :func:`first_step_spectrum`: singular values ``s`` of :math:`W_1` (decreasing),
    their fitted bulk ``bulk`` and the first-order inflation parameter ``tau``."""

    s: np.ndarray
    bulk: BulkEdge
    tau: float


def first_step_spectrum(N: int, alpha: float, *, rng=None) -> FirstStep:
    r"""The spectrum of :math:`W_1` after one step of size :math:`N^\alpha`, :math:`n = d = N`.

    Linear target, ``sincos`` activation, Gaussian second layer, correlation loss
    ({prf:ref}`def-ch7-two-steps`, {prf:ref}`prop-ch7-rank-one`). ``tau`` is
    :math:`N^{2\alpha-1}E[y^2]\mathrm{Var}\,\sigma'(G)` with :math:`E[y^2] = 1` and
    :math:`\mathrm{Var}\,\sigma'(G) = 1-e^{-1}`: the variance of an entry of the step's bulk
    relative to one of :math:`W_0`.

    Parameters
    ----------
    N : int
        Width, samples and dimension.
    alpha : float
        Exponent of the step, in (0, 1/2).
    rng : Generator, int or None
        One generator draws the data, then :math:`W_0, a`.

    Returns
    -------
    FirstStep
    """
    N = V.positive_int(N, "N", minimum=2)
    alpha = float(check_alpha(alpha))
    rng = V.generator(rng)
    X, y, _ = single_index(N, N, "linear", rng=rng)
    W0, a = init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    (W1,) = multi_step(W0, a, [(X, y)], N**alpha, SINCOS, "correlation", scaling=N**-0.5)
    s = singular_values(W1)
    tau = N ** (2 * alpha - 1) * (1 - np.exp(-1.0))
    return FirstStep(s, fit_bulk_edge(s), float(tau))


def null_spectra(N: int, count: int, *, rng=None) -> list[np.ndarray]:
    r"""Singular values of ``count`` independent initial first layers :math:`W_0` (the null).

    The spectra that calibrate the margin of :func:`lecnotes.core.rmt.null_margin`
    ({prf:ref}`prop-ch7-rank-one`); the initialisation of {prf:ref}`def-ch7-two-steps`.

    Parameters
    ----------
    N : int
        Width and dimension.
    count : int
        Number of independent draws, all from one generator in turn.
    rng : Generator, int or None

    Returns
    -------
    list of ndarray (N,)
    """
    N = V.positive_int(N, "N", minimum=2)
    count = V.positive_int(count, "count")
    rng = V.generator(rng)
    return [
        singular_values(init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")[0])
        for _ in range(count)
    ]


class OneStepStudy(NamedTuple):
    """Outcome of :func:`one_step_study`, one entry per size where a dict.

    ``sims`` the :class:`~lecnotes.two_steps.experiments.OneStepSpikes` by size, ``margin`` the
    null margin from all sizes' initial spectra, ``counts`` (seeds, A) by size, ``theory`` (A,)
    the theorem's counts, ``fin`` the :class:`~lecnotes.two_steps.finite.OneStepComparison`,
    ``theorem_agree`` (S, A) whether every seed's count and the theorem's lie in the finite-N
    range.
    """

    sims: dict
    margin: float
    counts: dict
    theory: np.ndarray
    fin: SP.OneStepComparison
    theorem_agree: np.ndarray


def _feature_nulls(N: int, first: int, count: int) -> list[np.ndarray]:
    """Spectra of the features at initialisation of ``count`` extra draws (streams ``first``..
    of the seed ``N``, after the runs' own), to calibrate the margin."""
    out = []
    for k in range(first, first + count):
        g = V.stream(N, k)
        W0 = init_params(N, N, rng=g, symmetric=False, second_layer="gaussian")[0]
        out.append(singular_values(feature_matrix(W0, g.standard_normal((N, N)), SINCOS)))
    return out


def one_step_study(sizes: Sequence[int], alphas, seeds: int, nulls: int = 8) -> OneStepStudy:
    r"""Spikes of the features after one step at several :math:`N`, against two predictions.

    {prf:ref}`thm-ch7-one-step-spikes` and the finite-:math:`N` calculation with the square BBP
    rule ({eq}`eq-ch7-square-bbp`). Size ``N`` draws from the seed ``N`` (its own stream). The
    margin is calibrated on ``nulls`` spectra of the features at initialisation per size (the
    runs' own, then extra draws), pooled over the sizes.

    Parameters
    ----------
    sizes : sequence of int
        Widths :math:`N = n = d`.
    alphas : array_like
        Step exponents in [0, 1/2).
    seeds : int
    nulls : int, default 8
        Null spectra per size for the margin (at least ``seeds``).

    Returns
    -------
    OneStepStudy
    """
    sizes = V.sizes(sizes, "sizes", count=2)
    alphas = _alphas(alphas, "alphas")
    seeds = V.positive_int(seeds, "seeds")
    nulls = V.positive_int(nulls, "nulls", minimum=seeds)
    sims = {int(n): simulate_one_step_spikes(int(n), alphas, seeds, rng=int(n)) for n in sizes}
    margin = null_margin([s for n in sims for s in sims[n].null]
                         + [s for n in sims for s in _feature_nulls(n, seeds, nulls - seeds)])
    counts = {n: outlier_counts(r.s, r.edge, r.scale, margin) for n, r in sims.items()}
    theory = SP.one_step_spike_count(alphas)
    fin = SP.compare_one_step_counts(sims, counts, alphas, margin)
    agree = np.array([
        np.all((counts[n] >= fin.low[i]) & (counts[n] <= fin.high[i]), axis=0)
        & (theory >= fin.low[i]) & (theory <= fin.high[i])
        for i, n in enumerate(sims)
    ])
    return OneStepStudy(sims, margin, counts, theory, fin, agree)


class OneStepCurves(NamedTuple):
    """Outcome of :func:`one_step_curves`: finite-N counts by size on ``grid`` (dict of lists),
    positions (grid, kmax) from the damped (``positions``) and undamped (``taylor``) strengths
    at the largest size, counts ``large`` at ``large_N`` for the study's exponents."""

    grid: np.ndarray
    counts: dict
    positions: np.ndarray
    taylor: np.ndarray
    large: list


def one_step_curves(study: OneStepStudy, grid, alphas, *, kmax: int = 3,
                    large_N: int = 10**6) -> OneStepCurves:
    r"""The finite-:math:`N` curves of the one-step figure ({eq}`eq-ch7-square-bbp`).

    Parameters
    ----------
    study : OneStepStudy
    grid : array_like
        Exponents in (0, 1/2) where the curves are drawn.
    alphas : array_like
        The study's exponents (for the counts at ``large_N``).
    kmax : int, default 3
        Number of spike strengths for the positions.
    large_N : int, default 10**6
        The size of the extrapolated counts (edge of the largest simulated size).

    Returns
    -------
    OneStepCurves
    """
    if not isinstance(study, OneStepStudy):
        raise TypeError(f"study must be a OneStepStudy, got {type(study).__name__}")
    grid = _alphas(grid, "grid")
    alphas = _alphas(alphas, "alphas")
    kmax = V.positive_int(kmax, "kmax")
    large_N = V.positive_int(large_N, "large_N", minimum=2)
    fin, sizes = study.fin, list(study.sims)
    counts = {n: [SP.finite_n_spikes(n, a, fin.edge[i], fin.threshold[i])[0] for a in grid]
              for i, n in enumerate(sizes)}
    top, edge = sizes[-1], fin.edge[-1]
    pos = np.array([SP.square_bbp(SP.finite_n_spike_strengths(top, a, kmax=kmax), edge)
                    for a in grid])  # (grid, kmax): NaN below the BBP threshold
    tay = np.array([SP.square_bbp(SP.taylor_spike_strengths(top, a, kmax=kmax), edge)
                    for a in grid])
    large = [SP.finite_n_spikes(large_N, a, edge)[0] for a in alphas]
    return OneStepCurves(grid, counts, pos, tay, large)


def count_table(study: OneStepStudy, alphas) -> str:
    """The table of one-step counts (theorem, finite N, simulated) as text.

    {prf:ref}`thm-ch7-one-step-spikes` against {eq}`eq-ch7-square-bbp`.

    Parameters
    ----------
    study : OneStepStudy
    alphas : array_like
        The study's exponents.

    Returns
    -------
    str
    """
    if not isinstance(study, OneStepStudy):
        raise TypeError(f"study must be a OneStepStudy, got {type(study).__name__}")
    alphas = _alphas(alphas, "alphas")
    lines = ["alpha              " + "".join(f"{a:6.2f}" for a in alphas),
             "theorem            " + "".join(f"{c:6d}" for c in study.theory)]
    for i, n in enumerate(study.sims):
        lines.append(f"N = {n:4d}, finite N " + "".join(f"{c:6d}" for c in study.fin.predicted[i]))
        lines.append("         simulated " + "".join(f"{c:6.1f}" for c in study.counts[n].mean(0)))
    return "\n".join(lines)


class TaylorExponents(NamedTuple):
    """Outcome of :func:`taylor_exponents`: ``rows`` a list of (kind, k, predicted exponent,
    sizes (seeds, sizes)) and ``slopes`` the fitted (slope, standard error) by (kind, k)."""

    rows: list
    slopes: dict


def taylor_exponents(sizes: Sequence[int], seeds: int, kmax: int = 3, *,
                     second_layer: str = "sign", rng=None) -> TaylorExponents:
    r"""Sizes of the Taylor terms of two unit steps and their slopes in :math:`N`.

    The terms of {eq}`eq-ch7-feature-taylor` (features, :math:`k = 1..k_{\max}`) and
    {eq}`eq-ch7-second-taylor` (second step, :math:`k = 0..k_{\max}`) against the exponents of
    {eq}`eq-ch7-one-step-exponents` and {eq}`eq-ch7-two-step-exponents` at
    :math:`\alpha = 0`.

    Parameters
    ----------
    sizes : sequence of int
    seeds, kmax : int
    second_layer : str, default "sign"
    rng : Generator, int or None
        Passed to :func:`lecnotes.two_steps.experiments.taylor_strengths`.

    Returns
    -------
    TaylorExponents
    """
    sizes = V.sizes(sizes, "sizes", count=2)
    kmax = V.positive_int(kmax, "kmax")
    tay = taylor_strengths(sizes, seeds, kmax, second_layer=second_layer, rng=rng)
    e1, e2 = SP.one_step_exponents(0.0, kmax), SP.two_step_exponents(0.0, 0.0, kmax)
    rows = [("features", k, e1[k - 1], tay.features[:, :, k - 1]) for k in range(1, kmax + 1)]
    rows += [("second step", k, e2[k], tay.second[:, :, k]) for k in range(kmax + 1)]
    slopes = {(kind, k): stats.slopes_over_seeds(sizes, v) for kind, k, _, v in rows}
    return TaylorExponents(rows, slopes)


class TwoStepStudy(NamedTuple):
    """Outcome of :func:`two_step_study`, dicts keyed by second layer.

    ``spectra`` the :class:`~lecnotes.two_steps.phase.TwoStepSpectra`, ``eps`` the relative
    margin, ``counts`` (seeds, A1, A2) outliers of :math:`W_2`, ``counts_W1`` (seeds, A1) those
    of :math:`W_1`, ``theory`` (A1, A2) the theorem's :math:`1+\\Lambda`, ``mean`` the 2-seed
    means and ``match`` the fraction of cells where the mean equals the theorem.
    """

    spectra: dict
    eps: float
    counts: dict
    counts_W1: dict
    theory: np.ndarray
    mean: dict
    match: dict


def two_step_study(N: int, alphas1, alphas2, seeds: int, null: Sequence[np.ndarray],
                   *, rngs=(("gaussian", 11), ("uniform", 12))) -> TwoStepStudy:
    r"""Outliers of :math:`W_1` and :math:`W_2` over a grid of exponents, two second layers.

    {prf:ref}`thm-ch7-two-step-outliers`, each count against its spike-free null
    ({eq}`eq-ch7-null`) with the relative margin ``scale / edge`` of the fitted bulks of
    ``null`` (spectra of :math:`W_0`) averaged.

    Parameters
    ----------
    N : int
    alphas1, alphas2 : array_like
        Exponents of the two steps, in (0, 1/2).
    seeds : int
    null : sequence of ndarray
        Singular values of independent :math:`W_0` (:func:`null_spectra`).
    rngs : sequence of (str, int)
        The second layers and the seed of each; the Gaussian one also records the power
        overlaps.

    Returns
    -------
    TwoStepStudy
    """
    N = V.positive_int(N, "N", minimum=2)
    A1, A2 = _alphas(alphas1, "alphas1"), _alphas(alphas2, "alphas2")
    seeds = V.positive_int(seeds, "seeds")
    if len(null) == 0:
        raise ValueError("null must hold at least one spectrum")
    spectra = {k: simulate_two_step_counts(N, A1, A2, seeds, second_layer=k,
                                           vectors=k == "gaussian", rng=r) for k, r in rngs}
    eps = float(np.mean([b.scale / b.edge for b in map(fit_bulk_edge, null)]))
    counts = {k: np.sum(h.s2 > (1 + eps) * h.null2_top[..., None], axis=-1)
              for k, h in spectra.items()}
    counts_W1 = {k: np.sum(h.s1 > (1 + eps) * h.null1_top[..., None], axis=-1)
                 for k, h in spectra.items()}
    theory = 1 + SP.two_step_new_outliers(A1[:, None], A2[None, :])
    mean = {k: c.mean(0) for k, c in counts.items()}
    match = {k: float(np.mean(m == theory)) for k, m in mean.items()}
    return TwoStepStudy(spectra, eps, counts, counts_W1, theory, mean, match)


def added_outliers(study: TwoStepStudy, cells) -> np.ndarray:
    r"""Outliers the second step adds to those of :math:`W_1`, in the chosen cells.

    :math:`\#W_2 - \max(\#W_1, 1)` for every seed, cell and second layer
    ({prf:ref}`thm-ch7-two-step-outliers`: zero below :math:`\alpha_1+\alpha_2 = 1/2`).

    Parameters
    ----------
    study : TwoStepStudy
    cells : ndarray of bool (A1, A2)

    Returns
    -------
    ndarray
        One value per (second layer, seed, chosen cell), flattened.
    """
    if not isinstance(study, TwoStepStudy):
        raise TypeError(f"study must be a TwoStepStudy, got {type(study).__name__}")
    cells = np.asarray(cells)
    if cells.dtype != bool or cells.shape != study.theory.shape:
        raise ValueError(f"cells must be a boolean mask of shape {study.theory.shape}")
    return np.concatenate([
        (study.counts[k] - np.maximum(study.counts_W1[k], 1)[:, :, None])[:, cells]
        for k in study.spectra
    ]).ravel()


class MatchFraction(NamedTuple):
    """Outcome of :func:`match_fraction`: the fraction ``hit`` of (seed, cell) pairs that
    match, the chance level ``chance`` of unrelated counts and the ``bound`` (chance plus
    t binomial standard errors)."""

    hit: float
    chance: float
    bound: float


def match_fraction(counts, theory) -> MatchFraction:
    r"""How often simulated counts equal the theorem's, against counts unrelated to the cells.

    {prf:ref}`thm-ch7-two-step-outliers`; the chance level pairs every simulated count with
    every cell's theory value.

    Parameters
    ----------
    counts : array_like (seeds, ...)
        Simulated counts, the trailing axes those of ``theory``.
    theory : array_like

    Returns
    -------
    MatchFraction
    """
    theory = np.asarray(theory)
    counts = np.asarray(counts)
    if counts.ndim < 1 or counts.shape[1:] != theory.shape or counts.shape[0] == 0:
        raise ValueError(f"counts must have shape (seeds, *{theory.shape}), got {counts.shape}")
    pairs = counts.reshape(counts.shape[0], -1)
    hit = float(np.mean(pairs == theory.ravel()))
    p0 = float(np.mean(pairs.ravel()[:, None] == theory.ravel()[None, :]))
    bound = p0 + stats.t_factor(pairs.size) * np.sqrt(p0 * (1 - p0) / pairs.size)
    return MatchFraction(hit, p0, float(bound))

