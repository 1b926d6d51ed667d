"""Tests of lecnotes.core.rmt: one Marchenko-Pastur law and the laws derived from it."""

import math

import numpy as np
import pytest

from lecnotes.core import rmt

CHAPTERS = (4, 6, 7)  # the chapters whose code these tests cover: make chapter CH=N


def _mp_reference(lam, c, t):
    """The squared-singular-value density in the (c, t) form of Benaych-Georges and Nadakuditi,
    written out: c = min/max aspect ratio, t the scale, support t (1 -+ sqrt c)^2."""
    lo, hi = t * (1 - math.sqrt(c)) ** 2, t * (1 + math.sqrt(c)) ** 2
    out = np.zeros_like(lam)
    inside = (lam > lo) & (lam < hi)
    out[inside] = np.sqrt((hi - lam[inside]) * (lam[inside] - lo)) / (2 * np.pi * c * t
                                                                       * lam[inside])
    return out


@pytest.mark.parametrize("p, d, v", [(400, 600, 1.0), (600, 400, 1.7), (300, 300, 0.5)])
def test_singular_value_law_is_the_marchenko_pastur_law(p, d, v):
    # the singular values derived from marchenko_pastur_density against the (c, t) form
    c, t = min(p, d) / max(p, d), v * max(p, d) / d
    lo, hi = rmt.gaussian_singular_value_edges(p, d, v)
    assert lo == pytest.approx(math.sqrt(v) * abs(math.sqrt(p / d) - 1), rel=1e-12, abs=1e-15)
    assert hi == pytest.approx(math.sqrt(v) * (math.sqrt(p / d) + 1), rel=1e-12)
    s = np.linspace(0.01, 1.2 * hi, 3001)
    ref = 2 * s * _mp_reference(s * s, c, t)
    np.testing.assert_allclose(rmt.gaussian_singular_value_density(s, p, d, v), ref,
                               rtol=1e-12, atol=1e-14)
    # a probability density over the non-zero singular values
    grid = np.linspace(lo, hi, 200001)
    mass = np.trapezoid(rmt.gaussian_singular_value_density(grid, p, d, v), grid)
    assert mass == pytest.approx(1.0, abs=2e-3)


def test_singular_value_law_matches_a_simulation():
    # Kolmogorov distance between the empirical law of a 500 x 1000 Gaussian matrix's singular
    # values and the cdf: of order 1/min(p, d) at the edges; 0.02 would fail a wrong scale
    p, d, v = 500, 1000, 2.0
    W = np.random.default_rng(3).standard_normal((p, d)) * math.sqrt(v / d)
    s = np.sort(np.linalg.svd(W, compute_uv=False))
    cdf = rmt.gaussian_singular_value_cdf(s, p, d, v)
    emp = np.arange(1, s.size + 1) / s.size
    assert np.max(np.abs(cdf - emp)) < 0.02


def test_marchenko_pastur_density_moments():
    # mean 1 and second moment 1 + 1/delta of the eigenvalues of X^T X / n (delta >= 1)
    for delta in (1.5, 4.0):
        a, b = rmt.marchenko_pastur_edges(delta)
        x = np.linspace(a, b, 400001)
        rho = rmt.marchenko_pastur_density(x, delta)
        assert np.trapezoid(rho, x) == pytest.approx(1.0, abs=1e-3)
        assert np.trapezoid(x * rho, x) == pytest.approx(1.0, abs=1e-3)
        assert np.trapezoid(x * x * rho, x) == pytest.approx(1 + 1 / delta, abs=2e-3)


def test_weighted_wishart_density_reduces_to_marchenko_pastur_and_scales():
    x = np.linspace(0.05, 3.0, 80)

    def constant(c):  # E[f(T)] for T = c almost surely
        return lambda f: f(np.array([float(c)]))[0]

    np.testing.assert_allclose(rmt.weighted_wishart_density(x, 2.0, constant(1.0)),
                               rmt.marchenko_pastur_density(x, 2.0), atol=1e-4)
    # T = 2: the spectrum is twice Marchenko-Pastur, its density halved at 2x
    np.testing.assert_allclose(rmt.weighted_wishart_density(2 * x, 2.0, constant(2.0),
                                                            scale=2.0),
                               rmt.marchenko_pastur_density(x, 2.0) / 2, atol=1e-4)


def test_spiked_rectangular_below_threshold_sits_at_the_edge():
    for p, d in [(200, 400), (400, 200)]:
        hi = rmt.gaussian_singular_value_edges(p, d, 1.3)[1]
        assert rmt.spiked_rectangular(0.05, p, d, 1.3) == (hi, 0.0, 0.0)


def test_count_outliers_agrees_with_outlier_counts():
    rng = np.random.default_rng(4)
    s = np.sort(rng.uniform(0, 2, 50))[::-1]
    bulk = rmt.BulkEdge(1.5, 0.1, "test")
    for margin in (-2.0, 0.0, 3.0):
        expected = int(np.sum(s > 1.5 + 0.1 * margin))
        assert rmt.count_outliers(s, bulk, margin) == expected
        assert rmt.outlier_counts(s[None, :], np.array([1.5]), np.array([0.1]), margin)[0] \
            == expected
    with pytest.raises(ValueError):
        rmt.count_outliers(s, bulk, math.inf)
    with pytest.raises(ValueError):
        rmt.count_outliers(s, (1.5, 0.1), 0.0)
