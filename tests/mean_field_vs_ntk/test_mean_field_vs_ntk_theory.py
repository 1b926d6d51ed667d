"""Tests of the closed forms and mean-field experiments of chapter 1 (mean_field_vs_ntk_theory)."""

import math

import numpy as np
import pytest

from lecnotes.core.hermite import gaussian_expectation
from lecnotes.mean_field_vs_ntk import theory as T
from lecnotes.models.kernels import relu_ntk

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


def _small_net(m=6, d=5, seed=0):
    from lecnotes.models.networks import init_params
    W, a = init_params(m, d, rng=seed)
    W = W + 0.3 * np.random.default_rng(seed + 1).standard_normal(W.shape)  # break the pairs
    a = a + 0.2 * np.random.default_rng(seed + 2).standard_normal(m)
    return W, a, np.eye(d)[0]


def test_population_risk_matches_monte_carlo():
    W, a, ws = _small_net()
    X = np.random.default_rng(3).standard_normal((400_000, 5))
    f = np.maximum(X @ W.T, 0) @ a / len(a)
    y = X[:, 0] + (X[:, 0] ** 2 - 1) / np.sqrt(2)
    err = 0.5 * (f - y) ** 2
    risk = T.population_gradients(W, a, ws)[2]
    assert abs(err.mean() - risk) < 5 * err.std() / np.sqrt(err.size)


def test_population_gradients_match_finite_differences():
    W, a, ws = _small_net()
    gW, ga, _ = T.population_gradients(W, a, ws)
    h = 1e-6
    for idx in [(0, 0), (2, 3), (5, 1)]:
        Wp, Wm = W.copy(), W.copy()
        Wp[idx] += h
        Wm[idx] -= h
        fd = (T.population_gradients(Wp, a, ws)[2] - T.population_gradients(Wm, a, ws)[2]) / (2 * h)
        assert fd == pytest.approx(gW[idx], abs=1e-7)
    ap = a.copy()
    ap[4] += h
    fd = (T.population_gradients(W, ap, ws)[2] - T.population_gradients(W, a, ws)[2]) / h
    assert fd == pytest.approx(ga[4], abs=1e-5)


def test_risk_invariant_under_rotations_fixing_w_star():
    W, a, ws = _small_net()
    Q = np.eye(5)
    Q[1:, 1:] = np.linalg.qr(np.random.default_rng(4).standard_normal((4, 4)))[0]
    assert T.population_gradients(W @ Q.T, a, ws)[2] == pytest.approx(
        T.population_gradients(W, a, ws)[2], rel=1e-12)


def test_reduced_particles_keep_the_invariants_and_are_exact_for_one_pair():
    from lecnotes.models.networks import init_params
    W, a = init_params(8, 20, rng=5)
    ws = np.eye(20)[0]
    Wr, e0, mask = T.reduced_start(W, a, ws)
    assert Wr.shape == (8, 5) and np.allclose(Wr @ e0, W @ ws)
    assert np.allclose(np.linalg.norm(Wr, axis=1), np.linalg.norm(W, axis=1))
    assert T.population_gradients(Wr, a, e0)[2] == pytest.approx(1.0)   # f = 0 at the start
    # one symmetric pair spans (w*, its own direction): the reduction is exact
    W2, a2 = init_params(2, 6, rng=6)
    Wr2, e02, mask2 = T.reduced_start(W2, a2, np.eye(6)[0])
    full = T.population_descent(W2, a2, np.eye(6)[0], 0.5, 30)
    red = T.population_descent(Wr2, a2, e02, 0.5, 30, mask2)
    assert np.allclose(full, red, atol=1e-12) and full[-1] < full[0]


def test_reduction_sweep_gap_shrinks_with_width():
    out = T.reduction_sweep([16, 64], seeds=2, steps=20, rng=0)
    assert out.shape == (2, 2, 2, 21)
    gap = np.abs(out[:, :, 0] - out[:, :, 1]).max(-1).mean(0)
    assert gap[1] < gap[0] / 2
    with pytest.raises(ValueError):
        T.reduced_start(np.ones((3, 4)), np.ones(3), np.eye(4)[0])


@pytest.mark.parametrize("call", [
    lambda: T.payoff_runs([16], seeds=0),
    lambda: T.payoff_runs([16.5], seeds=1),
    lambda: T.payoff_runs([16], seeds=1, lam=-1.0),
    lambda: T.chaos_sweep(0, 16, [8], inits=2, steps=1),
    lambda: T.chaos_sweep(4, 16, [8], inits=2, steps=1, eta0=float("nan")),
    lambda: T.reduction_sweep([1.5], seeds=1, steps=1),
    lambda: T.reduction_sweep([8], seeds=1, steps=0),
])
def test_sweeps_refuse_bad_input(call):
    with pytest.raises(ValueError):
        call()
