r"""The explorer of chapter 6 ({ref}`sec-ch6-explore`): one giant step, over n/d and the step size.

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

__all__ = [
    "GIANT_STEP_DELTAS",
    "GIANT_STEP_ETA0S",
    "GIANT_STEP_DIMS",
    "GiantStepState",
    "giant_step_state",
    "giant_step_figure",
    "giant_step_explorer",
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
