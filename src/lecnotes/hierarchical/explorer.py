r"""Figures and the live explorer of chapter 10 ({ref}`sec-ch10-explore`).

:func:`stage_figure` draws the predicted overlaps of the first two stages
({prf:ref}`prop-ch10-stage-one`, {prf:ref}`prop-ch10-stage-two`) with simulated points if
given; :func:`stage_explorer` redraws it for other links and latent dimensions;
:func:`depth_figure` draws the test errors of the deep and the shallow learner against
:math:`n` ({prf:ref}`prop-ch10-shallow`); :func:`shallow_figure` adds the shallow learners and
:func:`joint_figure` the jointly trained three-layer network against its steps.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer, with_option
from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.controls import StageTwoControl
from lecnotes.hierarchical.experiments import DepthSweep, Stage1Sweep, Stage2Sweep
from lecnotes.hierarchical.joint import JointSweep
from lecnotes.hierarchical.layerwise import LayerwiseGD
from lecnotes.hierarchical.multi_index import MightSweep
from lecnotes.hierarchical.shallow import ShallowSweep

__all__ = ["StageState", "stage_state", "stage_figure", "stage_explorer", "depth_figure",
           "shallow_figure", "joint_figure", "layerwise_figure", "control_figure",
           "wide_rf_figure", "might_figure", "EXPLORER_CS", "EXPLORER_RANKS"]

EXPLORER_CS = (0.0, 0.25, 0.5, 1.0, 2.0)
"""Quadratic coefficients of the link offered by the explorer."""
EXPLORER_RANKS = (4, 8, 12, 16, 24, 32)
"""Latent dimensions offered by the explorer."""


class StageState(NamedTuple):
    r"""Predicted overlaps of the first two stages at one link and latent dimension."""

    c: float
    r: int
    alphas: np.ndarray
    q1: np.ndarray
    r"""{prf:ref}`prop-ch10-stage-one` at :math:`d = r^2` (with the finite-size term)."""
    betas: np.ndarray
    rho2: np.ndarray
    r"""{prf:ref}`prop-ch10-stage-two`."""
    law: T.FeatureLaw


def stage_state(c=0.5, r=12):
    r"""The curves of {prf:ref}`prop-ch10-stage-one` (at :math:`d = r^2`, i.e.
    :math:`\varepsilon = 1/2`) and {prf:ref}`prop-ch10-stage-two`.

    Parameters
    ----------
    c : float
        Quadratic coefficient of the link.
    r : int
        Latent dimension (>= 2).

    Returns
    -------
    StageState
    """
    r = V.positive_int(r, "r", minimum=2)
    alphas = np.geomspace(0.5, 32, 41)
    betas = np.geomspace(0.25, 32, 41)
    q = T.finite_size_overlap(T.stage_one_overlap(alphas, r, c), r, r * r)
    return StageState(float(c), r, alphas, q, betas, T.stage_two_overlap(betas, r, c),
                      T.feature_law(r, c))


def stage_figure(state, fig=None, stage1=None, stage2=None):
    r"""Two panels: the stage-one overlap against :math:`\alpha = n/(dr)` and the stage-two
    overlap against :math:`\beta = n/r^2`, theory (lines) and, if given, simulations.

    Parameters
    ----------
    state : StageState
        From :func:`stage_state` (its curves are drawn black).
    fig : matplotlib Figure, optional
        Redrawn in place.
    stage1 : Stage1Sweep, optional
        Simulated first stages, one colour per size, with their own theory curves.
    stage2 : Stage2Sweep, optional
        Simulated second stages, one colour per latent dimension.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, StageState):
        raise ValueError("state must be a StageState from stage_state()")
    if stage1 is not None and not isinstance(stage1, Stage1Sweep):
        raise ValueError("stage1 must be a Stage1Sweep")
    if stage2 is not None and not isinstance(stage2, Stage2Sweep):
        raise ValueError("stage2 must be a Stage2Sweep")
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.4), layout="constrained")
    fig.clf()
    ax0, ax1 = fig.subplots(1, 2)
    pal = plotting.PALETTE
    ax0.plot(state.alphas, state.q1, color="k", lw=1.2,
             label=f"theory, $r = {state.r}$, $d = r^2$")
    ax1.plot(state.betas, state.rho2, color="k", lw=1.2)
    if stage1 is not None:
        for j, (d, r) in enumerate(zip(stage1.dims, stage1.ranks, strict=True)):
            col = pal[j % 6]
            th = T.finite_size_overlap(T.stage_one_overlap(state.alphas, int(r), state.c),
                                       int(r), int(d))
            ax0.plot(state.alphas, th, color=col, lw=0.8, ls="--")
            plotting.errorbar_over_seeds(ax0, stage1.alphas, stage1.overlap[:, j], color=col,
                                         ls="none", label=f"$d = {d}$, $r = {r}$")
    if stage2 is not None:
        for j, r in enumerate(stage2.ranks):
            col = pal[(j + 2) % 6]
            ax1.plot(state.betas, T.stage_two_overlap(state.betas, int(r), state.c),
                     color=col, lw=0.8, ls="--")
            plotting.errorbar_over_seeds(ax1, stage2.betas, stage2.overlap[:, j], color=col,
                                         ls="none", marker="s", label=f"stage 2, $r = {r}$")
    ax0.set(xscale="log", xlabel=r"$\alpha = n/(d\,r)$", ylabel="$q_1$, subspace overlap",
            ylim=(0, 1.02), title="stage 1: latent subspace")
    ax1.set(xscale="log", xlabel=r"$\beta = n/r^2$", ylabel=r"$|\mathrm{corr}(\hat h, h)|$",
            ylim=(0, 1.02), title=f"stage 2: feature, $c = {state.c:g}$")
    plotting.log_ticks(ax0, [0.5, 1, 2, 4, 8, 16, 32])
    plotting.log_ticks(ax1, [0.25, 1, 4, 16])
    plotting.shared_legend(fig, ncol=3)
    return fig


def stage_explorer(state=None):
    r"""The live explorer of chapter 10 ({ref}`sec-ch10-explore`): selectors for the link's
    quadratic coefficient :math:`c` and the latent dimension :math:`r`; each redraw calls
    :func:`stage_state` and :func:`stage_figure` (quadratures only).

    Parameters
    ----------
    state : StageState, optional
        Drawn first (the chapter passes the state of its static figure).

    Returns
    -------
    ipywidgets.VBox
        With the controls ``c``, ``r`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, StageState):
        raise ValueError("state must be a StageState from stage_state()")
    c0, r0 = (0.5, 12) if state is None else (state.c, state.r)
    controls = {
        "c": W.SelectionSlider(options=with_option(EXPLORER_CS, c0), value=c0,
                               description="c", continuous_update=False),
        "r": W.SelectionSlider(options=with_option(EXPLORER_RANKS, r0), value=r0,
                               description="r", continuous_update=False),
    }

    def draw(values, fig):
        st = stage_state(values["c"], values["r"])
        return stage_figure(st, fig), st

    initial = None if state is None else (lambda fig: (stage_figure(state, fig), state))
    return build_explorer(controls, draw, initial)


def depth_figure(sweep, floors, matched=None):
    r"""Test error against :math:`n` (log-log) of the three-layer network trained layer by
    layer (solid), of kernel ridge with the ReLU NTK (open circles, where it was run) and of
    the matched two-layer learner of {prf:ref}`ex-ch10-exponents` (b) (open squares, dashed),
    one colour per :math:`d`, with the kernel floor {eq}`eq-ch10-floor` of each :math:`d`
    (dotted).

    Parameters
    ----------
    sweep : DepthSweep
        From :func:`lecnotes.hierarchical.experiments.depth_sweep`.
    floors : array_like
        The floor of each size.
    matched : DepthSweep, optional
        A sweep with ``matched_error`` (its own sizes, coloured as the sizes of ``sweep``
        with the same :math:`d`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep, DepthSweep):
        raise ValueError("sweep must be a DepthSweep from depth_sweep()")
    floors = V.finite_array(floors, "floors", ndim=1)
    if floors.shape != sweep.dims.shape:
        raise ValueError("floors needs one value per size")
    fig, ax = plt.subplots(figsize=(6.0, 3.8), layout="constrained")
    pal = plotting.PALETTE
    for j, d in enumerate(sweep.dims):
        col = pal[j % 6]
        plotting.errorbar_over_seeds(ax, sweep.ns, sweep.deep_error[:, j], color=col,
                                     label=f"three layers, $d = {d}$")
        if sweep.kernel_error.size:
            m, se = stats.mean_and_error(sweep.kernel_error[:, j])
            ax.errorbar(sweep.kernel_ns, m, se, color=col, marker="o", mfc="white", ls=":",
                        capsize=2, label=f"kernel (NTK), $d = {d}$")
        ax.axhline(floors[j], color=col, ls=(0, (1, 2)), lw=0.9)
    if matched is not None:
        for j, d in enumerate(matched.dims):
            hit = np.flatnonzero(sweep.dims == d)
            col = pal[int(hit[0]) % 6] if hit.size else pal[(j + 3) % 6]
            ok = ~np.isnan(matched.matched_error[0, j])
            m, se = stats.mean_and_error(matched.matched_error[:, j][:, ok])
            ax.errorbar(matched.ns[ok], m, se, color=col, marker="s", mfc="white", ls="--",
                        capsize=2, label=f"two layers, learned subspace, $d = {d}$")
    ax.set(xscale="log", yscale="log", xlabel="$n$ (samples)",
           ylabel=r"test error $/\,\mathrm{Var}\,y$")
    ticks = [int(v) for v in sweep.ns[::2]]
    plotting.log_ticks(ax, ticks)
    plotting.log_ticks(ax, [0.05, 0.1, 0.2, 0.5, 1], axis="y")
    plotting.shared_legend(fig, ncol=3)
    return fig


def shallow_figure(deep, shallow, null, floors):
    r"""Relative test error against :math:`n` (log-log), one panel per :math:`d`: the
    three-layer network trained layer by layer, the two-layer network after one giant step and
    random-features ridge, each divided by the error of the constant predictor on the same test
    points, with the kernel floor {eq}`eq-ch10-floor` (dotted).

    Parameters
    ----------
    deep : DepthSweep
        From :func:`lecnotes.hierarchical.experiments.depth_sweep`.
    shallow : ShallowSweep
        From :func:`lecnotes.hierarchical.shallow.shallow_sweep`, same sizes and budgets.
    null : array_like (seeds, sizes)
        From :func:`lecnotes.hierarchical.shallow.null_errors`, at least as many seeds as
        ``deep``.
    floors : array_like
        The floor of each size.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(deep, DepthSweep) or not isinstance(shallow, ShallowSweep):
        raise ValueError("deep must be a DepthSweep and shallow a ShallowSweep")
    if not (np.array_equal(deep.dims, shallow.dims) and np.array_equal(deep.ns, shallow.ns)):
        raise ValueError("deep and shallow must share their sizes and budgets")
    null = V.finite_array(null, "null", ndim=2)
    floors = V.finite_array(floors, "floors", ndim=1)
    S = deep.deep_error.shape[0]
    if null.shape[0] < S or null.shape[1] != len(deep.dims) or floors.shape != deep.dims.shape:
        raise ValueError("null needs (seeds, sizes) and floors one value per size")
    k, kg = shallow.rf_error.shape[0], shallow.gs_error.shape[0]
    if null.shape[0] < kg:
        raise ValueError("null needs at least as many seeds as the shallow sweep")
    fig, axes = plt.subplots(1, len(deep.dims), figsize=(7.5, 3.2),
                             layout="constrained", sharey=True, squeeze=False)
    pal = plotting.PALETTE
    curves = [("three layers, layer-wise", deep.deep_error / null[:S, :, None], "-", "o"),
              (f"two layers, one giant step ($p = {shallow.width}$)",
               shallow.gs_error / null[:kg, :, None], "--", "s"),
              (f"random features ($p = {shallow.width}$, width-limited)",
               shallow.rf_error / null[:k, :, None],
               ":", "^")]
    for j, (ax, d) in enumerate(zip(axes[0], deep.dims, strict=True)):
        for i, (name, err, ls, mk) in enumerate(curves):
            plotting.errorbar_over_seeds(ax, deep.ns, err[:, j], color=pal[i], ls=ls,
                                         marker=mk, ms=3, label=name if j == 0 else None)
        ax.axhline(floors[j], color=pal[6], ls=(0, (1, 2)), lw=0.9,
                   label="kernel floor" if j == 0 else None)
        ax.set(xscale="log", yscale="log", xlabel="$n$ (samples)", title=f"$d = {d}$")
        plotting.log_ticks(ax, [int(v) for v in deep.ns[::4]])
    axes[0, 0].set_ylabel("test error / constant predictor's")
    plotting.log_ticks(axes[0, 0], [0.05, 0.1, 0.2, 0.5, 1], axis="y")
    plotting.shared_legend(fig, ncol=2)
    return fig


def joint_figure(joint, null):
    r"""The jointly trained three-layer network of :mod:`lecnotes.hierarchical.joint` against
    its steps (0 = initialisation), one curve per :math:`(d, n)`: the first layer's latent
    energy (with :math:`r/d`, dotted), the second-layer features' correlation with :math:`h`,
    and the test error divided by the constant predictor's ({prf:ref}`def-ch10-sight`).

    Parameters
    ----------
    joint : JointSweep
        From :func:`lecnotes.hierarchical.joint.joint_sweep`.
    null : array_like (seeds, sizes)
        From :func:`lecnotes.hierarchical.shallow.null_errors`, at least as many seeds.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(joint, JointSweep):
        raise ValueError("joint must be a JointSweep")
    null = V.finite_array(null, "null", ndim=2)
    S = joint.latent.shape[0]
    if null.shape[0] < S or null.shape[1] != len(joint.dims):
        raise ValueError("null needs (seeds, sizes) with at least the sweep's seeds")
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3.3), layout="constrained")
    steps = np.arange(joint.steps + 1)
    rel = joint.error / null[:S, :, None, None]
    pal, styles = plotting.PALETTE, ("--", "-")
    for j, (d, r) in enumerate(zip(joint.dims, joint.ranks, strict=True)):
        for i, n in enumerate(joint.ns):
            kw = dict(color=pal[j], ls=styles[i % 2], marker="os"[j % 2], ms=3)
            lab = f"$d = {d}$, $n = {n}$ per step"
            for ax, q in zip(axes, (joint.latent, joint.corr, rel), strict=True):
                plotting.errorbar_over_seeds(ax, steps, q[:, j, i], label=lab if ax is axes[0]
                                             else None, **kw)
        axes[0].axhline(r / d, color=pal[j], ls=(0, (1, 2)), lw=0.9)
    for ax, title in zip(axes, ("latent energy of $W_1$", "layer 2: corr. with $h$",
                                "relative test error"), strict=True):
        ax.set(xlabel="joint step", title=title, xticks=steps)
    plotting.shared_legend(fig, ncol=2)
    return fig


def layerwise_figure(gd, theory1):
    r"""The layer-wise protocol by gradient descent ({ref}`sec-ch10-gd`): left, the first
    layer's subspace overlap against :math:`\alpha = n_1/(dr)` with
    {prf:ref}`prop-ch10-stage-one` (dashed); right, the second-layer pre-activation's
    correlation with :math:`h` against the stage-2 samples :math:`n_2`.

    Parameters
    ----------
    gd : LayerwiseGD
        From :func:`lecnotes.hierarchical.layerwise.layerwise_gd_sweep`.
    theory1 : array_like (sizes, alphas)
        The predicted overlaps, finite-size term included.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(gd, LayerwiseGD):
        raise ValueError("gd must be a LayerwiseGD")
    theory1 = V.finite_array(theory1, "theory1", ndim=2)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.5, 3.3), layout="constrained")
    for j, (d, r) in enumerate(zip(gd.dims, gd.ranks, strict=True)):
        kw = dict(color=plotting.PALETTE[j % len(plotting.PALETTE)], marker="o", ms=3)
        plotting.errorbar_over_seeds(a1, gd.alphas, gd.q1[:, j], label=f"$d = {d}$, $r = {r}$",
                                     **kw)
        a1.plot(gd.alphas, theory1[j], ls="--", color=kw["color"], lw=0.9)
        plotting.errorbar_over_seeds(a2, gd.betas * r * r, gd.corr[:, j], **kw)
    a1.set(xscale="log", xlabel=r"$\alpha = n_1/(dr)$", ylabel="$q_1$ of $W_1$",
           title="stage 1: first layer")
    a2.set(xscale="log", xlabel="stage-2 samples $n_2$", ylabel=r"corr$(u, h)$",
           title="stage 2: second layer")
    plotting.shared_legend(fig, ncol=3)
    return fig


def control_figure(ctl):
    r"""Stage 2 given the latent space ({ref}`sec-ch10-control`): the correlation of the
    trained second-layer pre-activation with the feature against :math:`\beta = n_2/r^2`, the
    radial feature :math:`h` (left) and the signed one (right), one colour per :math:`d`, with
    the untrained uniform second layer :math:`v = 1` (dotted).

    Parameters
    ----------
    ctl : StageTwoControl
        From :func:`lecnotes.hierarchical.controls.stage_two_control`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(ctl, StageTwoControl):
        raise ValueError("ctl must be a StageTwoControl")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.3), layout="constrained", sharey=True)
    for f, (ax, name) in enumerate(zip(axes, ("radial feature $h$", "signed feature"),
                                       strict=True)):
        for j, (d, r) in enumerate(zip(ctl.dims, ctl.ranks, strict=True)):
            col = plotting.PALETTE[j % len(plotting.PALETTE)]
            plotting.errorbar_over_seeds(ax, ctl.betas, ctl.corr[f, :, j], color=col,
                                         marker="o", ms=3, label=f"$d = {d}$, $r = {r}$"
                                         if f == 0 else None)
            ax.axhline(np.mean(ctl.corr_sum[f, :, j]), color=col, ls=(0, (1, 2)), lw=0.9)
        ax.set(xscale="log", xlabel=r"$\beta = n_2/r^2$", title=name)
    axes[0].set_ylabel("corr. with the feature")
    plotting.shared_legend(fig, ncol=3)
    return fig


def wide_rf_figure(dims, ns_deep, deep, ns_rf, rf, widths, floors):
    r"""Relative test error against :math:`n` (log-log) of the layer-wise learner (solid) and
    of random-features ridge of width :math:`p` of order :math:`d^2/2` (dashed), one colour per
    :math:`d`, with the kernel floor {eq}`eq-ch10-floor` (dotted).

    Parameters
    ----------
    dims : array_like (D,)
        Sizes.
    ns_deep, ns_rf : array_like
        Budgets of the two learners.
    deep, rf : array_like (seeds, D, len(ns))
        Relative errors of the two learners (their own seeds and budgets).
    widths : array_like (D,)
        Random-feature widths.
    floors : array_like (D,)
        The floor of each size.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    ns_deep, ns_rf = V.finite_array(ns_deep, "ns_deep", ndim=1), V.finite_array(ns_rf, "ns_rf",
                                                                                 ndim=1)
    deep, rf = V.finite_array(deep, "deep", ndim=3), V.finite_array(rf, "rf", ndim=3)
    floors = V.finite_array(floors, "floors", ndim=1)
    if deep.shape[1:] != (len(dims), ns_deep.size) or rf.shape[1:] != (len(dims), ns_rf.size):
        raise ValueError("deep and rf need shape (seeds, sizes, budgets)")
    fig, ax = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
    for j, (d, p) in enumerate(zip(dims, widths, strict=True)):
        col = plotting.PALETTE[j % len(plotting.PALETTE)]
        plotting.errorbar_over_seeds(ax, ns_deep, deep[:, j], color=col, marker="o", ms=3,
                                     label=f"three layers, $d = {d}$")
        plotting.errorbar_over_seeds(ax, ns_rf, rf[:, j], color=col, marker="^", ms=4, ls="--",
                                     label=f"random features, $p = {p}$")
        ax.axhline(floors[j], color=col, ls=(0, (1, 2)), lw=0.9)
    ax.set(xscale="log", yscale="log", xlabel="$n$ (samples)",
           ylabel="test error / constant predictor's")
    plotting.log_ticks(ax, [int(v) for v in ns_deep[::2]])
    plotting.log_ticks(ax, [0.05, 0.1, 0.2, 0.5, 1], axis="y")
    plotting.shared_legend(fig, ncol=2)
    return fig


def might_figure(sweep, spectral, first, gaussian):
    r"""The second stage of {prf:ref}`def-ch10-might` against :math:`\delta = n/D`: the
    spectral estimator's overlap with :math:`e_2` (left) and the first moment's with
    :math:`e_1` and :math:`e_2` (right), mean and standard error over seeds, one colour per
    :math:`r`, with {prf:ref}`prop-ch10-might` (dashed) and its Gaussian-feature limit (black).

    Parameters
    ----------
    sweep : MightSweep
        From :func:`lecnotes.hierarchical.multi_index.might_sweep`.
    spectral, first : array_like (ranks, deltas)
        ``multi_index.spectral_overlap`` and ``multi_index.first_moment_overlap`` at each
        rank.
    gaussian : array_like (deltas,)
        ``multi_index.spectral_overlap`` of the Gaussian-feature law.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep, MightSweep):
        raise ValueError("sweep must be a MightSweep")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.3), layout="constrained", sharey=True)
    axes[0].plot(sweep.deltas, gaussian, color="k", lw=1.0, label="Gaussian features")
    for j, r in enumerate(sweep.ranks):
        col = plotting.PALETTE[j % len(plotting.PALETTE)]
        D = int(r) * (int(r) + 1) // 2
        plotting.errorbar_over_seeds(axes[0], sweep.deltas, sweep.spectral[:, j], color=col,
                                     marker="o", ms=3, ls="none", label=f"$r = {r}$, $D = {D}$")
        axes[0].plot(sweep.deltas, spectral[j], color=col, ls="--", lw=0.9)
        plotting.errorbar_over_seeds(axes[1], sweep.deltas, sweep.first[:, j], color=col,
                                     marker="o", ms=3, ls="none")
        axes[1].plot(sweep.deltas, first[j], color=col, ls="--", lw=0.9)
        plotting.errorbar_over_seeds(axes[1], sweep.deltas, sweep.first_e2[:, j], color=col,
                                     marker="x", ms=3, ls="none")
    axes[0].set(xscale="log", xlabel=r"$\delta = n/D$", ylabel="squared overlap",
                title=r"spectral, with $e_2$", ylim=(0, 1.02))
    axes[1].set(xscale="log", xlabel=r"$\delta = n/D$",
                title=r"first moment, with $e_1$ (o) and $e_2$ (x)")
    plotting.shared_legend(fig, ncol=4)
    return fig
