"""Tests of the closed forms and mean-field experiments of chapter 1 (mean_field_vs_ntk_theory)."""

import math

import numpy as np
import pytest

from lecnotes import mean_field_vs_ntk_theory as T
from lecnotes.hermite import gaussian_expectation
from lecnotes.kernels import relu_ntk

CHAPTERS = (1,)  # the chapters whose code these tests cover: make chapter CH=N


def test_odd_part_of_bias_free_relu_kernels_is_linear():
    rng = np.random.default_rng(0)
    X, Z = rng.standard_normal((2, 30, 7))
    c, res = T.odd_part(relu_ntk, X, Z)
    assert c == pytest.approx(1 / 14 + 0.5, abs=1e-12) and res < 1e-12
    c_rf, res_rf = T.odd_part(lambda A, B: relu_ntk(A, B, a_var=0.0), X, Z)
    assert c_rf == pytest.approx(1 / 14, abs=1e-12) and res_rf < 1e-12
    assert T.odd_part(T.with_bias(1.0), X, Z)[1] > 1e-3


def test_aligned_bound_and_smoothed_relu():
    assert T.aligned_fit_error() == pytest.approx(1 - 1 / math.pi, abs=1e-10)
    g = np.linspace(-3, 3, 7)
    assert np.allclose(T.smoothed_relu(1.0, g), np.maximum(g, 0))
    assert np.allclose(T.smoothed_relu(0.0, g), 1 / math.sqrt(2 * math.pi))
    # the smoothed ReLU is the Gaussian average of the ReLU
    c, s = 0.6, 0.8
    direct = gaussian_expectation(lambda xi: np.maximum(c * 0.7 + s * xi, 0), breakpoints=(-0.525,))
    assert T.smoothed_relu(c, 0.7) == pytest.approx(direct, abs=1e-9)
    assert T.smoothed_fit_error(np.linspace(-1, 1, 21)) < 1e-6
    with pytest.raises(ValueError):
        T.smoothed_relu(1.5, g)


def test_payoff_runs_small():
    res = T.payoff_runs([4], seeds=1, ratio=4, m=16, steps=20, rng=0)
    assert res.risk.shape == (1, 1, 3) and res.parts.shape == (1, 1, 2, 3)
    assert res.cosines[0].shape == (1, 16) and np.all(res.cosines[0] <= 1 + 1e-12)


def test_chaos_sweep_spread_and_slope():
    vals = T.chaos_sweep(4, 16, [8, 32], inits=4, steps=3, rng=0)
    assert vals.shape == (4, 2)
    rng = np.random.default_rng(1)
    widths = np.array([16, 64, 256, 1024])
    fake = rng.standard_normal((40, 4)) / np.sqrt(widths)
    s, se = T.spread_slope(widths, fake, n_boot=100, rng=0)
    assert abs(s + 0.5) < 5 * se + 0.05 and se > 0


def test_width_correction_recovers_c():
    widths = np.array([32, 64, 128, 256, 512, 1024])
    vals = np.vstack([2 * (1 - 0.8 / np.sqrt(widths)), 3 * (1 - 0.8 / np.sqrt(widths))])
    c, tilt = T.width_correction(widths, vals)
    assert np.allclose(c, 0.8) and 0 < tilt < 0.05
