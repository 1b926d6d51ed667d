r"""The static figures of chapter 4: spectra, the overlap sweep, the ReLU link, raw labels.

Each figure is drawn from the named result of one sweep of :mod:`lecnotes.spectral.experiments`
(or :func:`lecnotes.spectral.estimators.simulate_spectral`) and the closed forms of
:mod:`lecnotes.spectral.theory`; the notebook keeps the parameters, one call and the claims.
Like the explorer, this module faces the book (:mod:`lecnotes.book.plotting`: the palette and
the error bars over seeds read in both themes).
"""

from __future__ import annotations

import numpy as np

from lecnotes.book import plotting
from lecnotes.core import validate as V

__all__ = [
    "SWEEP_TITLES",
    "spectra_figure",
    "sweep_figure",
    "relu_figure",
    "raw_label_figure",
    "davis_kahan_figure",
]


# ---------------------------------------------------------------------------------------
SWEEP_TITLES = {
    "trimmed": r"trimmed, $y\,\mathbb{1}\{y\leq 7\}$",
    "trimmed-centred": "trimmed and centred",
    "mondelli-montanari": r"Mondelli-Montanari $T_\delta$",
    "luo-alghamdi-lu": r"Luo-Alghamdi-Lu $1 - 1/y$",
}
"""Panel titles of :func:`sweep_figure`, by preprocessing name."""


def _subplots(rows, cols, figsize, **kw):
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=figsize, layout="constrained", **kw)


def spectra_figure(spectra, solutions, grids, densities):
    r"""Spectrum of :math:`D_T` against the limiting bulk and the outlier, one panel per delta.

    The phase-transition figure of {prf:ref}`thm-spectral-asymptotics` and
    {prf:ref}`prop-bulk-law`: the histogram of one seed's eigenvalues, the limiting density,
    the bulk edge, the predicted outlier (above the threshold) and the top eigenvalue.

    Parameters
    ----------
    spectra : SpectraResult
        From :func:`lecnotes.spectral.experiments.spectra_over_seeds` (seed 0 is drawn).
    solutions, grids, densities : dict
        ``{delta: ...}`` for every delta of ``spectra``: the
        :func:`lecnotes.spectral.theory.spectral_functions` solution, the grid and the
        limiting density on it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    deltas = [float(x) for x in spectra.deltas]
    if not all(x in solutions and x in grids and x in densities for x in deltas):
        raise ValueError("solutions, grids and densities need an entry for every delta")
    fig, axes = _subplots(1, len(deltas), (7.5, 3.2), sharey=True, squeeze=False)
    for j, (ax, delta) in enumerate(zip(axes[0], deltas, strict=True)):
        ev, sol = spectra.eigenvalues[0, j], solutions[delta]
        ax.hist(ev, bins=60, density=True, color="#bbbbbb", label="eigenvalues")
        ax.plot(grids[delta], densities[delta], "k-", lw=1.2, label="limiting density")
        ax.axvline(sol.edge, color=plotting.PALETTE[0], ls="--", lw=1.2, label="bulk edge")
        if sol.rho2 > 0:
            ax.axvline(sol.top, color=plotting.PALETTE[1], ls=":", lw=2,
                       label="predicted outlier")
        ax.plot([ev[-1]], [1.3e-3], "v", color=plotting.PALETTE[1], ms=9,
                label="top eigenvalue")
        ax.set(xlabel="eigenvalue", yscale="log", ylim=(1e-3, 3),
               title=rf"$\delta = {delta:g}$, $\rho^2\to{sol.rho2:.2f}$")
    axes[0, 0].set_ylabel("density")
    handles = axes[0, min(1, len(deltas) - 1)].get_legend_handles_labels()
    fig.legend(*handles, loc="outside lower center", ncol=3)
    return fig


def sweep_figure(sims, theory_grid, theory, threshold, quantity="rho2"):
    r"""The overlap sweep against the theorem, one panel per preprocessing (chapter 4).

    The figures of {ref}`sec-ch4-preprocessings` ({prf:ref}`thm-spectral-asymptotics`):
    ``quantity="rho2"`` draws the squared overlap, ``"top"`` the top eigenvalue with the
    predicted outlier and bulk edge; simulations over seeds at every dimension of ``sims``.

    Parameters
    ----------
    sims : dict
        ``{d: {name: SpectralSimulation}}`` from
        :func:`lecnotes.spectral.experiments.spectral_sweep` (four preprocessings).
    theory_grid, theory, threshold : dict
        ``{name: ...}``: the grid of deltas, the list of
        :func:`lecnotes.spectral.theory.spectral_functions` solutions on it, and
        :math:`\delta_c`.
    quantity : {"rho2", "top"}

    Returns
    -------
    matplotlib.figure.Figure
    """
    if quantity not in ("rho2", "top"):
        raise ValueError(f"quantity must be 'rho2' or 'top', got {quantity!r}")
    if not isinstance(sims, dict) or not sims:
        raise ValueError("sims must be a non-empty dict {d: {name: SpectralSimulation}}")
    dims = list(sims)
    names = list(sims[dims[0]])
    if len(names) != 4 or not all(k in theory_grid and k in theory and k in threshold
                                  for k in names):
        raise ValueError("four preprocessings, each with its theory grid, curve and threshold")
    rho2 = quantity == "rho2"
    fig, axes = _subplots(2, 2, (7.5, 5.6), sharey=rho2)
    for ax, k in zip(axes.flat, names, strict=True):
        g = theory_grid[k]
        if rho2:
            ax.plot(g, [s.rho2 for s in theory[k]], "k-", lw=1.2, label="theory")
        else:
            ax.plot(g, [s.top for s in theory[k]], "k-", lw=1.2,
                    label="theory, top eigenvalue")
            ax.plot(g, [s.edge for s in theory[k]], "k--", lw=1, label="theory, bulk edge")
        ax.axvline(threshold[k], color="#888888", lw=0.8)
        for i, d in enumerate(dims):
            plotting.errorbar_over_seeds(ax, sims[d][k].deltas, getattr(sims[d][k], quantity),
                                         ls="", ms=4, color=plotting.PALETTE[i],
                                         label=f"d = {d}")
        ax.set(xscale="log", title=SWEEP_TITLES.get(k, k))
        if rho2:
            ax.set_ylim(-0.03, 1.03)
        plotting.log_ticks(ax, [x for x in (0.5, 1, 2, 4) if x >= g[0]])
    for ax in axes[1]:
        ax.set_xlabel(r"$\delta = n/d$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"$\rho^2$" if rho2 else r"$\lambda_1(D_T)$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center",
               ncol=4 if rho2 else 3)
    return fig


def relu_figure(sims, curves, labels, threshold, d):
    r"""Squared overlap for the ReLU link: theory curves and simulations (chapter 4).

    The figure of {prf:ref}`thm-ch4-optimal-general` ({ref}`sec-ch4-general-link`).

    Parameters
    ----------
    sims : dict
        ``{key: SpectralSimulation}`` from
        :func:`lecnotes.spectral.estimators.simulate_spectral`.
    curves : dict
        ``{key: (grid, rho2)}``: the theorem's curve for each key of ``sims``.
    labels : dict
        ``{key: legend text}``.
    threshold : float
        :math:`\delta_u`, drawn as a vertical line.
    d : int
        The dimension of the simulations (legend).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if set(sims) != set(curves) or set(sims) != set(labels):
        raise ValueError("sims, curves and labels must have the same keys")
    fig, ax = _subplots(1, 1, (5.5, 3.5))
    for i, k in enumerate(sims):
        color = plotting.PALETTE[i]
        ax.plot(*curves[k], color=color, lw=1.2, label=f"{labels[k]}, theory")
        plotting.errorbar_over_seeds(ax, sims[k].deltas, sims[k].rho2, color=color, ls="",
                                     ms=4, label=f"{labels[k]}, d = {d}")
    ax.axvline(threshold, color="#888888", lw=0.8)
    ax.set(xscale="log", xlabel=r"$\delta = n/d$", ylabel=r"$\rho^2$",
           title=r"ReLU link $y = \max(g, 0)$")
    plotting.log_ticks(ax, [1, 2, 3, 4])
    ax.legend(loc="upper left")
    return fig


def raw_label_figure(res, delta, limit):
    r"""Raw labels against :math:`T_\delta`: overlap, top eigenvalue, localisation (chapter 4).

    The figure of {ref}`sec-ch4-raw-labels`.

    Parameters
    ----------
    res : RawLabelSweep
        From :func:`lecnotes.spectral.experiments.raw_label_sweep`.
    delta : float
        Its sample ratio.
    limit : float
        The limit :math:`\rho^2` of :math:`T_\delta` at ``delta`` (a horizontal line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    delta = V.positive_float(delta, "delta")
    fig, axes = _subplots(1, 3, (7.5, 3.1))
    dd = np.asarray(res.dims, float)
    plotting.errorbar_over_seeds(axes[0], dd, res.raw, label="raw labels $T(y) = y$")
    plotting.errorbar_over_seeds(axes[0], dd, res.mm, label=r"$T_\delta$ (Mondelli-Montanari)")
    axes[0].axhline(limit, color="k", lw=1)
    axes[0].set(xscale="log", xlabel="$d$", ylabel=r"$\rho^2$", title="overlap")
    plotting.errorbar_over_seeds(axes[1], dd, res.top, color=plotting.PALETTE[2],
                                 label=r"$\lambda_1(D_y)$")
    plotting.errorbar_over_seeds(axes[1], dd, res.heavy, color=plotting.PALETTE[3],
                                 label=r"$\max_i y_i\|x_i\|^2/n$")
    axes[1].plot(dd, 2 * np.log(delta * dd) / delta, "k--", lw=1, label=r"$2\log n/\delta$")
    axes[1].set(xscale="log", xlabel="$d$", ylabel="eigenvalue", title="top eigenvalue")
    plotting.errorbar_over_seeds(axes[2], dd, res.loc, color=plotting.PALETTE[0])
    axes[2].set(xscale="log", xlabel="$d$", ylim=(0, 1), title="alignment with one sample")
    axes[2].set_ylabel(r"$\max_i\langle\hat w, x_i\rangle^2/\|x_i\|^2$", fontsize=9)
    h0, l0 = axes[0].get_legend_handles_labels()
    h1, l1 = axes[1].get_legend_handles_labels()
    fig.legend(h0 + h1, l0 + l1, loc="outside lower center", ncol=3)
    return fig


def davis_kahan_figure(dk, curve, threshold):
    r"""The Davis-Kahan bound against the exact overlap, and the perturbation (chapter 4).

    The figure of {prf:ref}`prop-davis-kahan`.

    Parameters
    ----------
    dk : DavisKahanSweep
        From :func:`lecnotes.spectral.experiments.davis_kahan_sweep`.
    curve : tuple (grid, rho2)
        The exact limit of the overlap.
    threshold : float
        :math:`\delta_c` of the preprocessing (a vertical line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = _subplots(1, 2, (7.5, 3.2))
    axes[0].plot(*curve, "k-", lw=1.2, label="exact limit")
    plotting.errorbar_over_seeds(axes[0], dk.deltas, dk.rho2, color=plotting.PALETTE[1],
                                 ls="", label="simulation")
    plotting.errorbar_over_seeds(axes[0], dk.deltas, dk.bound, color=plotting.PALETTE[0],
                                 label="Davis-Kahan bound")
    axes[0].axvline(threshold, color="#888888", lw=0.8)
    axes[0].set(xscale="log", xlabel=r"$\delta$", ylabel=r"$\rho^2$", title="overlap")
    plotting.errorbar_over_seeds(axes[1], dk.deltas, dk.norm, color=plotting.PALETTE[2],
                                 label=r"$\|\Delta\|$")
    axes[1].axhline(dk.beta / 2, color="k", ls="--", lw=1, label=r"$\beta_T/2$")
    axes[1].set(xscale="log", yscale="log", xlabel=r"$\delta$", ylabel="operator norm",
                title="perturbation")
    plotting.log_ticks(axes[1], [0.25, 0.5, 1, 2, 4], axis="y")
    h0, l0 = axes[0].get_legend_handles_labels()
    h1, l1 = axes[1].get_legend_handles_labels()
    fig.legend(h0 + h1, l0 + l1, loc="outside lower center", ncol=5)
    return fig
