r"""The explorer of chapter 5 ({ref}`sec-ch5-explore`): the overlap against n/d^2 and n/d.

The three layers of an explorer for the collapse of {prf:ref}`prop-ch5-limit`: the
state :func:`partial_trace_runs` (a cached call of
:func:`lecnotes.partial_trace.experiments.partial_trace_sweep` per dimension, centred labels of the
:math:`k_\star=4` link), the panels :func:`collapse_panels` (the top row of the chapter's
static figure is drawn by it), the figure :func:`collapse_figure` and the widget
:func:`collapse_explorer`. The control is the range of dimensions; the figure shows the squared
overlap against :math:`\alpha=n/d^2`, with the limit :math:`1-\alpha_c/\alpha`, and against
:math:`n/d`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer
from lecnotes.core import exponents as ex
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import LINKS
from lecnotes.partial_trace import experiments as S
from lecnotes.partial_trace import theory as PT

__all__ = [
    "COLLAPSE_EXPLORER_DIMS",
    "COLLAPSE_ALPHAS",
    "CollapseState",
    "collapse_setting",
    "partial_trace_runs",
    "collapse_panels",
    "collapse_and_blind_figure",
    "odd_degree_figure",
    "collapse_figure",
    "collapse_explorer",
]

COLLAPSE_EXPLORER_DIMS = (16, 24, 32, 48)
"""Dimensions the live explorer computes (12 seeds each: at most about 2.5 s of CPU per
dimension, cached)."""
COLLAPSE_ALPHAS = tuple(1.5 ** np.arange(-2, 4))
r"""The chapter's grid of :math:`\alpha = n/d^2`, from 0.44 to 3.375."""


class CollapseState(NamedTuple):
    """Partial-trace overlaps at several dimensions ({prf:ref}`prop-ch5-limit`)."""

    runs: dict
    """``{d: (ns, rho2)}``, ``rho2`` of shape (seeds, len(ns)), as the chapter's ``runs``."""
    alphas: np.ndarray
    r""":math:`n/d^2` grid of the limit curve (its range)."""
    alpha_c: float
    r"""The critical :math:`\alpha_c` of {eq}`eq-ch5-alpha-c`."""


@functools.lru_cache(maxsize=1)
def collapse_setting() -> tuple[float, float]:
    r"""The chapter's link constants: :math:`p=\mathbb P(Y=1)` and :math:`\alpha_c`.

    For the :math:`k_\star=4` link ``LINKS["gen4"]`` with centred labels :math:`T(y)=y-p`:
    :math:`\alpha_c = 2p(1-p)/\lambda_4^2` ({eq}`eq-ch5-alpha-c`), computed as in the chapter.

    Returns
    -------
    (p, alpha_c) : tuple of float
    """
    link = LINKS["gen4"]
    p = float(gaussian_expectation(link, breakpoints=link.breakpoints))
    lam4 = PT.interval_lambda4(*ex.gen4_interval())
    return p, float(PT.critical_alpha(lam4, p * (1 - p)))


def _centred(t):
    return t - collapse_setting()[0]


@functools.lru_cache(maxsize=32)
def _runs(d, seeds, rng):
    sim = S.partial_trace_sweep(np.array(COLLAPSE_ALPHAS), [d], seeds, T=_centred, rng=rng)[d]
    return sim.n, sim.rho2


def partial_trace_runs(d: int, seeds: int = 12, rng: int = 0):
    r"""Squared overlaps of the partial trace at :math:`n=\alpha d^2` for one ``d`` (cached).

    One call of :func:`lecnotes.partial_trace.experiments.partial_trace_sweep` on the chapter's grid
    :data:`COLLAPSE_ALPHAS` with centred labels; dimension ``d`` uses ``V.stream(rng, d)``, so
    with 12 seeds and ``rng = 0`` the result is the chapter's at the same ``d``. Cost with 12
    seeds: 0.1 s at ``d = 24``, about 2.5 s at ``d = 48``, 11 s at ``d = 72`` (the explorer
    computes ``d <= 48`` only).

    Parameters
    ----------
    d : int
        Dimension, at least 8.
    seeds : int
    rng : int

    Returns
    -------
    (ns, rho2) : tuple of ndarray
        Sample sizes and overlaps of shape (seeds, len(ns)).
    """
    return _runs(V.positive_int(d, "d", minimum=8), V.positive_int(seeds, "seeds"),
                 V.positive_int(rng, "rng", minimum=0))


def collapse_panels(ax_alpha, ax_ratio, state: CollapseState) -> None:
    r"""Draw :math:`\rho^2` against :math:`n/d^2` (with the limit) and against :math:`n/d`.

    Parameters
    ----------
    ax_alpha, ax_ratio : matplotlib Axes
        Panels for :math:`n/d^2` ({prf:ref}`prop-ch5-limit`: the curves of all ``d`` approach
        :math:`(1-\alpha_c/\alpha)_+`) and for :math:`n/d` (they spread apart).
    state : CollapseState
    """
    if not isinstance(state, CollapseState):
        raise ValueError(f"state must be a CollapseState, got {type(state).__name__}")
    alphas = np.asarray(state.alphas)
    grid = np.geomspace(alphas[0], alphas[-1], 100)
    ax_alpha.plot(grid, np.maximum(0, 1 - state.alpha_c / grid), "k-", lw=1.2,
                  label=r"$d\to\infty$")
    for i, (d, (ns, r)) in enumerate(state.runs.items()):
        kw = dict(color=plotting.PALETTE[i % len(plotting.PALETTE)], ms=4, label=f"d = {d}")
        plotting.errorbar_over_seeds(ax_alpha, ns / d**2, r, **kw)
        plotting.errorbar_over_seeds(ax_ratio, ns / d, r, **kw)
    ax_alpha.set(xscale="log", xlabel=r"$\alpha = n/d^2$", ylabel=r"$\rho^2$", ylim=(0, 1),
                 title="partial trace against $n/d^2$")
    ax_ratio.set(xscale="log", xlabel=r"$n/d$", ylabel=r"$\rho^2$", ylim=(0, 1),
                 title="partial trace against $n/d$")


def collapse_and_blind_figure(state: CollapseState, sims: dict, alphas):
    r"""The chapter's figure of {prf:ref}`prop-ch5-limit`: the collapse and the blind estimators.

    Top row: :func:`collapse_panels`. Bottom: :math:`d\rho^2` of the second-moment estimator
    (circles) and of the contraction of the moment tensor (squares) on the same data, against
    the level 1 of a random direction.

    Parameters
    ----------
    state : CollapseState
    sims : dict
        ``{d: PartialTraceSimulation}`` of :func:`lecnotes.partial_trace.partial_trace_sweep`
        with ``k = 4`` (``rho2_raw`` present).
    alphas : array_like
        The :math:`n/d^2` of ``sims``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, CollapseState):
        raise ValueError(f"state must be a CollapseState, got {type(state).__name__}")
    if not isinstance(sims, dict) or not sims:
        raise ValueError("sims must be a non-empty dict {d: PartialTraceSimulation}")
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    fig = plt.figure(figsize=(7.5, 6.0), layout="constrained")
    gs = fig.add_gridspec(2, 2)
    axes = [fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[0, 1]), fig.add_subplot(gs[1, :])]
    collapse_panels(axes[0], axes[1], state)
    for i, d in enumerate(sims):
        kw = dict(color=plotting.PALETTE[i % len(plotting.PALETTE)], ms=4, label=f"d = {d}",
                  ls="")
        plotting.errorbar_over_seeds(axes[2], alphas, d * sims[d].rho2_second, **kw)
        kw |= {"label": None, "marker": "s", "mfc": "none"}
        plotting.errorbar_over_seeds(axes[2], alphas * 1.04, d * sims[d].rho2_raw, **kw)
    axes[2].axhline(1.0, color="#888888", lw=1)
    axes[2].set(xscale="log", xlabel=r"$\alpha = n/d^2$", ylabel=r"$d\,\rho^2$", ylim=(0, 8),
                title="second moment (circles) and moment tensor (squares)")
    for ax, ticks in zip(axes, [[0.5, 1, 2, 3], [20, 50, 100, 200, 500], [0.5, 1, 2, 3]],
                         strict=True):
        plotting.log_ticks(ax, ticks)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=7)
    return fig


def odd_degree_figure(runs_vec: dict, runs_unf: dict, runs_vec_same: dict, betas, q):
    r"""The figure of {ref}`sec-ch5-odd-degree`: vector contraction and unfolding.

    Left: :math:`\rho^2` of the vector contraction against :math:`\beta=n/d^2`, with the limit
    {eq}`eq-ch5-vector-limit`. Right: the unfolding (filled) and the vector contraction (open,
    dashed) on the same data sets, against :math:`n/d^{3/2}`.

    Parameters
    ----------
    runs_vec, runs_unf, runs_vec_same : dict
        ``{d: (ns, rho2)}`` of :func:`lecnotes.partial_trace.overlap_sweep`; ``runs_vec_same``
        on the dimensions of ``runs_unf``.
    betas : array_like
        The :math:`\beta` of ``runs_vec`` (positive, increasing).
    q : float
        :math:`\mathbb E[\zeta_3(Y)^2]`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    for name, runs in (("runs_vec", runs_vec), ("runs_unf", runs_unf),
                       ("runs_vec_same", runs_vec_same)):
        if not isinstance(runs, dict) or not runs:
            raise ValueError(f"{name} must be a non-empty dict {{d: (ns, rho2)}}")
    if set(runs_vec_same) != set(runs_unf):
        raise ValueError("runs_vec_same must have the dimensions of runs_unf")
    betas = V.finite_array(betas, "betas", ndim=1)
    if betas.size == 0 or np.any(betas <= 0):
        raise ValueError("betas must be positive")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), layout="constrained")
    g = np.geomspace(betas[0], betas[-1], 100)
    axes[0].plot(g, PT.vector_contraction_limit(g, q), "k-", lw=1.2, label="limit")
    for i, (d, (ns, r)) in enumerate(runs_vec.items()):
        plotting.errorbar_over_seeds(axes[0], ns / d**2, r,
                                     color=plotting.PALETTE[i % len(plotting.PALETTE)], ms=4,
                                     label=f"d = {d}")
    for i, (d, (ns, r)) in enumerate(runs_unf.items()):
        kw = dict(color=plotting.PALETTE[i % len(plotting.PALETTE)], ms=4)
        plotting.errorbar_over_seeds(axes[1], ns / d**1.5, r, label=f"unfolding, d = {d}", **kw)
        plotting.errorbar_over_seeds(axes[1], ns / d**1.5, runs_vec_same[d][1], ls="--",
                                     mfc="none", **kw)
    axes[0].set(xscale="log", xlabel=r"$\beta = n/d^2$", ylabel=r"$\rho^2$", ylim=(0, 1),
                title="vector contraction")
    axes[1].set(xscale="log", xlabel=r"$n/d^{3/2}$", ylabel=r"$\rho^2$", ylim=(0, 1),
                title="unfolding (filled) and vector (open)")
    plotting.log_ticks(axes[0], [0.25, 0.5, 1, 2, 4])
    plotting.log_ticks(axes[1], [1, 2, 4, 8])
    h0, l0 = axes[0].get_legend_handles_labels()
    h1, l1 = axes[1].get_legend_handles_labels()
    fig.legend(h0 + h1, l0 + l1, loc="outside lower center", ncol=5)
    return fig


def collapse_figure(state: CollapseState, fig=None):
    """The explorer's figure: :func:`collapse_panels` side by side, one legend below.

    Parameters
    ----------
    state : CollapseState
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one of 7.5 x 3.8 in if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.8))
    fig.clf()
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 2)
    collapse_panels(*axes, state)
    for ax, xs in zip(axes, (state.alphas, [n / d for d, (ns, _) in state.runs.items()
                                            for n in ns]), strict=True):
        lo, hi = float(np.min(xs)), float(np.max(xs))
        ticks = [m * 10.0**e for e in range(-2, 5) for m in (1, 2, 5) if lo <= m * 10.0**e <= hi]
        plotting.log_ticks(ax, ticks)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center",
               ncol=min(5, len(state.runs) + 1))
    return fig


def collapse_explorer(state: CollapseState | None = None):
    """The live explorer of chapter 5 ({ref}`sec-ch5-explore`): the range of dimensions.

    Control: the smallest and largest dimension drawn, from :data:`COLLAPSE_EXPLORER_DIMS`
    (computed with 12 seeds by :func:`partial_trace_runs`: at most about 2.5 s of CPU on one
    core per new dimension, cached) and the dimensions of ``state``; each redraw calls
    :func:`collapse_figure`.

    Parameters
    ----------
    state : CollapseState, optional
        The chapter's runs (drawn first, so creating the widget computes nothing); its
        dimensions are added to the control. Without it the explorer starts at ``d = 16..32``.

    Returns
    -------
    ipywidgets.VBox
        With the control ``dims`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, CollapseState):
        raise ValueError(f"state must be a CollapseState, got {type(state).__name__}")
    given = {} if state is None else dict(state.runs)
    options = sorted(set(COLLAPSE_EXPLORER_DIMS) | set(given))
    start = (min(given), max(given)) if given else (16, 32)
    controls = {"dims": W.SelectionRangeSlider(options=options, index=(
        options.index(start[0]), options.index(start[1])), description="dimensions",
        continuous_update=False)}
    alpha_c = collapse_setting()[1] if state is None else state.alpha_c

    def draw(values, fig):
        lo, hi = values["dims"]
        runs = {d: given[d] if d in given else partial_trace_runs(d)
                for d in options if lo <= d <= hi}
        st = CollapseState(runs, np.array(COLLAPSE_ALPHAS), alpha_c)
        return collapse_figure(st, fig), st

    initial = None if state is None else (lambda fig: (collapse_figure(state, fig), state))
    return build_explorer(controls, draw, initial)
