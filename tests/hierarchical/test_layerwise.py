"""The layer-wise protocol by gradient descent of chapter 10 (sec-ch10-gd)."""

import numpy as np
import pytest

from lecnotes.hierarchical import layerwise as L
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.shallow import rf_sweep

CHAPTERS = (10,)


def test_quadratic_corr_of_the_sum_of_latent_squares_is_one():
    d, r = 12, 3
    W = np.eye(d)[:r]
    assert L.quadratic_corr(W, np.ones(r), r) == pytest.approx(1.0)
    W2 = np.eye(d)[r : 2 * r]  # no latent coordinate
    assert L.quadratic_corr(W2, np.ones(r), r) == pytest.approx(0.0)


def test_quadratic_corr_matches_a_monte_carlo_correlation():
    rng = np.random.default_rng(0)
    d, r, p1 = 8, 3, 5
    W = rng.standard_normal((p1, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    v = rng.standard_normal(p1)
    X = rng.standard_normal((200_000, d))
    u = (((X @ W.T) ** 2 - 1) / np.sqrt(2)) @ v
    h = T.feature(np.sum(X[:, :r] ** 2, axis=1), r)
    assert L.quadratic_corr(W, v, r) == pytest.approx(np.corrcoef(u, h)[0, 1], abs=0.02)


def test_sweep_shapes_ranges_and_learning():
    g = L.layerwise_gd_sweep([16, 25], [1.0, 8.0], [1.0, 8.0], 3, 0.5, rng=1)
    assert g.q1.shape == g.q1_one.shape == g.energy.shape == (3, 2, 2)
    assert g.corr.shape == (3, 2, 2)
    for q in (g.q1, g.q1_one, g.energy):
        assert np.all((q >= 0) & (q <= 1 + 1e-12))
    assert np.all(np.abs(g.corr) <= 1 + 1e-12)
    assert g.corr_sum.shape == (3, 2) and np.all(np.abs(g.corr_sum) <= 1 + 1e-12)
    # far above the threshold the trained first layer has found most of the latent space
    assert g.q1[:, :, -1].mean() > 0.6 > 2 * 5 / 25


def test_sweep_rejects_bad_grids():
    with pytest.raises(ValueError):
        L.layerwise_gd_sweep([16], [2.0, 1.0], [1.0], 2, 0.5)
    with pytest.raises(ValueError):
        L.layerwise_gd_sweep([16], [1.0], [-1.0], 2, 0.5)


def test_rf_sweep_shapes_and_range():
    e = rf_sweep([8], [64, 128], 2, 0.5, [36], n_test=200, rng=3)
    assert e.shape == (2, 1, 2)
    assert np.all(np.isfinite(e)) and np.all(e > 0)
    with pytest.raises(ValueError):
        rf_sweep([8, 12], [64], 2, 0.5, [36])
