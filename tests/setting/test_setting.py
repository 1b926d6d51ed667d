"""Tests of the seed sweeps of chapter 0 (lecnotes.setting.experiments)."""

import math

import numpy as np
import pytest

from lecnotes.core.hermite import hermite_coefficients
from lecnotes.core.targets import LINKS
from lecnotes.setting import experiments as S

CHAPTERS = (0,)  # the chapters whose code these tests cover: make chapter CH=N


def test_random_direction_overlaps_has_mean_one():
    dr2 = S.random_direction_overlaps(50, 4000, rng=3)
    assert dr2.shape == (4000,) and np.all((dr2 >= 0) & (dr2 <= 50))
    # d rho^2 = d * Beta(1/2, (d-1)/2): mean 1, variance 2(d-1)/(d+2)
    se = math.sqrt(2 * 49 / 52 / 4000)
    assert abs(dr2.mean() - 1) < 4 * se
    assert np.array_equal(S.random_direction_overlaps(1, 5, rng=0), np.ones(5))


def test_sign_coefficients_closed_form():
    c = S.sign_coefficients(9)
    # c_1 = sqrt(2/pi), c_3 = -sqrt(2/pi)/sqrt(6), even ones vanish
    assert c[1] == pytest.approx(math.sqrt(2 / math.pi), abs=1e-15)
    assert c[3] == pytest.approx(-math.sqrt(2 / math.pi) / math.sqrt(6), abs=1e-15)
    assert np.all(c[::2] == 0)
    np.testing.assert_allclose(c, hermite_coefficients(LINKS["sign"], 9), atol=1e-9)


def test_stein_sweep_matches_steins_lemma():
    d, n, seeds = 50, 2000, 30
    res = S.stein_sweep("relu", d, n, seeds, rng=5)
    assert res.along.shape == res.perp.shape == (seeds,)
    # E<v, w*> = E[relu'(G)] = 1/2; E|v_perp|^2 = (d-1) E[relu(G)^2]/n = (d-1)/(2n)
    se = res.along.std(ddof=1) / math.sqrt(seeds)
    assert abs(res.along.mean() - 0.5) < 4 * se
    ratio = res.perp / ((d - 1) * 0.5 / n)
    assert abs(ratio.mean() - 1) < 4 * ratio.std(ddof=1) / math.sqrt(seeds)


def test_quadratic_moment_sweep_gives_the_sixth_and_fourth_moments():
    res = S.quadratic_moment_sweep(20, 200, 400, rng=1)
    for values, exact in ((res.along, 15.0), (res.perp, 3.0)):
        assert abs(values.mean() - exact) < 4 * values.std(ddof=1) / math.sqrt(values.size)


def test_sweeps_use_one_stream_per_seed():
    a = S.stein_sweep("relu", 10, 50, 3, rng=2)
    b = S.stein_sweep("relu", 10, 50, 5, rng=2)
    np.testing.assert_array_equal(a.along, b.along[:3])
    c = S.staircase_sweep(20, 2, 2, rng=2)
    np.testing.assert_array_equal(c.first, S.staircase_sweep(20, 2, 4, rng=2).first[:2])
    q = S.quadratic_moment_sweep(10, 40, 3, rng=2)
    np.testing.assert_array_equal(q.perp, S.quadratic_moment_sweep(10, 40, 6, rng=2).perp[:3])


def test_staircase_sweep_sees_only_the_first_direction():
    res = S.staircase_sweep(300, 4, 6, rng=0)
    assert res.first.shape == res.second.shape == (6,)
    assert abs(res.first.mean() - 4 / 6) < 0.1
    assert res.second.mean() < 6  # noise level about 2, against ~200 for a learned direction


def test_staircase_reduced_matches_direct_simulation_and_theory():
    d, delta = 60, 4
    red = S.staircase_reduced(d, delta, 3000, rng=2)
    assert red.first.shape == red.second.shape == (3000,)
    assert np.all((red.first > 0) & (red.first < 1))
    # rho_1^2 -> delta/(delta+2) up to O(1/n); (d-1) rho_2^2 -> 4(d-1)/(n+2d+5)
    n = delta * d
    se1 = red.first.std(ddof=1) / math.sqrt(3000)
    assert abs(red.first.mean() - n / (n + 2 * d + 5)) < 5 * se1 + 5 / n
    se2 = red.second.std(ddof=1) / math.sqrt(3000)
    assert abs(red.second.mean() - 4 * (d - 1) / (n + 2 * d + 5)) < 5 * se2 + 0.05
    direct = S.staircase_sweep(d, delta, 200, rng=3)
    assert abs(direct.first.mean() - red.first.mean()) < 5 * direct.first.std() / math.sqrt(200)
    with pytest.raises(ValueError):
        S.staircase_reduced(2, 4, 10)


def test_first_moment_reduced_relu_limit():
    res = S.first_moment_reduced("relu", 200, [1.0, 4.0], 2000, rng=1)
    assert res.rho2.shape == (2000, 2)
    m = res.rho2.mean(0)
    se = res.rho2.std(0, ddof=1) / math.sqrt(2000)
    assert np.all(np.abs(m - np.array([1 / 3, 2 / 3])) < 5 * se + 0.01)


def test_coefficient_decay_fit_recovers_laws():
    k = np.arange(30)
    c = np.exp(-1.3 * np.sqrt(np.maximum(k, 1))) * np.maximum(k, 1) ** -0.5
    fit = S.coefficient_decay_fit(c, np.arange(5, 30))
    assert fit.coef[0] == pytest.approx(-1.3, abs=1e-8) and fit.rms < 1e-10
    geo = S.coefficient_decay_fit(0.5 ** k, np.arange(5, 30), law="geometric")
    assert geo.coef[0] == pytest.approx(np.log(0.5)) and geo.rms < 1e-10
    with pytest.raises(ValueError):
        S.coefficient_decay_fit(c, np.arange(5, 30), law="power")


@pytest.mark.parametrize("call", [
    lambda: S.stein_sweep("tanh", 0, 10, 2),
    lambda: S.stein_sweep("tanh", 5, 1.5, 2),
    lambda: S.quadratic_moment_sweep(5, -1, 2),
    lambda: S.staircase_sweep(5, 1.5, 2),
    lambda: S.coefficient_decay_fit(np.ones(12), [1.5, 2, 3, 4, 5]),
    lambda: S.coefficient_decay_fit(np.ones(12), [1, 2, 3, 4, 5], law="power"),
    lambda: S.random_direction_overlaps(float("nan"), 3),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()
