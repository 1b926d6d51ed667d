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

__all__ = [
    "COLLAPSE_EXPLORER_DIMS",
    "COLLAPSE_ALPHAS",
    "CollapseState",
    "collapse_setting",
    "partial_trace_runs",
    "collapse_panels",
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
    lam4 = S.interval_lambda4(*ex.gen4_interval())
    return p, float(S.critical_alpha(lam4, p * (1 - p)))


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
