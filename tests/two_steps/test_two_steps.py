"""Tests of lecnotes.two_steps (chapter 7): counts, edges, Taylor, reuse."""

import math

import numpy as np
import pytest

from lecnotes.core import activations as ACT
from lecnotes.core import linalg, overlaps, rmt, targets
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.models import layerwise as LW
from lecnotes.models import networks as NW
from lecnotes.two_steps import experiments as SP
from lecnotes.two_steps import theory as TST

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
    mu = ACT.hermite_moments(ACT.SINCOS, 6)
    expected = [math.sqrt(2) * E_HALF * math.sin(math.pi / 4 + k * math.pi / 2) for k in range(7)]
    np.testing.assert_allclose(mu, expected, atol=1e-9)
    np.testing.assert_allclose(np.abs(mu), E_HALF, atol=1e-9)  # no vanishing coefficient
    relu = ACT.hermite_moments("relu", 5)
    assert relu[1] == pytest.approx(0.5, abs=1e-9)
    assert abs(relu[3]) < 1e-9 and abs(relu[5]) < 1e-9  # bias-free ReLU: odd k >= 3 vanish
    tanh = ACT.hermite_moments("tanh", 4)
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


def test_marchenko_pastur_edge():
    W = _gaussian(400, 600, 2, variance=2.0)
    b = rmt.marchenko_pastur_edge(linalg.singular_values(W), 400, 600)
    assert b.edge == pytest.approx(math.sqrt(2) * (1 + math.sqrt(400 / 600)), rel=0.01)


def _spiked(N, theta, seed):
    """A Gaussian N x N matrix (entries of variance 1/N) plus theta u v^T, u, v unit vectors."""
    rng = np.random.default_rng(seed)
    u, v = (x / np.linalg.norm(x) for x in rng.standard_normal((2, N)))
    return _gaussian(N, N, seed + 1) + theta * np.outer(u, v)


def test_null_margin_calibrated_on_independent_nulls_has_size_and_power():
    # The margin is calibrated on 8 null spectra (seeds 0-7) and then applied to *other*
    # matrices: 20 fresh nulls (seeds 100-119) must show no outlier (size), a spike with
    # theta = 2 (top singular value theta + 1/theta = 2.5, against an edge at 2 and a scale of
    # about 0.04) must be counted (power), and one below the BBP threshold theta = 1, which
    # stays at the edge, must not. A margin calibrated on the spectra it checks cannot fail
    # on them; this one can, on either side.
    N = 300
    m = rmt.null_margin([linalg.singular_values(_gaussian(N, N, s)) for s in range(8)])
    assert 0 < m < 6
    fresh = [linalg.singular_values(_gaussian(N, N, 100 + s)) for s in range(20)]
    assert sum(rmt.count_outliers(s, rmt.fit_bulk_edge(s), m) for s in fresh) == 0
    for theta, expected in ((0.8, 0), (2.0, 1)):
        s = linalg.singular_values(_spiked(N, theta, 200))
        assert rmt.count_outliers(s, rmt.fit_bulk_edge(s), m) == expected
    # the spike of theta = 2 sits at theta + 1/theta (BBP), well above the threshold
    s = linalg.singular_values(_spiked(N, 2.0, 200))
    b = rmt.fit_bulk_edge(s)
    assert s[0] == pytest.approx(2.5, rel=0.03) and s[0] > b.threshold(m) + 5 * b.scale


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
    W0, a = NW.init_params(N, d, rng=rng, symmetric=False, second_layer="gaussian")
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
    (W1,) = LW.multi_step(W0, a, [(X, y)], 1.0, ACT.SINCOS, "correlation", scaling=24**-0.5)
    D, eta = W1 - W0, 0.7
    Xt = rng.standard_normal((30, 20))
    terms = TST.feature_taylor_terms(W0, D, Xt, 14)
    approx = sum(eta ** (k + 1) * F for k, F in enumerate(terms))
    exact = SP.feature_matrix(W0 + eta * D, Xt, ACT.SINCOS) - SP.feature_matrix(W0, Xt, ACT.SINCOS)
    np.testing.assert_allclose(approx, exact, atol=1e-10)
    with pytest.raises(ValueError):
        TST.feature_taylor_terms(W0, D[:3], Xt, 2)
    with pytest.raises(ValueError):
        TST.feature_taylor_terms(W0, D, Xt, 2, derivative=3)


@pytest.mark.parametrize("reuse", [True, False])
def test_second_step_taylor_terms_sum_to_the_second_update(reuse):
    W0, a, X, y, rng = _small_setting(seed=3)
    X2 = X if reuse else rng.standard_normal(X.shape)
    y2 = y if reuse else targets.two_direction_link(X2[:, :2])
    s, eta1 = 24**-0.5, 0.8
    W1, W2u = LW.multi_step(W0, a, [(X, y), (X2, y2)], [eta1, 1.0], ACT.SINCOS, "correlation",
                           scaling=s)
    (D,) = LW.multi_step(W0, a, [(X, y)], 1.0, ACT.SINCOS, "correlation", scaling=s)
    terms = TST.second_step_taylor_terms(W0, a, D - W0, X2, y2, 16, scaling=s)
    approx = sum(eta1**k * T for k, T in enumerate(terms))
    np.testing.assert_allclose(approx, W2u - W1, atol=1e-10)
    with pytest.raises(ValueError):
        TST.second_step_taylor_terms(W0, a[:5], D - W0, X2, y2, 2)


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


def test_targets():
    Z = np.random.default_rng(2).standard_normal((200_000, 2))
    y = targets.two_direction_link(Z)
    assert np.mean(y**2) == pytest.approx(1.0, abs=0.03)
    assert np.mean(y * Z[:, 1]) == pytest.approx(0.0, abs=0.01)  # He_3 direction: no c_1
    assert gaussian_expectation(lambda g: targets.HE3(g) ** 2) == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError):
        targets.two_direction_link(Z[:, 0])


# --- simulations: written-out references on tiny sizes ----------------------------------------
def _first_update_by_hand(N, rng, link="linear", test_inputs=False, second_layer="gaussian"):
    """The draws of the chapter's setting, written out: batch, test inputs, W0, a, D."""
    w = rng.standard_normal(N)
    w /= np.linalg.norm(w)
    X = rng.standard_normal((N, N))
    y = targets.get_link(link)(X @ w)
    Xt = rng.standard_normal((N, N)) if test_inputs else None
    W0 = rng.standard_normal((N, N)) / math.sqrt(N)
    a = rng.standard_normal(N) if second_layer == "gaussian" else rng.choice([-1.0, 1.0], N)
    ds = ACT.SINCOS.dsigma(X @ W0.T)
    D = (N**-0.5 / N) * a[:, None] * ((ds * y[:, None]).T @ X)  # -grad of -(1/n) sum y f
    return X, y, Xt, W0, a, D


def test_single_index_draw_order_used_by_the_references():
    # the written-out references below rely on single_index drawing w_star, then X
    rng, ref = np.random.default_rng(0), np.random.default_rng(0)
    X, y, w = targets.single_index(7, 5, "linear", rng=rng)
    w_ref = ref.standard_normal(5)
    w_ref /= np.linalg.norm(w_ref)
    np.testing.assert_allclose(w, w_ref)
    np.testing.assert_allclose(X, ref.standard_normal((7, 5)))


def test_rank_one_ratio_against_a_written_out_reference():
    r = SP.rank_one_ratio([40, 60], 2, rng=5)
    ref = np.empty((2, 2))
    for j, N in enumerate((40, 60)):
        for k in range(2):  # one stream per (size, seed)
            s = np.linalg.svd(_first_update_by_hand(N, V.stream(5, N, k))[-1], compute_uv=False)
            ref[k, j] = s[1] / s[0]
    np.testing.assert_allclose(r, ref, rtol=1e-10)
    assert np.all((r > 0) & (r < 1))
    with pytest.raises(ValueError):
        SP.rank_one_ratio([], 1)


def test_one_step_spikes_against_a_written_out_reference():
    N, alphas = 60, [0.2, 0.3]
    one = SP.simulate_one_step_spikes(N, alphas, 1, fit_range=(8, 20), kmax=3, rng=1)
    _, _, Xt, W0, _, D = _first_update_by_hand(N, V.stream(1, 0), test_inputs=True)
    for j, al in enumerate(alphas):
        F = ACT.SINCOS.sigma(Xt @ (W0 + N**al * D).T)
        F = (F - F.mean(axis=0)) / math.sqrt(N)
        s = np.linalg.svd(F, compute_uv=False)
        np.testing.assert_allclose(one.s[0, j], s[:12], rtol=1e-9)
        assert one.edge[0, j] == pytest.approx(rmt.fit_bulk_edge(s, (8, 20)).edge, rel=1e-9)
    assert one.align.shape == (1, 2, 3, 6) and np.all((one.align >= 0) & (one.align <= 1))
    assert one.localisation.shape == (1, 2, 6) and np.all(one.localisation >= 1)


@pytest.mark.parametrize("reuse", [True, False])
def test_two_step_counts_use_the_linearity_of_the_second_step(reuse):
    # W2 = W1 + N^a2 U2 for every a2: the same as taking the second step with eta2 = N^a2
    N, a1, a2 = 60, 0.3, 0.2
    two = SP.simulate_two_step_counts(N, [0.1, a1], [a2], 1, reuse=reuse, rng=2)
    rng = V.stream(2, 0)
    X, y, w = targets.single_index(N, N, "linear", rng=rng)
    second = (X, y) if reuse else targets.single_index(N, N, "linear", rng=rng, w_star=w)[:2]
    W0, a = NW.init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    W1, W2 = LW.multi_step(W0, a, [(X, y), second], [N**a1, N**a2], ACT.SINCOS, "correlation",
                           scaling=N**-0.5)
    np.testing.assert_allclose(two.s1[0, 1], linalg.singular_values(W1)[:8], rtol=1e-9)
    np.testing.assert_allclose(two.s2[0, 1, 0], linalg.singular_values(W2)[:8], rtol=1e-9)
    with pytest.raises(ValueError):
        SP.simulate_two_step_counts(60, [0.6], [0.1], 1)


def test_taylor_strengths_against_a_written_out_reference():
    tay = SP.taylor_strengths([40], 1, 2, second_layer="sign", rng=3)
    X, y, Xt, W0, a, D = _first_update_by_hand(40, V.stream(3, 40, 0), test_inputs=True,
                                               second_layer="sign")
    # k = 1: F_1 = sigma'(Xt W0^T) * (Xt D^T), centred, / sqrt(n), projected on a
    F1 = ACT.SINCOS.dsigma(Xt @ W0.T) * (Xt @ D.T)
    F1 = (F1 - F1.mean(axis=0)) / math.sqrt(40)
    assert tay.features[0, 0, 0] == pytest.approx(np.linalg.norm(F1 @ a) / np.linalg.norm(a))
    # k = 0 of the second step: T_0 = D itself (the reused batch at W0), projected on a
    assert tay.second[0, 0, 0] == pytest.approx(np.linalg.norm(a @ D) / np.linalg.norm(a))
    assert tay.second.shape == (1, 1, 3)


@pytest.mark.parametrize("link", [None, "two-direction"])
def test_simulate_reuse_against_a_written_out_reference(link):
    d, delta, p, c = 30, 2.0, 10, 1.0
    reu = SP.simulate_reuse([d], delta, p, c, 1, rng=4, link=link)
    rng, n = V.stream(4, d, 0), int(delta * d)
    if link is None:
        X, y, w = targets.single_index(2 * n, d, targets.HE3, rng=rng)
        w_first = w
    else:
        X, y, Ws = targets.multi_index(2 * n, d, targets.two_direction_link, 2, rng=rng)
        w_first, w = Ws
    W0 = rng.standard_normal((p, d)) / math.sqrt(d)
    b = np.where(np.arange(p) % 2 == 0, 1.0, -1.0)
    rng.shuffle(b)
    a, eta, ds = b / p, c * p * delta, ACT.get_activation("tanh").dsigma

    def step(W, Xb, yb):  # correlation loss, f = sum_j a_j tanh(<w_j, x>)
        return W + eta * a[:, None] * ((ds(Xb @ W.T) * yb[:, None]).T @ Xb) / Xb.shape[0]

    def mean_update(Wa, Wb):
        return np.sum(np.sign(a)[:, None] * (Wb - Wa), axis=0) / p

    W1 = step(W0, X[:n], y[:n])
    m1 = mean_update(W0, W1)
    assert reu.first[0, 0] == pytest.approx(abs(m1 @ w_first) / np.linalg.norm(m1), rel=1e-9)
    m1 /= np.linalg.norm(m1)
    for arm, (Xb, yb) in ((reu.reuse, (X[:n], y[:n])), (reu.fresh, (X[n:], y[n:]))):
        m = mean_update(W1, step(W1, Xb, yb))
        new = m - (m @ m1) * m1
        assert arm.new[0, 0] == pytest.approx(abs(new @ w) / np.linalg.norm(new), rel=1e-9)
        assert arm.along[0, 0] == pytest.approx((new @ w) / (c * delta), rel=1e-9)
    with pytest.raises(ValueError):
        SP.simulate_reuse([], 2.0, 10, 1.0, 1)
    with pytest.raises(ValueError):
        SP.simulate_reuse([30], 2.0, 1, 1.0, 1)


# --- the reused batch ---------------------------------------------------------------------
def test_self_term_is_the_own_sample_part_of_the_shift():
    rng = np.random.default_rng(0)
    n, d, p, eta = 9, 6, 5, 2.5
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    W0, a = rng.standard_normal((p, d)) / math.sqrt(d), rng.choice([-1.0, 1.0], p) / p
    (W1,) = LW.multi_step(W0, a, [(X, y)], eta, "tanh", "correlation", scaling=1.0)
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
    mu1 = ACT.hermite_moments("tanh", 1)[1]  # E[tanh'(G)]
    np.testing.assert_allclose(small(y), mu1 * y, rtol=1e-4)  # no step: T(y) = E[sigma'] y


def test_reuse_stein_coefficient_against_monte_carlo():
    c, delta = 1.0, 2.0
    mu_t = TST.reuse_stein_coefficient(targets.HE3, "tanh", c, delta)
    rng = np.random.default_rng(0)
    M = 400_000
    G, Z, nu = rng.standard_normal((3, M))
    b = rng.choice([-1.0, 1.0], M)
    ds = ACT.get_activation("tanh").dsigma
    Y = targets.HE3(G)
    s_nu = math.sqrt(delta * np.mean(ds(rng.standard_normal(10**6)) ** 2))
    with np.errstate(over="ignore"):
        vals = Y * G * ds(Z + b * c * (Y * ds(Z) + s_nu * nu))
    assert mu_t == pytest.approx(vals.mean(), abs=4 * vals.std() / math.sqrt(M))
    relu_naive = TST.reuse_stein_coefficient(targets.HE3, "relu", c, delta, self_factor=False)
    relu = TST.reuse_stein_coefficient(targets.HE3, "relu", c, delta)
    assert abs(relu_naive) < 1e-9 and relu < -0.01
    with pytest.raises(ValueError):
        TST.reuse_stein_coefficient("linear", "tanh", c, delta)  # c_1 != 0
    with pytest.raises(ValueError):
        TST.reuse_preprocessing("tanh", 0.0, delta)


def test_simulations_use_keyed_streams():
    # adding a size or a seed leaves the other draws unchanged (one stream per (size, seed))
    np.testing.assert_array_equal(SP.rank_one_ratio([40], 1, rng=5),
                                  SP.rank_one_ratio([60, 40], 2, rng=5)[:1, 1:])
    one = SP.simulate_reuse([30], 2.0, 10, 1.0, 1, rng=4)
    two = SP.simulate_reuse([40, 30], 2.0, 10, 1.0, 2, rng=4)
    assert one.reuse.along[0, 0] == two.reuse.along[0, 1]


def test_expected_max_abs_gaussian_and_rank_one_slope():
    """E max |a_j| against Monte Carlo and its sqrt(2 ln N) growth; the slope of s_2/s_1."""
    assert TST.expected_max_abs_gaussian(1) == pytest.approx(math.sqrt(2 / math.pi), rel=1e-6)
    rng = np.random.default_rng(0)
    mc = np.abs(rng.standard_normal((4000, 500))).max(1).mean()
    assert TST.expected_max_abs_gaussian(500) == pytest.approx(mc, abs=0.02)
    slope = TST.rank_one_ratio_slope([250, 500, 1000])
    assert -0.5 + 1 / (2 * math.log(1000)) - 0.02 < slope < -0.5 + 1 / (2 * math.log(250))
    with pytest.raises(ValueError):
        TST.rank_one_ratio_slope([500, 500])
