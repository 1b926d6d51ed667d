"""Tests of lecnotes.two_steps and two_steps_theory (chapter 7): counts, edges, Taylor, reuse."""

import math

import numpy as np
import pytest

from lecnotes import activations as ACT
from lecnotes import linalg, overlaps, rmt, targets
from lecnotes import networks as NW
from lecnotes import two_steps as SP
from lecnotes import two_steps_theory as TST
from lecnotes.hermite import gaussian_expectation

CHAPTERS = (7,)  # the chapters whose code these tests cover: make chapter CH=N


E_HALF = math.exp(-0.5)


# --- activation ------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 1, 2, 3, 6])
def test_sincos_derivatives_by_finite_differences(k):
    z = np.linspace(-3, 3, 13)
    f, df = ACT.sincos_derivative(k), ACT.sincos_derivative(k + 1)
    np.testing.assert_allclose((f(z + 1e-6) - f(z - 1e-6)) / 2e-6, df(z), atol=1e-6)
    np.testing.assert_allclose(ACT.SINCOS.sigma(z), np.sin(z) + np.cos(z), atol=1e-12)


def test_derivative_means_closed_forms():
    mu = ACT.derivative_means(ACT.SINCOS, 6)
    expected = [math.sqrt(2) * E_HALF * math.sin(math.pi / 4 + k * math.pi / 2) for k in range(7)]
    np.testing.assert_allclose(mu, expected, atol=1e-9)
    np.testing.assert_allclose(np.abs(mu), E_HALF, atol=1e-9)  # no vanishing coefficient
    relu = ACT.derivative_means("relu", 5)
    assert relu[1] == pytest.approx(0.5, abs=1e-9)
    assert abs(relu[3]) < 1e-9 and abs(relu[5]) < 1e-9  # bias-free ReLU: odd k >= 3 vanish
    tanh = ACT.derivative_means("tanh", 4)
    assert abs(tanh[2]) < 1e-9 and abs(tanh[4]) < 1e-9
    with pytest.raises(ValueError):
        ACT.sincos_derivative(-1)


# --- theory counts ----------------------------------------------------------------------------
def test_one_step_count_on_the_intervals():
    for ell, (lo, hi) in enumerate(TST.one_step_spike_intervals(8), start=1):
        for alpha in np.linspace(lo, hi, 7)[1:-1]:
            assert TST.one_step_spike_count(alpha) == ell
            e = TST.one_step_exponents(alpha, 12)
            assert np.sum(e > 0) == ell  # the count is the number of growing terms
    ivs = TST.one_step_spike_intervals(5)
    assert ivs[0] == (0.0, 0.25)
    assert all(a[1] == pytest.approx(b[0]) for a, b in zip(ivs, ivs[1:], strict=False))
    assert TST.one_step_spike_count(0.0) == 0
    assert TST.one_step_spike_count(0.39, degree=3) == 3
    np.testing.assert_array_equal(TST.one_step_spike_count(np.array([0.1, 0.29, 0.35])), [1, 2, 3])


def test_two_step_count_table_and_cap():
    a1 = np.array([0.05, 0.25, 0.4])[:, None]
    a2 = np.array([0.06, 0.28, 0.42])[None, :]
    np.testing.assert_array_equal(TST.two_step_new_outliers(a1, a2),
                                  [[0, 0, 0], [0, 1, 1], [0, 2, 4]])
    np.testing.assert_array_equal(TST.two_step_new_outliers(a1, a2, degree=3),
                                  [[0, 0, 0], [0, 1, 1], [0, 2, 2]])
    assert TST.two_step_new_outliers(0.3, 0.15) == 0  # alpha1 + alpha2 < 1/2: nothing new
    e = TST.two_step_exponents(0.4, 0.35, 6)
    assert e[0] == pytest.approx(0.35) and np.sum(e[1:] > 0) == TST.two_step_new_outliers(0.4, 0.35)


@pytest.mark.parametrize("bad", [-0.1, 0.5, float("nan"), 0.7])
def test_theory_bad_exponents(bad):
    for call in (lambda: TST.one_step_spike_count(bad), lambda: TST.two_step_new_outliers(bad, 0.1),
                 lambda: TST.two_step_new_outliers(0.1, bad),
                 lambda: TST.one_step_exponents(bad, 3)):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError):
        TST.one_step_spike_intervals(0)
    with pytest.raises(ValueError):
        TST.two_step_new_outliers(0.1, 0.2, degree=0)


def test_effective_neurons_matches_participation_ratio():
    a = np.random.default_rng(0).standard_normal(400_000)
    for k in (1, 2):
        assert rmt.localisation(a**k) == pytest.approx(TST.effective_neurons(k, a.size), rel=0.05)
    assert TST.effective_neurons(1, 300) == pytest.approx(100.0)
    with pytest.raises(ValueError):
        TST.effective_neurons(0, 10)


# --- bulk edge and counting -------------------------------------------------------------------
def _gaussian(p, d, seed, variance=1.0):
    return np.random.default_rng(seed).standard_normal((p, d)) * math.sqrt(variance / d)


def test_fit_bulk_edge_on_marchenko_pastur_and_spikes():
    W = _gaussian(600, 600, 0)
    s = linalg.singular_values(W)
    b = rmt.fit_bulk_edge(s)
    assert b.edge == pytest.approx(2.0, rel=0.01) and b.scale > 0
    rng = np.random.default_rng(1)
    U = np.linalg.qr(rng.standard_normal((600, 3)))[0]
    Vv = np.linalg.qr(rng.standard_normal((600, 3)))[0]
    spiked = W + U @ np.diag([6.0, 4.0, 3.0]) @ Vv.T
    s2 = linalg.singular_values(spiked)
    b2 = rmt.fit_bulk_edge(s2)
    assert b2.edge == pytest.approx(2.0, rel=0.015)
    assert rmt.count_outliers(s2, b2, margin=1.5) == 3
    assert rmt.count_outliers(s, b, margin=1.5) == 0
    assert b2.threshold(2.0) == pytest.approx(b2.edge + 2 * b2.scale)
    both = np.stack([np.sort(s)[::-1][:12], np.sort(s2)[::-1][:12]])
    np.testing.assert_array_equal(
        rmt.outlier_counts(both, np.array([b.edge, b2.edge]), np.array([b.scale, b2.scale]), 1.5),
        [0, 3])
    with pytest.raises(ValueError):
        rmt.outlier_counts(both, np.array([b.edge]), np.array([b.scale]))


def test_marchenko_pastur_edge_and_null_margin():
    W = _gaussian(400, 600, 2, variance=2.0)
    b = rmt.marchenko_pastur_edge(linalg.singular_values(W), 400, 600)
    assert b.edge == pytest.approx(math.sqrt(2) * (1 + math.sqrt(400 / 600)), rel=0.01)
    nulls = [linalg.singular_values(_gaussian(300, 300, s)) for s in range(6)]
    m = rmt.null_margin(nulls)
    assert np.isfinite(m) and -3 < m < 6
    for s in nulls:  # the calibrated margin keeps the null spectra free of outliers
        assert rmt.count_outliers(s, rmt.fit_bulk_edge(s), m) == 0


def test_edge_bad_input():
    s = linalg.singular_values(_gaussian(80, 80, 3))
    with pytest.raises(ValueError):
        rmt.fit_bulk_edge(s[:30])  # shorter than the fit range
    with pytest.raises(ValueError):
        rmt.fit_bulk_edge(s, (10, 12))
    with pytest.raises(ValueError):
        rmt.fit_bulk_edge(s, 10)
    with pytest.raises(ValueError):
        rmt.fit_bulk_edge(-s)
    with pytest.raises(ValueError):
        rmt.marchenko_pastur_edge(s[:40], 80, 80)
    with pytest.raises(ValueError):
        rmt.null_margin([s])
    with pytest.raises(ValueError):
        rmt.count_outliers(s, 2.0)
    with pytest.raises(ValueError):
        linalg.singular_values(np.zeros((0, 3)))


# --- alignment measures -------------------------------------------------------------------
def test_localisation_mean_update_and_alignment():
    assert rmt.localisation(np.eye(5)[2]) == pytest.approx(1.0)
    assert rmt.localisation(np.ones(7)) == pytest.approx(7.0)
    with pytest.raises(ValueError):
        rmt.localisation(np.zeros(3))
    rng = np.random.default_rng(0)
    W = rng.standard_normal((6, 4))
    a = np.array([1.0, -2.0, 0.5, -1.0, 3.0, -0.5])
    v = rng.standard_normal(4)
    np.testing.assert_allclose(overlaps.mean_update(W, W + np.outer(a, v), a),
                               np.mean(np.abs(a)) * v)
    assert overlaps.update_alignment(W, W + np.outer(a, v), a, 3 * v) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        overlaps.mean_update(W, W[:5], a)
    with pytest.raises(ValueError):
        overlaps.mean_update(W, W, a[:5])
    with pytest.raises(ValueError):
        overlaps.mean_update(W, W, np.zeros(6))


@pytest.mark.parametrize("n", [4, 5, 9])
def test_hermite_alignment_samples_on_axis_0_even_when_n_is_kmax_plus_1(n):
    # the reference, written out: |<U_c, h_k>| for the centred, normalised He_k(t_hat) columns;
    # n = kmax + 1 = 4 is the case where guessing the orientation from the shapes went wrong
    rng = np.random.default_rng(n)
    t, U, kmax = rng.standard_normal(n), rng.standard_normal((n, 2)), 3
    z = (t - t.mean()) / t.std()
    H = np.stack([z, z**2 - 1, z**3 - 3 * z], axis=1)
    H = H - H.mean(axis=0)
    H /= np.linalg.norm(H, axis=0)
    ref = np.abs(H.T @ (U / np.linalg.norm(U, axis=0)))
    np.testing.assert_allclose(SP.hermite_alignment(U, t, kmax), ref, rtol=1e-12, atol=1e-12)


def test_hermite_alignment_finds_the_degree():
    x = np.random.default_rng(1).standard_normal(2500)
    t = np.concatenate([x, -x])  # symmetric sample: odd and even features exactly orthogonal
    h2 = t**2 - 1
    h2 = (h2 - h2.mean()) / np.linalg.norm(h2 - h2.mean())
    A = SP.hermite_alignment(h2, 3 * t, 3)
    assert A.shape == (3, 1)
    assert A[1, 0] == pytest.approx(1.0, abs=1e-3) and A[0, 0] < 1e-10 and A[2, 0] < 1e-10
    with pytest.raises(ValueError):
        SP.hermite_alignment(h2[:10], t, 3)
    with pytest.raises(ValueError):
        SP.hermite_alignment(h2, np.ones(5000), 3)


# --- features and Taylor terms -------------------------------------------------------------
def _small_setting(N=24, d=20, n=30, seed=0):
    rng = np.random.default_rng(seed)
    W0, a = NW.linear_width_init(N, d, rng)
    X = rng.standard_normal((n, d))
    y = targets.two_direction_link(X[:, :2])
    return W0, a, X, y, rng


def test_feature_matrix_is_centred():
    W0, a, X, y, _ = _small_setting()
    F = SP.feature_matrix(W0, X, ACT.SINCOS)
    assert F.shape == (30, 24)
    np.testing.assert_allclose(F.mean(axis=0), 0, atol=1e-12)


def test_feature_taylor_terms_sum_to_the_step():
    W0, a, X, y, rng = _small_setting()
    (W1,) = NW.multi_step(W0, a, [(X, y)], 1.0, ACT.SINCOS, "correlation", scaling=24**-0.5)
    D, eta = W1 - W0, 0.7
    Xt = rng.standard_normal((30, 20))
    terms = SP.feature_taylor_terms(W0, D, Xt, 14)
    approx = sum(eta ** (k + 1) * F for k, F in enumerate(terms))
    exact = SP.feature_matrix(W0 + eta * D, Xt, ACT.SINCOS) - SP.feature_matrix(W0, Xt, ACT.SINCOS)
    np.testing.assert_allclose(approx, exact, atol=1e-10)
    with pytest.raises(ValueError):
        SP.feature_taylor_terms(W0, D[:3], Xt, 2)
    with pytest.raises(ValueError):
        SP.feature_taylor_terms(W0, D, Xt, 2, derivative=3)


@pytest.mark.parametrize("reuse", [True, False])
def test_second_step_taylor_terms_sum_to_the_second_update(reuse):
    W0, a, X, y, rng = _small_setting(seed=3)
    X2 = X if reuse else rng.standard_normal(X.shape)
    y2 = y if reuse else targets.two_direction_link(X2[:, :2])
    s, eta1 = 24**-0.5, 0.8
    W1, W2u = NW.multi_step(W0, a, [(X, y), (X2, y2)], [eta1, 1.0], ACT.SINCOS, "correlation",
                           scaling=s)
    (D,) = NW.multi_step(W0, a, [(X, y)], 1.0, ACT.SINCOS, "correlation", scaling=s)
    terms = SP.second_step_taylor_terms(W0, a, D - W0, X2, y2, 16, scaling=s)
    approx = sum(eta1**k * T for k, T in enumerate(terms))
    np.testing.assert_allclose(approx, W2u - W1, atol=1e-10)
    with pytest.raises(ValueError):
        SP.second_step_taylor_terms(W0, a[:5], D - W0, X2, y2, 2)


def test_projected_strength_of_a_rank_one_matrix():
    rng = np.random.default_rng(0)
    left, right = rng.standard_normal(7), rng.standard_normal(5)
    M = 3.0 * np.outer(left, right)
    assert SP.projected_strength(M, left) == pytest.approx(3.0 * np.linalg.norm(left)
                                                           * np.linalg.norm(right))
    assert SP.projected_strength(M, right, side="right") == pytest.approx(
        3.0 * np.linalg.norm(left) * np.linalg.norm(right))
    with pytest.raises(ValueError):
        SP.projected_strength(M, right)
    with pytest.raises(ValueError):
        SP.projected_strength(M, left, side="up")
    with pytest.raises(ValueError):
        SP.projected_strength(M, np.zeros(7))


def test_targets_and_initialisation():
    Z = np.random.default_rng(2).standard_normal((200_000, 2))
    y = targets.two_direction_link(Z)
    assert np.mean(y**2) == pytest.approx(1.0, abs=0.03)
    assert np.mean(y * Z[:, 1]) == pytest.approx(0.0, abs=0.01)  # He_3 direction: no c_1
    assert gaussian_expectation(lambda g: targets.HE3(g) ** 2) == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError):
        targets.two_direction_link(Z[:, 0])
    W0, a = NW.linear_width_init(300, 200, rng=0)
    assert W0.shape == (300, 200) and a.shape == (300,)
    assert np.mean(np.sum(W0**2, axis=1)) == pytest.approx(1.0, abs=0.02)
    _, s = NW.linear_width_init(10, 4, rng=0, second_layer="sign")
    assert set(np.unique(s)) <= {-1.0, 1.0}
    with pytest.raises(ValueError):
        NW.linear_width_init(10, 4, second_layer="uniform")


# --- simulations (tiny sizes: shapes and reproducibility) ------------------------------------
def test_simulations_shapes_and_seeds():
    r = SP.rank_one_ratio([40, 60], 2, rng=5)
    assert r.shape == (2, 2) and np.all((r > 0) & (r < 1))
    np.testing.assert_array_equal(r, SP.rank_one_ratio([40, 60], 2, rng=5))
    one = SP.simulate_one_step_spikes(60, [0.2, 0.3], 1, fit_range=(8, 20), kmax=3, rng=1)
    assert one["s"].shape == (1, 2, 12) and one["align"].shape == (1, 2, 3, 6)
    assert one["null"].shape == (1, 60) and np.all(one["edge"] > 0)
    two = SP.simulate_two_step_counts(60, [0.1, 0.3], [0.2], 1, reuse=False, fit_range=(8, 20),
                                      rng=2)
    assert two["s2"].shape == (1, 2, 1, 12) and two["s1"].shape == (1, 2, 12)
    tay = SP.taylor_strengths([40, 60], 1, 2, rng=3)
    assert tay["features"].shape == (1, 2, 2) and tay["second"].shape == (1, 2, 3)
    for link in (None, "two-direction"):
        reu = SP.simulate_reuse([30, 40], 2.0, 10, 1.0, 1, rng=4, link=link)
        for kind in ("reuse", "fresh"):
            assert reu[kind]["new"].shape == (1, 2)
            assert np.all((reu[kind]["new"] >= 0) & (reu[kind]["new"] <= 1))
    again = SP.simulate_reuse([30, 40], 2.0, 10, 1.0, 1, rng=4)
    np.testing.assert_array_equal(again["reuse"]["along"],
                                  SP.simulate_reuse([30, 40], 2.0, 10, 1.0, 1, rng=4)["reuse"]
                                  ["along"])
    with pytest.raises(ValueError):
        SP.simulate_reuse([], 2.0, 10, 1.0, 1)
    with pytest.raises(ValueError):
        SP.simulate_reuse([30], 2.0, 1, 1.0, 1)
    with pytest.raises(ValueError):
        SP.rank_one_ratio([], 1)
    with pytest.raises(ValueError):
        SP.simulate_two_step_counts(60, [0.6], [0.1], 1)


# --- the reused batch ---------------------------------------------------------------------
def test_self_term_is_the_own_sample_part_of_the_shift():
    rng = np.random.default_rng(0)
    n, d, p, eta = 9, 6, 5, 2.5
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    W0, a = rng.standard_normal((p, d)) / math.sqrt(d), rng.choice([-1.0, 1.0], p) / p
    (W1,) = NW.multi_step(W0, a, [(X, y)], eta, "tanh", "correlation", scaling=1.0)
    shift = X @ (W1 - W0).T
    ds = ACT.get_activation("tanh").dsigma(X @ W0.T)
    others = np.empty((n, p))
    for i in range(n):  # the other samples' contribution, sample by sample (reference)
        keep = np.arange(n) != i
        g = (ds[keep] * y[keep, None]).T @ X[keep] / n
        others[i] = eta * a * (g @ X[i])
    np.testing.assert_allclose(SP.self_term(X, y, W0, a, eta, ACT.get_activation("tanh").dsigma),
                               shift - others, atol=1e-12)
    with pytest.raises(ValueError):
        SP.self_term(X, y, W0, a, eta, 3.0)
    with pytest.raises(ValueError):
        SP.self_term(X, y[:4], W0, a, eta, np.cos)


def test_reuse_preprocessing_symmetries():
    y = np.linspace(-3, 3, 13)
    T = TST.reuse_preprocessing("tanh", 1.0, 2.0)
    np.testing.assert_allclose(T(-y), -T(y), atol=1e-12)  # odd: an even sigma' survives
    naive = TST.reuse_preprocessing("relu", 1.0, 2.0, self_factor=False)
    np.testing.assert_allclose(naive(y), y / 2, atol=1e-12)  # constant even part of the step
    exact = TST.reuse_preprocessing("relu", 1.0, 2.0)
    assert np.max(np.abs(exact(y) - y / 2)) > 0.05  # the factor sigma'(z) breaks it
    small = TST.reuse_preprocessing("tanh", 1e-6, 2.0)
    mu1 = ACT.derivative_means("tanh", 1)[1]
    np.testing.assert_allclose(small(y), mu1 * y, rtol=1e-4)  # no step: T(y) = E[sigma'] y


def test_reuse_stein_coefficient_against_monte_carlo():
    c, delta = 1.0, 2.0
    mu_t = TST.reuse_stein_coefficient(targets.HE3, "tanh", c, delta)
    rng = np.random.default_rng(0)
    M = 400_000
    G, Z, nu = rng.standard_normal((3, M))
    b = rng.choice([-1.0, 1.0], M)
    m2 = ACT.derivative_means((lambda u: np.tanh(u), lambda u: 1 / np.cosh(u) ** 2), 1)  # noqa
    ds = ACT.get_activation("tanh").dsigma
    Y = targets.HE3(G)
    s_nu = math.sqrt(delta * np.mean(ds(rng.standard_normal(10**6)) ** 2))
    with np.errstate(over="ignore"):
        vals = Y * G * ds(Z + b * c * (Y * ds(Z) + s_nu * nu))
    assert mu_t == pytest.approx(vals.mean(), abs=4 * vals.std() / math.sqrt(M))
    assert m2.shape == (2,)
    relu_naive = TST.reuse_stein_coefficient(targets.HE3, "relu", c, delta, self_factor=False)
    relu = TST.reuse_stein_coefficient(targets.HE3, "relu", c, delta)
    assert abs(relu_naive) < 1e-9 and relu < -0.01
    with pytest.raises(ValueError):
        TST.reuse_stein_coefficient("linear", "tanh", c, delta)  # c_1 != 0
    with pytest.raises(ValueError):
        TST.reuse_preprocessing("tanh", 0.0, delta)
