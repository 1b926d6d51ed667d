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
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

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
