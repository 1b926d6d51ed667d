r"""Figures and the explorer of chapter 11 ({ref}`sec-ch11-explore`).

:func:`ridge_figure` draws the ridge errors of a mixture and of its matched Gaussian against
:math:`d` with the limits of {prf:ref}`thm-ch11-lowrank` / {prf:ref}`thm-ch11-scales`;
:func:`gap_state` and :func:`gap_figure` draw the state evolution {eq}`eq-ch11-se` of the
sparse k-cluster mixture from an uninformed and an informed start against :math:`\lambda`,
with AMP points, :math:`\lambda_{\rm alg}` and :math:`\lambda_{\rm it}`; :func:`gap_explorer`
is the widget (state evolution only: a redraw takes a few seconds); :func:`sparse_figure`
draws diagonal thresholding, PCA and AMP at small density ({prf:ref}`alg-ch11-dt`);
:func:`feature_step_figure` draws one giant step on mixture inputs ({prf:ref}`prop-ch11-gs`);
:func:`logistic_figure` draws logistic regression against the alignment and against :math:`d`
({prf:ref}`prop-ch11-logistic`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.book import plotting
from lecnotes.book.explorer import build_explorer
from lecnotes.core import validate as V
from lecnotes.mixtures import amp as A
from lecnotes.mixtures import feature_step as FS
from lecnotes.mixtures import information as IN
from lecnotes.mixtures import logistic as LG
from lecnotes.mixtures import thresholds as TH
from lecnotes.mixtures.experiments import AMPSweep, RidgeSweep
from lecnotes.mixtures.sparse import SparseSweep

__all__ = ["ridge_figure", "ridge_table", "logistic_figure", "GapState", "gap_state",
           "gap_figure", "gap_explorer", "sparse_figure", "feature_step_figure"]


def ridge_figure(panels, fig=None):
    r"""Ridge errors against :math:`d`, one panel per mixture (mean and standard error over
    seeds), mixture and matched Gaussian, with their limits ({prf:ref}`thm-ch11-lowrank`).

    Parameters
    ----------
    panels : list of (title, RidgeSweep, RidgeSweep, float, float, float)
        Title, sweep of the mixture, sweep of its matched Gaussian, the ridge shown, and the
        limits of the test error of the mixture and of the Gaussian.
    fig : matplotlib.figure.Figure, optional
        Drawn into (cleared).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not panels:
        raise ValueError("panels must hold at least one panel")
    if fig is None:
        fig = plt.figure(figsize=(7.2, 3.2), layout="constrained")
    fig.clear()
    axes = fig.subplots(1, len(panels), sharey=False)
    axes = np.atleast_1d(axes)
    pal = plotting.PALETTE
    for ax, (title, mix, gau, lam, th_mix, th_gau) in zip(axes, panels, strict=True):
        for sw in (mix, gau):
            if not isinstance(sw, RidgeSweep):
                raise ValueError("panels need RidgeSweep results from ridge_sweep()")
        d = mix.dims
        plotting.errorbar_over_seeds(ax, d, mix.test[lam], color=pal[0], label="mixture")
        plotting.errorbar_over_seeds(ax, d * 1.04, gau.test[lam], color=pal[1],
                                     marker="s", label="matched Gaussian")
        ax.axhline(th_mix, color=pal[0], ls="-", lw=1, label="limit, mixture")
        ax.axhline(th_gau, color=pal[1], ls="--", lw=1, label="limit, Gaussian")
        ax.set(xscale="log", xlabel="$d$", title=title)
        plotting.log_ticks(ax, d)
    axes[0].set_ylabel("test error")
    plotting.shared_legend(fig, ncol=4)
    return fig


def logistic_figure(curve, points, fig=None):
    r"""Logistic regression on the means mixture ({prf:ref}`prop-ch11-logistic`): left, the
    limiting test classification error against the angle :math:`\theta` of the means with
    :math:`\wstar`, mixture and matched Gaussian, with the simulations at the largest size;
    right, the simulations against :math:`d` at each simulated angle, with their limits (mean
    and standard error over seeds).

    Parameters
    ----------
    curve : AlignmentCurve
        From :func:`lecnotes.mixtures.logistic.alignment_curve`; it must hold every angle of
        ``points``.
    points : list of (float, LogisticSweep, LogisticSweep)
        An angle, the sweep of the mixture and that of its matched Gaussian there.
    fig : matplotlib.figure.Figure, optional
        Drawn into (cleared).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(curve, LG.AlignmentCurve):
        raise ValueError("curve must be an AlignmentCurve from logistic.alignment_curve()")
    if not points:
        raise ValueError("points must hold at least one simulated angle")
    where = []
    for th, mix, gau in points:
        if not (isinstance(mix, LG.LogisticSweep) and isinstance(gau, LG.LogisticSweep)):
            raise ValueError("points need LogisticSweep results from logistic_sweep()")
        hit = np.flatnonzero(np.isclose(curve.thetas, th, atol=1e-9))
        if hit.size == 0:
            raise ValueError(f"the angle {th} of points is not in curve.thetas")
        where.append(int(hit[0]))
    if fig is None:
        fig = plt.figure(figsize=(7.2, 3.4), layout="constrained")
    fig.clear()
    left, right = fig.subplots(1, 2)
    pal, deg = plotting.PALETTE, 180 / np.pi
    left.plot(curve.thetas * deg, curve.mixture, color=pal[0], lw=1, label="limit, mixture")
    left.plot(curve.thetas * deg, curve.gaussian, color=pal[1], lw=1, ls="--",
              label="limit, Gaussian")
    styles = ("-", ":")
    for i, ((th, mix, gau), j) in enumerate(zip(points, where, strict=True)):
        d = mix.dims
        for sw, col, mk, sh, name in ((mix, pal[0], "o", 1.0, "mixture"),
                                      (gau, pal[1], "s", 1.04, "matched Gaussian")):
            left_pt = sw.test[:, -1:]
            plotting.errorbar_over_seeds(left, [th * deg], left_pt, color=col, marker=mk,
                                         ls="none", mfc="white" if i else col)
            plotting.errorbar_over_seeds(right, d * sh, sw.test, color=col, marker=mk,
                                         ls="none", mfc="white" if i else col,
                                         label=f"{name}, $\\theta$ = {th * deg:.0f}°")
        right.axhline(curve.mixture[j], color=pal[0], lw=1, ls=styles[i % 2])
        right.axhline(curve.gaussian[j], color=pal[1], lw=1, ls=("--", "-.")[i % 2])
    left.set(xlabel=r"angle $\theta$ of the means with $w_\star$ (degrees)",
             ylabel="test classification error", xticks=[0, 30, 60, 90])
    right.set(xscale="log", xlabel="$d$")
    plotting.log_ticks(right, points[0][1].dims)
    plotting.shared_legend(fig, ncol=3)
    return fig


class GapState(NamedTuple):
    """State-evolution curves of the sparse k-cluster mixture ({eq}`eq-ch11-se`)."""

    k: int
    rho: float
    alpha: float
    lams: np.ndarray
    uninformed: np.ndarray
    """Fixed-point overlap from the uninformed start, on ``lams``."""
    informed: np.ndarray
    """Fixed-point overlap from the informed start, on ``lams``."""
    lam_alg: float
    lam_it: float


def gap_state(k=3, rho=0.05, alpha=2.0, lams=None, iterations=60, n_mc=1000,
              lam_it=None) -> GapState:
    r"""State evolution {eq}`eq-ch11-se` from both starts on a grid of :math:`\lambda`, the
    threshold :math:`\lambda_{\rm alg}` ({prf:ref}`prop-ch11-lambda-alg`) and, unless given,
    :math:`\lambda_{\rm it}` ({prf:ref}`def-ch11-lambda-it`).

    Parameters
    ----------
    k : int
        Clusters.
    rho : float
        Density of the means.
    alpha : float
        Samples per dimension.
    lams : sequence of float, optional
        Grid (default: 0.3 to 1.4 times lambda_alg).
    iterations : int
        State-evolution iterations.
    n_mc : int
        Monte-Carlo draws per support pattern.
    lam_it : float, optional
        A precomputed information-theoretic threshold.

    Returns
    -------
    GapState
    """
    la = A.lambda_alg(k, alpha)
    lams = la * np.linspace(0.3, 1.4, 12) if lams is None else np.atleast_1d(lams)
    lams = np.array([V.positive_float(x, "lams") for x in lams])
    un = [A.state_evolution(k, rho, x, alpha, iterations, 1e-3, n_mc).mv[-1] for x in lams]
    inf = [A.state_evolution(k, rho, x, alpha, iterations, np.inf, n_mc).mv[-1] for x in lams]
    if lam_it is None:
        grid = [x for x, m in zip(lams, inf, strict=True) if m > 1e-3]
        lam_it = IN.it_threshold(k, rho, alpha, 0.2 * la, max(grid[-1], 1.2 * la), n_mc=n_mc,
                                 tol=1e-3).lam_it if grid else float("nan")
    return GapState(int(k), float(rho), float(alpha), lams, np.array(un), np.array(inf), la,
                    float(lam_it))


def gap_figure(state, sweep=None, fig=None):
    r"""Overlap of the means against :math:`\lambda`: state evolution from the uninformed and
    the informed start (lines), AMP at the largest size (points, if ``sweep``), and the two
    thresholds ({prf:ref}`prop-ch11-lambda-alg`, {prf:ref}`def-ch11-lambda-it`).

    Parameters
    ----------
    state : GapState
        From :func:`gap_state`.
    sweep : AMPSweep, optional
        AMP runs to draw (the largest size).
    fig : matplotlib.figure.Figure, optional
        Drawn into (cleared).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(state, GapState):
        raise ValueError("state must be a GapState from gap_state()")
    if sweep is not None and not isinstance(sweep, AMPSweep):
        raise ValueError("sweep must be an AMPSweep from amp_sweep()")
    if fig is None:
        fig = plt.figure(figsize=(5.6, 3.6), layout="constrained")
    fig.clear()
    ax = fig.subplots()
    pal = plotting.PALETTE
    ax.plot(state.lams, state.informed, color=pal[1], label="SE, informed start")
    ax.plot(state.lams, state.uninformed, color=pal[0], label="SE, uninformed start")
    if sweep is not None:
        plotting.errorbar_over_seeds(ax, sweep.lams, sweep.uninformed[:, -1], color=pal[0],
                                     ls="none", label=f"AMP, d = {sweep.dims[-1]}")
        plotting.errorbar_over_seeds(ax, sweep.lams, sweep.informed[:, -1], color=pal[1],
                                     ls="none", marker="s")
    ax.axvline(state.lam_alg, color="k", ls=":", label=r"$\lambda_{\rm alg}=k/\sqrt{\alpha}$")
    if np.isfinite(state.lam_it):
        ax.axvline(state.lam_it, color="#888888", ls="--", label=r"$\lambda_{\rm it}$")
        ax.axvspan(state.lam_it, state.lam_alg, color="#dddddd", alpha=0.6, lw=0)
    ax.set(xlabel=r"$\lambda$", ylabel="overlap with the means",
           title=f"k = {state.k}, rho = {state.rho:g}, alpha = {state.alpha:g}")
    plotting.shared_legend(fig, ncol=2)
    return fig


def gap_explorer(state=None):
    r"""The live explorer of chapter 11 ({ref}`sec-ch11-explore`): the density :math:`\rho`
    and the number of clusters :math:`k`; each redraw calls :func:`gap_state` and
    :func:`gap_figure`.

    Parameters
    ----------
    state : GapState, optional
        Drawn first (the chapter passes the state of its static figure).

    Returns
    -------
    ipywidgets.VBox
        With the controls ``rho``, ``k`` and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W

    if state is not None and not isinstance(state, GapState):
        raise ValueError("state must be a GapState from gap_state()")
    r0, k0, a0 = (0.05, 3, 2.0) if state is None else (state.rho, state.k, state.alpha)
    controls = {
        "rho": W.SelectionSlider(options=sorted({0.02, 0.05, 0.1, 0.2, 0.5, r0}), value=r0,
                                 description="rho", continuous_update=False),
        "k": W.SelectionSlider(options=sorted({2, 3, 4, k0}), value=k0, description="k",
                               continuous_update=False),
    }

    def draw(values, fig):
        st = gap_state(values["k"], values["rho"], a0, iterations=40, n_mc=400)
        return gap_figure(st, fig=fig), st

    initial = None if state is None else (lambda fig: (gap_figure(state, fig=fig), state))
    return build_explorer(controls, draw, initial)


def ridge_table(keys, theory, runs, lam):
    r"""The table of limits and simulations of the ridge section ({prf:ref}`thm-ch11-lowrank`,
    {prf:ref}`thm-ch11-scales`).

    Parameters
    ----------
    keys : sequence of str
        The mixtures' names.
    theory : dict
        ``(key, gaussian, lam) -> RidgeErrors``.
    runs : dict
        ``(key, gaussian) -> RidgeSweep``.
    lam : float
        The ridge shown.

    Returns
    -------
    lecnotes.book.plotting.Table
    """
    if not keys:
        raise ValueError("keys must name at least one mixture")
    rows = []
    for key in keys:
        t, g, sw = theory[key, False, lam], theory[key, True, lam], runs[key, False]
        rows.append([key, f"{t.test:.4f}", f"{g.test:.4f}", f"{sw.test[lam][:, -1].mean():.4f}",
                     f"{t.train:.4f}", f"{g.train:.4f}", f"{sw.train[lam][:, -1].mean():.4f}"])
    d = runs[keys[0], False].dims[-1]
    head = ["mixture", "test: limit", "Gaussian limit", f"simulated, d = {d}", "train: limit",
            "Gaussian limit", f"simulated, d = {d}"]
    return plotting.Table(head, rows)


def sparse_figure(sweep, k, alpha, amp_limit=None, lam_it=None, fig=None):
    r"""Squared cosine with the span of the means against :math:`\lambda/\lambda_{\rm alg}`:
    diagonal thresholding ({prf:ref}`alg-ch11-dt`), PCA and AMP (mean and standard error over
    seeds; filled markers at the smaller size, open at the larger), the limit of PCA
    ({prf:ref}`prop-ch11-pca`), the limit of AMP from an uninformed start (the state
    evolution {eq}`eq-ch11-se`), and the thresholds :math:`\lambda_{\rm alg}`
    ({prf:ref}`prop-ch11-lambda-alg`) and :math:`\lambda_{\rm it}`
    ({prf:ref}`def-ch11-lambda-it`).

    Parameters
    ----------
    sweep : SparseSweep
        From :func:`lecnotes.mixtures.sparse.sparse_sweep`.
    k : int
        Clusters.
    alpha : float
        Samples per dimension.
    amp_limit : (ndarray, ndarray) or list of such pairs, optional
        A grid of :math:`\lambda` and AMP's limiting overlap there; a list holds one pair per
        size, for a density that changes with the size (``sweep.rhos``).
    lam_it : float or sequence of float, optional
        The information-theoretic threshold (one per size, as ``amp_limit``).
    fig : matplotlib.figure.Figure, optional
        Drawn into (cleared).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep, SparseSweep):
        raise ValueError("sweep must be a SparseSweep from sparse.sparse_sweep()")
    k, alpha = V.positive_int(k, "k", minimum=2), V.positive_float(alpha, "alpha")
    la = A.lambda_alg(k, alpha)
    if fig is None:
        fig = plt.figure(figsize=(5.6, 4.8), layout="constrained")
    fig.clear()
    ax = fig.subplots()
    pal = plotting.PALETTE
    x = sweep.lams / la
    methods = (("dt", "diag. thresholding", pal[1], "o"), ("pca", "PCA", pal[2], "s"),
               ("amp", "AMP", pal[0], "^"))
    for j, d in enumerate(sweep.dims):
        for key, name, col, mk in methods:
            plotting.errorbar_over_seeds(ax, x * (1 + 0.01 * (2 * j - 1)),
                                         getattr(sweep, key)[:, j], color=col, ls="none",
                                         marker=mk, mfc=col if j == 0 else "white",
                                         label=f"{name}, d = {d}")
    g = np.linspace(0.5, max(1.05 * x.max(), 1.1), 200)
    ax.plot(g, [TH.pca_overlap(t * la, k, alpha) for t in g], color=pal[2], lw=1,
            label="PCA limit")
    per_size = len(set(np.round(sweep.rhos, 12))) > 1
    styles = ("-", (0, (4, 2)))
    if amp_limit is not None:
        pairs = amp_limit if isinstance(amp_limit, list) else [amp_limit]
        for j, pair in enumerate(pairs):
            lg, mg = (np.asarray(a, dtype=float) for a in pair)
            tag = f", $\\rho$ = {sweep.rhos[j]:.3g}" if per_size else " (state evolution)"
            ax.plot(lg / la, mg, color=pal[0], lw=1, ls=styles[j % 2],
                    label=f"AMP limit{tag}")
    ax.axvline(1.0, color="k", ls=":", label=r"$\lambda_{\rm alg}$")
    if lam_it is not None:
        for j, li in enumerate(np.atleast_1d(np.asarray(lam_it, dtype=float))):
            if np.isfinite(li):
                tag = f", $\\rho$ = {sweep.rhos[j]:.3g}" if per_size else ""
                ax.axvline(li / la, color="#888888", ls=("--", "-.")[j % 2],
                           label=r"$\lambda_{\rm it}$" + tag)
    ax.set(xlabel=r"$\lambda/\lambda_{\rm alg}$", ylabel="squared cosine with the means",
           ylim=(-0.02, 1.02))
    plotting.shared_legend(fig, ncol=3 if len(sweep.dims) == 1 and not per_size else 2)
    return fig


def feature_step_figure(sweep, m, eta_bar, delta, fig=None):
    r"""Mean overlap of the neurons with :math:`e_1` after one giant step against :math:`d`
    for the three laws of {prf:ref}`def-ch11-gs` (mean and standard error over seeds), with
    the finite-:math:`d` prediction of {eq}`eq-ch11-gs-overlap` (lines) and the mixture's
    limit (dashed).

    Parameters
    ----------
    sweep : StepSweep
        From :func:`lecnotes.mixtures.feature_step.step_sweep`.
    m, eta_bar, delta : float
        The parameters of the sweep (norm of the means, :math:`\eta_0\sqrt\delta`, n/d).
    fig : matplotlib.figure.Figure, optional
        Drawn into (cleared).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(sweep, FS.StepSweep):
        raise ValueError("sweep must be a StepSweep from feature_step.step_sweep()")
    if fig is None:
        fig = plt.figure(figsize=(5.6, 3.6), layout="constrained")
    fig.clear()
    ax = fig.subplots()
    pal = plotting.PALETTE
    d = sweep.dims
    grid = np.unique(np.geomspace(d[0] / 1.3, d[-1] * 1.3, 40).round().astype(int))
    names = {"mixture": "mixture", "gaussian": "matched Gaussian",
             "independent": "mixture, independent label"}
    for i, (law, marker) in enumerate(zip(FS.LAWS, "osD", strict=True)):
        plotting.errorbar_over_seeds(ax, d * (1 + 0.03 * i), sweep.overlaps[law], color=pal[i],
                                     marker=marker, ls="none", label=names[law])
        ax.plot(grid, [FS.step_overlap(m, eta_bar, delta, law, d=int(x)) for x in grid],
                color=pal[i], lw=1)
    ax.axhline(FS.step_overlap(m, eta_bar, delta, "mixture"), color=pal[0], ls="--", lw=1,
               label=r"limit $d\to\infty$, mixture")
    ax.plot([], [], color="0.4", lw=1, label="finite-$d$ prediction")
    ax.set(xscale="log", xlabel="$d$", ylabel=r"mean $|\cos(w_i^1, e_1)|$", ylim=(0, 1))
    plotting.log_ticks(ax, d)
    plotting.shared_legend(fig, ncol=2)
    return fig
