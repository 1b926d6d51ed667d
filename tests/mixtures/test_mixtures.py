"""Tests of lecnotes.mixtures (chapter 11): ridge limits, AMP, state evolution, grading."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.book.grading import GradingError  # noqa: E402
from lecnotes.mixtures import amp as A  # noqa: E402
from lecnotes.mixtures import experiments as EX  # noqa: E402
from lecnotes.mixtures import explorer as XP  # noqa: E402
from lecnotes.mixtures import grading as GR  # noqa: E402
from lecnotes.mixtures import information as IN  # noqa: E402
from lecnotes.mixtures import ridge as R  # noqa: E402
from lecnotes.mixtures import thresholds as TH  # noqa: E402

CHAPTERS = (11,)  # the chapters whose code these tests cover: make chapter CH=N


# --- ridge: the resolvent and the limits -----------------------------------------------------
@pytest.mark.parametrize("lam, alpha", [(0.1, 2.0), (0.5, 0.7), (0.0, 3.0)])
def test_mp_functions_match_a_large_wishart_matrix(lam, alpha):
    rng = np.random.default_rng(1)
    d = 800
    n = int(alpha * d)
    Z = rng.standard_normal((n, d))
    K = Z @ Z.T / n
    ev = np.linalg.eigvalsh(K)
    mp = R.mp_functions(lam, alpha)
    if lam > 0:
        e = np.sum(1 / (np.linalg.eigvalsh(Z.T @ Z / n) + lam)) / n
        assert mp.e == pytest.approx(e, rel=0.02)
        assert mp.psi == pytest.approx(lam**2 * np.mean(1 / (ev + lam) ** 2), rel=0.02)
        assert mp.chi == pytest.approx(np.mean(ev / (ev + lam) ** 2), rel=0.03)
    else:  # least squares: psi = 1 - 1/alpha, chi = gamma / (1 - gamma)
        assert mp.psi == pytest.approx(1 - 1 / alpha, rel=1e-12)
        assert mp.chi == pytest.approx((1 / alpha) / (1 - 1 / alpha), rel=1e-12)


def test_scale_resolvent_reduces_to_marchenko_pastur_and_matches_a_matrix():
    lam, alpha = 0.3, 2.0
    q, dq = R.scale_resolvent(lam, alpha, [1.0], [1.0])
    gam = 1 / alpha
    mp_g = (-(lam + 1 - gam) + math.sqrt((lam + 1 - gam) ** 2 + 4 * lam * gam)) / (2 * lam * gam)
    assert q == pytest.approx(mp_g, rel=1e-10)
    h = 1e-5
    num = (R.scale_resolvent(lam + h, alpha, [1.0], [1.0])[0]
           - R.scale_resolvent(lam - h, alpha, [1.0], [1.0])[0]) / (2 * h)
    assert dq == pytest.approx(num, rel=1e-5)
    rng = np.random.default_rng(2)
    d, n = 800, 1600
    tau = np.where(rng.random(n) < 0.5, 0.2, 1.8)
    X = rng.standard_normal((n, d)) * np.sqrt(tau)[:, None]
    emp = np.mean(1 / (np.linalg.eigvalsh(X.T @ X / n) + lam))
    q2, _ = R.scale_resolvent(lam, alpha, [0.2, 1.8], [0.5, 0.5])
    assert q2 == pytest.approx(emp, rel=0.02)
    assert abs(q2 - q) > 0.02  # the law of tau matters, not its mean alone


def test_one_cluster_is_the_gaussian_case():
    for target in ("sign", "linear"):
        mix = R.means_mixture(0.0, 0.3, target, noise=0.2)
        a, b = R.ridge_theory(mix, 0.2, 1.5), R.ridge_theory(mix.matched_gaussian(), 0.2, 1.5)
        np.testing.assert_allclose(a, b, rtol=1e-12)
    sc = R.scales_mixture([1.0, 1.0], [0.3, 0.7], noise=0.5)
    np.testing.assert_allclose(R.ridge_theory(sc, 0.2, 1.5),
                               R.ridge_theory(sc.matched_gaussian(), 0.2, 1.5), rtol=1e-10)


def test_label_moments_match_monte_carlo():
    rng = np.random.default_rng(3)
    mix = R.means_mixture(1.5, 0.6, "sign")
    X, y = EX.sample(mix, 400_000, 3, rng=rng)
    C, b, y2 = R.label_moments(mix)
    np.testing.assert_allclose(C, X[:, :2].T @ X[:, :2] / len(y), atol=0.02)
    np.testing.assert_allclose(b, X[:, :2].T @ y / len(y), atol=0.01)
    assert y2 == pytest.approx(1.0)


@pytest.mark.parametrize("model", [
    R.means_mixture(2.0, 0.0, "sign"),
    R.means_mixture(1.0, 0.7, "linear", noise=0.3),
    R.scales_mixture([0.3, 2.4], [0.6, 0.4], noise=0.5),
], ids=["aligned-sign", "tilted-linear", "scales"])
def test_ridge_limits_match_simulation_at_large_d(model):
    sw = EX.ridge_sweep(model, [600], 2.0, [0.2, 0.0], 4, rng=4)
    for lam in (0.2, 0.0):
        th = R.ridge_theory(model, lam, 2.0)
        assert sw.train[lam].mean() == pytest.approx(th.train, rel=0.04)
        assert sw.test[lam].mean() == pytest.approx(th.test, rel=0.04)
    ls = (1 - 1 / 2.0) * R.linear_residual(model)  # thm-ch11-ls-train
    assert R.ridge_theory(model, 0.0, 2.0).train == pytest.approx(ls, rel=1e-9)


def test_aligned_sign_is_not_universal_but_orthogonal_is():
    al = R.means_mixture(2.0, 0.0, "sign")
    orth = R.means_mixture(2.0, math.pi / 2, "sign")
    assert abs(R.ridge_theory(al, 0.1, 2.0).test
               - R.ridge_theory(al.matched_gaussian(), 0.1, 2.0).test) > 0.1
    np.testing.assert_allclose(R.ridge_theory(orth, 0.1, 2.0),
                               R.ridge_theory(orth.matched_gaussian(), 0.1, 2.0), rtol=1e-10)


def test_ridge_bad_input():
    with pytest.raises(ValueError, match="alpha > 1"):
        R.mp_functions(0.0, 0.5)
    with pytest.raises(ValueError, match="lam"):
        R.mp_functions(-1.0, 2.0)
    with pytest.raises(ValueError, match="alpha"):
        R.mp_functions(0.1, float("nan"))
    with pytest.raises(TypeError):
        R.ridge_theory("not a model", 0.1, 2.0)
    with pytest.raises(TypeError):
        R.means_mixture(1.0, 0.0, target=3)
    with pytest.raises(ValueError, match="theta"):
        R.means_mixture(1.0, 2.0)
    with pytest.raises(ValueError, match="weights"):
        R.scales_mixture([1.0, 2.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="seeds"):
        EX.ridge_sweep(R.means_mixture(1.0, 0.0), [10], 2.0, [0.1], 1.5)
    with pytest.raises(ValueError, match="dims"):
        EX.ridge_sweep(R.means_mixture(1.0, 0.0), [0], 2.0, [0.1], 2)


# --- AMP: denoisers, state evolution, free entropy -------------------------------------------
def test_denoisers_are_posterior_means_by_importance_sampling():
    rng = np.random.default_rng(5)
    k, rho = 3, 0.3
    G = rng.standard_normal((k, k))
    Am = 0.3 * G @ G.T / 3
    B = 0.5 * rng.standard_normal((2, k))
    prior = (rng.random((400_000, k)) < rho) * rng.standard_normal((400_000, k)) / math.sqrt(rho)
    mean, _ = A.sparse_denoiser(Am, B, rho)
    for i in range(2):
        logw = prior @ B[i] - 0.5 * np.einsum("mi,ij,mj->m", prior, Am, prior)
        w = np.exp(logw - logw.max())
        np.testing.assert_allclose(mean[i], w @ prior / w.sum(), atol=0.03)
    P = np.eye(k) - 1 / k
    logits = B @ P.T - 0.5 * np.einsum("ci,ij,cj->c", P, Am, P)
    w = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(A.cluster_denoiser(Am, B)[0], w @ P, rtol=1e-12)


def test_nishimori_identity_of_the_sparse_denoiser():
    rng = np.random.default_rng(6)
    k, rho, a, m = 3, 0.2, 0.8, 200_000
    P = np.eye(k) - 1 / k
    v = (rng.random((m, k)) < rho) * rng.standard_normal((m, k)) / math.sqrt(rho)
    f, cov = A.sparse_denoiser(a * P, a * v @ P + math.sqrt(a) * rng.standard_normal((m, k)) @ P,
                               rho)
    assert np.trace(P @ f.T @ v @ P) / m == pytest.approx(np.trace(P @ f.T @ f @ P) / m, rel=0.02)
    # E[cov] + E[f f^T] = E[v v^T] = I
    np.testing.assert_allclose(cov + f.T @ f / m, np.eye(k), atol=0.03)


def test_state_evolution_known_limits():
    assert A.state_evolution(3, 0.2, 0.0, 2.0, 5).mv[-1] == 0.0  # lambda = 0: nothing learned
    # the linear growth factor lambda^2 alpha / k^2 around the uninformative point
    for lam in (1.5, 2.6):
        se = A.state_evolution(3, 0.5, lam, 2.0, 4, eps=1e-4, n_mc=20_000)
        ratio = se.mv[4] / se.mv[3]
        assert ratio == pytest.approx(lam**2 * 2.0 / 9, rel=0.05)
    assert A.lambda_alg(3, 2.0) == pytest.approx(3 / math.sqrt(2))


def test_free_entropy_derivative_is_the_overlap_product():
    # I-MMSE: along the fixed point, d Phi / d lambda = alpha (k - 1) m_u m_v / 2
    k, rho, alpha, lam, h = 3, 0.2, 2.0, 2.8, 0.05

    def phi(x):
        se = A.state_evolution(k, rho, x, alpha, 20, eps=math.inf, n_mc=12_000)
        return A.free_entropy(se.mu[-1], se.mv[-1], k, rho, x, alpha, n_mc=12_000), se

    (p1, _), (_, se), (p2, _) = phi(lam - h), phi(lam), phi(lam + h)
    slope = (p2 - p1) / (2 * h)
    assert slope == pytest.approx(alpha * (k - 1) * se.mu[-1] * se.mv[-1] / 2, rel=0.08)
    assert A.free_entropy(0.0, 0.0, k, rho, lam, alpha) == pytest.approx(0.0, abs=1e-12)


def test_amp_follows_its_state_evolution_at_large_d():
    k, rho, alpha, lam, d = 3, 0.3, 2.0, 2.8, 1500
    X, U, Vm = A.sample_sparse_gmm(int(alpha * d), d, k, rho, lam, rng=7)
    run = A.amp(X, k, rho, lam, iterations=15, eps=1.0, Vm=Vm, rng=8)
    se = A.state_evolution(k, rho, lam, alpha, 15, eps=1.0, n_mc=4000)
    np.testing.assert_allclose(run.overlaps[[1, 5, 15]], se.mv[[1, 5, 15]], atol=0.05)
    # lambda far below the threshold: the estimate shrinks to nothing
    X0, _, V0 = A.sample_sparse_gmm(int(alpha * d), d, k, rho, 0.5, rng=9)
    assert A.amp(X0, k, rho, 0.5, iterations=15, Vm=V0, rng=10).overlaps[-1] < 0.05


def test_crossing_interpolates():
    assert TH.crossing([1.0, 2.0, 3.0], [0.0, 0.2, 0.6], 0.4) == pytest.approx(2.5)
    assert math.isnan(TH.crossing([1.0, 2.0], [0.0, 0.1], 0.5))
    with pytest.raises(ValueError, match="increasing"):
        TH.crossing([2.0, 1.0], [0.0, 0.1], 0.5)


def test_amp_bad_input():
    with pytest.raises(ValueError, match="k"):
        A.lambda_alg(1.5, 2.0)
    with pytest.raises(ValueError, match="rho"):
        A.sample_sparse_gmm(10, 10, 3, 1.5, 1.0)
    with pytest.raises(ValueError, match="eps"):
        A.state_evolution(3, 0.2, 1.0, 2.0, 3, eps=-1.0)
    with pytest.raises(ValueError, match="Vm"):
        A.amp(np.zeros((4, 3)), 3, 0.2, 1.0)
    with pytest.raises(TypeError):
        EX.amp_sweep([20], [1.0], 2, 3, 0.2, 2.0, informed="yes")


def test_amp_sweep_pairs_the_signal_strengths():
    sw = EX.amp_sweep([60], [0.5, 4.0], 2, 2, 0.5, 2.0, 10, rng=3)
    assert sw.uninformed.shape == (2, 1, 2) and np.isnan(sw.informed).all()
    assert np.all(sw.uninformed[:, 0, 1] > sw.uninformed[:, 0, 0])


# --- figures and grading ----------------------------------------------------------------------
def test_figures_draw():
    mix = R.means_mixture(2.0, 0.0, "sign")
    a = EX.ridge_sweep(mix, [20, 40], 2.0, [0.1], 2, rng=0)
    b = EX.ridge_sweep(mix.matched_gaussian(), [20, 40], 2.0, [0.1], 2, rng=0)
    fig = XP.ridge_figure([("x", a, b, 0.1, 0.3, 0.5)])
    assert len(fig.axes) == 1
    st = XP.gap_state(2, 0.5, 2.0, lams=[0.8, 1.6], iterations=5, n_mc=200, lam_it=1.2)
    assert XP.gap_figure(st) is not None
    with pytest.raises(ValueError):
        XP.gap_figure("not a state")


def good_denoiser(A_, B):
    k = A_.shape[0]
    U = np.eye(k) - 1.0 / k
    logits = B @ U.T - 0.5 * np.einsum("ci,ij,cj->c", U, A_, U)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ U


def test_grading_accepts_the_right_answer_and_names_wrong_ones():
    assert GR.check_cluster_denoiser(good_denoiser, rng=0).passed
    assert GR.check_cluster_denoiser(A.cluster_denoiser.__wrapped__
                                     if hasattr(A.cluster_denoiser, "__wrapped__")
                                     else lambda a, b: A.cluster_denoiser(a, b)[0], rng=1).passed

    def uncentred(A_, B):
        k = A_.shape[0]
        U = np.eye(k)
        logits = B @ U.T - 0.5 * np.einsum("ci,ij,cj->c", U, A_, U)
        w = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True)) @ U

    with pytest.raises(GradingError, match="not centred"):
        GR.check_cluster_denoiser(uncentred, rng=0)
    with pytest.raises(GradingError, match="quadratic term"):
        GR.check_cluster_denoiser(lambda A_, B: good_denoiser(0 * A_, B), rng=0)
    with pytest.raises(GradingError, match="transposed"):
        GR.check_cluster_denoiser(lambda A_, B: good_denoiser(A_, B).T, rng=0)
    with pytest.raises(GradingError, match="sign"):
        GR.check_cluster_denoiser(lambda A_, B: good_denoiser(A_, -B), rng=0)
    assert "ex-ch11-denoiser" in GR.CHECKS


def test_jackknife_crossing():
    lams = np.array([1.0, 2.0, 3.0])
    curves = np.array([[0.0, 0.2, 0.6], [0.0, 0.4, 0.6], [0.0, 0.3, 0.6]])
    c, se = TH.jackknife_crossing(lams, curves, 0.3)
    assert c == pytest.approx(2.0) and se > 0
    with pytest.raises(ValueError, match="two seeds"):
        TH.jackknife_crossing(lams, curves[:1], 0.3)


# --- the information-theoretic threshold ------------------------------------------------------
def test_dense_two_clusters_have_a_continuous_transition_at_lambda_alg():
    # rho = 1, k = 2: a rank-one problem with a Gaussian prior on the means; no hard phase
    alpha = 2.0
    res = IN.it_threshold(2, 1.0, alpha, 0.5, 3.0, n_mc=1000, rng=0)
    assert res.lam_it == pytest.approx(2 / math.sqrt(alpha), rel=0.03)
    assert res.m_v < 0.05  # the informed overlap starts from zero: continuous
    tab = IN.overlap_table(2, 1.0, alpha, 3.0, n_mc=1000, rng=0)
    assert IN.informed_fixed_point(tab, 0.95 * 2 / math.sqrt(alpha), alpha).m_v == 0.0
    # Gaussian prior: m_v(h) = h / (1 + h) exactly
    np.testing.assert_allclose(tab.m_v[1:], tab.h[1:] / (1 + tab.h[1:]), rtol=0.03)


def test_tabulated_potential_matches_the_log_partition_free_entropy():
    k, rho, alpha, lam = 3, 0.2, 2.0, 2.8
    tab = IN.overlap_table(k, rho, alpha, 3.0, n_mc=4000, rng=1)
    fp = IN.informed_fixed_point(tab, lam, alpha)
    # from the informed start the iteration is converged (to 1e-7) after 20 steps
    se = A.state_evolution(k, rho, lam, alpha, 20, eps=math.inf, n_mc=12_000)
    assert fp.m_v == pytest.approx(se.mv[-1], abs=0.01)
    direct = A.free_entropy(fp.m_u, fp.m_v, k, rho, lam, alpha, n_mc=12_000)
    assert fp.phi == pytest.approx(direct, abs=0.01)
    assert IN.informed_fixed_point(tab, 0.5, alpha) == (0.0, 0.0, 0.0)


def test_small_rho_constant_solves_its_equation():
    sr = IN.small_rho_constant(3)
    assert sr.m_v == pytest.approx(2 * (math.sqrt(1 / sr.x) * math.exp(-0.5 / sr.x)
                                        / math.sqrt(2 * math.pi)
                                        + 0.5 * math.erfc(math.sqrt(0.5 / sr.x))), rel=1e-12)
    y = np.linspace(1e-6, sr.x, 200_001)
    F = np.array([IN._energy_above(1 / t) for t in y[::100]])
    integral = np.trapezoid(F, y[::100])
    assert integral == pytest.approx(0.5 * sr.x * sr.m_v, rel=1e-4)
    assert sr.constant == pytest.approx(3 * math.sqrt(3 * sr.x / sr.m_v), rel=1e-12)
    assert sr.all_or_nothing == pytest.approx(6 * math.sqrt(1.5))
    with pytest.raises(ValueError, match="k"):
        IN.small_rho_constant(1)


def test_information_bad_input():
    with pytest.raises(ValueError, match="rho"):
        IN.overlap_table(3, 1.5, 2.0, 1.0)
    with pytest.raises(ValueError, match="lo < hi"):
        IN.it_threshold(3, 0.1, 2.0, 2.0, 1.0)
    tab = IN.overlap_table(2, 1.0, 2.0, 1.0, n_mc=50, n_u=100, points=8, rng=0)
    with pytest.raises(ValueError, match="beyond"):
        IN.informed_fixed_point(tab, 2.0, 2.0)
    with pytest.raises(TypeError):
        IN.informed_fixed_point("table", 1.0, 2.0)


def test_state_evolution_from_a_given_overlap():
    se = A.state_evolution(3, 0.2, 3.0, 2.0, 3, n_mc=500, mv0=0.05)
    assert se.mv[0] == 0.05 and se.mv[-1] > 0.05
    with pytest.raises(ValueError):
        A.state_evolution(3, 0.2, 3.0, 2.0, 3, mv0=1.5)


def test_amp_sweep_records_its_runs_at_earlier_iterations():
    sw = EX.amp_sweep([60], [2.5], 2, 3, 0.2, 2.0, 8, informed=True, rng=4, record=[4, 8])
    short = EX.amp_sweep([60], [2.5], 2, 3, 0.2, 2.0, 4, informed=True, rng=4)
    for key in ("uninformed", "informed"):
        assert sw.trace[key].shape == (2, 2, 1, 1)
        assert np.allclose(sw.trace[key][1], getattr(sw, key), atol=1e-12)
        assert np.allclose(sw.trace[key][0], getattr(short, key), atol=1e-9)
    assert EX.amp_sweep([60], [2.5], 1, 3, 0.2, 2.0, 4, rng=4).trace is None


def test_sweeps_join_over_sizes_and_show_their_records():
    both = EX.amp_sweep([40, 60], [2.5], 2, 3, 0.2, 2.0, 4, informed=True, rng=4)
    a = EX.amp_sweep([40], [2.5], 2, 3, 0.2, 2.0, 4, informed=True, rng=4)
    b = EX.amp_sweep([60], [2.5], 2, 3, 0.2, 2.0, 6, informed=True, rng=4, record=[4])
    joined = EX.join_sizes(a, EX.at_record(b, 0))
    assert list(joined.dims) == [40, 60]
    for key in ("uninformed", "informed", "start"):
        assert np.allclose(getattr(joined, key), getattr(both, key), atol=1e-9)
    with pytest.raises(ValueError):
        EX.at_record(a, 0)
    with pytest.raises(ValueError):
        EX.join_sizes(a, EX.amp_sweep([60], [3.0], 2, 3, 0.2, 2.0, 2, rng=4))
