r"""Chapter 1, mean-field vs NTK training: the chapter's multi-panel figures.

Each function draws one figure of ``lectures/01_mean_field_vs_ntk.ipynb`` from the result of
the chapter's sweep it shows and returns the ``matplotlib`` figure; the notebook shows it.
Colours follow the active colour cycle (the book's palette once
:func:`lecnotes.book.plotting.use_style` has run); error bars are the mean and standard error
over seeds (:func:`lecnotes.core.stats.mean_and_error`), as in
:func:`lecnotes.book.plotting.errorbar_over_seeds`; the module imports no book
infrastructure. (The figure of the width sweep is the explorer's,
:func:`lecnotes.mean_field_vs_ntk.explorer.width_figure`.)
"""

from __future__ import annotations

import numpy as np

from lecnotes.book.plotting import errorbar_over_seeds, log_ticks
from lecnotes.core import validate as V
from lecnotes.core.stats import loglog_slope
from lecnotes.mean_field_vs_ntk.experiments import BUDGET_KEYS

__all__ = ["reduced_figure", "rademacher_figure", "budget_figure", "barrier_figure",
           "payoff_figure"]


def _sizes(values, name: str) -> np.ndarray:
    arr = V.finite_array(values, name, ndim=1)
    if arr.size < 1 or np.any(arr <= 0):
        raise ValueError(f"{name} must be a non-empty array of positive sizes, got {arr}")
    return arr


def reduced_figure(widths, risks, dt: float = 0.5):
    r"""Full network against reduced particles: risk curves and the largest gap (chapter 1).

    {prf:ref}`prop-ch1-reduced-particles`: left, the population risk of the full mean-field
    network (solid) and of its particles (dashed) along training for the first, middle and
    last widths; right, the largest gap between the two against the width, with the
    :math:`1/m` and :math:`1/\sqrt m` laws through the first point.

    Parameters
    ----------
    widths : array_like (k,)
        Widths, increasing.
    risks : array_like (seeds, k, 2, steps + 1)
        Result of :func:`lecnotes.mean_field_vs_ntk.theory.reduction_sweep` (full, reduced).
    dt : float
        Time per step (:math:`\eta_0`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    widths = _sizes(widths, "widths")
    risks = V.finite_array(risks, "risks", ndim=4)
    if risks.shape[1:3] != (widths.size, 2) or risks.shape[0] < 1:
        raise ValueError(f"risks must have shape (seeds, {widths.size}, 2, steps + 1), "
                         f"got {risks.shape}")
    dt = V.positive_float(dt, "dt")
    gap = np.abs(risks[:, :, 0] - risks[:, :, 1]).max(-1)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4), layout="constrained")
    tt = dt * np.arange(risks.shape[-1])
    shown = sorted({0, widths.size // 2, widths.size - 1})
    for i, j in enumerate(shown):
        c = f"C{i}"
        axes[0].plot(tt, risks[:, j, 0].mean(0), color=c,
                     label=f"full network, m = {widths[j]:g}")
        axes[0].plot(tt, risks[:, j, 1].mean(0), color=c, ls="--",
                     label=f"reduced, m = {widths[j]:g}")
    axes[0].set(yscale="log", xlabel="time $t$", ylabel="population risk")
    errorbar_over_seeds(axes[1], widths, gap, color="k", label="largest risk gap")
    axes[1].plot(widths, gap[:, 0].mean() * widths[0] / widths, ":", color="k", label="$1/m$")
    axes[1].plot(widths, gap[:, 0].mean() * np.sqrt(widths[0] / widths), "-.", color="0.5",
                 label=r"$1/\sqrt{m}$")
    axes[1].set(xscale="log", yscale="log", xlabel="width $m$ ($d = 2m$)", ylabel="risk gap")
    log_ticks(axes[1], widths)
    fig.legend(loc="outside lower center", ncol=3)
    return fig


def rademacher_figure(ns, values):
    r"""Monte Carlo Rademacher complexity of the linear class and its Jensen bound (chapter 1).

    {prf:ref}`lem-ch1-three-balls`, part 1.

    Parameters
    ----------
    ns : array_like (k,)
        Sample sizes.
    values : dict
        d -> (k, 4) rows of
        :attr:`lecnotes.mean_field_vs_ntk.experiments.RademacherResult.values`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    ns = _sizes(ns, "ns")
    if not isinstance(values, dict) or not values:
        raise ValueError("values must be a non-empty dict d -> (len(ns), 4) array")
    fig, ax = plt.subplots()
    for i, (d, rows) in enumerate(values.items()):
        rows = V.finite_array(rows, "values", ndim=2)
        if rows.shape != (ns.size, 4):
            raise ValueError(f"values[{d}] must have shape ({ns.size}, 4), got {rows.shape}")
        c = f"C{i}"
        ax.errorbar(ns, rows[:, 0], yerr=rows[:, 1], fmt="o", color=c,
                    label=f"Monte Carlo, d={d}")
        ax.plot(ns, rows[:, 2], "-", color=c, lw=1, label=f"Jensen bound, d={d}")
    ax.set(xscale="log", yscale="log", xlabel="$n$",
           ylabel=r"$\widehat{\mathfrak{R}}_n$ (B = 1)")
    ax.legend()
    return fig


def budget_figure(ns, budget, eps: float = 0.1, extra=None):
    r"""The norm each regime spends, and the noise correlation it buys (chapter 1).

    Left: path norm :math:`P`, least RKHS norm :math:`R` and NTK displacement :math:`D` at
    training loss ``eps`` against :math:`n`, with their fitted log-log slopes; right, the
    correlation with random signs: the band of {prf:ref}`lem-ch1-three-balls` for the
    path-norm ball, the exact value for the RKHS ball, and what each network reaches trained on
    the signs.

    Parameters
    ----------
    ns : array_like (k,)
        Sample sizes.
    budget : dict
        :attr:`lecnotes.mean_field_vs_ntk.experiments.NormBudgetResult.values`, every key of
        :data:`~lecnotes.mean_field_vs_ntk.experiments.BUDGET_KEYS` of shape (seeds, k).
    eps : float
        The target training loss (axis label).
    extra : tuple, optional
        ``(values, label)``: a curve of shape (k,) drawn on the left panel as a line (a
        prediction of one of the norms).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    ns = _sizes(ns, "ns")
    for k in BUDGET_KEYS:
        if k not in budget or np.shape(budget[k])[1:] != ns.shape:
            raise ValueError(f"budget must hold every key of BUDGET_KEYS with shape "
                             f"(seeds, {ns.size}); {k!r} missing or of another shape")
    eps = V.positive_float(eps, "eps")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 4.6), layout="constrained")
    for k, label in (("P", "MF path norm $P$"), ("R", "least RKHS norm $R$ (ReLU NTK)"),
                     ("D", r"NTK network $\|\theta_T-\theta_0\|$")):
        s, _, _ = loglog_slope(ns, np.mean(budget[k], axis=0))
        errorbar_over_seeds(axes[0], ns, budget[k], label=f"{label}, slope {s:.2f}")
    if extra is not None:
        curve, label = extra
        axes[0].plot(ns, V.finite_array(curve, "extra", ndim=1), "k:", lw=1.2, label=label)
    axes[0].set(xscale="log", yscale="log", xlabel="$n$", ylabel=f"norm at $\\hat R = {eps:g}$")
    axes[1].fill_between(ns, np.mean(budget["lo_MF"], 0), np.mean(budget["up_MF"], 0),
                         alpha=0.25, color="C0", label="path-norm ball of radius $P$ (bounds)")
    errorbar_over_seeds(axes[1], ns, budget["cap_K"], label="RKHS ball of radius $R$ (exact)",
                        color="C1")
    errorbar_over_seeds(axes[1], ns, budget["corr_MF"], label="MF network trained on signs",
                        color="C0", ls="--")
    errorbar_over_seeds(axes[1], ns, budget["corr_NTK"], label="NTK network trained on signs",
                        color="C2", ls="--")
    axes[1].set(xscale="log", yscale="log", xlabel="$n$",
                ylabel="correlation with random signs")
    for ax in axes:
        log_ticks(ax, ns)
    fig.legend(loc="outside lower center", ncol=2)
    return fig


def barrier_figure(barrier: dict):
    r"""The kernel barrier: test error and its two parts against :math:`n/d` and :math:`n/d^2`.

    {prf:ref}`thm-ch1-gmmm` and {eq}`eq-ch1-risk-decomposition`: top, the KRR test error
    against :math:`n/d` and :math:`n/d^2` with the plateau 1; bottom, the part :math:`A` off
    the degree-2 direction against :math:`n/d` and the learned coefficient :math:`c_2` against
    :math:`n/d^2`.

    Parameters
    ----------
    barrier : dict
        Result of :func:`lecnotes.mean_field_vs_ntk.experiments.krr_barrier_sweep`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(barrier, dict) or not barrier:
        raise ValueError("barrier must be a non-empty dict d -> (n_list, values)")
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.4), layout="constrained")
    for i, (d, (n_list, vals)) in enumerate(barrier.items()):
        n_list = _sizes(n_list, "n_list")
        vals = V.finite_array(vals, "barrier values", ndim=3)
        if vals.shape[1:] != (n_list.size, 2):
            raise ValueError(f"barrier[{d}] values must have shape (seeds, {n_list.size}, 2)")
        c, risk, c2 = f"C{i}", vals[..., 0], vals[..., 1]
        for ax, x in ((axes[0, 0], n_list / d), (axes[0, 1], n_list / d**2)):
            errorbar_over_seeds(ax, x, risk, label=f"d = {d}", color=c)
        errorbar_over_seeds(axes[1, 0], n_list / d, risk - (1 - c2) ** 2, color=c, label=f"d = {d}")
        errorbar_over_seeds(axes[1, 1], n_list / d**2, c2, color=c, label=f"d = {d}")
    for ax in axes[0]:
        ax.axhline(1.0, color="k", ls="--", lw=1, label="plateau $\\|P_{\\geq 2}f_\\star\\|^2$")
        ax.set(xscale="log", yscale="log", ylabel="test error")
    axes[0, 0].set_xlabel("$n/d$")
    axes[0, 1].set_xlabel("$n/d^2$")
    axes[1, 0].set(xscale="log", yscale="log", xlabel="$n/d$",
                   ylabel="error $A$ off the degree-2 part")
    axes[1, 1].set(xscale="log", yscale="log", xlabel="$n/d^2$",
                   ylabel="learned coefficient $c_2$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


def payoff_figure(dims, risk):
    r"""Test error of KRR, the NTK-scaled and the mean-field network at :math:`n = 8d`.

    Chapter 1, {prf:ref}`thm-ch1-gmmm` against feature learning.

    Parameters
    ----------
    dims : array_like (k,)
        Dimensions.
    risk : array_like (seeds, k, 3)
        :attr:`lecnotes.mean_field_vs_ntk.theory.PayoffResult.risk`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    dims = _sizes(dims, "dims")
    risk = V.finite_array(risk, "risk", ndim=3)
    if risk.shape[1:] != (dims.size, 3):
        raise ValueError(f"risk must have shape (seeds, {dims.size}, 3), got {risk.shape}")
    fig, ax = plt.subplots()
    for k, label in enumerate(("KRR, ReLU NTK", "NTK-scaled network", "mean-field network")):
        errorbar_over_seeds(ax, dims, risk[:, :, k], label=label)
    ax.axhline(1.0, color="k", ls="--", lw=1, label="kernel plateau")
    ax.set(xscale="log", xlabel="$d$  (n = 8d)", ylabel="test error")
    log_ticks(ax, dims)
    ax.legend()
    return fig
