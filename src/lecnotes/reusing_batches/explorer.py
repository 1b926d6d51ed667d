r"""The explorer of chapter 9 ({ref}`sec-ch9-explore`): the effective label and two steps.

The figure :func:`reuse_figure` draws, for a step :math:`c` and a ratio :math:`\alpha = n/d`,
the effective label {eq}`eq-ch9-effective-label` divided by :math:`y`, reused and fresh, and
the overlap of the recursion {prf:ref}`prop-ch9-recursion` against :math:`\alpha` (reused and
fresh second batch), with optional simulated points. The chapter's static figure
of the effective label is drawn by it; :func:`reuse_explorer` is the widget (deterministic
quadratures only: a redraw takes well under a second).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer
from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.reusing_batches import theory as T
from lecnotes.reusing_batches.experiments import ProductSweep, StepRuns, TwoStepSweep
from lecnotes.reusing_batches.sgd import MedianEscape, OnePassLimit

__all__ = ["REUSE_ALPHAS", "REUSE_CS", "ReuseState", "reuse_state", "reuse_figure",
           "reuse_explorer", "two_step_figure", "he2_figure", "product_figure",
           "escape_figure", "steps_figure", "steps_report", "NODES"]

REUSE_ALPHAS = (0.5, 1.0, 2.0, 4.0, 8.0)
r""":math:`\alpha` grid of the explorer's overlap curve."""
REUSE_CS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
r"""Steps :math:`c` offered by the explorer."""
NODES = 96
r"""Gauss-Hermite nodes per axis of the explorer's quadratures: the cross-talk's standard
deviation reaches 4-6 at the largest :math:`(c, \alpha)`, where 32 nodes under-resolve the
:math:`\operatorname{sech}^2` integrand by up to 25%; at 96 the overlap at :math:`(3, 4)` and
:math:`(3, 8)` is within about 6% of 160 nodes."""


class ReuseState(NamedTuple):
    """What :func:`reuse_figure` draws ({prf:ref}`prop-ch9-recursion`)."""

    c: float
    alpha: float
    y: np.ndarray
    ratio: dict
    r"""``"reused"``, ``"fresh"`` -> :math:`T(y)/y` on ``y`` (the same for both links, which
    enter only through :math:`\E[y^2] = 1`)."""
    alphas: np.ndarray
    overlap: np.ndarray
    r"""Recursion overlap of the reused batch, He_3 target, on ``alphas``."""
    first_coefficient: float
    r""":math:`\E[T(Y)h_1(G)]` for the He_3 target at ``(c, alpha)``."""


def reuse_state(c: float = 1.0, alpha: float = 2.0, student="tanh") -> ReuseState:
    r"""The deterministic curves of the explorer at ``(c, alpha)``
    ({eq}`eq-ch9-effective-label`, {prf:ref}`prop-ch9-recursion`).

    Parameters
    ----------
    c : float
        Step per sample, > 0.
    alpha : float
        Samples per dimension, > 0.
    student : str
        A name of :data:`lecnotes.reusing_batches.theory.STUDENTS`.

    Returns
    -------
    ReuseState
    """
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    T.check_student(student)
    y = np.linspace(-3.0, 3.0, 61)
    y = y[y != 0]
    ratio = {mode: T.effective_label(y, c, alpha, student, n_nodes=NODES,
                                     reused=mode == "reused") / y
             for mode in ("reused", "fresh")}
    alphas = np.array(sorted(set(REUSE_ALPHAS) | {alpha}))
    overlap = np.array([T.two_step_theory(c, a, student, "he3", n_nodes=NODES).reused.overlap
                        for a in alphas])
    coef = T.label_coefficients(c, alpha, student, "he3", kmax=1, n_nodes=NODES)[1]
    return ReuseState(c, alpha, y, ratio, alphas, overlap, float(coef))


def reuse_figure(state: ReuseState, fig=None, points=None):
    r"""Two panels: :math:`T(y)/y` of a reused and a fresh batch, and the recursion's overlap
    against :math:`\alpha` ({prf:ref}`prop-ch9-recursion`), with simulated ``points`` if given.

    Parameters
    ----------
    state : ReuseState
        From :func:`reuse_state`.
    fig : matplotlib Figure, optional
        Redrawn in place (the widget passes its previous figure).
    points : tuple (alphas, means, errors), optional
        Simulated overlaps to draw over the curve.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, ReuseState):
        raise ValueError("state must be a ReuseState from reuse_state()")
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.3), layout="constrained")
    fig.clf()
    ax0, ax1 = fig.subplots(1, 2)
    pal = plotting.PALETTE
    for col, ls, mode in ((pal[0], "-", "reused"), (pal[1], "--", "fresh")):
        ax0.plot(state.y, state.ratio[mode], ls, color=col, label=f"$T(y)/y$, {mode}")
    ax0.set(xlabel="$y$", ylabel="$T(y)/y$",
            title=f"effective label, $c = {state.c:g}$, $\\alpha = {state.alpha:g}$")
    ax1.plot(state.alphas, state.overlap, color=pal[0], label="reused, recursion")
    ax1.axhline(0.0, color=pal[1], ls="--", label="fresh, recursion")
    if points is not None:
        a, m, e = (np.asarray(v, dtype=float) for v in points)
        ax1.errorbar(a, m, e, fmt="o", color=pal[2], label="reused, simulation")
    ax1.axvline(state.alpha, color="#888888", lw=0.8)
    ax1.set(xscale="log", xlabel=r"$\alpha = n/d$", ylabel="overlap after two steps",
            title=f"$h_3$ target, $E[T(Y)G] = {state.first_coefficient:.3f}$")
    plotting.log_ticks(ax1, [0.5, 1, 2, 4, 8])
    plotting.shared_legend(fig, ncol=3)
    return fig


def reuse_explorer(state: ReuseState | None = None):
    r"""The live explorer of chapter 9 ({ref}`sec-ch9-explore`): sliders for :math:`c` and
    :math:`\alpha`; each redraw calls :func:`reuse_state` and :func:`reuse_figure`.

    Parameters
    ----------
    state : ReuseState, optional
        Drawn first (the chapter passes the state of its static figure).

    Returns
    -------
    ipywidgets.VBox
        With the controls ``c``, ``alpha`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, ReuseState):
        raise ValueError("state must be a ReuseState from reuse_state()")
    c0, a0 = (1.0, 2.0) if state is None else (state.c, state.alpha)
    controls = {
        "c": W.SelectionSlider(options=sorted(set(REUSE_CS) | {c0}), value=c0,
                               description="c", continuous_update=False),
        "alpha": W.SelectionSlider(options=sorted(set(REUSE_ALPHAS) | {a0}), value=a0,
                                   description="alpha", continuous_update=False),
    }

    def draw(values, fig):
        st = reuse_state(values["c"], values["alpha"])
        return reuse_figure(st, fig), st

    initial = None if state is None else (lambda fig: (reuse_figure(state, fig), state))
    return build_explorer(controls, draw, initial)


def _check_sweep(sweep):
    if not isinstance(sweep, TwoStepSweep):
        raise ValueError("sweep must be a TwoStepSweep from two_step_sweep()")


def two_step_figure(sweep, signed_theory, floor, reused_theory, alpha_index: int = 1):
    r"""The chapter's figure of two steps ({prf:ref}`prop-ch9-recursion`): left, the signed
    overlap :math:`-m_2/\|w_2\|` of the reused batch against :math:`\alpha` at the three largest
    sizes with the recursion; right, :math:`|m_2|/\|w_2\|` against :math:`d` at one
    :math:`\alpha`, reused and fresh, with the noise floor {eq}`eq-ch9-noise-floor`.

    Parameters
    ----------
    sweep : TwoStepSweep
        From :func:`lecnotes.reusing_batches.experiments.two_step_sweep` (He_3 target).
    signed_theory : array_like (alphas,)
        The recursion's :math:`m_2/\|w_2\|`.
    floor : array_like (dims, alphas)
        The noise floor of the fresh batch.
    reused_theory : array_like (alphas,)
        The recursion's overlap of the reused batch.
    alpha_index : int
        Which :math:`\alpha` the right panel shows.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    _check_sweep(sweep)
    dims, alphas = sweep.dims, sweep.alphas
    j = V.positive_int(alpha_index, "alpha_index", minimum=0)
    if j >= alphas.size:
        raise ValueError(f"alpha_index must be below {alphas.size}, got {j}")
    m, se = stats.mean_and_error(sweep.signed[("he3", "reused")])
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(7.5, 3.4), layout="constrained")
    pal = plotting.PALETTE
    for i, k in enumerate(range(max(0, dims.size - 3), dims.size)):
        ax0.errorbar(alphas * (1 + 0.03 * i), -m[k], se[k], fmt="o", color=pal[i],
                     capsize=2, label=f"reused, d = {dims[k]}")
    ax0.plot(alphas, -np.asarray(signed_theory), "k-", label="recursion")
    ax0.set(xscale="log", xlabel=r"$\alpha = n/d$", ylabel=r"$-m_2/\Vert w_2\Vert$")
    plotting.log_ticks(ax0, alphas)
    for mode, col in (("reused", pal[3]), ("fresh", pal[4])):
        plotting.errorbar_over_seeds(ax1, dims, sweep.overlap[("he3", mode)][:, :, j],
                                     color=col, label=f"{mode}, |overlap|")
    ax1.plot(dims, np.asarray(floor)[:, j], ":", color=pal[4], label="noise floor")
    ax1.axhline(np.asarray(reused_theory)[j], color="k", lw=1)
    ax1.set(xscale="log", yscale="log", xlabel="$d$",
            ylabel=rf"overlap, $\alpha = {alphas[j]:g}$")
    plotting.log_ticks(ax1, dims)
    plotting.shared_legend(fig, ncol=3)
    return fig


def he2_figure(sweep, reused_theory: float, alpha_index: int = -1):
    r"""Overlap after two steps on a reused batch against :math:`d` for both links, with the
    He_3 recursion and a :math:`d^{-1/2}` line ({prf:ref}`prop-ch9-effective-label`).

    Parameters
    ----------
    sweep : TwoStepSweep
        With both links ``"he3"`` and ``"he2"``.
    reused_theory : float
        The recursion's He_3 overlap at that :math:`\alpha`.
    alpha_index : int
        Which :math:`\alpha` (default the largest).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    _check_sweep(sweep)
    if ("he2", "reused") not in sweep.overlap or ("he3", "reused") not in sweep.overlap:
        raise ValueError("the sweep needs both links, he3 and he2")
    j = int(alpha_index) % sweep.alphas.size
    dims, pal = sweep.dims, plotting.PALETTE
    fig, ax = plt.subplots(figsize=(5.0, 3.4), layout="constrained")
    for k, col, lab in (("he3", pal[0], "$h_3$"), ("he2", pal[1], "$h_2$")):
        plotting.errorbar_over_seeds(ax, dims, sweep.overlap[(k, "reused")][:, :, j],
                                     color=col, label=f"{lab} target, reused")
    first = sweep.overlap[("he2", "reused")][:, 0, j].mean()
    ax.plot(dims, first * np.sqrt(dims[0] / dims), ":", color=pal[1], label=r"$d^{-1/2}$")
    ax.axhline(float(reused_theory), color="k", lw=1, label="recursion, $h_3$")
    ax.set(xscale="log", yscale="log", xlabel="$d$",
           ylabel=rf"overlap, $\alpha = {sweep.alphas[j]:g}$")
    plotting.log_ticks(ax, dims)
    plotting.shared_legend(fig, ncol=2)
    return fig


def product_figure(sweep, he3_overlap: float, floor=None):
    r"""Overlap with :math:`\operatorname{span}(\Wstar)` after two steps on the target
    :math:`z_1z_2z_3` against :math:`d`, reused and fresh, one panel per :math:`\alpha`, with
    the overlap of the random start, a :math:`d^{-1/2}` line and the He_3 recursion at the
    largest :math:`\alpha` for contrast ({prf:ref}`prop-ch9-product`).

    Parameters
    ----------
    sweep : ProductSweep
        From :func:`lecnotes.reusing_batches.experiments.product_two_steps`.
    he3_overlap : float
        The recursion's reused He_3 overlap (drawn in the last panel).
    floor : array_like (dims, alphas), optional
        The fresh batch's noise floor {eq}`eq-ch9-product-floor`, drawn dashed.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep, ProductSweep):
        raise ValueError("sweep must be a ProductSweep from product_two_steps()")
    dims, pal = sweep.dims, plotting.PALETTE
    fig, axes = plt.subplots(1, sweep.alphas.size, figsize=(7.5, 3.0), sharey=True,
                             layout="constrained", squeeze=False)
    for j, ax in enumerate(axes[0]):
        for mode, col in (("reused", pal[0]), ("fresh", pal[1])):
            plotting.errorbar_over_seeds(ax, dims, sweep.overlap[mode][:, :, j], color=col,
                                         label=f"{mode} batch")
        ax.plot(dims, sweep.start[:, :, j].mean(axis=0), ":", color="#888888",
                label="random start")
        if floor is not None:
            ax.plot(dims, np.asarray(floor)[:, j], "--", color=pal[1], label="noise floor")
        ax.set(xscale="log", yscale="log", xlabel="$d$", title=rf"$\alpha = {sweep.alphas[j]:g}$")
        plotting.log_ticks(ax, dims)
    axes[0, -1].axhline(float(he3_overlap), color="k", lw=1, label="$h_3$ reused, recursion")
    axes[0, 0].set_ylabel(r"$\Vert P_\star w_2\Vert/\Vert w_2\Vert$")
    plotting.shared_legend(fig, ncol=4)
    return fig


def escape_figure(runs, tau_star: float, one_pass=None, limit=None):
    r"""Median number of fresh samples for SGD with repetition to reach the level, per group
    of paths, against :math:`d` on log-log axes, with the limit :math:`\tau^\star d` of
    {prf:ref}`prop-ch9-sgd-limit` and the slope of :math:`d\log d`; with ``one_pass``, the
    same median for one-pass SGD at :math:`\eta = c\,d^{-3/2}` on the same axes, with its
    diffusion {eq}`eq-ch9-one-pass-sde` at the same level and its limit
    :math:`\tau_\infty d^2` ({prf:ref}`prop-ch9-one-pass`).

    Parameters
    ----------
    runs : MedianEscape
        From :func:`lecnotes.reusing_batches.sgd.median_escape`.
    tau_star : float
        :func:`lecnotes.reusing_batches.sgd.reuse_limit_time`.
    one_pass : MedianEscape, optional
        From :func:`lecnotes.reusing_batches.sgd.one_pass_escape`.
    limit : OnePassLimit, optional
        From :func:`lecnotes.reusing_batches.sgd.one_pass_limit` (with ``one_pass``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(runs, MedianEscape):
        raise ValueError("runs must be a MedianEscape from median_escape()")
    if one_pass is not None and not isinstance(one_pass, MedianEscape):
        raise ValueError("one_pass must be a MedianEscape from one_pass_escape()")
    if (limit is None) != (one_pass is None) or (
            limit is not None and not isinstance(limit, OnePassLimit)):
        raise ValueError("give one_pass and limit (a OnePassLimit) together, or neither")
    tau_star = V.positive_float(tau_star, "tau_star")
    d, pal = runs.dims.astype(float), plotting.PALETTE
    fig, ax = plt.subplots(figsize=(5.0, 3.6), layout="constrained")
    plotting.errorbar_over_seeds(ax, d, runs.medians, color=pal[0],
                                 label="with repetition, $\\eta = 1/d$")
    ax.plot(d, tau_star * d, "-", color="k", label=r"limit ODE, $\tau^\star d$")
    n0 = np.median(runs.medians[:, 0])
    ax.plot(d, n0 * d * np.log(d) / (d[0] * np.log(d[0])), ":", color=pal[1],
            label=r"$d\log d$")
    ticks = d
    if one_pass is None:
        ax.plot(d, n0 * (d / d[0]) ** 2, "--", color="#888888", label="$d^2$ (one pass)")
    else:
        d1, dl = one_pass.dims.astype(float), limit.dims.astype(float)
        plotting.errorbar_over_seeds(ax, d1, one_pass.medians, color=pal[2],
                                     label="one pass, $\\eta = c\\,d^{-3/2}$")
        ax.plot(dl, limit.tau * dl**2, "--", color=pal[2],
                label="one pass: its diffusion, same level")
        ax.plot(dl, limit.tau_inf * dl**2, "-.", color="#888888",
                label=r"diffusion limit, $\tau_\infty d^2$")
        ticks = np.union1d(d, np.union1d(d1, dl))
    ax.set(xscale="log", yscale="log", xlabel="$d$", ylabel="fresh samples to escape")
    plotting.log_ticks(ax, ticks.astype(int))
    plotting.shared_legend(fig, ncol=2)
    return fig


def steps_figure(he3: dict, two_step: dict, mix: dict, hard: dict):
    r"""Many full-batch steps on one batch ({prf:ref}`def-ch9-many-steps`), overlap against
    the step count t: (a) :math:`h_3`, reused batch, per :math:`\alpha` and d, with the
    recursion {eq}`eq-ch9-recursion` at t = 2; (b) the non-staircase target
    :math:`(z_1 + h_3(z_2))/\sqrt2`, overlap with :math:`w_{\star,2}` per d, reused and fresh
    batches (dotted: with :math:`w_{\star,1}` at the largest d); (c) :math:`z_1z_2z_3` and
    :math:`\sign(z_1z_2z_3)` on a reused batch, overlap with the span, per d.

    Parameters
    ----------
    he3 : dict
        alpha -> :class:`StepRuns` (target ``"he3"``).
    two_step : dict
        alpha -> the recursion's overlap after two steps.
    mix : dict
        ``"reused"``, ``"fresh"`` -> :class:`StepRuns` (target ``"mix"``).
    hard : dict
        ``"product"``, ``"sign"`` -> :class:`StepRuns`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    for runs in (*he3.values(), *mix.values(), *hard.values()):
        if not isinstance(runs, StepRuns):
            raise ValueError("every run must be a StepRuns from gd_steps()")
    pal, shades = plotting.PALETTE, (0.45, 0.7, 1.0)
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3.0), layout="constrained")

    def curves(ax, runs, values, col, name, style="-"):
        t = np.arange(values.shape[2])
        for j, d in enumerate(runs.dims):
            m, se = stats.mean_and_error(values[:, j])
            ax.errorbar(t, m, se, fmt=style, color=col, alpha=shades[j % 3], ms=3,
                        label=f"{name}, $d = {d}$" if name else None)

    for i, (a, runs) in enumerate(he3.items()):
        curves(axes[0], runs, runs.subspace, pal[i], rf"$\alpha = {a:g}$")
        axes[0].plot([2], [two_step[a]], "k*", ms=9, label="recursion, t = 2" if i == 0 else None)
    for i, mode in enumerate(("reused", "fresh")):
        runs = mix[mode]
        curves(axes[1], runs, runs.direction[..., 1], pal[i], mode)
    r = mix["reused"]
    axes[1].plot(np.arange(r.subspace.shape[2]), r.direction[:, -1, :, 0].mean(0), ":",
                 color="k", label=r"$w_{\star,1}$, reused")
    for i, name in enumerate(("product", "sign")):
        curves(axes[2], hard[name], hard[name].subspace, pal[2 + i],
               r"$z_1z_2z_3$" if name == "product" else r"sign$(z_1z_2z_3)$")
    axes[0].set(xlabel="step $t$", ylabel=r"$|\langle w_t, w_\star\rangle|/\Vert w_t\Vert$",
                title=r"(a) $h_3$, reused")
    axes[1].set(xlabel="step $t$", ylabel=r"overlap with $w_{\star,2}$", yscale="log",
                title=r"(b) $(z_1 + h_3(z_2))/\sqrt{2}$")
    axes[2].set(xlabel="step $t$", ylabel=r"$\Vert P_\star w_t\Vert/\Vert w_t\Vert$",
                yscale="log", title="(c) leap 2 and leap 3, reused")
    for ax in axes:
        ax.legend(fontsize=6, loc="best")
    return fig


def steps_report(he3: dict, two_step: dict, mix: dict, hard: dict) -> str:
    r"""The numbers behind :func:`steps_figure` as text: the :math:`h_3` overlap at t = 2 and
    at the last step per d beside the recursion, the overlaps of the non-staircase target with
    each direction at the last step, and the span overlap of the product targets at the first
    and last step ({prf:ref}`def-ch9-many-steps`).

    Parameters
    ----------
    he3, two_step, mix, hard
        As in :func:`steps_figure`.

    Returns
    -------
    str
    """
    lines = []
    for a, r in he3.items():
        last = np.round(r.subspace[:, :, -1].mean(0), 3).tolist()
        lines.append(f"He_3, alpha = {a:g}, d = {r.dims.tolist()}: t = 2 "
                     f"{np.round(r.subspace[:, :, 2].mean(0), 3).tolist()}, t = "
                     f"{r.subspace.shape[2] - 1} {last}; recursion at t = 2: {two_step[a]:.3f}")
    for mode, r in mix.items():
        lines.append(f"(z1 + h3(z2))/sqrt 2, {mode}, d = {r.dims.tolist()}, last step: with z1 "
                     f"{np.round(r.direction[:, :, -1, 0].mean(0), 3).tolist()}, with z2 "
                     f"{np.round(r.direction[:, :, -1, 1].mean(0), 3).tolist()}")
    for name, r in hard.items():
        lines.append(f"{name}, reused, d = {r.dims.tolist()}: first step "
                     f"{np.round(r.subspace[:, :, 0].mean(0), 3).tolist()}, last "
                     f"{np.round(r.subspace[:, :, -1].mean(0), 3).tolist()}")
    return "\n".join(lines)
