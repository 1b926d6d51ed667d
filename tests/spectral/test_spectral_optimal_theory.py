"""Tests of lecnotes.spectral.optimal_theory: general-link optimal preprocessings, the edge
sweep and spectral initialisation (chapter 4)."""

import numpy as np
import pytest

from lecnotes.core import conditional_hermite as CH
from lecnotes.core import preprocessing as P
from lecnotes.spectral import optimal_theory as SO
from lecnotes.spectral import theory as TH

CHAPTERS = (4,)  # the chapters whose code these tests cover: make chapter CH=N


def test_z_reduces_to_the_label_for_phase_retrieval():
    y = np.array([0.1, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(SO.second_moment_z("quadratic")(y), y, rtol=1e-8)
    assert CH.weak_recovery_ratio("quadratic") == pytest.approx(0.5, abs=1e-9)


def test_threshold_optimal_is_mondelli_montanari_for_phase_retrieval():
    y = np.array([0.1, 0.5, 1.0, 3.0, 9.0])
    np.testing.assert_allclose(SO.threshold_optimal("quadratic", 2.0)(y),
                               P.mondelli_montanari(2.0)(y), rtol=1e-8)
    np.testing.assert_allclose(SO.overlap_optimal("quadratic")(y), 1 - 1 / y, rtol=1e-8)
    with pytest.raises(ValueError):
        SO.threshold_optimal("quadratic", 0.4)


def test_relu_forms_and_thresholds():
    y = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(SO.second_moment_z("relu")(y), [1.0, 0.25, 4.0], rtol=1e-8)
    assert CH.weak_recovery_ratio("relu") == pytest.approx(1.0, abs=1e-9)
    thr = TH.spectral_threshold("relu", SO.overlap_optimal("relu"), breakpoints=(0.0,))
    assert thr == pytest.approx(1.0, abs=1e-5)
    fixed = TH.spectral_threshold("relu", SO.threshold_optimal("relu", 2.0), breakpoints=(0.0,))
    assert fixed == pytest.approx(np.sqrt(2.0), abs=1e-5)


def test_edge_sweep_shapes_and_reproducibility():
    T = P.trimmed(7.0)
    a = SO.edge_sweep(2.0, [50, 80], 3, T, rng=1)
    b = SO.edge_sweep(2.0, [50, 80], 3, T, rng=1)
    assert a.top.shape == (3, 2) and np.all((a.rho2 >= 0) & (a.rho2 <= 1))
    np.testing.assert_array_equal(a.top, b.top)
    with pytest.raises(ValueError):
        SO.edge_sweep(-1.0, [50], 2, T)


def test_weak_recovery_ratio_is_one_over_twice_the_zeta2_norm():
    """The foundation function: 1/(2 E[zeta_2^2]) against closed forms and the infinite case."""
    for link, expected in [("quadratic", 0.5), ("abs", 0.5), ("relu", 1.0)]:
        q = CH.conditional_hermite_norms(link, 2)[1]
        assert CH.weak_recovery_ratio(link) == pytest.approx(1 / (2 * q), rel=1e-12)
        assert CH.weak_recovery_ratio(link) == pytest.approx(expected, abs=1e-8)
    assert CH.weak_recovery_ratio("sign") == np.inf          # zeta_2 = 0: no second-order signal
    # noisy phase retrieval: E[G^2 | Y] moves towards 1, so delta_u grows
    assert CH.weak_recovery_ratio("quadratic", noise=0.5) > 0.5


def test_spectral_start_then_descent_recovers():
    out = SO.spectral_then_descent(40, 6.0, 2, P.luo_alghamdi_lu(), steps=400, step=0.1, rng=0)
    assert np.all(out.error < 1e-6) and out.path.shape == (400,)
    with pytest.raises(ValueError):
        SO.spectral_then_descent(40, 6.0, 2, P.luo_alghamdi_lu(), start="zero")


def test_indicator_threshold_closed_form_and_best_level():
    th = SO.indicator_threshold(2.7)
    def T(y):
        return (np.asarray(y) > 2.7).astype(float)
    assert th.delta_c == pytest.approx(TH.spectral_threshold("quadratic", T, breakpoints=(2.7,)),
                                       rel=1e-6)
    best = SO.indicator_threshold()
    assert best.delta_c <= th.delta_c and 2.6 < best.tau < 2.8
    with pytest.raises(ValueError):
        SO.indicator_threshold(-1.0)


def test_tridiagonal_sampler_matches_gaussian_data():
    """Above the threshold both samplers give the limit; and the same mean at a small d."""
    th = SO.indicator_threshold()
    sw = SO.indicator_sweep([2.0], [300], 300, rng=0)
    _, r2 = SO.indicator_direct(2.0 * th.delta_c, 300, 300, rng=1)
    se = np.hypot(sw.rho2.std() / np.sqrt(300), r2.std() / np.sqrt(300))
    assert abs(sw.rho2.mean() - r2.mean()) < 4 * se
    def T(y):
        return (np.asarray(y) > th.tau).astype(float)
    lim = TH.spectral_overlap("quadratic", 2.0 * th.delta_c, T, breakpoints=(th.tau,)).rho2
    big = SO.indicator_sweep([2.0], [20000], 40, rng=2)
    assert abs(big.rho2.mean() - lim) < 0.03
    assert big.top.shape == (1, 40, 1)
    with pytest.raises(ValueError):
        SO.indicator_sweep([0.0], [300], 2)


def test_crossings_of_two_lines():
    ratios = np.linspace(0.8, 1.2, 5)
    a = np.tile(1 + 0.5 * (ratios - 1), (10, 1))[None]
    b = np.tile(1 + 2.0 * (ratios - 1), (10, 1))[None]
    b = b + np.random.default_rng(0).normal(0, 1e-3, b.shape)
    cross, se, miss = SO.crossings(ratios, np.concatenate([a, b]), n_boot=50, rng=0)
    assert cross[0] == pytest.approx(1.0, abs=0.01) and se[0] < 0.01 and miss[0] == 0
