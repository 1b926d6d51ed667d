r"""The explorer of chapter 7 ({ref}`sec-ch7-explore`): the phase diagram of two steps.

The three layers of an explorer for {prf:ref}`thm-ch7-two-step-outliers`: the
state :func:`two_step_state` (a cached call of
:func:`lecnotes.two_steps.phase.simulate_two_step_counts` on the chapter's grid of exponents,
with the chapter's margin), the panel :func:`two_step_count_panel` (the three panels of the
chapter's static phase diagram are drawn by it), the figure :func:`two_step_figure` and the
widget :func:`two_step_explorer`. The controls are the two exponents :math:`\alpha_1`,
:math:`\alpha_2`, the size :math:`N` and the second layer; the figure shows the theorem's count
:math:`1+\Lambda` of outliers of :math:`W_2`, the simulated count, and the top singular values
of :math:`W_2` at the chosen cell against the threshold set by its spike-free null
({eq}`eq-ch7-null`).

The module also draws the chapter's static figures (:func:`first_step_figure`,
:func:`one_step_figure`, :func:`taylor_figure`, :func:`phase_figure`, :func:`stein_figure`,
:func:`reuse_figure`) from the named results of :mod:`lecnotes.two_steps.studies`: it is the
chapter's one module that imports the plotting of the book tier.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer
from lecnotes.core import linalg, rmt, stats
from lecnotes.core import validate as V
from lecnotes.models import networks
from lecnotes.two_steps import phase as P
from lecnotes.two_steps import theory as SP

__all__ = [
    "TWO_STEP_A1",
    "TWO_STEP_A2",
    "TWO_STEP_SIZES",
    "TwoStepState",
    "two_step_margin",
    "two_step_state",
    "two_step_counts",
    "two_step_count_panel",
    "two_step_figure",
    "two_step_explorer",
    "first_step_figure",
    "one_step_figure",
    "taylor_figure",
    "phase_figure",
    "stein_figure",
    "reuse_figure",
]

TWO_STEP_A1 = (0.05, 0.15, 0.25, 0.32, 0.40)
r"""The chapter's grid of :math:`\alpha_1` (no cell on a boundary of the theorem)."""
TWO_STEP_A2 = (0.06, 0.17, 0.28, 0.38, 0.42)
r"""The chapter's grid of :math:`\alpha_2`."""
TWO_STEP_SIZES = (100, 200, 300)
""":math:`N = n = d` the live explorer computes (the whole grid, 2 seeds: at most about 4 s)."""
_SEEDS = {"gaussian": 11, "uniform": 12}


class TwoStepState(NamedTuple):
    """Spectra of two steps over a grid of exponents ({prf:ref}`thm-ch7-two-step-outliers`)."""

    N: int
    """:math:`N = n = d`."""
    second_layer: str
    """``"gaussian"`` or ``"uniform"``."""
    alphas1: np.ndarray
    r""":math:`\alpha_1` grid."""
    alphas2: np.ndarray
    r""":math:`\alpha_2` grid."""
    spectra: P.TwoStepSpectra
    """From :func:`lecnotes.two_steps.phase.simulate_two_step_counts`."""
    eps: float
    """Relative margin above the top singular value of the null."""


@functools.lru_cache(maxsize=8)
def two_step_margin(N: int) -> float:
    r"""The chapter's relative margin :math:`\varepsilon` at size ``N`` (cached).

    One unit of the fitted edge scale of 8 spectra of :math:`W_0` (Gaussian second layer,
    :func:`lecnotes.core.rmt.fit_bulk_edge`), relative to the edge, averaged; seed 3 as in the
    chapter ({ref}`sec-ch7-explore`).

    Parameters
    ----------
    N : int
        At least 60 (the edge fit uses ranks 10 to 50).

    Returns
    -------
    float
    """
    N = V.positive_int(N, "N", minimum=60)
    rng = stats.generator(3)
    null = [linalg.singular_values(networks.init_params(
        N, N, rng=rng, symmetric=False, second_layer="gaussian")[0]) for _ in range(8)]
    return float(np.mean([b.scale / b.edge for b in map(rmt.fit_bulk_edge, null)]))


@functools.lru_cache(maxsize=8)
def _state(N, second_layer, seeds):
    spectra = P.simulate_two_step_counts(N, np.array(TWO_STEP_A1), np.array(TWO_STEP_A2), seeds,
                                         second_layer=second_layer, rng=_SEEDS[second_layer])
    return TwoStepState(N, second_layer, np.array(TWO_STEP_A1), np.array(TWO_STEP_A2), spectra,
                        two_step_margin(N))


def two_step_state(N: int = 200, second_layer: str = "gaussian", seeds: int = 2) -> TwoStepState:
    r"""Two steps on the chapter's :math:`5\times5` grid of exponents at size ``N`` (cached).

    :func:`lecnotes.two_steps.phase.simulate_two_step_counts` with the chapter's seeds (11 for
    the Gaussian layer, 12 for the uniform one) and :func:`two_step_margin`. Cost with 2
    seeds: about 1 s of CPU at ``N = 200``, 3-4 s at ``N = 300``, a minute at the chapter's
    ``N = 800``.

    Parameters
    ----------
    N : int
        :math:`N = n = d`, at least 60.
    second_layer : {"gaussian", "uniform"}
    seeds : int

    Returns
    -------
    TwoStepState
    """
    if second_layer not in _SEEDS:
        raise ValueError(f"second_layer must be one of {tuple(_SEEDS)}, got {second_layer!r}")
    return _state(V.positive_int(N, "N", minimum=60), second_layer,
                  V.positive_int(seeds, "seeds"))


def two_step_counts(state: TwoStepState) -> np.ndarray:
    """Outliers of :math:`W_2` per cell, mean over seeds (above ``(1 + eps)`` times the null).

    Parameters
    ----------
    state : TwoStepState

    Returns
    -------
    ndarray (len(alphas1), len(alphas2))
    """
    s = state.spectra
    return np.sum(s.s2 > (1 + state.eps) * s.null2_top[..., None], axis=-1).mean(0)


def two_step_count_panel(ax, counts, alphas1, alphas2, vmax: float, title: str):
    r"""Draw a map of outlier counts over :math:`(\alpha_2, \alpha_1)` into ``ax``.

    Each cell carries its value; the white line is the boundary :math:`\alpha_1+\alpha_2 =
    \frac12` below which the second step adds nothing ({prf:ref}`thm-ch7-two-step-outliers`).

    Parameters
    ----------
    ax : matplotlib Axes
    counts : ndarray (len(alphas1), len(alphas2))
    alphas1, alphas2 : array_like
    vmax : float
        Top of the colour scale (its bottom is 1).
    title : str

    Returns
    -------
    matplotlib.image.AxesImage
        For a colour bar.
    """
    counts = np.asarray(counts, dtype=float)
    A1, A2 = np.asarray(alphas1), np.asarray(alphas2)
    if counts.shape != (A1.size, A2.size):
        raise ValueError(f"counts must have shape {(A1.size, A2.size)}, got {counts.shape}")
    im = ax.imshow(counts, origin="lower", cmap="viridis", vmin=1, vmax=vmax, aspect="auto")
    for i in range(A1.size):
        for j in range(A2.size):
            ax.text(j, i, f"{counts[i, j]:g}", ha="center", va="center", fontsize=9,
                    color="white" if counts[i, j] < 0.6 * vmax else "black")
    below = np.repeat([np.sum(a_ + A2 < 0.5) - 0.5 for a_ in A1], 2)  # a1 + a2 < 1/2
    ax.plot(below, np.arange(2 * A1.size) // 2 + np.tile([-0.5, 0.5], A1.size), "w-", lw=1.5)
    ax.set_xticks(range(A2.size), [f"{v:g}" for v in A2])
    ax.set_yticks(range(A1.size), [f"{v:g}" for v in A1])
    ax.set(xlabel=r"$\alpha_2$", title=title)
    ax.grid(False)
    return im


def two_step_figure(state: TwoStepState, alpha1: float, alpha2: float, fig=None):
    r"""The explorer's figure: theorem, simulation, and the spectrum at one cell.

    Left: the theorem's :math:`1+\Lambda` ({prf:ref}`thm-ch7-two-step-outliers`); middle: the
    simulated count (mean over seeds), the chosen cell framed; right: the 8 top singular values
    of :math:`W_2` per seed at :math:`(\alpha_1, \alpha_2)` and the threshold
    :math:`(1+\varepsilon)` times the top of the spike-free null ({eq}`eq-ch7-null`).

    Parameters
    ----------
    state : TwoStepState
    alpha1, alpha2 : float
        Values of ``state.alphas1`` and ``state.alphas2``.
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one of 7.5 x 3.2 in if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    if not isinstance(state, TwoStepState):
        raise ValueError(f"state must be a TwoStepState, got {type(state).__name__}")
    hit1, hit2 = np.isclose(state.alphas1, alpha1), np.isclose(state.alphas2, alpha2)
    if not hit1.any() or not hit2.any():
        raise ValueError(f"({alpha1}, {alpha2}) is not a cell of the state's grid")
    i, j = int(np.argmax(hit1)), int(np.argmax(hit2))
    theory = 1 + SP.two_step_new_outliers(state.alphas1[:, None], state.alphas2[None, :])
    sim = two_step_counts(state)
    vmax = max(theory.max(), sim.max())
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.2))
    fig.clf()
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 3)
    two_step_count_panel(axes[0], theory, state.alphas1, state.alphas2, vmax, "theorem")
    layer = "Gaussian" if state.second_layer == "gaussian" else "bounded"
    two_step_count_panel(axes[1], sim, state.alphas1, state.alphas2, vmax,
                         f"{layer} layer, N = {state.N}")
    axes[0].set_ylabel(r"$\alpha_1$")
    for ax in axes[:2]:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="#D55E00", lw=2.5))
    s = state.spectra
    k = np.arange(1, s.s2.shape[-1] + 1)
    for r in range(s.s2.shape[0]):
        c = ("#0072B2", "#009E73", "#CC79A7")[r % 3]
        axes[2].plot(k, s.s2[r, i, j], "o", color=c, ms=4, label=f"seed {r}")
        axes[2].axhline((1 + state.eps) * s.null2_top[r, i, j], color=c, ls="--", lw=1)
    axes[2].plot([], [], "k--", lw=1, label=r"threshold $(1+\varepsilon)\times$ top of the null")
    axes[2].set(xlabel="rank", ylabel="singular value of $W_2$",
                title=f"theorem {theory[i, j]:g}, counted {sim[i, j]:g}")
    fig.legend(*axes[2].get_legend_handles_labels(), loc="outside lower center",
               ncol=s.s2.shape[0] + 1)
    return fig


def two_step_explorer(states=None):
    r"""The live explorer of chapter 7 ({ref}`sec-ch7-explore`): the exponents of two steps.

    Controls: :math:`\alpha_1` and :math:`\alpha_2` on the chapter's grid (only a redraw), the
    size :math:`N` (100 to 300, or those of ``states``) and the second layer (Gaussian or
    bounded); a new size or layer calls :func:`two_step_state` with 2 seeds (at most about 4 s
    of CPU on one core at :math:`N = 300`). Each redraw calls :func:`two_step_figure`.

    Parameters
    ----------
    states : TwoStepState or sequence of TwoStepState, optional
        Used for their ``(N, second_layer)`` instead of a new computation, the first drawn
        first at :math:`(\alpha_1, \alpha_2) = (0.25, 0.38)` (the chapter passes its
        :math:`N = 800` simulations of both layers, so creating the widget computes nothing).

    Returns
    -------
    ipywidgets.VBox
        With the controls ``alpha1``, ``alpha2``, ``N``, ``second_layer`` and ``output``,
        ``state``, ``draws``.
    """
    import ipywidgets as W

    states = [] if states is None else (
        [states] if isinstance(states, TwoStepState) else list(states))
    if not all(isinstance(st, TwoStepState) for st in states):
        raise ValueError("states must be TwoStepState objects")
    N0, layer0 = (200, "gaussian") if not states else (states[0].N, states[0].second_layer)
    given = {(st.N, st.second_layer): st for st in states}
    controls = {
        "alpha1": W.SelectionSlider(options=list(TWO_STEP_A1), value=0.25,
                                    description="alpha_1", continuous_update=False),
        "alpha2": W.SelectionSlider(options=list(TWO_STEP_A2), value=0.38,
                                    description="alpha_2", continuous_update=False),
        "N": W.Dropdown(options=sorted(set(TWO_STEP_SIZES) | {k[0] for k in given} | {N0}),
                        value=N0, description="N"),
        "second_layer": W.Dropdown(options=list(_SEEDS), value=layer0, description="layer"),
    }

    def draw(values, fig):
        key = (values["N"], values["second_layer"])
        st = given[key] if key in given else two_step_state(*key)
        return two_step_figure(st, values["alpha1"], values["alpha2"], fig), st

    return build_explorer(controls, draw)


# The static figures of the chapter, drawn from the named results of
# :mod:`lecnotes.two_steps.studies` (this is the chapter's book-facing module).


def _figure(ncols: int, height: float, **kw):
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(7.5, height), layout="constrained", **kw)


def first_step_figure(sizes, ratio, slope_theory: float, step, N: int):
    r"""The first update is nearly rank one ({prf:ref}`prop-ch7-rank-one`).

    Left: :math:`s_2/s_1` of the update against :math:`N` with the predicted slope; right: the
    singular values of :math:`W_1` against the Marchenko-Pastur law of :math:`W_0`.

    Parameters
    ----------
    sizes : array_like
    ratio : ndarray (seeds, sizes)
    slope_theory : float
    step : lecnotes.two_steps.studies.FirstStep
    N : int
        The size of ``step``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sizes = np.asarray(sizes)
    ratio = V.finite_array(ratio, "ratio", ndim=2)
    if ratio.shape[1] != sizes.size:
        raise ValueError(f"ratio must have shape (seeds, {sizes.size}), got {ratio.shape}")
    N = V.positive_int(N, "N")
    fig, axes = _figure(2, 3.2)
    plotting.errorbar_over_seeds(axes[0], sizes, ratio, label="$s_2/s_1$, simulation")
    axes[0].plot(sizes, ratio.mean(0)[0] * (sizes / sizes[0]) ** slope_theory, "k--", lw=1,
                 label=r"slope $-1/2$ + that of $E\max_j|a_j|$")
    axes[0].set(xscale="log", yscale="log", xlabel="$N = n = d$",
                ylabel="$s_2/s_1$ of the update", title="first update")
    plotting.log_ticks(axes[0], sizes)
    plotting.log_ticks(axes[0], [0.12, 0.15, 0.2, 0.25], axis="y")
    grid = np.linspace(0.01, 2.05, 300)
    axes[1].hist(step.s, bins=60, density=True, color="#bbbbbb",
                 label="singular values of $W_1$")
    axes[1].plot(grid, rmt.gaussian_singular_value_density(grid, N, N), "k-", lw=1.2,
                 label="Marchenko-Pastur ($W_0$)")
    axes[1].axvline(step.bulk.edge, color=plotting.PALETTE[0], ls="--", lw=1.2,
                    label="fitted edge")
    axes[1].plot([step.s[0]], [0.05], "v", color=plotting.PALETTE[1], ms=9, label="outlier")
    axes[1].set(xlabel="singular value", ylabel="density", title=r"$W_1$, $\alpha_1 = 0.3$")
    fig.legend(loc="outside lower center", ncol=3)
    return fig


def one_step_figure(study, curves, alphas):
    r"""Spike counts, positions and alignments after one step ({prf:ref}`thm-ch7-one-step-spikes`).

    Left: counts (theorem, finite-:math:`N` lines, simulation); middle: positions at the largest
    size against the damped and undamped strengths ({eq}`eq-ch7-square-bbp`); right: the
    alignments of the top two spikes with :math:`\mathrm{He}_1`, :math:`\mathrm{He}_2`.

    Parameters
    ----------
    study : lecnotes.two_steps.studies.OneStepStudy
    curves : lecnotes.two_steps.studies.OneStepCurves
    alphas : array_like
        The study's exponents.

    Returns
    -------
    matplotlib.figure.Figure
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    sizes = list(study.sims)
    top, grid = sizes[-1], curves.grid
    fig, axes = _figure(3, 3.0)
    axes[0].step(grid, SP.one_step_spike_count(grid), "k-", where="mid", lw=1.2,
                 label="theorem")
    for i, n in enumerate(sizes):
        col = plotting.PALETTE[i]
        axes[0].step(grid, curves.counts[n], "-", where="mid", color=col, lw=1, alpha=0.7)
        plotting.errorbar_over_seeds(axes[0], alphas + 0.005 * (i - 1), study.counts[n],
                                     ls="", color=col, label=f"N = {n}: simulated; line: finite N")
    axes[0].set(xlabel=r"$\alpha$", ylabel="number of spikes", ylim=(-0.3, 8.5), title="counts")
    for r in range(min(2, study.counts[top].shape[0])):
        for j, a_ in enumerate(alphas):
            m = study.counts[top][r, j]
            axes[1].plot([a_] * m, study.sims[top].s[r, j, :m], "o", color=plotting.PALETTE[2],
                         ms=4)
    axes[1].plot(grid, curves.positions, "-", color="k", lw=1)
    axes[1].plot(grid, curves.taylor, "--", color="#888888", lw=1)
    axes[1].axhline(study.fin.threshold[-1], color="#888888", lw=0.8, ls=":")
    axes[1].set(xlabel=r"$\alpha$", ylabel="singular value", title=f"positions, $N = {top}$")
    al = study.sims[top].align.mean(0)
    axes[2].plot(alphas, al[:, 0, 0], "o-", color=plotting.PALETTE[3],
                 label=r"1st vs $\mathrm{He}_1$")
    axes[2].plot(alphas, al[:, 1, 1], "s-", color=plotting.PALETTE[4],
                 label=r"2nd vs $\mathrm{He}_2$")
    axes[2].set(xlabel=r"$\alpha$", ylabel="alignment", ylim=(0, 1.02), title=f"$N = {top}$")
    axes[1].plot([], [], "k-", label="finite-N positions")
    axes[1].plot([], [], "--", color="#888888", label="Taylor-term sizes")
    fig.legend(loc="outside lower center", ncol=3, fontsize=9)
    return fig


def taylor_figure(sizes, exponents):
    r"""Sizes of the Taylor terms per unit step against :math:`N` with the predicted slopes.

    {eq}`eq-ch7-feature-taylor` (left) and {eq}`eq-ch7-second-taylor` (right).

    Parameters
    ----------
    sizes : array_like
    exponents : lecnotes.two_steps.studies.TaylorExponents

    Returns
    -------
    matplotlib.figure.Figure
    """
    sizes = np.asarray(sizes)
    fig, axes = _figure(2, 3.2, sharey=True)
    for ax, kind in zip(axes, ["features", "second step"], strict=True):
        for _, k, th, v in (r for r in exponents.rows if r[0] == kind):
            c = plotting.PALETTE[k]
            lab = f"k = {k}" if kind == "second step" else None
            plotting.errorbar_over_seeds(ax, sizes, v, color=c, label=lab)
            ax.plot(sizes, v.mean(0)[-1] * (sizes / sizes[-1]) ** th, "--", color=c, lw=1)
        ax.set(xscale="log", yscale="log", xlabel="$N = n = d$", title=kind)
        plotting.log_ticks(ax, sizes)
    axes[0].set_ylabel("size of the k-th term per unit step")
    axes[1].plot([], [], "k--", lw=1, label="predicted slope")
    fig.legend(loc="outside lower center", ncol=5)
    return fig


def phase_figure(study, alphas1, alphas2, N: int):
    r"""The phase diagram of two steps: theorem and both second layers
    ({prf:ref}`thm-ch7-two-step-outliers`), three panels of :func:`two_step_count_panel`.

    Parameters
    ----------
    study : lecnotes.two_steps.studies.TwoStepStudy
    alphas1, alphas2 : array_like
    N : int

    Returns
    -------
    matplotlib.figure.Figure
    """
    N = V.positive_int(N, "N")
    panels = [("theorem", study.theory), (f"Gaussian layer, N = {N}", study.mean["gaussian"]),
              (f"bounded layer, N = {N}", study.mean["uniform"])]
    vmax = max(M.max() for _, M in panels)
    fig, axes = _figure(3, 2.9, sharey=True)
    for ax, (title, M) in zip(axes, panels, strict=True):
        im = two_step_count_panel(ax, M, alphas1, alphas2, vmax, title)
    axes[0].set_ylabel(r"$\alpha_1$")
    fig.colorbar(im, ax=axes, shrink=0.8, label="outliers of $W_2$")
    return fig


def stein_figure(curves, runs):
    r"""Effective preprocessing :math:`T(y)/y` and Stein coefficient of a reused batch
    ({eq}`eq-ch7-reuse-preprocessing`), exact and simplified own-label term, with the simulated
    component along :math:`w_\star` at :math:`c = 1`.

    Parameters
    ----------
    curves : lecnotes.two_steps.studies.SteinCurves
    runs : dict
        :func:`lecnotes.two_steps.studies.reuse_runs` (its He_3 configurations).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = _figure(2, 3.3)
    y = curves.y
    for i, act in enumerate(("tanh", "relu")):
        col = plotting.PALETTE[i]
        for exact, ls in ((True, "-"), (False, ":")):
            lab = f"{act}, " + ("exact" if exact else "simplified") + " own-label term"
            S = np.divide(curves.T[(act, exact)], y, out=np.full_like(y, np.nan), where=y != 0)
            axes[0].plot(y, S, ls, color=col, label=lab)
            axes[1].plot(curves.cs, curves.mu[(act, exact)], ls, color=col)
        along = runs[(act, None)].reuse.along[:, -1]
        axes[1].errorbar([1.0], [along.mean()], yerr=[along.std(ddof=1) / np.sqrt(along.size)],
                         fmt="o", color=col, capsize=3, label=f"{act}, simulation")
    axes[0].set(xlabel="$y$", ylabel="$T(y)/y$", title="effective preprocessing")
    axes[1].axhline(0, color="#888888", lw=0.8)
    axes[1].set(xlabel="$c$ ($\\eta = c\\,p\\,\\delta$)", ylabel=r"$\mu_T = E[T(Y)G]$",
                title=r"Stein coefficient, $\mathrm{He}_3/\sqrt{6}$")
    fig.legend(loc="outside lower center", ncol=3)
    return fig


def reuse_figure(dims, runs):
    r"""Overlap of what the second step adds, reused against fresh batch, over :math:`d`
    ({eq}`eq-ch7-reuse-preprocessing`): the He_3 target (left) and the two-direction one.

    Parameters
    ----------
    dims : array_like
    runs : dict
        :func:`lecnotes.two_steps.studies.reuse_runs` of the four configurations.

    Returns
    -------
    matplotlib.figure.Figure
    """
    dims = np.asarray(dims)
    titles = (r"$\mathrm{He}_3(\langle w_\star,x\rangle)/\sqrt{6}$",
              r"$(z_1+\mathrm{He}_3(z_2)/\sqrt{6})/\sqrt{2}$, direction $w_2$")
    fig, axes = _figure(2, 3.4, sharey=True)
    for ax, link, title in zip(axes, (None, "two-direction"), titles, strict=True):
        first = link is None
        for i, act in enumerate(("tanh", "relu")):
            res, x, col = runs[(act, link)], dims * (1 + 0.03 * i), plotting.PALETTE[i]
            plotting.errorbar_over_seeds(ax, x, res.reuse.new, color=col,
                                         label=f"{act}, reused" * first)
            plotting.errorbar_over_seeds(ax, x, res.fresh.new, ls="--", color=col,
                                         label=f"{act}, fresh" * first)
        if first:
            plotting.errorbar_over_seeds(ax, dims * 1.06, runs[("relu", None)].reuse.overlap,
                                         ls=":", color=plotting.PALETTE[1], marker="x",
                                         label="relu, reused, whole update")
        ax.plot(dims, 2.5 * dims**-0.5, color="#888888", lw=1, label="slope $-1/2$" * first)
        ax.set(xscale="log", yscale="log", xlabel="$d$", title=title)
        plotting.log_ticks(ax, dims)
        plotting.log_ticks(ax, [0.02, 0.05, 0.1, 0.2, 0.5], axis="y")
    axes[0].set_ylabel("overlap")
    fig.legend(loc="outside lower center", ncol=3)
    return fig
