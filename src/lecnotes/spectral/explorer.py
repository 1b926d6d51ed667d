r"""The explorer of chapter 4 ({ref}`sec-ch4-explorer`): sample ratio and preprocessing.

The three layers of an explorer: the *state* :func:`spectral_explorer_state`, the
*figure* :func:`spectral_explorer_figure` (the static page calls it with
:data:`SPECTRAL_EXPLORER_DEFAULTS`) and the widget :func:`spectral_explorer`.

The sample ratio :math:`\delta` and the preprocessing :math:`T` are the controls; the output
is the spectrum of :math:`D_T` (histogram, limiting bulk density, bulk edge, predicted
outlier) and the squared overlap (simulation against the exact theory).
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from lecnotes.core import preprocessing as PP
from lecnotes.core import validate as V
from lecnotes.core.linalg import weighted_gram
from lecnotes.spectral import theory as TH

__all__ = [
    "SPECTRAL_EXPLORER_DEFAULTS",
    "SPECTRAL_EXPLORER_DELTAS",
    "SPECTRAL_EXPLORER_PREPROCESSINGS",
    "SpectralExplorerState",
    "spectral_explorer_state",
    "spectral_explorer_figure",
    "spectral_explorer",
]

SPECTRAL_EXPLORER_PREPROCESSINGS = (
    "trimmed",
    "trimmed-centred",
    "mondelli-montanari",
    "luo-alghamdi-lu",
    "raw",
)
"""The choices of the preprocessing control (names of
:data:`lecnotes.core.preprocessing.PREPROCESSINGS`)."""

SPECTRAL_EXPLORER_DELTAS = (0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
"""The values of the sample-ratio control."""

SPECTRAL_EXPLORER_DEFAULTS = {"delta": 3.0, "preprocessing": "trimmed", "d": 400, "seed": 0}
"""Settings of the static figure of chapter 4."""

_CURVE_DELTAS = np.geomspace(0.3, 10.0, 45)


@dataclass(frozen=True)
class SpectralExplorerState:
    """Everything the explorer shows for one setting (chapter 4).

    Attributes
    ----------
    delta, preprocessing, d, n, seed
        The setting.
    eigenvalues : ndarray
        Spectrum of :math:`D_T` (increasing).
    rho2 : float
        Squared overlap of the top eigenvector with :math:`w_\\star` in the simulation.
    top : float
        Largest eigenvalue in the simulation.
    theory_rho2, theory_top, edge, threshold : float
        Limits from :mod:`lecnotes.spectral.theory` (``nan`` when T is unbounded above: no
        proportional theory; ``threshold`` is ``inf`` then).
    density_x, density : ndarray
        The limiting bulk density on a grid (empty when not available).
    curve_deltas, curve_rho2 : ndarray
        The theory curve :math:`\\rho^2(\\delta)` for this preprocessing.
    bounded : bool
        Whether T is bounded above (else there is no proportional threshold).
    """

    delta: float
    preprocessing: str
    d: int
    n: int
    seed: int
    eigenvalues: np.ndarray
    rho2: float
    top: float
    theory_rho2: float
    theory_top: float
    edge: float
    threshold: float
    density_x: np.ndarray
    density: np.ndarray
    curve_deltas: np.ndarray
    curve_rho2: np.ndarray
    bounded: bool


def _check(delta, preprocessing, d, seed):
    delta = V.positive_float(delta, "delta")
    if preprocessing not in SPECTRAL_EXPLORER_PREPROCESSINGS:
        raise ValueError(
            f"preprocessing must be one of {SPECTRAL_EXPLORER_PREPROCESSINGS}, "
            f"got {preprocessing!r}"
        )
    d = V.positive_int(d, "d", minimum=10)
    if d > 2000:
        raise ValueError(f"the explorer computes the full spectrum: d must be <= 2000, got {d}")
    seed = V.positive_int(seed, "seed", minimum=0)
    if preprocessing == "mondelli-montanari" and delta <= 0.5:
        raise ValueError("the Mondelli-Montanari preprocessing is defined for delta > 1/2")
    return delta, preprocessing, d, seed


@functools.lru_cache(maxsize=8)
def _data(d: int, seed: int, n_max: int):
    rng = V.generator(seed)  # follows the book's seed root
    X = rng.standard_normal((n_max, d))  # w_star = e_1 by rotation invariance
    return X, X[:, 0] ** 2


@functools.lru_cache(maxsize=64)
def _theory(preprocessing: str, delta: float):
    T = PP.get_preprocessing(preprocessing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TH.NoProportionalThresholdWarning)
        rho2, top = TH.spectral_overlap("quadratic", delta, T)
    if not math.isfinite(top):
        return math.nan, math.nan, math.nan
    return rho2, top, TH.bulk_edge("quadratic", delta, T)


@functools.lru_cache(maxsize=16)
def _curve(preprocessing: str):
    if preprocessing == "raw":
        return _CURVE_DELTAS, np.zeros_like(_CURVE_DELTAS), math.inf
    T = PP.get_preprocessing(preprocessing)
    ds = _CURVE_DELTAS[_CURVE_DELTAS > 0.5] if preprocessing == "mondelli-montanari" else (
        _CURVE_DELTAS
    )
    rho2 = np.array([TH.spectral_overlap("quadratic", x, T).rho2 for x in ds])
    return ds, rho2, TH.spectral_threshold("quadratic", T)


@functools.lru_cache(maxsize=32)
def _density(preprocessing: str, delta: float, lo: float, hi: float):
    x = np.linspace(lo, hi, 161)
    T = PP.get_preprocessing(preprocessing)
    return x, TH.bulk_density(x, "quadratic", delta, T)


def spectral_explorer_state(
    delta: float = 3.0, preprocessing: str = "trimmed", d: int = 400, seed: int = 0
) -> SpectralExplorerState:
    r"""Simulate :math:`D_T` for phase retrieval and solve the theory (chapter 4 explorer).

    One data set per ``(d, seed)`` with :math:`n_{\max}=\lceil 8d\rceil` samples is drawn and
    cached (:math:`w_\star=e_1`); a setting uses its first :math:`n=\delta d` rows, so moving
    the slider adds or removes samples instead of redrawing them.

    Parameters
    ----------
    delta : float
        Sample ratio (``> 1/2`` for ``"mondelli-montanari"``).
    preprocessing : str
        One of :data:`SPECTRAL_EXPLORER_PREPROCESSINGS`.
    d : int
        Dimension, ``10 <= d <= 2000`` (the full spectrum is computed).
    seed : int
        Seed of the data set.

    Returns
    -------
    SpectralExplorerState
    """
    delta, preprocessing, d, seed = _check(delta, preprocessing, d, seed)
    n_max = int(math.ceil(max(8.0, delta) * d))
    X, y = _data(d, seed, n_max)
    n = max(1, int(round(delta * d)))
    T = PP.get_preprocessing(preprocessing)
    T = T.at(n / d) if isinstance(T, PP.PreprocessingFamily) else T
    t = T(y[:n])
    D = weighted_gram(X[:n], t)
    ev, vec = sla.eigh(D)
    rho2 = float(vec[0, -1] ** 2)
    theory_rho2, theory_top, edge = _theory(preprocessing, float(delta))
    bounded = math.isfinite(theory_top)
    curve_d, curve_r, threshold = _curve(preprocessing)
    if bounded:
        lo = float(np.quantile(ev, 0.01))
        hi = float(max(ev[-1], theory_top, edge))
        pad = 0.05 * (hi - lo)
        dx, dens = _density(preprocessing, float(delta), round(lo - pad, 6), round(hi + pad, 6))
    else:
        dx, dens = np.array([]), np.array([])
    return SpectralExplorerState(
        float(delta), preprocessing, d, n, seed, ev, rho2, float(ev[-1]), float(theory_rho2),
        float(theory_top), float(edge), float(threshold), dx, dens, curve_d, curve_r, bounded,
    )


def spectral_explorer_figure(delta=3.0, preprocessing="trimmed", d=400, seed=0, fig=None):
    r"""Draw the chapter 4 explorer for one setting; returns ``(fig, state)``.

    Left: histogram of the spectrum of :math:`D_T` (the lowest 1% of the eigenvalues is left
    out of the window, which matters for the long negative tail of :math:`1-1/y`), the
    limiting bulk density, the predicted bulk edge (dashed) and top eigenvalue (dotted).
    Right: the theory :math:`\rho^2(\delta)` with its threshold and the simulated point.

    Parameters
    ----------
    delta, preprocessing, d, seed
        As in :func:`spectral_explorer_state`.
    fig : matplotlib Figure, optional
        Figure to draw into (cleared); a new one if omitted.

    Returns
    -------
    (matplotlib.figure.Figure, SpectralExplorerState)
    """
    import matplotlib.pyplot as plt

    st = spectral_explorer_state(delta, preprocessing, d, seed)
    if fig is None:
        fig = plt.figure(figsize=(7.5, 3.9))
    fig.clf()
    fig.set_layout_engine("constrained")    # for the legend outside the panels
    ax1, ax2 = fig.subplots(1, 2)
    ev = st.eigenvalues
    lo = float(np.quantile(ev, 0.01))
    hi = float(ev[-1])
    if st.bounded:
        hi = max(hi, st.theory_top, st.edge)
    pad = 0.05 * (hi - lo) + 1e-9
    bins = np.linspace(lo - pad, hi + pad, 60)
    ax1.hist(ev[ev >= bins[0]], bins=bins, density=False,
             weights=np.full((ev >= bins[0]).sum(), 1.0 / ev.size / np.diff(bins)[0]),
             color="#bbbbbb", label=f"eigenvalues of $D_T$ (d = {st.d}, n = {st.n})")
    if st.bounded:
        ax1.plot(st.density_x, st.density, "k-", lw=1.2, label="limiting bulk density")
        ax1.axvline(st.edge, color="#0072B2", ls="--", lw=1.2, label="bulk edge (theory)")
        if st.theory_rho2 > 0:
            ax1.axvline(st.theory_top, color="#D55E00", ls=":", lw=1.8,
                        label="outlier (theory)")
    ax1.plot([st.top], [0], marker="v", color="#D55E00", ms=9, ls="",
             label="top eigenvalue (simulation)", clip_on=False)
    ax1.set(xlabel="eigenvalue", ylabel="density",
            title=f"spectrum, $\\delta$ = {st.delta:g}")
    if st.bounded:
        ax2.plot(st.curve_deltas, st.curve_rho2, "k-", lw=1.2, label="theory")
        if math.isfinite(st.threshold):
            ax2.axvline(st.threshold, color="#0072B2", ls="--", lw=1,
                        label=f"threshold {st.threshold:.3g}")
    else:
        ax2.text(0.5, 0.6, "T unbounded above:\nno proportional threshold",
                 transform=ax2.transAxes, ha="center", fontsize=9)
    ax2.plot([st.delta], [st.rho2], "o", color="#D55E00", ms=7, label="simulation")
    ax2.set(xscale="log", xlabel=r"$\delta = n/d$", ylabel=r"$\rho^2$", ylim=(-0.02, 1.02),
            title=f"overlap, T = {st.preprocessing}")
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=3)
    return fig, st


def spectral_explorer(delta=None, preprocessing=None, d=None, seed=None):
    """The live explorer of chapter 4 (ipywidgets): sample ratio and preprocessing as controls.

    Run in a live notebook (Jupyter, Binder): ``from lecnotes import widgets;
    widgets.spectral_explorer()``. The callback redraws with :func:`spectral_explorer_figure`;
    the last state is kept in ``box.state`` (used by the tests).

    Parameters
    ----------
    delta, preprocessing, d, seed : optional
        Start values, as in :func:`spectral_explorer_state` (default
        :data:`SPECTRAL_EXPLORER_DEFAULTS`).

    Returns
    -------
    ipywidgets.VBox
        With attributes ``delta`` and ``preprocessing`` (the controls), ``output`` and ``state``.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    defaults = dict(SPECTRAL_EXPLORER_DEFAULTS)
    for key, val in (("delta", delta), ("preprocessing", preprocessing), ("d", d),
                     ("seed", seed)):
        if val is not None:
            defaults[key] = val
    _check(defaults["delta"], defaults["preprocessing"], defaults["d"], defaults["seed"])
    options = sorted(set(SPECTRAL_EXPLORER_DELTAS) | {float(defaults["delta"])})
    delta_w = W.SelectionSlider(options=options, value=float(defaults["delta"]),
                                description="delta = n/d", continuous_update=False)
    pre_w = W.Dropdown(options=list(SPECTRAL_EXPLORER_PREPROCESSINGS),
                       value=defaults["preprocessing"], description="T")
    out = W.Output()
    box = W.VBox([W.HBox([delta_w, pre_w]), out])
    box.delta, box.preprocessing, box.output, box.state = delta_w, pre_w, out, None
    fig_holder = {}

    def update(_change=None):
        delta_ = delta_w.value
        if pre_w.value == "mondelli-montanari" and delta_ <= 0.5:
            delta_ = min(x for x in options if x > 0.5)
        with out:
            out.clear_output(wait=True)
            with plt.ioff():
                fig, state = spectral_explorer_figure(
                    delta_, pre_w.value, defaults["d"], defaults["seed"],
                    fig=fig_holder.get("fig"),
                )
            plt.close(fig)  # out of pyplot's registry (see lecnotes.book.explorer)
            fig_holder["fig"] = fig
            box.state = state
            from IPython.display import display

            display(fig)

    delta_w.observe(update, names="value")
    pre_w.observe(update, names="value")
    update()
    return box


