r"""The figures of chapter 6 and its explorer ({ref}`sec-ch6-explore`): one giant step, and more.

The static figures of the chapter, drawn from the named results of the experiment modules:
:func:`one_step_figure` (overlaps and update spectrum over d), :func:`two_direction_figure`
(specialisation), :func:`staircase_figure` (the staircase, level by level),
:func:`barrier_figure` (the symmetric barrier) and :func:`generalisation_figure` (test errors
against the deterministic equivalent); they live here because this module is the chapter's
one that may draw with :mod:`lecnotes.book.plotting`.

The three layers of an explorer for the spike and bulk of
{prf:ref}`prop-ch6-spike-bulk`: the state :func:`giant_step_state` (a cached call of
:func:`lecnotes.giant_steps.experiments.one_step_spectra` with the theory of
:mod:`lecnotes.giant_steps.theory`), the figure :func:`giant_step_figure` (the chapter's static
figure of the spectrum of :math:`W_1` calls it) and the widget :func:`giant_step_explorer`. The
controls are :math:`\delta = n/d`, the step size :math:`\eta_0` and the dimension; the figure
shows the bulk of :math:`W_1` against the Marchenko-Pastur law of :math:`W_0` and the inflated
law, and the top singular values with the predicted spike and inflated edge.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer, with_option
from lecnotes.core import rmt
from lecnotes.core import validate as V
from lecnotes.giant_steps import experiments as GS
from lecnotes.giant_steps import theory as GT
from lecnotes.giant_steps.experiments import OneStepComparison, TwoDirectionRuns
from lecnotes.giant_steps.many_steps import BarrierRuns

__all__ = [
    "GIANT_STEP_DELTAS",
    "GIANT_STEP_ETA0S",
    "GIANT_STEP_DIMS",
    "GiantStepState",
    "giant_step_state",
    "giant_step_figure",
    "giant_step_explorer",
    "one_step_figure",
    "two_direction_figure",
    "staircase_figure",
    "barrier_figure",
    "generalisation_figure",
]

GIANT_STEP_DELTAS = (1, 2, 4, 8, 16)
"""Values of the :math:`n/d` control."""
GIANT_STEP_ETA0S = (0.25, 0.5, 1.0, 2.0, 4.0)
r"""Values of the step-size control :math:`\eta_0` (:math:`\eta=\eta_0p\sqrt{n/d}`)."""
GIANT_STEP_DIMS = (128, 256)
"""Values of the dimension control (width ``p = 2d``)."""


class GiantStepState(NamedTuple):
    """One giant step and its theory ({prf:ref}`prop-ch6-spike-bulk`)."""

    d: int
    """Dimension."""
    p: int
    """Width."""
    delta: int
    """:math:`n/d`."""
    eta0: float
    """Step size before the factor :math:`p\\sqrt{n/d}`."""
    spectra: GS.OneStepSpectra
    """Singular values of :math:`W_0`, :math:`W_1` and the update."""
    v: float
    """Predicted entry variance (times ``d``) of the bulk of :math:`W_1`."""
    spike: GT.OneStepSpike
    """Predicted spike (``s1``, ``theta``, ...)."""
    edge: float
    """Upper edge of the inflated bulk law."""


@functools.lru_cache(maxsize=64)
def _state(delta, eta0, d, p, rng):
    link = GT.tanh2
    eta_bar = GT.giant_step_size(p, delta * d, d, eta0) / p
    v = GT.one_step_bulk_variance(link, eta_bar, delta)
    one = GS.one_step_spectra(link, d, p, delta, eta0, rng=rng, reference_variance=v)
    spike = GT.one_step_spike(link, eta_bar, delta, p, d)
    edge = rmt.gaussian_singular_value_edges(p, d, v)[1]
    return GiantStepState(d, p, delta, eta0, one, v, spike, edge)


def giant_step_state(delta: int = 4, eta0: float = 1.0, d: int = 256, p: int | None = None,
                     rng: int = 0) -> GiantStepState:
    r"""One giant step on the link :math:`\tanh(2u)` and its predicted spike and bulk (cached).

    As the chapter ({ref}`sec-ch6-explore`): :math:`n=\delta d` samples, width ``p``,
    :math:`\bar\eta=\eta/p` from :func:`lecnotes.giant_steps.theory.giant_step_size`, the bulk
    variance :func:`~lecnotes.giant_steps.theory.one_step_bulk_variance`, the spike
    :func:`~lecnotes.giant_steps.theory.one_step_spike`; with ``d = 512``, ``p = 1024``,
    ``delta = 4``, ``eta0 = 1``, ``rng = 0`` it is the chapter's step. Cost: about 0.3 s of CPU
    at ``d = 256``, 2 s at ``d = 512`` (three SVDs of :math:`p\times d` matrices).

    Parameters
    ----------
    delta : int
        :math:`n/d`, a positive integer.
    eta0 : float
        Step size, positive.
    d : int
        Dimension, at least 16.
    p : int, optional
        Width (default ``2 d``).
    rng : int
        Seed.

    Returns
    -------
    GiantStepState
    """
    d = V.positive_int(d, "d", minimum=16)
    p = 2 * d if p is None else V.positive_int(p, "p", minimum=2)
    return _state(V.positive_int(delta, "delta"), V.positive_float(eta0, "eta0"), d, p,
                  V.positive_int(rng, "rng", minimum=0))


def giant_step_figure(state: GiantStepState, fig=None):
    r"""Draw the spectrum of :math:`W_1` after one giant step ({prf:ref}`prop-ch6-spike-bulk`).

    Left: histogram of the singular values of :math:`W_1` without the top one, the
    Marchenko-Pastur law of :math:`W_0` and the inflated law of variance ``v``
    (:func:`lecnotes.core.rmt.gaussian_singular_value_density`). Right: the 30 top singular values
    of :math:`W_0`, :math:`W_1` and the update, the predicted spike and the inflated edge.

    Parameters
    ----------
    state : GiantStepState
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one of 7.5 x 3.6 in if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, GiantStepState):
        raise ValueError(f"state must be a GiantStepState, got {type(state).__name__}")
    p, d, v = state.p, state.d, state.v
    sv = {"W0": state.spectra.s_W0, "W1": state.spectra.s_W1, "update": state.spectra.s_update}
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.6))
    fig.clf()
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 2)
    grid = np.linspace(0.01, max(3.2, 1.1 * state.edge), 400)
    axes[0].hist(sv["W1"][1:], bins=60, density=True, color=plotting.PALETTE[0], alpha=0.45,
                 label="$W_1$ without its spike")
    axes[0].plot(grid, rmt.gaussian_singular_value_density(grid, p, d, 1.0), "k--", lw=1.2,
                 label="Marchenko-Pastur of $W_0$ ($v=1$)")
    axes[0].plot(grid, rmt.gaussian_singular_value_density(grid, p, d, v),
                 color=plotting.PALETTE[1], label=f"inflated law, $v = {v:.2f}$")
    axes[0].set(xlabel="singular value", ylabel="density")
    k = np.arange(1, 31)
    for (name, s), c in zip(sv.items(), plotting.PALETTE, strict=False):
        axes[1].plot(k, s[:30], "o-", ms=3, color=c, label=name)
    axes[1].plot([1], [state.spike.s1], "*", ms=12, color="k", label="predicted spike")
    axes[1].axhline(state.edge, color="k", lw=0.8, ls=":", label="inflated bulk edge")
    axes[1].set(yscale="log", xlabel="rank $k$", ylabel="$k$-th singular value")
    plotting.shared_legend(fig)
    return fig


def giant_step_explorer(state: GiantStepState | None = None):
    r"""The live explorer of chapter 6 ({ref}`sec-ch6-explore`): :math:`n/d` and the step size.

    Controls: :math:`\delta = n/d` (1 to 16), :math:`\eta_0` (0.25 to 4) and ``d`` (128 or 256,
    ``p = 2d``; or the setting of ``state``). Each redraw calls :func:`giant_step_state` (at
    most about 0.5 s of CPU on one core at ``d = 256``, 2-3 s at the chapter's ``d = 512``)
    and :func:`giant_step_figure`.

    Parameters
    ----------
    state : GiantStepState, optional
        Drawn first (the chapter passes the step of its static figure, so creating the widget
        computes nothing); its setting is added to the controls. At the dimension of ``state``
        the width is that of ``state``, elsewhere ``p = 2d``.

    Returns
    -------
    ipywidgets.VBox
        With the controls ``delta``, ``eta0``, ``d`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, GiantStepState):
        raise ValueError(f"state must be a GiantStepState, got {type(state).__name__}")
    start = (4, 1.0, 256) if state is None else (state.delta, state.eta0, state.d)
    controls = {
        "delta": W.SelectionSlider(options=with_option(GIANT_STEP_DELTAS, start[0]),
                                   value=start[0], description="n/d", continuous_update=False),
        "eta0": W.SelectionSlider(options=with_option(GIANT_STEP_ETA0S, start[1]),
                                  value=start[1], description="step eta0",
                                  continuous_update=False),
        "d": W.Dropdown(options=with_option(GIANT_STEP_DIMS, start[2]), value=start[2],
                        description="d"),
    }

    def draw(values, fig):
        d = values["d"]
        p = state.p if state is not None and d == state.d else 2 * d
        st = giant_step_state(values["delta"], values["eta0"], d, p)
        return giant_step_figure(st, fig), st

    initial = None if state is None else (lambda fig: (giant_step_figure(state, fig), state))
    return build_explorer(controls, draw, initial)


def _check(value, kind, name):
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def one_step_figure(comparison: OneStepComparison, v: float):
    r"""Overlaps and the update's singular values after one step ({prf:ref}`prop-ch6-spike-bulk`).

    Left: mean neuron overlap and spike overlap over seeds with their limits
    ({eq}`eq-ch6-neuron-overlap`) and the random-direction level :math:`d^{-1/2}`; right: the
    two top singular values of :math:`W_1-W_0` against the spike strength :math:`\theta` and
    the edge :math:`\sqrt{v-1}(1+\sqrt2)` of a Gaussian residual.

    Parameters
    ----------
    comparison : OneStepComparison
        From :func:`lecnotes.giant_steps.experiments.one_step_comparison` (``p = 2d``).
    v : float
        The bulk variance (times ``d``) of :math:`W_1`, above 1.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    c = _check(comparison, OneStepComparison, "comparison")
    v = V.positive_float(v, "v")
    rec, sp = c.runs, c.spike_theory
    dims = c.dims
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.8), layout="constrained")
    plotting.errorbar_over_seeds(axes[0], dims, rec.neuron_overlap,
                                 label=r"mean neuron overlap $|\cos(w_i^1, w_\star)|$")
    plotting.errorbar_over_seeds(axes[0], dims, rec.spike_overlap,
                                 label="top singular vector of $W_1$")
    axes[0].axhline(c.neuron_theory, color=plotting.PALETTE[0], ls="--", lw=1)
    axes[0].plot(dims, [t.rho for t in sp], "--", color=plotting.PALETTE[1], lw=1)
    axes[0].plot(dims, dims**-0.5, "k:", label="random direction $d^{-1/2}$")
    axes[0].set(xscale="log", xlabel="$d$  ($n = 4d$, $p = 2d$)",
                ylabel="overlap with $w_\\star$", ylim=(0, 1))
    plotting.log_ticks(axes[0], dims)
    plotting.errorbar_over_seeds(axes[1], 2 * dims, rec.update_s1, label="$s_1$ of $W_1 - W_0$")
    plotting.errorbar_over_seeds(axes[1], 2 * dims, rec.update_s2, label="$s_2$ of $W_1 - W_0$")
    axes[1].plot(2 * dims, [t.theta for t in sp], "k--", lw=1,
                 label=r"$\theta = \bar\eta\mu_1\sqrt{p}\,\|u\|$")
    axes[1].plot(2 * dims, np.full(len(dims), np.sqrt(max(v - 1, 0)) * (1 + np.sqrt(2))),
                 "k:", lw=1, label="edge of a Gaussian residual")
    axes[1].set(xscale="log", yscale="log", xlabel="width $p$",
                ylabel="singular value of the update")
    plotting.log_ticks(axes[1], 2 * dims)
    plotting.shared_legend(fig)
    return fig


def two_direction_figure(runs: TwoDirectionRuns):
    r"""Specialisation on the two-direction target ({prf:ref}`thm-ch6-leap`).

    Two scatter panels of the overlaps :math:`(\cos(w_i,w^\star_1),\cos(w_i,w^\star_2))` of
    seed 0 at :math:`n = 4d` (raw labels) and :math:`n = 4d^2` (linear part removed), and the
    two eigenvalues of :math:`Q` over d with the noise level :math:`1/d`.

    Parameters
    ----------
    runs : TwoDirectionRuns
        From :func:`lecnotes.giant_steps.experiments.two_direction_runs`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    r = _check(runs, TwoDirectionRuns, "runs")
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3.3), layout="constrained")
    titles = {"4d": "$n = 4d$,\nraw labels", "4d2": "$n = 4d^2$,\nlinear part removed"}
    for ax, (key, title) in zip(axes[:2], titles.items(), strict=True):
        C = r.snapshot[key]
        ax.scatter(C[:, 0], C[:, 1], s=8, alpha=0.6)
        ax.plot([-1, 1], [-1, 1], "k:", lw=0.8)
        ax.add_patch(plt.Circle((0, 0), 1, fill=False, lw=0.8))
        ax.set(xlim=(-1.05, 1.05), ylim=(-1.05, 1.05), aspect="equal", title=title,
               xlabel=r"$\cos(w_i, w^\star_1)$", ylabel=r"$\cos(w_i, w^\star_2)$")
    for key, lab, c in (("4d", "$n = 4d$", plotting.PALETTE[1]),
                        ("4d2", "$n = 4d^2$", plotting.PALETTE[0])):
        for k, ls in ((0, "-"), (1, "--")):
            plotting.errorbar_over_seeds(axes[2], r.dims[key], r.eigenvalues[key][..., k],
                                         color=c, ls=ls, label=f"{lab}, $\\lambda_{k + 1}(Q)$")
    axes[2].plot(r.dims["4d"], 1 / r.dims["4d"], "k:", label="$1/d$")
    axes[2].set(xscale="log", yscale="log", xlabel="$d$", ylabel="eigenvalues of $Q$")
    plotting.log_ticks(axes[2], np.union1d(r.dims["4d"], r.dims["4d2"]))
    plotting.shared_legend(fig, ncol=3)
    return fig


def staircase_figure(q, dims, names):
    r"""The staircase, level by level ({prf:ref}`thm-ch6-staircase`): one panel per network.

    Mean :math:`\cos^2(w_i^t,w^\star_k)` over seeds against the step, one colour per direction,
    one shade per dimension, the noise level :math:`1/d` dotted; panels in the order cubic
    :math:`n = 32d`, cubic :math:`n = 8d`, ReLU :math:`n = 32d` (runs 0, 2, 1 of
    :data:`lecnotes.giant_steps.many_steps.STAIRCASE_RUNS`).

    Parameters
    ----------
    q : ndarray (seeds, len(dims), 3, steps, 3)
        From :func:`lecnotes.giant_steps.many_steps.staircase_runs`.
    dims : sequence of int
        At least two dimensions.
    names : sequence of str
        The titles of the three runs.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    q = V.finite_array(q, "q", ndim=5)
    dims = np.asarray(dims)
    if q.shape[1] != len(dims) or len(dims) < 2 or q.shape[2] != 3 or len(names) != 3:
        raise ValueError("q must be (seeds, len(dims) >= 2, 3, steps, 3) with 3 names")
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3.3), sharey=True, layout="constrained")
    steps = np.arange(1, q.shape[3] + 1)
    for ax, r in zip(axes, (0, 2, 1), strict=True):
        for j, d_j in enumerate(dims):
            shade = 0.35 + 0.65 * j / (len(dims) - 1)
            for k, c in enumerate(plotting.PALETTE[:3]):
                ax.plot(steps, q[:, j, r, :, k].mean(0), "o-", ms=3, color=c, alpha=shade,
                        label=f"$w^\\star_{k + 1}$" if j == len(dims) - 1 else None)
            ax.plot(steps, np.full(len(steps), 1 / d_j), "k:", lw=0.7, alpha=shade)
        ax.set(yscale="log", xlabel="step $t$", title=names[r], xticks=steps)
    plotting.shared_legend(fig, ncol=3)
    axes[0].set_ylabel(r"mean $\cos^2(w_i^t, w^\star_k)$")
    return fig


def barrier_figure(runs: BarrierRuns, dims):
    r"""The symmetric barrier ({prf:ref}`thm-ch6-staircase`): :math:`d\cos^2` with :math:`t`.

    :math:`d` times the mean :math:`\cos^2(w_i^t, t)`, :math:`t=(w^\star_1-w^\star_2)/\sqrt2`,
    over seeds against the step, for the asymmetric (solid) and symmetric (dashed) targets,
    one shade per dimension.

    Parameters
    ----------
    runs : BarrierRuns
        From :func:`lecnotes.giant_steps.many_steps.barrier_runs`.
    dims : sequence of int
        Its dimensions.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    r = _check(runs, BarrierRuns, "runs")
    dims = np.asarray(dims)
    if r.symmetric.shape[1] != len(dims):
        raise ValueError(f"dims must have {r.symmetric.shape[1]} entries, got {len(dims)}")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    steps = np.arange(1, r.symmetric.shape[2] + 1)
    for j, d_j in enumerate(dims):
        for q, c, ls, name in ((r.asymmetric, plotting.PALETTE[0], "-", "asymmetric"),
                               (r.symmetric, plotting.PALETTE[1], "--", "symmetric")):
            plotting.errorbar_over_seeds(ax, steps, q[:, j, :, 1] * d_j, color=c,
                                         alpha=0.4 + 0.3 * j, ls=ls, label=f"{name}, d = {d_j}")
    ax.set(yscale="log", xlabel="step $t$", ylabel=r"$d\times$ mean $\cos^2(w_i^t, t)$",
           xticks=steps)
    ax.legend(ncol=2)
    return fig


def generalisation_figure(ratios, simulated, predicted, floors):
    r"""Test errors of the three second layers against n/d ({prf:ref}`thm-ch6-ridge-equivalent`).

    Seed means with standard errors of the simulated errors (random features, one step, one
    step with the linear part removed), the deterministic equivalent of the first two, and
    the linear and one-direction floors.

    Parameters
    ----------
    ratios : array_like
        The values of :math:`n/d`.
    simulated : ndarray (seeds, len(ratios), 3)
    predicted : ndarray (seeds, len(ratios), 2)
        From :func:`lecnotes.giant_steps.generalisation.generalisation_sweep`.
    floors : TwoDirectionFloors
        :func:`lecnotes.giant_steps.theory.two_direction_floors`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    ratios = V.finite_array(ratios, "ratios", ndim=1)
    simulated = V.finite_array(simulated, "simulated", ndim=3)
    predicted = V.finite_array(predicted, "predicted", ndim=3)
    if simulated.shape[1:] != (len(ratios), 3) or predicted.shape[1:] != (len(ratios), 2):
        raise ValueError("simulated must be (seeds, len(ratios), 3), predicted (.., 2)")
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for k, lab in enumerate(("random features $W_0$", "one step",
                             "one step, linear part removed")):
        plotting.errorbar_over_seeds(ax, ratios, simulated[:, :, k], label=lab)
    for k, c in enumerate(plotting.PALETTE[:2]):
        ax.plot(ratios, predicted[:, :, k].mean(0), "-", color=c, lw=2.2, alpha=0.45,
                label="deterministic equivalent" if k == 0 else None)
    ax.axhline(floors[0], color="k", ls="--", lw=1, label="linear floor")
    ax.axhline(floors[1], color="k", ls=":", lw=1, label="one-direction floor")
    ax.set(xscale="log", xlabel="$n/d$", ylabel="test error")
    plotting.log_ticks(ax, ratios)
    ax.legend()
    return fig
