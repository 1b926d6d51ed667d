"""Chapter 10: the hierarchical target, the three stages against direct simulation, the check."""

import math

import numpy as np
import pytest

from lecnotes.book.grading import GradingError
from lecnotes.core import validate as V
from lecnotes.hierarchical import experiments as E
from lecnotes.hierarchical import explorer as X
from lecnotes.hierarchical import grading as GR
from lecnotes.hierarchical import theory as T

CHAPTERS = (10,)


# the law of the feature


@pytest.mark.parametrize("r", [2, 8, 13, 40])
def test_chi2_rule_has_the_moments_of_chi2(r):
    s, w = T.chi2_rule(r)
    assert w.sum() == pytest.approx(1.0)
    assert w @ s == pytest.approx(r) and w @ (s - r) ** 2 == pytest.approx(2 * r)
    h = T.feature(s, r)
    assert w @ h**3 == pytest.approx(math.sqrt(8 / r))
    assert w @ h**4 == pytest.approx(3 + 12 / r)


def test_feature_law_and_spike_against_monte_carlo():
    r, c = 10, 0.5
    rng = np.random.default_rng(0)
    z = rng.standard_normal((400_000, r))
    y = T.link(T.feature(np.sum(z * z, axis=1), r), c)
    law = T.feature_law(r, c)
    assert law.mu1 == pytest.approx(1 + c * math.sqrt(8 / r))
    assert np.var(y) == pytest.approx(law.var, rel=0.02)
    assert law.kernel_floor == pytest.approx(1 - law.mu1**2 / law.var)
    for name, f in T.PREPROCESSINGS.items():
        mc = np.mean(f(y) * (z[:, 0] ** 2 - 1))
        assert mc == pytest.approx(T.spike_strength(r, c, name), abs=0.01)
    assert T.spike_strength(r, c) == pytest.approx(math.sqrt(2 / r) * law.mu1)


# stage 1


def test_stage_one_formula_against_simulation():
    d, r, c, alpha = 144, 12, 0.5, 4.0
    q_th = T.finite_size_overlap(T.stage_one_overlap(alpha, r, c), r, d)[0]
    n = int(alpha * d * r)
    qs = []
    for s in range(6):
        X_, y = E.sample_sight(d, r, n, c, V.stream(5, s))
        qs.append(E.subspace_overlap(E.stage_one_subspace(X_, y, r), r))
    m, se = np.mean(qs), np.std(qs, ddof=1) / math.sqrt(6)
    assert abs(m - q_th) < 6 * se + 0.005


def test_stage_one_formula_limits():
    q = T.stage_one_overlap([0.3, 2.0, 64.0], 12, 0.5)
    assert q[0] == 0.0 and 0 < q[1] < q[2] < 1 and q[2] > 0.97
    assert T.finite_size_overlap(0.0, 4, 16) == pytest.approx(0.25)
    assert T.finite_size_overlap(1.0, 4, 16) == pytest.approx(1.0)
    a = T.stage_one_crossing(0.8, 12, 0.5)
    assert T.stage_one_overlap(a, 12, 0.5)[0] == pytest.approx(0.8, abs=1e-5)


def test_subspace_overlap_of_the_truth_and_of_a_random_subspace():
    d, r = 50, 5
    assert E.subspace_overlap(np.eye(d)[:, :r], r) == pytest.approx(1.0)
    vals = [E.subspace_overlap(np.linalg.qr(np.random.default_rng(s).standard_normal((d, r)))[0],
                               r) for s in range(200)]
    assert np.mean(vals) == pytest.approx(r / d, rel=0.1)


# stage 2


def test_quadratic_feature_is_the_mean_of_the_outer_products():
    rng = np.random.default_rng(1)
    Z, y = rng.standard_normal((30, 4)), rng.standard_normal(30)
    A = sum(yi * (np.outer(z, z) - np.eye(4)) for z, yi in zip(Z, y, strict=True)) / 30
    assert np.allclose(E.quadratic_feature(Z, y), A)


def test_feature_overlap_is_the_correlation_on_test_data():
    r, d = 4, 9
    rng = np.random.default_rng(2)
    A = rng.standard_normal((r, r))
    A = A + A.T + 3 * np.eye(r)
    U = np.linalg.qr(rng.standard_normal((d, r)))[0]
    x = rng.standard_normal((400_000, d))
    zh = x @ U
    hh = np.einsum("ij,jk,ik->i", zh, A, zh)
    h = np.sum(x[:, :r] ** 2, axis=1)
    assert abs(np.corrcoef(hh, h)[0, 1]) == pytest.approx(E.feature_overlap(A, U), abs=0.005)
    assert E.feature_overlap(np.eye(r)) == pytest.approx(1.0)


def test_stage_two_formula_against_simulation():
    sw = E.stage_two_sweep([32], [2.0, 8.0], 30, 0.5, rng=3)
    th = T.stage_two_overlap(sw.betas, 32, 0.5)
    m = sw.overlap[:, 0].mean(axis=0)
    se = sw.overlap[:, 0].std(axis=0, ddof=1) / math.sqrt(30)
    assert np.all(np.abs(m - th) < 5 * se + 0.003)
    big = T.stage_two_overlap(1e3, 200, 0.5)[0]
    law = T.feature_law(200, 0.5)
    lim = math.sqrt(2 * law.mu1**2 * 1e3 / (2 * law.mu1**2 * 1e3 + law.var + law.mean**2))
    assert big == pytest.approx(lim, abs=2e-3)


# sweeps: streams nest, shapes, the pipeline


def test_sweeps_nest_sizes():
    a = E.stage_one_sweep([16, 36], [1.0, 2.0], 2, 0.5, rng=4)
    b = E.stage_one_sweep([36], [1.0, 2.0, 4.0], 2, 0.5, rng=4)
    assert np.allclose(a.overlap[:, 1], b.overlap[:, 0, :2])
    assert list(a.ranks) == [4, 6]


def test_depth_sweep_learns_and_the_kernel_does_not():
    sw = E.depth_sweep([36], [256, 8192], 2, 0.5, kernel_ns=[256, 1024], rng=5, n_test=500)
    assert sw.deep_error.shape == (2, 1, 2) and sw.kernel_error.shape == (2, 1, 2)
    assert np.all(sw.deep_error[:, 0, 1] < sw.deep_error[:, 0, 0])
    assert np.all(sw.q1[:, 0, 1] > 0.9) and np.all(sw.rho2[:, 0, 1] > 0.7)
    floor = T.feature_law(6, 0.5).kernel_floor
    assert np.all(sw.kernel_error > floor)


def test_sample_exponents():
    assert T.sample_exponents(0.5) == (1.5, 4.0)
    assert T.sample_exponents(0.8, k=3, q=1) == (2.4000000000000004, 3.0)


# bad input


@pytest.mark.parametrize("bad", [0, -1, 1.5, math.nan])
@pytest.mark.parametrize("call", [
    lambda v: T.chi2_rule(v),
    lambda v: T.feature_law(v, 0.5),
    lambda v: E.latent_rank(v),
    lambda v: E.sample_sight(16, 4, v, 0.5),
    lambda v: E.sample_sight(v, 4, 10, 0.5),
    lambda v: E.stage_one_sweep([16], [1.0], v, 0.5),
    lambda v: E.stage_two_sweep([4], [1.0], v, 0.5),
    lambda v: E.depth_sweep([16], [256], v, 0.5),
    lambda v: X.stage_state(0.5, v),
])
def test_bad_sizes(call, bad):
    with pytest.raises(ValueError):
        call(bad)


@pytest.mark.parametrize("bad", [0, -1, math.nan, [], [1.0, -2.0]])
@pytest.mark.parametrize("call", [
    lambda v: T.stage_one_overlap(v, 4, 0.5),
    lambda v: T.stage_two_overlap(v, 4, 0.5),
])
def test_bad_ratios(call, bad):
    with pytest.raises(ValueError):
        call(bad)


def test_bad_values_and_types():
    with pytest.raises(TypeError):
        T.feature_law(8, "half")
    with pytest.raises(TypeError):
        T.spike_strength(8, 0.5, T=np.tanh)
    with pytest.raises(ValueError):
        T.spike_strength(8, 0.5, T="sign")
    with pytest.raises(ValueError):
        T.stage_one_overlap(1.0, 8, 0.5, T="raw")
    with pytest.raises(ValueError):
        E.stage_one_subspace(np.ones((4, 3)), np.ones(4), 5)
    with pytest.raises(ValueError):
        E.feature_overlap(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        E.depth_sweep([16], [256], 1, 0.5, kernel_ns=[512])
    with pytest.raises(ValueError):
        T.sample_exponents(1.0)


# explorer and graded check


def test_explorer_state_figure_and_widget():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    st = X.stage_state(0.5, 8)
    assert st.q1.shape == st.alphas.shape and np.all(np.diff(st.rho2) > 0)
    s1 = E.stage_one_sweep([16], [1.0, 2.0], 2, 0.5, rng=6)
    s2 = E.stage_two_sweep([4], [1.0, 2.0], 2, 0.5, rng=6)
    fig = X.stage_figure(st, stage1=s1, stage2=s2)
    assert len(fig.axes) == 2 and fig.legends
    with pytest.raises(ValueError):
        X.stage_figure("state")
    box = X.stage_explorer(st)
    assert box.state is st and box.draws == 1
    box.r.value = 12
    assert box.state.r == 12 and box.draws == 2
    dsw = E.depth_sweep([16], [256, 512], 2, 0.5, kernel_ns=[256], rng=7, n_test=200)
    fig2 = X.depth_figure(dsw, [0.2])
    assert fig2.legends
    with pytest.raises(ValueError):
        X.depth_figure(dsw, [0.2, 0.3])
    plt.close("all")


def _good(Z, y):
    n, r = Z.shape
    A = (Z * y[:, None]).T @ Z / n - np.mean(y) * np.eye(r)
    return abs(np.trace(A)) / (np.sqrt(r) * np.linalg.norm(A))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_graded_check(seed):
    assert GR.check_feature_overlap(_good, rng=seed).passed
    assert GR.CHECKS["ex-ch10-feature-overlap"] is GR.check_feature_overlap

    def no_identity(Z, y):
        A = (Z * y[:, None]).T @ Z / len(y)
        return abs(np.trace(A)) / (np.sqrt(Z.shape[1]) * np.linalg.norm(A))

    def by_r(Z, y):
        return _good(Z, y) / np.sqrt(Z.shape[1])

    def signed(Z, y):
        n, r = Z.shape
        A = (Z * y[:, None]).T @ Z / n - np.mean(y) * np.eye(r)
        return np.trace(A) / (np.sqrt(r) * np.linalg.norm(A))

    for wrong, phrase in ((no_identity, "identity is not subtracted"),
                          (by_r, "normalisation"), (signed, "absolute value"),
                          (lambda Z, y: 0.5, "off by"),
                          (lambda Z, y: np.ones(2), "single number")):
        with pytest.raises(GradingError, match=phrase):
            GR.check_feature_overlap(wrong, rng=seed)
    with pytest.raises(GradingError, match="not written"):
        GR.check_feature_overlap(lambda Z, y: (_ for _ in ()).throw(NotImplementedError()),
                                 rng=seed)


def test_log_crossing():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert E.log_crossing(x, [0.1, 0.3, 0.5, 0.7], 0.4) == pytest.approx(2 * math.sqrt(2))
    err = np.array([[1.0, 0.5, 0.25, 0.125], [1.0, 0.8, 0.4, 0.2]])
    out = E.log_crossing(x, err, np.array([0.5, 0.4]), log_values=True)
    assert np.allclose(out, [2.0, 4.0])
    with pytest.raises(ValueError):
        E.log_crossing(x, [0.1, 0.2, 0.3, 0.35], 0.5)
    with pytest.raises(ValueError):
        E.log_crossing(x, [0.1, 0.2], 0.15)
