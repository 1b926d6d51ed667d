"""Tests of lecnotes.widgets: the explorer's logic, without a browser (chapter 4)."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes import preprocessing as PP
from lecnotes import spectral as S  # noqa: E402
from lecnotes import spectral_theory as TH  # noqa: E402
from lecnotes import widgets as W  # noqa: E402

CHAPTERS = (4,)  # the chapters whose code these tests cover: make chapter CH=N


def test_state_is_consistent_with_the_library():
    st = W.spectral_explorer_state(2.0, "trimmed", d=120, seed=1)
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
    raw = W.spectral_explorer_state(2.0, "raw", d=60)
    assert not raw.bounded and math.isnan(raw.theory_rho2) and raw.threshold == math.inf
    assert raw.density.size == 0
    mm = W.spectral_explorer_state(2.0, "mondelli-montanari", d=60)
    assert mm.theory_rho2 == pytest.approx(
        TH.spectral_overlap("quadratic", 2.0, PP.mondelli_montanari(2.0)).rho2)


def test_figure_has_spectrum_and_overlap_panels():
    fig, st = W.spectral_explorer_figure(3.0, "trimmed-centred", d=80)
    ax1, ax2 = fig.axes[:2]
    assert "spectrum" in ax1.get_title() and "overlap" in ax2.get_title()
    assert ax1.get_xlabel() and ax1.get_ylabel() and ax2.get_xlabel() and ax2.get_ylabel()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]   # one legend, outside
    assert any("bulk density" in s for s in labels) and ax1.get_legend() is None
    fig2, _ = W.spectral_explorer_figure(3.0, "raw", d=80, fig=fig)
    assert fig2 is fig
    plt.close(fig)


def test_widget_callback_updates_the_state():
    box = W.spectral_explorer(d=60)
    assert box.state.delta == W.SPECTRAL_EXPLORER_DEFAULTS["delta"]
    box.delta.value = 6.0
    assert box.state.delta == 6.0 and box.state.n == 360
    box.preprocessing.value = "luo-alghamdi-lu"
    assert box.state.preprocessing == "luo-alghamdi-lu"
    box.delta.value = 0.6
    box.preprocessing.value = "mondelli-montanari"
    assert box.state.delta == 0.6
    # Mondelli-Montanari is undefined below 1/2: from a start at delta = 0.4 (added to the
    # slider's options) the callback moves to the smallest allowed delta, 0.6
    low = W.spectral_explorer(delta=0.4, d=60)
    assert low.state.delta == 0.4
    low.preprocessing.value = "mondelli-montanari"
    assert low.state.delta == 0.6 and low.state.preprocessing == "mondelli-montanari"
    plt.close("all")


@pytest.mark.parametrize(
    "call",
    [
        lambda: W.spectral_explorer_state(0.0, "trimmed"),
        lambda: W.spectral_explorer_state(2.0, "nope"),
        lambda: W.spectral_explorer_state(2.0, "trimmed", d=5),
        lambda: W.spectral_explorer_state(2.0, "trimmed", d=5000),
        lambda: W.spectral_explorer_state(0.4, "mondelli-montanari"),
        lambda: W.spectral_explorer(preprocessing="nope"),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
