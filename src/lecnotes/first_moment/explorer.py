r"""The explorer of chapter 3 ({ref}`sec-ch3-explore`): the sample ratio and the preprocessing.

The three layers of an explorer for the first-moment estimator
:math:`v_T=\frac1n\sum_iT(y_i)x_i`: the state :func:`first_moment_explorer_state` (a cached
call of :func:`lecnotes.core.first_moment.reduced_first_moment_overlaps`, the exact reduction of
{prf:ref}`prop-ch3-reduction`), the panel :func:`first_moment_panel` (each panel of the
chapter's static figure is drawn by it), the figure :func:`first_moment_figure` and the widget
:func:`first_moment_explorer`. The controls are the link and the preprocessing compared with
the optimal one; the figure shows :math:`\rho^2` against :math:`\delta = n/d` at three
dimensions with the limit {eq}`eq-ch3-overlap`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer
from lecnotes.core import validate as V
from lecnotes.first_moment.experiments import reduced_first_moment_overlaps
from lecnotes.first_moment.theory import first_moment_overlap, optimal_preprocessing

__all__ = [
    "FIRST_MOMENT_LINKS",
    "FIRST_MOMENT_PREPROCESSINGS",
    "FirstMomentState",
    "first_moment_explorer_state",
    "first_moment_panel",
    "first_moment_figure",
    "first_moment_explorer",
    "he3_figure",
]

FIRST_MOMENT_LINKS = {"relu": 0.0, "cubic": 0.0, "sign": 0.5, "he3": 0.0}
"""The links of the link control, with their label noise (the chapter's)."""
FIRST_MOMENT_PREPROCESSINGS = ("raw", "optimal", "clipped", "sign")
"""Names of the preprocessing control: :math:`T(y)=y`, :math:`\\mathbb E[G\\mid Y=y]`,
:math:`y` clipped to :math:`[-1, 1]`, :math:`\\operatorname{sign}(y)`."""
_TITLES = {"relu": "ReLU", "cubic": "$u^3$", "sign": r"sign, $\tau = 1/2$",
           "he3": r"$\mathrm{He}_3$"}
_DIMS = (100, 400, 1600)
_DELTAS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def _identity(y):
    return y


def _clipped(y):
    return np.clip(y, -1.0, 1.0)


def _preprocessing(name: str, link: str, noise: float):
    """The callable of a preprocessing name; ``None`` for the raw labels, as in the chapter."""
    if name == "optimal":
        return optimal_preprocessing(link, noise=noise)
    return {"raw": None, "clipped": _clipped, "sign": np.sign}[name]


def _theory_T(name: str):
    """The ``T`` of :func:`first_moment_overlap` for a name (``None``: the optimal)."""
    return {"raw": _identity, "optimal": None, "clipped": _clipped, "sign": np.sign}[name]


class FirstMomentState(NamedTuple):
    """Simulated first-moment overlaps for one link ({prf:ref}`prop-ch3-reduction`)."""

    link: str
    """Name of the link (a key of :data:`FIRST_MOMENT_LINKS`)."""
    noise: float
    """Label-noise standard deviation."""
    dims: np.ndarray
    """Dimensions."""
    deltas: np.ndarray
    """Sample ratios, increasing."""
    sims: dict
    """Preprocessing name -> :math:`\\rho^2` of shape (replicates, dims, deltas)."""


def _check_link(link):
    if link not in FIRST_MOMENT_LINKS:
        raise ValueError(f"link must be one of {tuple(FIRST_MOMENT_LINKS)}, got {link!r}")
    return link


@functools.lru_cache(maxsize=16)
def _state(link, replicates, rng):
    noise = FIRST_MOMENT_LINKS[link]
    pre = {name: _preprocessing(name, link, noise) for name in FIRST_MOMENT_PREPROCESSINGS}
    sims = reduced_first_moment_overlaps(link, list(_DIMS), np.array(_DELTAS), pre,
                                         replicates=replicates, noise=noise, rng=rng)
    return FirstMomentState(link, noise, np.array(_DIMS), np.array(_DELTAS), sims)


def first_moment_explorer_state(link: str = "relu", replicates: int = 200,
                                rng: int = 0) -> FirstMomentState:
    r"""Overlaps of the four preprocessings for one link at :math:`d = 100, 400, 1600` (cached).

    One call of :func:`lecnotes.core.first_moment.reduced_first_moment_overlaps` on the chapter's
    grid :math:`\delta = 1/4,\dots,8`, all preprocessings on the same labels; the cell
    :math:`(d, n)` draws from ``stream(rng, d, n)``, so with ``rng = 0`` the raw and optimal
    overlaps are the chapter's. Cost with 200 replicates: about half a second of CPU, 3 s for
    :math:`\mathrm{He}_3` (its optimal preprocessing solves a cubic per label).

    Parameters
    ----------
    link : str
        A key of :data:`FIRST_MOMENT_LINKS`.
    replicates : int
        Replicates per :math:`(d, \delta)`.
    rng : int
        Seed of the reduction.

    Returns
    -------
    FirstMomentState
    """
    return _state(_check_link(link), V.positive_int(replicates, "replicates", minimum=2),
                  V.positive_int(rng, "rng", minimum=0))


def first_moment_panel(ax, state: FirstMomentState, names=("raw", "optimal")) -> None:
    r"""Draw :math:`\rho^2(\delta)` of some preprocessings for one link into ``ax``.

    For each name, in the colours of :data:`lecnotes.book.plotting.PALETTE` by its place in
    :data:`FIRST_MOMENT_PREPROCESSINGS`: the limit {eq}`eq-ch3-overlap`
    (:func:`lecnotes.first_moment.theory.first_moment_overlap`) as a line, and the simulations
    at each dimension (mean and standard error over replicates, darker for larger ``d``).

    Parameters
    ----------
    ax : matplotlib Axes
    state : FirstMomentState
    names : sequence of str
        Preprocessings to draw, keys of ``state.sims``.
    """
    if not isinstance(state, FirstMomentState):
        raise ValueError(f"state must be a FirstMomentState, got {type(state).__name__}")
    missing = [n for n in names if n not in state.sims]
    if missing:
        raise ValueError(f"the state has no simulation of {missing}")
    grid = np.geomspace(state.deltas[0], state.deltas[-1], 80)
    if not 1 <= len(state.dims) <= 3:
        raise ValueError(f"the panel draws one to three dimensions, got {len(state.dims)}")
    shades = (0.35, 0.65, 1.0)[-len(state.dims):]
    for name in names:
        k = FIRST_MOMENT_PREPROCESSINGS.index(name)
        color, ls = plotting.PALETTE[k], ("-", "--", "-.", ":")[k]
        ax.plot(grid, first_moment_overlap(state.link, grid, T=_theory_T(name),
                                           noise=state.noise),
                ls, color=color, label=f"{name} (theory)")
        for i, d in enumerate(state.dims):
            plotting.errorbar_over_seeds(
                ax, state.deltas, state.sims[name][:, i], color=color, alpha=shades[i], ls="",
                ms=4, label=f"{name}, d = {d}" if i == len(state.dims) - 1 else None)
    ax.set(xscale="log", xlabel=r"$\delta = n/d$", title=_TITLES[state.link])
    plotting.log_ticks(ax, state.deltas)


def first_moment_figure(state: FirstMomentState, preprocessing: str = "raw", fig=None):
    r"""The explorer's figure: one link, one preprocessing against the optimal one.

    Parameters
    ----------
    state : FirstMomentState
    preprocessing : str
        One of :data:`FIRST_MOMENT_PREPROCESSINGS`, drawn with the optimal one
        ({prf:ref}`thm-optimal-preprocessing`), the largest overlap any preprocessing reaches.
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one of 6.4 x 4.2 in if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if preprocessing not in FIRST_MOMENT_PREPROCESSINGS:
        raise ValueError(f"preprocessing must be one of {FIRST_MOMENT_PREPROCESSINGS}, "
                         f"got {preprocessing!r}")
    if fig is None:
        fig = plt.figure(figsize=(6.4, 4.2))
    fig.clf()
    fig.set_layout_engine("constrained")
    ax = fig.subplots()
    names = ("optimal",) if preprocessing == "optimal" else (preprocessing, "optimal")
    first_moment_panel(ax, state, names)
    ax.set(ylabel=r"$\rho^2$", ylim=(-0.02, 1.02))
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def first_moment_explorer(state: FirstMomentState | None = None):
    """The live explorer of chapter 3 ({ref}`sec-ch3-explore`): link and preprocessing.

    Controls: the link (ReLU, :math:`u^3`, noisy sign, :math:`\\mathrm{He}_3`) and the
    preprocessing drawn against the optimal one (raw, clipped to :math:`[-1, 1]`, sign). A new
    link calls :func:`first_moment_explorer_state` (200 replicates: half a second of CPU on one
    core, 3 s for :math:`\\mathrm{He}_3`); a new preprocessing only redraws. Both go through
    :func:`first_moment_figure`.

    Parameters
    ----------
    state : FirstMomentState, optional
        Drawn first with the raw labels (the chapter passes the simulations of its static
        figure); a preprocessing it lacks is computed on first use.

    Returns
    -------
    ipywidgets.VBox
        With the controls ``link`` and ``preprocessing`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, FirstMomentState):
        raise ValueError(f"state must be a FirstMomentState, got {type(state).__name__}")
    link0 = "relu" if state is None else _check_link(state.link)
    controls = {
        "link": W.Dropdown(options=list(FIRST_MOMENT_LINKS), value=link0, description="link"),
        "preprocessing": W.Dropdown(options=list(FIRST_MOMENT_PREPROCESSINGS), value="raw",
                                    description="T"),
    }

    def draw(values, fig):
        st = state
        if st is None or st.link != values["link"] or values["preprocessing"] not in st.sims:
            st = first_moment_explorer_state(values["link"])
        return first_moment_figure(st, values["preprocessing"], fig), st

    initial = None if state is None else (lambda fig: (first_moment_figure(state, "raw", fig),
                                                       state))
    return build_explorer(controls, draw, initial)


def he3_figure(deltas, sims, dims, preprocessings, grid, shades=(0.65, 1.0)):
    r"""The He_3 link: raw, optimal and clipped labels against their limits (chapter 3).

    The figure of {prf:ref}`thm-first-moment-overlap` for :math:`\varphi=\mathrm{He}_3`: the
    limit {eq}`eq-ch3-overlap` of every preprocessing but the raw labels (whose limit is 0),
    the simulated :math:`\rho^2` over replicates at each dimension, and the noise floor
    :math:`7/(d+6)` of the raw labels (dotted).

    Parameters
    ----------
    deltas : array_like
        The simulated sample ratios.
    sims : dict
        ``{name: array (replicates, len(dims), len(deltas))}`` from
        :func:`lecnotes.first_moment.experiments.reduced_first_moment_overlaps`.
    dims : sequence of int
        The dimensions of ``sims``.
    preprocessings : dict
        ``{name: T}``, the same names as ``sims``; ``None`` (raw labels, drawn without a
        limit curve) or a callable, or the name ``"optimal"`` for the optimal one.
    grid : array_like
        The sample ratios of the limit curves.
    shades : sequence of float
        Opacity of the points of each dimension.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sims, dict) or set(sims) != set(preprocessings):
        raise ValueError("sims and preprocessings must be dicts with the same names")
    if len(shades) != len(dims):
        raise ValueError(f"shades must have one opacity per dimension ({len(dims)})")
    fig, ax = plt.subplots(figsize=(7.0, 4.6), layout="constrained")
    for name, color in zip(preprocessings, plotting.PALETTE, strict=False):
        if name != "raw":
            T = None if name == "optimal" else preprocessings[name]
            ax.plot(grid, first_moment_overlap("he3", grid, T=T), color=color,
                    label=f"{name} (theory)")
        for i, d in enumerate(dims):
            plotting.errorbar_over_seeds(ax, deltas, sims[name][:, i], color=color, ls="",
                                         alpha=shades[i], label=f"{name}, d = {d}")
    for d in dims:
        ax.axhline(7 / (d + 6), color=plotting.PALETTE[0], ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel=r"$\delta = n/d$", ylabel=r"$\rho^2$",
           title=r"$\varphi = \mathrm{He}_3$")
    fig.legend(loc="outside lower center", ncol=3)
    return fig
