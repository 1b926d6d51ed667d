r"""The multi-panel figures of chapter 2 (matplotlib, loaded on demand).

Each function draws one figure of the notebook from numbers the chapter computes elsewhere
(:mod:`lecnotes.core.conditional_hermite`, :mod:`lecnotes.exponents.experiments`,
:mod:`lecnotes.exponents.theory`) and returns the figure; the notebook shows it.
"""

from __future__ import annotations

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite
from lecnotes.core.stats import mean_and_error
from lecnotes.core.targets import LINKS

__all__ = ["zeta_figure", "noise_figure", "unfolding_figure", "sgd_ode_figure"]


def zeta_figure(grids: dict, kmax: int = 4):
    r"""The optimal preprocessings :math:`\zeta_k(y)`, k = 1..kmax, one panel per link.

    Chapter 2, {prf:ref}`def-ch2-generative-exponent`. For :math:`\mathrm{He}_3` the points
    within 0.02 of the jumps :math:`y = \pm2` of :math:`\zeta_k` are left out (no steep
    lines); the ReLU's atom at :math:`y = 0` is a dot; a link with finitely many labels
    (``gen4``) is drawn as dots.

    Parameters
    ----------
    grids : dict
        Catalogue link name -> grid of labels (1-d array), four entries (a 2 x 2 figure).
    kmax : int
        Largest degree drawn.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(grids, dict) or len(grids) != 4:
        raise ValueError("grids must be a dict of four link names -> label grids")
    kmax = V.positive_int(kmax, "kmax")
    for n, y in grids.items():
        if n not in LINKS:
            raise ValueError(f"grids: unknown link {n!r}")
        V.finite_array(y, f"grids[{n!r}]", ndim=1)
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 5.6), layout="constrained")
    for ax, (n, y) in zip(axes.flat, grids.items(), strict=True):
        for k in range(1, kmax + 1):
            zeta = conditional_hermite(n, k)
            z = np.where(np.abs(np.abs(y) - 2) < 0.02, np.nan, zeta(y)) if n == "he3" else zeta(y)
            style = dict(ls="none", marker="o") if n == "gen4" else {}
            ax.plot(y, z, label=f"$\\zeta_{k}$", **style)
            if n == "relu":  # the atom at y = 0
                ax.plot([0.0], zeta(0.0)[None], "o", color=f"C{k - 1}")
        ax.set(title=f"${LINKS[n].latex}$", xlabel="label $y$")
    for ax in axes[:, 0]:
        ax.set_ylabel("$\\zeta_k(y)$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center",
               ncol=kmax)
    return fig


def noise_figure(taus, curves, names):
    r""":math:`\mathbb E[\zeta_k(Y)^2]` against the noise level, with the law :math:`C\tau^{-2m}`.

    Chapter 2, part 3 of {prf:ref}`prop-ch2-noise`.

    Parameters
    ----------
    taus : array_like (T,)
        Noise levels, positive.
    curves : NoiseCurves
        From :func:`lecnotes.exponents.experiments.noise_curves` at these ``taus``.
    names : sequence of (str, int)
        Per case, the legend name and the degree k.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    taus = V.finite_array(taus, "taus", ndim=1)
    if taus.size == 0 or np.any(taus <= 0):
        raise ValueError("taus must be a non-empty sequence of noise levels > 0")
    if len(names) != len(curves.values):
        raise ValueError("names must have one (name, k) per case of curves")
    fig, ax = plt.subplots()
    for i, ((name, k), vals, law) in enumerate(zip(names, curves.values, curves.laws,
                                                   strict=True)):
        ax.loglog(taus, vals, "o-", color=f"C{i}", label=f"{name}, $k={k}$ ($m={law.m}$)")
        ax.loglog(taus, law.C * taus ** (-2.0 * law.m), "--", color=f"C{i}", lw=1)
    ax.set(xlabel="noise level $\\tau$", ylabel="$\\mathbb{E}[\\zeta_k(Y)^2]$",
           ylim=(1e-9, 2))
    ax.legend()
    return fig


def unfolding_figure(dims, ratios, overlaps):
    r"""Squared overlap of the unfolded order-4 spike against :math:`n/d^2` and :math:`n/d^3`.

    Chapter 2, {eq}`eq-ch2-unfolded-overlap`: two panels sharing the vertical axis, the mean
    over replicates with standard-error bars at each :math:`d`, and the limit
    :math:`\max(0, 1-d^2/n)` on the left.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    ratios : sequence of float
        The values of :math:`n/d^2`, positive.
    overlaps : array_like (replicates, len(dims), len(ratios))
        From :func:`lecnotes.exponents.theory.unfolding_sweep`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    d = [V.positive_int(x, "dims", minimum=2) for x in dims]
    k = np.array([V.positive_float(x, "ratios") for x in ratios])
    ov = V.finite_array(overlaps, "overlaps", ndim=3)
    if ov.shape[1:] != (len(d), k.size):
        raise ValueError("overlaps must have shape (replicates, len(dims), len(ratios))")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.3), sharey=True, layout="constrained")
    for i, di in enumerate(d):
        m, se = mean_and_error(ov[:, i], axis=0)
        for ax, x in zip(axes, (k, k / di), strict=True):
            ax.errorbar(x, m, yerr=se, marker="o", capsize=2, label=f"d = {di}", color=f"C{i}")
    kk = np.geomspace(0.4, 10, 200)
    axes[0].plot(kk, np.maximum(0, 1 - 1 / kk), "k--", lw=1, label="$\\max(0, 1 - d^2/n)$")
    axes[0].set(xscale="log", xlabel="$n/d^2$", ylabel="squared overlap")
    axes[1].set(xscale="log", xlabel="$n/d^3$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=5)
    return fig


def sgd_ode_figure(sweeps):
    r"""The overlap ODE of online SGD: escape steps against the step constant and against d.

    Chapter 2, {eq}`eq-ch2-sgd-drift`. Left: steps to overlap 1/2 divided by
    :math:`d^{k-1}` against :math:`c/c^\star` (:math:`\eta = c\,d^{-k/2}`) at each scanned
    :math:`d`, for the first sweep; beyond :math:`c^\star` the overlap never escapes (no
    point). Right: the steps against :math:`d` at the fixed step constant of every sweep,
    with the law :math:`d^{k-1}`.

    Parameters
    ----------
    sweeps : sequence of SgdOdeSweep
        From :func:`lecnotes.exponents.sgd.sgd_ode_sweep`, at least one.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if len(sweeps) == 0 or not all(hasattr(s, "scan") and hasattr(s, "c_star") for s in sweeps):
        raise ValueError("sweeps must be a non-empty sequence of SgdOdeSweep")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4), layout="constrained")
    first = sweeps[0]
    for i, d in enumerate(first.scan_dims):
        t = np.where(np.isfinite(first.scan[i]), first.scan[i], np.nan)
        axes[0].semilogy(first.cs / first.c_star, t, "o-", ms=3, color=f"C{i}",
                         label=f"$\\mathrm{{He}}_{first.k}$, $d = 10^{{{np.log10(d):.0f}}}$")
    axes[0].axvline(1.0, color="k", ls=":", lw=1, label="threshold $c = c^\\star$")
    axes[0].set(xlabel="step constant $c/c^\\star$ ($\\eta = c\\,d^{-k/2}$)",
                ylabel="steps to $m = 1/2$, over $d^{k-1}$")
    for j, s in enumerate(sweeps):
        d = np.asarray(s.dims, dtype=float)
        col = f"C{len(first.scan_dims) + j}"
        axes[1].loglog(d, s.steps, "o", color=col,
                       label=f"$\\mathrm{{He}}_{s.k}$ at $c = c^\\star/2$")
        axes[1].loglog(d, s.steps[-1] * (d / d[-1]) ** (s.k - 1), "--", color=col, lw=1,
                       label=f"$d^{{{s.k - 1}}}$")
    axes[1].set(xlabel="dimension $d$", ylabel="steps to $m = 1/2$")
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fig
