"""Tests of the chapters' explorers (lecnotes.<chapter>.explorer), without a browser."""

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.book import explorer as base  # noqa: E402
from lecnotes.core import preprocessing as PP
from lecnotes.first_moment import experiments as FM  # noqa: E402
from lecnotes.first_moment import explorer as WFM  # noqa: E402
from lecnotes.first_moment import theory as FMT  # noqa: E402
from lecnotes.giant_steps import experiments as GS  # noqa: E402
from lecnotes.giant_steps import explorer as WGS  # noqa: E402
from lecnotes.giant_steps import theory as GST  # noqa: E402
from lecnotes.mean_field_vs_ntk import experiments as MFN  # noqa: E402
from lecnotes.mean_field_vs_ntk import explorer as WMF  # noqa: E402
from lecnotes.partial_trace import experiments as PTR  # noqa: E402
from lecnotes.partial_trace import explorer as WPT  # noqa: E402
from lecnotes.spectral import experiments as S  # noqa: E402
from lecnotes.spectral import explorer as WSP  # noqa: E402
from lecnotes.spectral import theory as TH  # noqa: E402
from lecnotes.two_steps import explorer as WTS  # noqa: E402
from lecnotes.two_steps import phase as TSP  # noqa: E402
from lecnotes.two_steps import theory as TST  # noqa: E402

CHAPTERS = (1, 3, 4, 5, 6, 7)  # the chapters whose code these tests cover: make chapter CH=N


def test_state_is_consistent_with_the_library():
    st = WSP.spectral_explorer_state(2.0, "trimmed", d=120, seed=1)
    assert st.n == 240 and st.d == 120 and st.bounded
    assert st.top == pytest.approx(st.eigenvalues[-1])
    assert np.all(np.diff(st.eigenvalues) >= -1e-12)
    rho2, top = TH.spectral_overlap("quadratic", 2.0, "trimmed")
    assert st.theory_rho2 == pytest.approx(rho2) and st.theory_top == pytest.approx(top)
    assert st.threshold == pytest.approx(TH.spectral_threshold("quadratic", "trimmed"))
    # the simulated pair is the estimator's on the same (nested) data
    rng = np.random.default_rng(1)
    X = rng.standard_normal((int(8 * 120), 120))
    v, lam, _ = S.spectral_estimator(X[:240], X[:240, 0] ** 2, "trimmed")
    assert st.top == pytest.approx(lam) and st.rho2 == pytest.approx(v[0] ** 2)
    assert st.density.shape == st.density_x.shape and st.density.max() > 0


def test_state_for_unbounded_and_family_preprocessings():
    raw = WSP.spectral_explorer_state(2.0, "raw", d=60)
    assert not raw.bounded and math.isnan(raw.theory_rho2) and raw.threshold == math.inf
    assert raw.density.size == 0
    mm = WSP.spectral_explorer_state(2.0, "mondelli-montanari", d=60)
    assert mm.theory_rho2 == pytest.approx(
        TH.spectral_overlap("quadratic", 2.0, PP.mondelli_montanari(2.0)).rho2)


def test_figure_has_spectrum_and_overlap_panels():
    fig, st = WSP.spectral_explorer_figure(3.0, "trimmed-centred", d=80)
    ax1, ax2 = fig.axes[:2]
    assert "spectrum" in ax1.get_title() and "overlap" in ax2.get_title()
    assert ax1.get_xlabel() and ax1.get_ylabel() and ax2.get_xlabel() and ax2.get_ylabel()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]   # one legend, outside
    assert any("bulk density" in s for s in labels) and ax1.get_legend() is None
    fig2, _ = WSP.spectral_explorer_figure(3.0, "raw", d=80, fig=fig)
    assert fig2 is fig
    plt.close(fig)


def test_widget_callback_updates_the_state():
    box = WSP.spectral_explorer(d=60)
    assert box.state.delta == WSP.SPECTRAL_EXPLORER_DEFAULTS["delta"]
    box.delta.value = 6.0
    assert box.state.delta == 6.0 and box.state.n == 360
    box.preprocessing.value = "luo-alghamdi-lu"
    assert box.state.preprocessing == "luo-alghamdi-lu"
    box.delta.value = 0.6
    box.preprocessing.value = "mondelli-montanari"
    assert box.state.delta == 0.6
    # Mondelli-Montanari is undefined below 1/2: from a start at delta = 0.4 (added to the
    # slider's options) the callback moves to the smallest allowed delta, 0.6
    low = WSP.spectral_explorer(delta=0.4, d=60)
    assert low.state.delta == 0.4
    low.preprocessing.value = "mondelli-montanari"
    assert low.state.delta == 0.6 and low.state.preprocessing == "mondelli-montanari"
    plt.close("all")


@pytest.mark.parametrize(
    "call",
    [
        lambda: WSP.spectral_explorer_state(0.0, "trimmed"),
        lambda: WSP.spectral_explorer_state(2.0, "nope"),
        lambda: WSP.spectral_explorer_state(2.0, "trimmed", d=5),
        lambda: WSP.spectral_explorer_state(2.0, "trimmed", d=5000),
        lambda: WSP.spectral_explorer_state(0.4, "mondelli-montanari"),
        lambda: WSP.spectral_explorer(preprocessing="nope"),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def _counting(monkeypatch, module, name):
    """Wrap ``module.name`` (an explorer's figure function) to count its calls."""
    calls = []
    original = getattr(module, name)

    def wrapped(*args, **kw):
        calls.append(args)
        return original(*args, **kw)

    monkeypatch.setattr(module, name, wrapped)
    return calls


# chapter 1: the width sweep


@pytest.fixture(scope="module")
def width_state():
    return WMF.width_explorer_state(max_width=64, eps=0.2, n=32, seeds=2)


def test_width_state_is_the_chapter_sweep(width_state):
    st = width_state
    assert list(st.widths) == [32, 64] and (st.eps, st.eta0, st.d, st.n) == (0.2, 0.5, 16, 32)
    ref = MFN.movement_sweep(16, 32, [32, 64], 0.2, 0.5, seeds=2, rng=0)
    np.testing.assert_allclose(st.sweep.movement["ntk"], ref.movement["ntk"])
    np.testing.assert_allclose(st.sweep.gap["mf"], ref.gap["mf"])
    assert WMF.width_explorer_state(max_width=64, eps=0.2, n=32, seeds=2) is st  # cached


def test_width_figure_draws_both_scalings_and_the_lazy_line(width_state):
    fig = WMF.width_figure(width_state)
    ax1, ax2 = fig.axes
    assert ax1.get_xscale() == "log" and "movement" in ax1.get_ylabel()
    assert "linearised" in ax2.get_ylabel() and len(ax2.texts) == 2   # the two slopes
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(s.startswith("NTK scaling (slope") for s in labels)
    assert any(s.startswith("mean-field scaling") for s in labels)
    assert any("lazy theory" in s for s in labels) and ax1.get_legend() is None
    lazy = [ln for ln in ax1.get_lines() if ln.get_linestyle() == "--"][0]
    np.testing.assert_allclose(lazy.get_ydata(), width_state.sweep.lazy_prediction.mean()
                               / np.sqrt([32, 64]))
    assert WMF.width_figure(width_state, fig=fig) is fig
    plt.close(fig)


def test_width_explorer_redraws_through_the_figure_function(width_state, monkeypatch):
    monkeypatch.setitem(WMF.WIDTH_EXPLORER_DEFAULTS, "n", 32)
    calls = _counting(monkeypatch, WMF, "width_figure")
    box = WMF.width_explorer(width_state)   # the chapter passes its own sweep: no computation
    assert box.state is width_state and box.draws == 1 and len(calls) == 1
    assert box.max_width.value == 64 and box.eps.value == 0.2
    assert set(box.max_width.options) == {64, 128, 256} and 0.05 in box.eps.options
    box.eps.value = 0.1
    assert box.draws == 2 and len(calls) == 2 and box.state.eps == 0.1
    assert box.state.n == 32 and list(box.state.widths) == [32, 64]
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: WMF.width_explorer_state(max_width=100),
    lambda: WMF.width_explorer_state(max_width=2048),
    lambda: WMF.width_explorer_state(eps=0.0),
    lambda: WMF.width_figure("not a state"),
    lambda: WMF.width_explorer(state=3),
])
def test_width_bad_input(call):
    with pytest.raises(ValueError):
        call()


# chapter 3: the sample ratio and the preprocessing


def test_first_moment_state_is_the_chapter_reduction():
    st = WFM.first_moment_explorer_state("relu", replicates=20, rng=3)
    assert set(st.sims) == set(WFM.FIRST_MOMENT_PREPROCESSINGS) and st.noise == 0.0
    assert st.sims["raw"].shape == (20, 3, 6)
    ref = FM.reduced_first_moment_overlaps(
        "relu", [100, 400, 1600], st.deltas,
        {"raw": None, "optimal": FMT.optimal_preprocessing("relu")}, replicates=20, rng=3)
    np.testing.assert_allclose(st.sims["raw"], ref["raw"])      # same labels, same streams
    np.testing.assert_allclose(st.sims["optimal"], ref["optimal"])
    assert WFM.first_moment_explorer_state("relu", replicates=20, rng=3) is st
    assert WFM.first_moment_explorer_state("sign", replicates=2).noise == 0.5


def test_first_moment_figure_draws_theory_and_three_dimensions():
    st = WFM.first_moment_explorer_state("cubic", replicates=20)
    fig = WFM.first_moment_figure(st, "clipped")
    (ax,) = fig.axes
    assert ax.get_title() == "$u^3$" and ax.get_xscale() == "log"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == ["clipped (theory)", "clipped, d = 1600", "optimal (theory)",
                              "optimal, d = 1600"]
    theory = [ln for ln in ax.get_lines() if ln.get_label() == "optimal (theory)"][0]
    x = theory.get_xdata()
    np.testing.assert_allclose(theory.get_ydata(), FMT.first_moment_overlap("cubic", x))
    assert len(ax.containers) == 6   # 2 preprocessings x 3 dimensions of error bars
    fig = WFM.first_moment_figure(st, "optimal", fig=fig)
    assert len(fig.axes[0].containers) == 3
    plt.close(fig)


def test_first_moment_explorer_redraws_through_the_figure_function(monkeypatch):
    calls = _counting(monkeypatch, WFM, "first_moment_figure")
    full = WFM.first_moment_explorer_state("relu")
    given = WFM.FirstMomentState("relu", 0.0, full.dims, full.deltas,
                               {k: full.sims[k] for k in ("raw", "optimal")})
    box = WFM.first_moment_explorer(given)
    assert box.state is given and box.draws == 1 and len(calls) == 1
    assert box.link.value == "relu" and box.preprocessing.value == "raw"
    box.preprocessing.value = "clipped"   # not in the given state: the cached full one
    assert box.state is full and len(calls) == 2
    box.preprocessing.value = "raw"
    assert box.state is given and len(calls) == 3
    box.link.value = "sign"
    assert box.state.link == "sign" and box.draws == 4
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: WFM.first_moment_explorer_state("tanh"),
    lambda: WFM.first_moment_explorer_state("relu", replicates=1),
    lambda: WFM.first_moment_figure(WFM.first_moment_explorer_state("relu"), "nope"),
    lambda: WFM.first_moment_panel(None, "not a state"),
    lambda: WFM.first_moment_explorer(state=3),
])
def test_first_moment_bad_input(call):
    with pytest.raises(ValueError):
        call()


# chapter 5: n/d^2 and d


def test_collapse_runs_are_the_chapter_sweep():
    p, alpha_c = WPT.collapse_setting()
    assert 0 < p < 1 and alpha_c == pytest.approx(0.537, abs=1e-3)   # printed by the chapter
    ns, rho2 = WPT.partial_trace_runs(12, seeds=3, rng=2)
    ref = PTR.partial_trace_sweep(np.array(WPT.COLLAPSE_ALPHAS), [12], 3, T=lambda t: t - p,
                                  rng=2)[12]
    np.testing.assert_array_equal(ns, ref.n)
    np.testing.assert_allclose(rho2, ref.rho2)
    assert WPT.partial_trace_runs(12, seeds=3, rng=2)[1] is rho2   # cached


def test_collapse_figure_draws_the_limit_and_both_axes():
    runs = {d: WPT.partial_trace_runs(d, seeds=3) for d in (8, 12)}
    st = WPT.CollapseState(runs, np.array(WPT.COLLAPSE_ALPHAS), WPT.collapse_setting()[1])
    fig = WPT.collapse_figure(st)
    ax1, ax2 = fig.axes
    assert "n/d^2" in ax1.get_xlabel() and ax2.get_xlabel() == "$n/d$"
    limit = ax1.get_lines()[0]
    x = limit.get_xdata()
    np.testing.assert_allclose(limit.get_ydata(), np.maximum(0, 1 - st.alpha_c / x))
    assert len(ax1.containers) == len(ax2.containers) == 2
    np.testing.assert_allclose(ax2.containers[1][0].get_xdata(), runs[12][0] / 12)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == [r"$d\to\infty$", "d = 8", "d = 12"]
    plt.close(fig)


def test_collapse_explorer_redraws_through_the_figure_function(monkeypatch):
    calls = _counting(monkeypatch, WPT, "collapse_figure")
    runs = {d: WPT.partial_trace_runs(d, seeds=3) for d in (8, 12)}
    given = WPT.CollapseState(runs, np.array(WPT.COLLAPSE_ALPHAS), 0.5)
    box = WPT.collapse_explorer(given)
    assert box.state is given and len(calls) == 1
    assert box.dims.options == (8, 12, 16, 24, 32, 48) and box.dims.value == (8, 12)
    box.dims.value = (12, 16)     # 12 from the given runs, 16 computed (12 seeds)
    assert list(box.state.runs) == [12, 16] and box.state.runs[12] is runs[12]
    assert box.state.runs[16][1].shape[0] == 12 and len(calls) == 2 and box.draws == 2
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: WPT.partial_trace_runs(4),
    lambda: WPT.partial_trace_runs(16, seeds=0),
    lambda: WPT.collapse_panels(None, None, "not a state"),
    lambda: WPT.collapse_explorer(state={}),
])
def test_collapse_bad_input(call):
    with pytest.raises(ValueError):
        call()


# chapter 6: n/d and the step size


def test_giant_step_state_is_the_chapter_step():
    st = WGS.giant_step_state(delta=2, eta0=0.5, d=32)
    assert (st.d, st.p, st.delta, st.eta0) == (32, 64, 2, 0.5)
    eta_bar = GST.giant_step_size(64, 64, 32, 0.5) / 64
    v = GST.one_step_bulk_variance(GST.tanh2, eta_bar, 2)
    ref = GS.one_step_spectra(GST.tanh2, 32, 64, 2, 0.5, rng=0, reference_variance=v)
    np.testing.assert_allclose(st.spectra.s_W1, ref.s_W1)
    assert st.v == pytest.approx(v) and st.spike.s1 == pytest.approx(
        GST.one_step_spike(GST.tanh2, eta_bar, 2, 64, 32).s1)
    assert WGS.giant_step_state(delta=2, eta0=0.5, d=32) is st
    # the bulk variance does not depend on n/d at fixed eta0 (eta_bar = eta0 sqrt(delta))
    assert WGS.giant_step_state(delta=8, eta0=0.5, d=32).v == pytest.approx(st.v)


def test_giant_step_figure_draws_laws_and_spike():
    st = WGS.giant_step_state(delta=4, eta0=1.0, d=32)
    fig = WGS.giant_step_figure(st)
    ax1, ax2 = fig.axes
    assert len(ax1.patches) == 60 and ax2.get_yscale() == "log"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "predicted spike" in labels and "inflated bulk edge" in labels
    assert any(s.startswith("inflated law, $v = ") for s in labels)
    star = [ln for ln in ax2.get_lines() if ln.get_label() == "predicted spike"][0]
    assert star.get_ydata()[0] == pytest.approx(st.spike.s1)
    assert WGS.giant_step_figure(st, fig=fig) is fig
    plt.close(fig)


def test_giant_step_explorer_redraws_through_the_figure_function(monkeypatch):
    calls = _counting(monkeypatch, WGS, "giant_step_figure")
    given = WGS.giant_step_state(delta=4, eta0=1.0, d=32, p=48)
    box = WGS.giant_step_explorer(given)
    assert box.state is given and len(calls) == 1
    assert (box.delta.value, box.eta0.value, box.d.value) == (4, 1.0, 32)
    assert box.d.options == (32, 128, 256)
    box.eta0.value = 2.0          # same d: the width of the given state
    assert box.state.eta0 == 2.0 and box.state.p == 48 and len(calls) == 2
    assert box.state.v > given.v
    box.delta.value = 8
    assert box.state.delta == 8 and box.draws == 3
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: WGS.giant_step_state(delta=0),
    lambda: WGS.giant_step_state(eta0=-1.0),
    lambda: WGS.giant_step_state(d=4),
    lambda: WGS.giant_step_figure("not a state"),
    lambda: WGS.giant_step_explorer(state=1),
])
def test_giant_step_bad_input(call):
    with pytest.raises(ValueError):
        call()


# chapter 7: alpha_1 and alpha_2


@pytest.fixture(scope="module")
def two_step_small():
    return WTS.two_step_state(64, "uniform", seeds=1)


def test_two_step_state_is_the_chapter_grid(two_step_small):
    st = two_step_small
    assert st.spectra.s2.shape == (1, 5, 5, 8) and 0 < st.eps < 0.2
    ref = TSP.simulate_two_step_counts(64, st.alphas1[:2], st.alphas2, 1,
                                       second_layer="uniform", rng=12)
    np.testing.assert_allclose(st.spectra.s2[:, :2], ref.s2)   # a row only needs its alpha_1
    counts = WTS.two_step_counts(st)
    assert counts.shape == (5, 5) and counts.min() >= 0
    np.testing.assert_allclose(counts, np.sum(
        st.spectra.s2 > (1 + st.eps) * st.spectra.null2_top[..., None], axis=-1).mean(0))
    assert WTS.two_step_margin(64) == st.eps and WTS.two_step_state(64, "uniform", 1) is st


def test_two_step_figure_has_theorem_simulation_and_spectrum(two_step_small):
    fig = WTS.two_step_figure(two_step_small, 0.25, 0.38)
    ax1, ax2, ax3 = fig.axes[:3]
    assert ax1.get_title() == "theorem" and ax2.get_title() == "bounded layer, N = 64"
    theory = 1 + TST.two_step_new_outliers(np.array(WTS.TWO_STEP_A1)[:, None],
                                           np.array(WTS.TWO_STEP_A2)[None, :])
    assert [t.get_text() for t in ax1.texts] == [f"{v:g}" for v in theory.ravel()]
    assert ax3.get_title().startswith(f"theorem {theory[2, 3]:g}, counted")
    assert len(ax1.patches) == len(ax2.patches) == 1       # the chosen cell is framed
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[0] == "seed 0" and "threshold" in labels[-1]
    with pytest.raises(ValueError):
        WTS.two_step_figure(two_step_small, 0.3, 0.38)
    plt.close(fig)


def test_two_step_explorer_redraws_through_the_figure_function(two_step_small, monkeypatch):
    calls = _counting(monkeypatch, WTS, "two_step_figure")
    box = WTS.two_step_explorer([two_step_small])
    assert box.state is two_step_small and len(calls) == 1
    assert box.N.options == (64, 100, 200, 300) and box.second_layer.value == "uniform"
    box.alpha2.value = 0.42                     # a new cell: only a redraw
    assert box.state is two_step_small and len(calls) == 2
    assert calls[-1][1:3] == (0.25, 0.42)
    box.N.value = 100                           # a new size: computed
    assert box.state.N == 100 and box.draws == 3
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: WTS.two_step_state(30),
    lambda: WTS.two_step_state(100, "sign"),
    lambda: WTS.two_step_count_panel(None, np.ones((2, 2)), [0.1], [0.2], 2.0, "x"),
    lambda: WTS.two_step_figure("not a state", 0.25, 0.38),
    lambda: WTS.two_step_explorer(states=[1]),
])
def test_two_step_bad_input(call):
    with pytest.raises(ValueError):
        call()


# the lectures: one Explore section and one widget cell per explorer

EXPLORERS = {
    "01_mean_field_vs_ntk": "width_explorer",
    "03_first_moment": "first_moment_explorer",
    "05_partial_trace": "collapse_explorer",
    "06_giant_steps": "giant_step_explorer",
    "07_two_steps": "two_step_explorer",
    "09_reusing_batches": "reuse_explorer",
    "10_hierarchical_targets": "stage_explorer",
    "11_gaussian_mixtures": "gap_explorer",
}


@pytest.mark.parametrize("stem", sorted(EXPLORERS))
def test_lecture_has_its_explore_section_and_widget_cell(stem):
    lectures = Path(__file__).resolve().parents[1] / "lectures"
    cells = json.loads((lectures / f"{stem}.ipynb").read_text())["cells"]
    chapter = int(stem[:2])
    md = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
          and f"(sec-ch{chapter}-explore)=" in "".join(c["source"])]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
            and f"explorer.{EXPLORERS[stem]}(" in "".join(c["source"])]
    assert len(md) == 1 and code == [md[0] + 1], "one Explore section, then its widget cell"
    # the page shows the static figure; the widget is for a live kernel
    assert "remove-output" in cells[code[0]]["metadata"].get("tags", [])


def test_build_explorer_needs_controls_and_a_draw_function():

    with pytest.raises(ValueError):
        base.build_explorer({}, lambda values, fig: (fig, None))
    assert base.with_option((1, 3), 2) == [1, 2, 3] and base.with_option((1, 3), 3) == [1, 3]


def test_explorer_figures_leave_pyplot_registry(width_state, monkeypatch):
    # else the inline backend shows the explorer's figure again under the next figure cell
    plt.close("all")
    monkeypatch.setitem(WMF.WIDTH_EXPLORER_DEFAULTS, "n", 32)
    box = WMF.width_explorer(width_state)
    box.eps.value = 0.1
    assert plt.get_fignums() == [] and box.draws == 2
    WSP.spectral_explorer(d=40)
    assert plt.get_fignums() == []
