r"""The explorer of chapter 1 ({ref}`sec-ch1-explore`): how far the weights move, over widths.

The three layers of an explorer for the width sweep of
{prf:ref}`prop-ch1-lazy-movement`: the state :func:`width_explorer_state` (a cached call of
:func:`lecnotes.mean_field_vs_ntk.experiments.movement_sweep`), the figure :func:`width_figure` (the
chapter's static figure of the sweep calls it) and the widget :func:`width_explorer`. The
controls are the largest width and the target training loss; the figure shows,
for both scalings of {prf:ref}`def-ch1-scalings`, the relative movement of the first layer
with the lazy prediction :math:`C_t/\sqrt m`, and the distance to the linearised model.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer, with_option
from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.mean_field_vs_ntk import experiments as mfn

__all__ = [
    "WIDTH_EXPLORER_DEFAULTS",
    "WIDTH_EXPLORER_MAX_WIDTHS",
    "WIDTH_EXPLORER_EPS",
    "WidthState",
    "width_explorer_state",
    "width_figure",
    "width_explorer",
]

WIDTH_EXPLORER_MAX_WIDTHS = (64, 128, 256)
"""Values of the largest-width control (widths 32, 64, ... up to it)."""
WIDTH_EXPLORER_EPS = (0.05, 0.1, 0.2)
"""Values of the target-training-loss control."""
WIDTH_EXPLORER_DEFAULTS = {"max_width": 256, "eps": 0.05, "eta0": 0.5, "d": 16, "n": 128,
                           "seeds": 2, "rng": 0}
"""Settings of the live explorer: the chapter's ``d``, ``n``, ``eps``, ``eta0`` and base seed,
with two seeds and widths up to 256 (about 2.5 s of CPU per redraw)."""


class WidthState(NamedTuple):
    """One width sweep of chapter 1 and its setting ({prf:ref}`prop-ch1-lazy-movement`)."""

    widths: np.ndarray
    """Widths :math:`m`, increasing."""
    eps: float
    """Target training loss."""
    eta0: float
    """Step size before the width factor."""
    d: int
    """Dimension."""
    n: int
    """Number of samples."""
    sweep: mfn.MovementResult
    """The result of :func:`lecnotes.mean_field_vs_ntk.experiments.movement_sweep`."""


def _widths(max_width: int) -> tuple:
    max_width = V.positive_int(max_width, "max_width", minimum=64)
    if max_width & (max_width - 1) or max_width > 1024:
        raise ValueError(f"max_width must be a power of 2 in [64, 1024], got {max_width}")
    return tuple(2**k for k in range(5, max_width.bit_length()))


@functools.lru_cache(maxsize=32)
def _state(max_width, eps, eta0, d, n, seeds, rng):
    widths = _widths(max_width)
    sweep = mfn.movement_sweep(d, n, widths, eps, eta0, seeds=seeds, rng=rng)
    return WidthState(np.array(widths), eps, eta0, d, n, sweep)


def width_explorer_state(max_width: int = 256, eps: float = 0.05, eta0: float = 0.5,
                         d: int = 16, n: int = 128, seeds: int = 2, rng: int = 0) -> WidthState:
    r"""The width sweep of {prf:ref}`prop-ch1-lazy-movement` for one setting (cached).

    Calls :func:`lecnotes.mean_field_vs_ntk.experiments.movement_sweep` at widths
    :math:`32, 64, \dots,` ``max_width``, with seed ``s`` drawn from the integer ``rng + s``
    as in the chapter. Cost: about 2.5 s of CPU with the defaults, twice that at
    ``max_width = 512``; keep ``max_width * seeds <= 512`` for a callback of a few seconds.

    Parameters
    ----------
    max_width : int
        Largest width, a power of 2 in :math:`[64, 1024]`.
    eps, eta0 : float
        Target training loss and step size, positive.
    d, n, seeds : int
        Dimension, number of samples and of seeds.
    rng : int
        Base seed (an integer: the chapter's protocol).

    Returns
    -------
    WidthState
    """
    args = (V.positive_int(max_width, "max_width", minimum=64), V.positive_float(eps, "eps"),
            V.positive_float(eta0, "eta0"), V.positive_int(d, "d"), V.positive_int(n, "n"),
            V.positive_int(seeds, "seeds"), V.positive_int(rng, "rng", minimum=0))
    _widths(args[0])
    return _state(*args)


def width_figure(state: WidthState, fig=None):
    r"""Draw a width sweep (the chapter's figure of {prf:ref}`prop-ch1-lazy-movement`).

    Left: the relative movement of the first layer in both scalings (mean and standard error
    over seeds, fitted log-log slope in the legend) and the lazy theory :math:`C_t/\sqrt m`,
    :math:`C_t` averaged over seeds. Right: the relative distance between the network and its
    linearisation, with its slope.

    Parameters
    ----------
    state : WidthState
        From :func:`width_explorer_state` or built from the chapter's own sweep.
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one of 7.5 x 3.6 in if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, WidthState):
        raise ValueError(f"state must be a WidthState, got {type(state).__name__}")
    widths, move, gap = state.widths, state.sweep.movement, state.sweep.gap
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.6))
    fig.clf()
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 2)
    for sc, label in (("ntk", "NTK scaling"), ("mf", "mean-field scaling")):
        s, _, _ = stats.loglog_slope(widths, move[sc].mean(0))
        plotting.errorbar_over_seeds(axes[0], widths, move[sc], label=f"{label} (slope {s:.2f})")
        s, _, _ = stats.loglog_slope(widths, gap[sc].mean(0))
        plotting.errorbar_over_seeds(axes[1], widths, gap[sc])
        axes[1].annotate(f"slope {s:.2f}", (widths[-1], gap[sc].mean(0)[-1]), fontsize=9,
                         xytext=(-50, 6), textcoords="offset points")
    c_t = np.mean(state.sweep.lazy_prediction)
    axes[0].plot(widths, c_t / np.sqrt(widths), "k--", lw=1, label=r"lazy theory $C_t/\sqrt{m}$")
    for ax, yl in zip(axes, ("relative movement of $W$", "distance to linearised model"),
                      strict=True):
        ax.set(xscale="log", yscale="log", xlabel="width $m$", ylabel=yl)
        plotting.log_ticks(ax, widths)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def width_explorer(state: WidthState | None = None):
    """The live explorer of chapter 1 ({ref}`sec-ch1-explore`): the width sweep.

    Controls: the largest width (64 to 256, or the width of ``state``) and the target training
    loss ``eps`` (0.05 to 0.2, or that of ``state``). Each redraw calls
    :func:`width_explorer_state` with two seeds and the chapter's ``d = 16``, ``n = 128``,
    ``eta0 = 0.5`` (at most about 2.5 s of CPU on one core for widths up to 256; about 6 s at
    the chapter's width 1024, offered only when ``state`` has it), then :func:`width_figure`.

    Parameters
    ----------
    state : WidthState, optional
        Drawn first (the chapter passes the sweep of its static figure, so creating the widget
        computes nothing); its settings are added to the controls. Otherwise the defaults of
        :data:`WIDTH_EXPLORER_DEFAULTS` are computed.

    Returns
    -------
    ipywidgets.VBox
        With the controls ``max_width`` and ``eps`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    dflt = WIDTH_EXPLORER_DEFAULTS
    if state is not None and not isinstance(state, WidthState):
        raise ValueError(f"state must be a WidthState, got {type(state).__name__}")
    start = dflt if state is None else {"max_width": int(state.widths[-1]), "eps": state.eps}
    controls = {
        "max_width": W.SelectionSlider(
            options=with_option(WIDTH_EXPLORER_MAX_WIDTHS, start["max_width"]),
            value=start["max_width"], description="largest m", continuous_update=False),
        "eps": W.SelectionSlider(options=with_option(WIDTH_EXPLORER_EPS, start["eps"]),
                                 value=start["eps"], description="target loss",
                                 continuous_update=False),
    }

    def draw(values, fig):
        st = width_explorer_state(values["max_width"], values["eps"], dflt["eta0"],
                                  dflt["d"], dflt["n"], dflt["seeds"], dflt["rng"])
        return width_figure(st, fig), st

    initial = None if state is None else (lambda fig: (width_figure(state, fig), state))
    return build_explorer(controls, draw, initial)
