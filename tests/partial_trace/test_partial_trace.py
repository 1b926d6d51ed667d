"""Tests of the Hermite-tensor contractions and partial-trace estimators (chapter 5)."""

import math
import tracemalloc

import numpy as np
import pytest

from lecnotes import partial_trace as PT
from lecnotes.core import hermite as H
from lecnotes.core import hermite_tensors as HT
from lecnotes.core import stats
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import LINKS, Link
from lecnotes.core.validate import stream
from lecnotes.exponents.experiments import gen4_interval
from lecnotes.spectral import experiments as S

CHAPTERS = (5,)  # the chapters whose code these tests cover: make chapter CH=N


def _explicit_trace(x, k):
    """Sum_j He_k(x)[..., j, j] over (k - 2) / 2 pairs, from the explicit tensor."""
    t = HT.hermite_tensor(x, k)
    while t.ndim > 2:
        t = np.trace(t, axis1=-2, axis2=-1)
    return t


# ---------------------------------------------------------------------------------------
# Contractions against the explicit tensor (d <= 10)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("d", [2, 5, 10])
def test_partial_trace_product_matches_explicit_tensor(k, d):
    rng = np.random.default_rng(10 * d + k)
    n = 6
    X = rng.standard_normal((n, d))
    t = rng.standard_normal(n)
    M = sum(t[i] * _explicit_trace(X[i], k) for i in range(n)) / n
    v = rng.standard_normal(d)
    np.testing.assert_allclose(HT.he_partial_trace(X, t, v, k=k), M @ v, atol=1e-9)
    V2 = rng.standard_normal((d, 3))
    np.testing.assert_allclose(HT.he_partial_trace(X, t, V2, k=k), M @ V2, atol=1e-9)
    y = rng.standard_normal(n)
    np.testing.assert_allclose(
        PT.partial_trace_matrix(X, y, k=k, T=lambda u: u),
        sum(y[i] * _explicit_trace(X[i], k) for i in range(n)) / n, atol=1e-9)


@pytest.mark.parametrize("d", [1, 3, 7])
def test_degree4_trace_closed_form(d):
    # sum_j He_4(x)_{abjj} = (|x|^2 - d - 4) x_a x_b - (|x|^2 - d - 2) delta_ab
    x = np.random.default_rng(d).standard_normal(d)
    s = x @ x
    closed = (s - d - 4) * np.outer(x, x) - (s - d - 2) * np.eye(d)
    np.testing.assert_allclose(_explicit_trace(x, 4), closed, atol=1e-10)


@pytest.mark.parametrize("d", [1, 4, 9])
def test_vector_contraction_matches_explicit_tensor(d):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((5, d))
    t = rng.standard_normal(5)
    ref = sum(t[i] * np.einsum("ajj->a", HT.hermite_tensor(X[i], 3)) for i in range(5)) / 5
    np.testing.assert_allclose(HT.he3_vector_contraction(X, t), ref, atol=1e-10)


@pytest.mark.parametrize("d", [2, 5])
def test_unfolding_gram_matches_explicit_unfolding(d):
    rng = np.random.default_rng(d)
    n = 7
    X = rng.standard_normal((n, d))
    t = rng.standard_normal(n)
    Hs = [HT.hermite_tensor(X[i], 3).reshape(d, d * d) for i in range(n)]
    unf = sum(t[i] * Hs[i] for i in range(n)) / n
    full = unf @ unf.T
    off = full - sum(t[i] ** 2 * Hs[i] @ Hs[i].T for i in range(n)) / n**2
    np.testing.assert_allclose(HT.he3_unfolding_gram(X, t, diagonal=True), full, atol=1e-10)
    np.testing.assert_allclose(HT.he3_unfolding_gram(X, t, block=3), off, atol=1e-10)


def test_mean_of_partial_trace_is_rank_one_without_identity():
    # E[M_4] = E[T(Y) He_4(G)] w w^T exactly, whatever the mean of T (Monte Carlo, d = 3)
    rng = np.random.default_rng(0)
    n, d = 400_000, 3
    X = rng.standard_normal((n, d))
    y = X[:, 0] ** 4  # E[Y He_4(G)] = 24, E[Y] = 3: an uncentred T on purpose
    s = (X * X).sum(1) - d
    A = (X * y[:, None]) * (s - 4)[:, None]
    terms = np.einsum("ia,ib->iab", A, X) - (y * (s - 2))[:, None, None] * np.eye(d)
    mean, se = terms.mean(0), terms.std(0) / math.sqrt(n)
    target = np.zeros((d, d))
    target[0, 0] = 24.0
    assert np.max(np.abs(mean - target) / se) < 5.0


# ---------------------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------------------
def _gen4_data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, LINKS["gen4"](X[:, 0])


def test_estimator_dense_and_lanczos_agree_and_recover():
    X, y = _gen4_data(2 * 100**2, 100, 1)  # d = 100, n = 2 d^2 (the chapter's scale)
    v1, l1, _ = PT.partial_trace_estimator(X, y, method="dense")
    v2, l2, info = PT.partial_trace_estimator(X, y, method="lanczos")
    assert abs(v1 @ v2) > 1 - 1e-8 and l1 == pytest.approx(l2, rel=1e-8)
    assert info.residual < 1e-6
    assert l1 < 0 and v1[0] ** 2 > 0.3  # lambda_4(y - mean) < 0 for gen4: bottom eigenvector
    vt, lt, _ = PT.partial_trace_estimator(X, y, which="top", method="dense")
    vb, lb, _ = PT.partial_trace_estimator(X, y, which="bottom", method="dense")
    assert lb == pytest.approx(l1) and lt > 0 and abs(vb @ v1) > 1 - 1e-8


def test_k2_is_the_second_moment_estimator_of_centred_labels():
    X, y = _gen4_data(3000, 40, 2)
    v, val, _ = PT.partial_trace_estimator(X, y, k=2, which="top")
    w, top, _ = S.spectral_estimator(X, y - y.mean())
    assert abs(v @ w) == pytest.approx(1.0, abs=1e-9) and val == pytest.approx(top)


def test_default_preprocessing_centres_the_labels():
    X, y = _gen4_data(5000, 20, 3)
    a = PT.partial_trace_matrix(X, y)
    b = PT.partial_trace_matrix(X, y + 7.0)  # a shift of the labels changes nothing
    c = PT.partial_trace_matrix(X, y, T=lambda u: u - u.mean())
    np.testing.assert_allclose(a, b, atol=1e-9)
    np.testing.assert_allclose(a, c, atol=1e-12)


def test_matrix_free_memory_is_order_nd():
    X, y = _gen4_data(3000, 800, 4)
    tracemalloc.start()
    PT.partial_trace_estimator(X, y, method="lanczos")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * X.nbytes  # a d x d matrix would take 8 d^2 = 5 MB, X takes 19 MB


def test_simulation_reproduces_the_estimator_on_nested_samples():
    alphas, d = [0.5, 1.0], 12
    out = PT.simulate_partial_trace(alphas, d, 2, rng=7)
    again = PT.simulate_partial_trace(alphas, d, 2, rng=7)
    for key in ("rho2", "value", "rho2_second", "rho2_raw"):
        np.testing.assert_array_equal(getattr(out, key), getattr(again, key))
    for s in range(2):
        X = stream(7, s).standard_normal((d * d, d))  # seed s's data set (documented stream)
        y = LINKS["gen4"](X[:, 0])
        for j, n in enumerate(out.n):
            v, val, _ = PT.partial_trace_estimator(X[:n], y[:n])
            assert out.rho2[s, j] == pytest.approx(v[0] ** 2, abs=1e-9)
            assert out.value[s, j] == pytest.approx(val, rel=1e-9)
            w, _, _ = PT.partial_trace_estimator(X[:n], y[:n], k=2)
            assert out.rho2_second[s, j] == pytest.approx(w[0] ** 2, abs=1e-9)
    fixed = PT.simulate_partial_trace(alphas, d, 1, T=lambda u: u - 0.5, k=2, rng=1)
    assert fixed.rho2_raw is None and fixed.rho2.shape == (1, 2)


GEN3_C = math.sqrt(2 * math.log(2))
GEN3 = Link("gen3", lambda u: (u * (u * u - GEN3_C**2) > 0).astype(float), "",
            (-GEN3_C, 0.0, GEN3_C))


def test_gen3_link_has_no_first_or_second_moment():
    for k in (1, 2):
        val = gaussian_expectation(lambda g, k=k: GEN3(g) * H.he(k, g),
                                   breakpoints=GEN3.breakpoints)
        assert abs(float(val)) < 1e-10
    lam3 = gaussian_expectation(lambda g: GEN3(g) * H.he(3, g), breakpoints=GEN3.breakpoints)
    assert float(lam3) == pytest.approx(2 * math.log(2) / math.sqrt(2 * math.pi), rel=1e-9)


def test_odd_estimators_recover_with_enough_samples():
    rng = np.random.default_rng(5)
    d = 30
    X = rng.standard_normal((4 * d * d, d))
    y = GEN3(X[:, 0])
    v, norm = PT.vector_contraction_estimator(X, y)
    assert np.linalg.norm(v) == pytest.approx(1.0) and norm > 0 and v[0] ** 2 > 0.4
    u, top, _ = PT.unfolding_estimator(X[: 8 * int(d**1.5)], y[: 8 * int(d**1.5)])
    assert np.linalg.norm(u) == pytest.approx(1.0) and u[0] ** 2 > 0.7
    ns = np.array([100, 400])
    r = PT.simulate_overlaps(PT.vector_contraction_estimator, ns, 8, 2, GEN3, rng=0)
    assert r.shape == (2, 2) and np.all((r >= 0) & (r <= 1))
    np.testing.assert_array_equal(
        r, PT.simulate_overlaps(PT.vector_contraction_estimator, ns, 8, 2, GEN3, rng=0))


# ---------------------------------------------------------------------------------------
# Two claims of chapter 5, re-run with other seeds and smaller sizes
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [10, 11, 12])
def test_claim_mean_partial_trace_over_seeds(seed):
    rng = np.random.default_rng(seed)
    d, n, reps = 4, 1000, 150
    mats = np.empty((reps, d * d))
    for r in range(reps):
        X = rng.standard_normal((n, d))
        mats[r] = PT.partial_trace_matrix(X, LINKS["gen4"](X[:, 0]), T=lambda u: u).ravel()
    lam4 = float(gaussian_expectation(lambda g: LINKS["gen4"](g) * H.he(4, g),
                                      breakpoints=LINKS["gen4"].breakpoints))
    target = np.zeros((d, d))
    target[0, 0] = lam4
    z = np.abs(mats.mean(0) - target.ravel()) / (mats.std(0, ddof=1) / math.sqrt(reps))
    assert z.reshape(d, d)[np.triu_indices(d)].max() <= 4.5


@pytest.mark.parametrize("seed", [20, 21])
def test_claim_vector_exponent_over_seeds(seed):
    betas = np.array([0.25, 0.5, 1, 2, 4])
    runs = {}
    for d in (12, 24, 48):
        ns = np.round(betas * d * d).astype(int)
        est = lambda X, y: PT.vector_contraction_estimator(X, y, lambda u: u - 0.5)  # noqa: E731
        runs[d] = (ns, PT.simulate_overlaps(est, ns, d, 8, GEN3, rng=seed + d))
    kappa, se, cross = stats.scaling_exponent(runs, rng=seed)
    assert all(np.isfinite(list(cross.values())))
    assert abs(kappa - 2.0) <= 4 * se


def test_crossing_and_collapse_helpers():
    ns = np.array([10, 20, 40, 80])
    r = np.array([[0.1, 0.3, 0.7, 0.9], [0.1, 0.3, 0.7, 0.9]])
    n_half = stats.crossing_size(ns, r, 0.5)
    assert 20 < n_half < 40 and n_half == pytest.approx(math.sqrt(20 * 40))
    assert math.isnan(stats.crossing_size(ns, r, 0.95))
    assert math.isnan(stats.crossing_size(ns, r, 0.05))
    # two dimensions whose curves are the same function of n / d^2
    rng = np.random.default_rng(0)
    curve = lambda x: x / (1 + x)  # noqa: E731
    runs = {d: (np.array([1, 2, 4, 8]) * d * d,
                curve(np.array([1, 2, 4, 8.0])) + 0.01 * rng.standard_normal((6, 4)))
            for d in (10, 20)}
    Q2, dof2, p2 = stats.collapse_chi2(runs, lambda d, n: n / d**2)
    Q1, dof1, p1 = stats.collapse_chi2(runs, lambda d, n: n / d, window=(0.0, 1.0))
    assert dof2 == 4 and p2 > 1e-4 and dof1 == 3 and p1 < 1e-10
    kappa, se, _ = stats.scaling_exponent({d: runs[d] for d in runs}, level=0.6, n_boot=50, rng=0)
    assert kappa == pytest.approx(2.0, abs=0.1)


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------
X0, Y0 = np.random.default_rng(0).standard_normal((20, 4)), np.arange(20.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: HT.he_partial_trace(X0, Y0, np.zeros(4), k=3),
        lambda: HT.he_partial_trace(X0, Y0, np.zeros(5), k=2),
        lambda: HT.he_partial_trace(X0, Y0[:5], np.zeros(4), k=2),
        lambda: HT.he3_vector_contraction(X0, Y0[:3]),
        lambda: HT.he3_unfolding_gram(X0, Y0, block=0),
        lambda: PT.partial_trace_estimator(X0, Y0, k=3),
        lambda: PT.partial_trace_estimator(X0, Y0, k=6),
        lambda: PT.partial_trace_estimator(X0, Y0, which="largest"),
        lambda: PT.partial_trace_estimator(X0, Y0, method="svd"),
        lambda: PT.partial_trace_estimator(X0[:, :1], Y0),
        lambda: PT.partial_trace_estimator(X0, Y0[:4]),
        lambda: PT.partial_trace_estimator(X0, np.full(20, np.nan)),
        lambda: PT.partial_trace_matrix(X0, Y0, k=1),
        lambda: PT.vector_contraction_estimator(X0, np.ones(20)),  # centred: all zero
        lambda: PT.simulate_partial_trace([1.0, 0.5], 5, 1),
        lambda: PT.simulate_partial_trace([0.5], 1, 1),
        lambda: PT.simulate_partial_trace([0.5], 5, 0),
        lambda: PT.simulate_partial_trace([0.5], 5, 1, T="mondelli-montanari"),
        lambda: PT.simulate_overlaps("not callable", [10], 3, 1, "gen4"),
        lambda: PT.simulate_overlaps(PT.vector_contraction_estimator, [10, 5], 3, 1, "gen4"),
        lambda: PT.simulate_overlaps(PT.vector_contraction_estimator, [10.5], 3, 1, "gen4"),
        lambda: stats.crossing_size([1, 2], [0.1, 0.2, 0.3]),
        lambda: stats.crossing_size([2, 1], [0.1, 0.2]),
        lambda: stats.scaling_exponent({5: ([1, 2], [[0.1, 0.9]])}, rng=0),
        lambda: stats.collapse_chi2({5: ([1, 2], [[0.1, 0.9]])}, lambda d, n: n),
        lambda: stats.collapse_chi2({5: ([1, 2], [[0.1, 0.9]]), 6: ([1, 2], [[0.1, 0.9]])},
                                lambda d, n: n),  # one seed: no standard error
        lambda: stats.collapse_chi2({5: ([1, 2], [[0.1, 0.9], [0.2, 0.8]]),
                                 6: ([1, 2], [[0.1, 0.9], [0.2, 0.8]])}, "n/d"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------------------------------
# Closed forms and sweeps of chapter 5
# ---------------------------------------------------------------------------------------
def test_interval_lambda4_against_quadrature():
    a, b = gen4_interval()
    link = lambda g: ((a < np.abs(g)) & (np.abs(g) < b)).astype(float)  # noqa: E731
    q = float(gaussian_expectation(lambda g: link(g) * H.he(4, g), breakpoints=(-b, -a, a, b)))
    assert PT.interval_lambda4(a, b) == pytest.approx(q, rel=1e-9)
    with pytest.raises(ValueError):
        PT.interval_lambda4(b, a)


def test_critical_alpha_and_vector_limit():
    assert PT.critical_alpha(0.5, 0.25) == pytest.approx(2.0)
    assert PT.critical_alpha(-0.5, 0.25) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        PT.critical_alpha(0.0, 1.0)
    beta = np.array([0.0, 1.0, 1e9])
    np.testing.assert_allclose(PT.vector_contraction_limit(beta, 1 / 3), [0.0, 0.5, 1.0])
    # the limit beta lambda3^2 / (beta lambda3^2 + 2 E[T^2]) with lambda3^2 = 6 q E[T^2]
    assert PT.vector_contraction_limit(2.0, 0.1) == pytest.approx(2 * 0.6 / (2 * 0.6 + 2))


def test_extrapolate_threshold_recovers_a_known_fit():
    # curves linear in log n crossing 1/2 exactly at n = d^2 (A + B/d), identical seeds
    A, B = 0.8, 6.0
    runs = {}
    for d in (20, 40, 80):
        n_half = d * d * (A + B / d)
        ns = np.round(n_half * np.array([0.25, 0.5, 2.0, 4.0])).astype(float)
        curve = 0.5 + 0.1 * np.log(ns / n_half)
        runs[d] = (ns, np.vstack([curve, curve, curve]))
    fit = PT.extrapolate_threshold(runs, n_boot=20, rng=0)
    assert fit.A == pytest.approx(A, abs=1e-9) and fit.B == pytest.approx(B, abs=1e-7)
    assert fit.A_se == pytest.approx(0.0, abs=1e-12)


def test_sweeps_are_keyed_by_size():
    est = PT.vector_contraction_estimator
    one = PT.overlap_sweep(est, [8], [1.0, 2.0], 2, 2, GEN3, rng=3)
    two = PT.overlap_sweep(est, [6, 8], [1.0, 2.0], 2, 2, GEN3, rng=3)
    np.testing.assert_array_equal(one[8][1], two[8][1])
    np.testing.assert_array_equal(one[8][0], [64, 128])
    a = PT.partial_trace_sweep([0.5, 1.0], [10], 2, rng=4)
    b = PT.partial_trace_sweep([0.5, 1.0], [8, 10], 3, rng=4)
    np.testing.assert_array_equal(a[10].rho2, b[10].rho2[:2])


def test_sample_partial_trace_matrices_mean():
    # Prop. (mean of the partial trace): E[M_4] = lambda_4 e1 e1^T for the gen4 link, and the
    # moment contraction has (d + 2) E[Y] on the diagonal; 4.5 standard errors over 21 entries
    d = 4
    out = PT.sample_partial_trace_matrices(d, 1500, 200, "gen4", T=lambda t: t, rng=5)
    lam4 = PT.interval_lambda4(*gen4_interval())
    p = float(gaussian_expectation(LINKS["gen4"], breakpoints=LINKS["gen4"].breakpoints))
    e1 = np.outer(np.eye(d)[0], np.eye(d)[0])
    assert stats.max_abs_z(out.partial_trace, lam4 * e1) < 4.5
    assert stats.max_abs_z(out.moment, (d + 2) * p * np.eye(d) + lam4 * e1) < 4.5
    # and it can fail: the identity part is really absent from M_4
    assert stats.max_abs_z(out.partial_trace, lam4 * e1 + 0.1 * np.eye(d)) > 4.5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gram_upper_is_the_weighted_gram(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 7)).astype(dtype)
    w = rng.standard_normal(60).astype(dtype)
    C = np.zeros((7, 7), dtype, order="F")
    C = PT.estimators.gram_upper(C, X[:25], w[:25])  # accumulated in two blocks
    C = PT.estimators.gram_upper(C, X[25:], w[25:])
    want = X.astype(float).T @ (w.astype(float)[:, None] * X.astype(float))
    got = PT.estimators.symmetric_from_upper(C)
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-3 if dtype == np.float32 else 1e-10)
