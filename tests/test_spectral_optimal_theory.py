"""Tests of lecnotes.spectral_optimal_theory: general-link optimal preprocessings, the edge
sweep and spectral initialisation (chapter 4)."""

import numpy as np
import pytest

from lecnotes import preprocessing as P
from lecnotes import spectral_optimal_theory as SO
from lecnotes import spectral_theory as TH

CHAPTERS = (4,)  # the chapters whose code these tests cover: make chapter CH=N


def test_z_reduces_to_the_label_for_phase_retrieval():
    y = np.array([0.1, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(SO.second_moment_z("quadratic")(y), y, rtol=1e-8)
    assert SO.weak_recovery_ratio("quadratic") == pytest.approx(0.5, abs=1e-9)


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
    assert SO.weak_recovery_ratio("relu") == pytest.approx(1.0, abs=1e-9)
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


def test_spectral_start_then_descent_recovers():
    out = SO.spectral_then_descent(40, 6.0, 2, P.luo_alghamdi_lu(), steps=400, step=0.1, rng=0)
    assert np.all(out.error < 1e-6) and out.path.shape == (400,)
    with pytest.raises(ValueError):
        SO.spectral_then_descent(40, 6.0, 2, P.luo_alghamdi_lu(), start="zero")
