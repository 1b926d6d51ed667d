"""The shared-support model of chapter 11 (lecnotes.mixtures.shared) and the Gaussian-prior
fixed point (lecnotes.mixtures.thresholds.gaussian_prior_fixed_point)."""

import math

import numpy as np
import pytest

from lecnotes.mixtures import amp, shared, thresholds


def test_denoiser_dense_is_linear():
    B = np.linspace(-3, 3, 7)
    mean, var = shared.shared_denoiser(0.5, B, 1.0)
    np.testing.assert_allclose(mean, B / 1.5)
    np.testing.assert_allclose(var, 1 / 1.5)


def test_overlaps_linear_at_small_precision():
    assert shared.m_u(1e-3) == pytest.approx(1e-3, rel=2e-3)
    assert shared.m_v(1e-4, 0.2) == pytest.approx(1e-4, rel=2e-2)
    assert shared.m_v(0.0, 0.2) == 0.0


def test_nishimori_mv_matches_direct_average():
    rng = np.random.default_rng(0)
    rho, h = 0.1, 2.0
    v = (rng.random(400000) < rho) * rng.standard_normal(400000) / math.sqrt(rho)
    f, _ = shared.shared_denoiser(h, h * v + math.sqrt(h) * rng.standard_normal(v.size), rho)
    assert shared.m_v(h, rho) == pytest.approx(np.mean(f * v), abs=0.01)


def test_threshold_is_one_over_sqrt_alpha():
    la = 1 / math.sqrt(2.0)
    assert shared.shared_se(0.3, 0.9 * la, 2.0, 200, 1e-3)[-1] < 1e-6
    assert shared.shared_se(0.3, 1.1 * la, 2.0, 200, 1e-3)[-1] > 0.1


def test_potential_zero_at_uninformed_point():
    assert shared.shared_potential(0.0, 0.1, 0.7, 2.0) == pytest.approx(0.0, abs=1e-12)


def test_normalised_instances():
    X, u, v = shared.sample_shared(60, 50, 0.2, 1.0, rng=1, normalised=True)
    assert X.shape == (60, 50) and np.sum(v != 0) == 10
    assert v @ v == pytest.approx(50)
    assert set(np.unique(u)) <= {-1.0, 1.0}


def test_runs_shapes_and_informed_above_threshold():
    R = shared.shared_runs([400], [2 / math.sqrt(2)], 2, 0.5, 2.0, 20, pca_dims=[400], rng=3)
    assert R.amp.shape == R.informed.shape == R.pca.shape == (2, 1, 1)
    assert np.all(R.informed > 0.5) and np.all(R.pca > 0.1)


def test_gaussian_prior_fixed_point():
    la = amp.lambda_alg(3, 2.0)
    assert thresholds.gaussian_prior_fixed_point(3, 0.9 * la, 2.0, n_mc=4000) < 1e-3
    se = amp.state_evolution(3, 1.0, 1.4 * la, 2.0, 40, np.inf, 4000).mv[-1]
    assert thresholds.gaussian_prior_fixed_point(3, 1.4 * la, 2.0) == pytest.approx(se, abs=0.04)


def test_median_and_error_ignores_a_few_far_values():
    x = np.array([0.60, 0.62, 0.63, 0.64, 0.66, 0.0, 0.61, 0.65, 0.63])
    med, se = shared.median_and_error(x, rng=1)
    assert med == pytest.approx(0.63) and 0 < se < 0.05
    assert shared.median_and_error(np.where(x == 0.0, 0.3, x), rng=1)[0] == pytest.approx(0.63)
    with pytest.raises(ValueError):
        shared.median_and_error([0.1, 0.2])


def test_independent_from_truth_starts_at_the_truth():
    far = shared.independent_from_truth([120], 8.0, 2, 0.3, 2.0, 5, rng=2)
    assert far.shape == (2, 1) and np.all(far > 0.8)  # far above lambda_alg = sqrt(2)
