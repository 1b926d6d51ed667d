"""One giant step on mixture inputs (chapter 11, prop-ch11-gs)."""

import math

import numpy as np
import pytest

from lecnotes.core import stats
from lecnotes.core.hermite import he
from lecnotes.mixtures import feature_step as fs


def test_kappa_is_the_excess_kurtosis_and_vanishes_for_one_cluster():
    for m in (0.5, 1.0, 2.0, 3.0):
        k1 = fs.step_moments(m, "mixture").k1
        assert k1 == pytest.approx(math.sqrt(1 + m * m) * fs.kappa(m), rel=1e-12)
    assert fs.kappa(0.0) == 0.0
    # one cluster (m = 0): the mixture is the standard Gaussian
    assert fs.step_moments(0.0, "mixture") == pytest.approx(fs.step_moments(0.0, "gaussian"))


def test_gaussian_moments_are_those_of_he3():
    for m in (0.0, 2.0):
        s2 = 1 + m * m
        k1, y2, y2x2 = fs.step_moments(m, "gaussian")
        assert abs(k1) < 1e-12
        assert y2 == pytest.approx(6.0)  # E He3^2 = 3!
        assert y2x2 == pytest.approx(42.0 * s2)  # E[He3(s)^2 s^2] = 105 - 90 + 27


def test_moments_against_monte_carlo():
    rng = np.random.default_rng(0)
    m, n = 2.0, 400_000
    x1 = np.sign(rng.standard_normal(n)) * m + rng.standard_normal(n)
    y = he(3, x1 / math.sqrt(1 + m * m))
    k1, y2, _ = fs.step_moments(m, "mixture")
    assert np.mean(y * x1) == pytest.approx(k1, abs=5 * np.std(y * x1) / math.sqrt(n))
    assert np.mean(y**2) == pytest.approx(y2, abs=5 * np.std(y**2) / math.sqrt(n))


def test_no_mean_along_e1_gives_zero_overlap_in_the_limit():
    assert fs.step_overlap(2.0, 2.0, 4, "gaussian") < 1e-12
    assert fs.step_overlap(2.0, 2.0, 4, "independent") < 1e-12
    assert fs.step_overlap(0.0, 2.0, 4, "mixture") < 1e-12
    # finite d: order d^{-1/2}
    a, b = (fs.step_overlap(2.0, 2.0, 4, "gaussian", d=d, bulk_norm=True) for d in (1000, 4000))
    assert a / b == pytest.approx(2.0, rel=1e-12)
    # with the fluctuation along e_1 in the norm: below the leading order, the same at large d
    for d in (64, 1000, 10**6):
        full = fs.step_overlap(2.0, 2.0, 4, "gaussian", d=d)
        lead = fs.step_overlap(2.0, 2.0, 4, "gaussian", d=d, bulk_norm=True)
        assert full < lead
    assert full == pytest.approx(lead, rel=1e-4)


def test_finite_d_tends_to_the_limit_and_noise_overlap_is_the_folded_mean():
    lim = fs.step_overlap(2.0, 2.0, 4, "mixture")
    assert fs.step_overlap(2.0, 2.0, 4, "mixture", d=10**8) == pytest.approx(lim, rel=1e-6)
    y2 = fs.step_moments(2.0, "mixture").y2
    assert fs.noise_overlap(y2, 5.0, 2.0, 4, 256) == pytest.approx(
        fs.step_overlap(2.0, 2.0, 4, "independent", d=256), rel=1e-12)
    # E|tau G| / sqrt(tau^2 G^2 + R), R = 1 + eta^2 m2 y2/delta, ReLU m2 = 1/2: Monte Carlo
    tau = math.sqrt(1 / 256 + 4 * 0.5 * y2 / 1024)
    x = tau * np.random.default_rng(0).standard_normal(400_000)
    expect = np.mean(np.abs(x) / np.sqrt(x * x + 1 + 4 * 0.5 * y2 / 4))
    assert fs.noise_overlap(y2, 1.0, 2.0, 4, 256) == pytest.approx(expect, rel=5e-3)


def test_sample_shares_the_noise():
    data = fs.sample_step_data(50, 6, 2.0, rng=3)
    Xm, _ = data["mixture"]
    Xg, _ = data["gaussian"]
    Xi, _ = data["independent"]
    assert np.array_equal(Xm, Xi)
    assert np.array_equal(Xm[:, 1:], Xg[:, 1:])
    assert not np.allclose(data["independent"][1], data["mixture"][1])
    assert Xm.shape == (50, 6)


def test_sweep_matches_the_theory_and_streams_are_per_seed():
    sw = fs.step_sweep([64, 128], 8, rng=7)
    eta_bar = 2.0
    for law in fs.LAWS:
        mean, se = stats.mean_and_error(sw.overlaps[law][:, -1])
        pred = fs.step_overlap(2.0, eta_bar, 4, law, d=128)
        assert abs(mean - pred) <= stats.t_factor(8) * se + 0.01, law
    few = fs.step_sweep([128], 3, rng=7)
    for law in fs.LAWS:
        assert np.allclose(few.overlaps[law][:, 0], sw.overlaps[law][:3, 1])


def test_mixture_step_learns_and_gaussian_does_not():
    sw = fs.step_sweep([128], 4, rng=1)
    assert sw.overlaps["mixture"].min() > 0.8
    assert sw.overlaps["gaussian"].max() < 0.6


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: fs.step_moments(2.0, "uniform"), ValueError),
        (lambda: fs.step_moments(2.0, 3), TypeError),
        (lambda: fs.kappa(-1.0), ValueError),
        (lambda: fs.step_overlap(2.0, 0.0, 4), ValueError),
        (lambda: fs.step_overlap(2.0, 1.0, 4, d=0), ValueError),
        (lambda: fs.step_sweep([64], 0), ValueError),
        (lambda: fs.sample_step_data(0, 4, 1.0), ValueError),
    ],
)
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call()


def test_decay_exponent_of_a_power_law_and_the_laws_subset():
    dims = [64, 128, 256]
    o = np.array([[d**-0.5 for d in dims], [1.1 * d**-0.5 for d in dims]])
    b, se = fs.decay_exponent(dims, o)
    assert b == pytest.approx(-0.5, abs=1e-12)
    # relative standard error 0.05 / 1.05 at every size, times |c| = 1 / (sqrt(2) log 2)
    assert se == pytest.approx(0.05 / 1.05 / (math.sqrt(2) * math.log(2)))
    sub = fs.step_sweep([32], 2, rng=3, laws=("gaussian",))
    full = fs.step_sweep([32], 2, rng=3)
    assert set(sub.overlaps) == {"gaussian"}
    assert np.allclose(sub.overlaps["gaussian"], full.overlaps["gaussian"])
    with pytest.raises(ValueError):
        fs.decay_exponent([64], o[:, :1])
