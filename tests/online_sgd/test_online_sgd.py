"""Tests of lecnotes.online_sgd (chapter 8): step, ODE, maps, check."""

import numpy as np
import pytest

from lecnotes.book.grading import GradingError
from lecnotes.core.hermite import h
from lecnotes.online_sgd import experiments as O
from lecnotes.online_sgd import theory as T
from lecnotes.online_sgd.grading import check_sgd_step

CHAPTERS = (8,)  # the chapters whose code these tests cover: make chapter CH=N


@pytest.mark.parametrize("k", [1, 2, 3])
def test_link_and_derivative(k):
    z = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(O.link(k, z), h(k, z), atol=1e-12)
    eps = 1e-6
    np.testing.assert_allclose(O.dlink(k, z), (O.link(k, z + eps) - O.link(k, z - eps)) / (2 * eps),
                               atol=1e-6)
    with pytest.raises(ValueError):
        O.link(4, z)


def _direct_step(w, X, y, eta, k, loss):
    """One seed, written out: mean of per-sample gradients, projection, retraction."""
    g = np.zeros_like(w)
    for x, yy in zip(X, y, strict=True):
        z = x @ w
        r = yy * O.dlink(k, z) if loss == "correlation" else (yy - O.link(k, z)) * O.dlink(k, z)
        g += r * x / len(y)
    g = g - (g @ w) * w
    v = w + eta * g
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 5])
@pytest.mark.parametrize("loss", ["correlation", "square"])
def test_sgd_step_matches_direct_computation(k, batch, loss):
    rng = np.random.default_rng(10 * k + batch)
    W = O.init_sphere(4, 9, rng)
    X = rng.standard_normal((4, batch, 9))
    y = rng.standard_normal((4, batch))
    out = O.sgd_step(W, X, y, 0.7, k, loss)
    for s in range(4):
        np.testing.assert_allclose(out[s], _direct_step(W[s], X[s], y[s], 0.7, k, loss),
                                   atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    eta = np.array([0.1, 0.2, 0.3, 0.4])   # one step size per seed
    out2 = O.sgd_step(W, X, y, eta, k, loss)
    np.testing.assert_allclose(out2[2], _direct_step(W[2], X[2], y[2], 0.3, k, loss), atol=1e-12)


def test_sgd_step_validates():
    W = O.init_sphere(2, 5, 0)
    with pytest.raises(ValueError):
        O.sgd_step(W, np.zeros((2, 3, 4)), np.zeros((2, 3)), 0.1, 1)
    with pytest.raises(ValueError):
        O.sgd_step(W, np.zeros((2, 3, 5)), np.zeros((2, 2)), 0.1, 1)
    with pytest.raises(ValueError):
        O.sgd_step(W, np.zeros((2, 3, 5)), np.zeros((2, 3)), 0.1, 1, loss="hinge")


def test_escape_runs_shapes_and_streams():
    r = O.escape_runs(1, 32, 5, 0.5 / 32, max_steps=2000, record_every=10, rng=3)
    assert r.steps.shape == (5,) and np.all(np.isfinite(r.steps))
    assert r.overlaps.shape[0] == 5 and r.overlaps.shape[1] == len(r.times)
    again = O.escape_runs(1, 32, 5, 0.5 / 32, max_steps=2000, record_every=10, rng=3)
    np.testing.assert_array_equal(r.steps, again.steps)
    np.testing.assert_array_equal(r.samples, r.steps)
    b = O.escape_runs(1, 32, 5, 4 * 0.5 / 32, batch=4, max_steps=2000, rng=3)
    np.testing.assert_array_equal(b.samples, 4 * b.steps)
    with pytest.raises(ValueError):
        O.escape_runs(1, 32, 5, -1.0, max_steps=10)


def test_reuse_takes_two_steps_per_sample():
    a = O.overlap_after(2, 16, 3, 0.05, 20, reuse=2, rng=4)
    assert a.shape == (3,) and np.all((a >= 0) & (a <= 1))


def test_ode_k2_matches_logistic_without_noise():
    """With the noise terms switched off (batch -> infinity) the ODE is the logistic."""
    t = np.linspace(0, 400, 9)
    q = T.solve_ode(1e-3, 2, 100, 0.01, t, batch=10**12)
    np.testing.assert_allclose(q, T.logistic_k2(1e-3, 0.01, t), rtol=1e-6)


def test_ode_k1_matches_tanh_without_noise():
    t = np.linspace(0, 300, 7)
    q = T.solve_ode(0.04, 1, 100, 0.01, t, batch=10**12)
    np.testing.assert_allclose(np.sqrt(q), T.tanh_k1(0.2, 0.01, t), rtol=1e-6)


def test_ode_noise_terms():
    # the noise terms of eq-ch8-ode cancel where the contraction C_k (d-1) q equals the
    # diffusion along w*, D_k (1 - q): q* = D_k / (C_k (d-1) + D_k), a few times 1/d
    d, eta, k = 50, 0.01, 3
    C, D = T.noise_constant(k), T.along_variance(k)
    q = D / (C * (d - 1) + D)
    drift = 2 * eta * k * q ** (k / 2) * (1 - q)
    assert T.ode_rhs(q, k, d, eta) == pytest.approx(drift)


def test_mean_map_small_step_is_the_ode():
    q, k, d, eta = 0.05, 2, 200, 1e-5
    step = T.mean_map(q, k, d, eta) - q
    assert step == pytest.approx(float(T.ode_rhs(q, k, d, eta)), rel=1e-3)


def test_escape_time_map_and_ode_agree_for_small_steps():
    d = 400
    a = T.escape_steps(2, d, 0.1 / d)
    b = T.ode_escape_time(2, d, 0.1 / d)
    assert a == pytest.approx(b, rel=0.01)


def test_step_and_break_point():
    assert T.optimal_batch_step(3, 64, 512, 1.0) == pytest.approx(1.0)
    assert T.break_point(3, 64, 1.0) == pytest.approx(512)
    assert T.break_point(1, 64, 0.5) == pytest.approx(128)
    with pytest.raises(ValueError):
        T.noise_constant(4)


def test_along_variance_by_monte_carlo_and_one_sgd_step():
    # the gradient along w* at m = 0 is h_k(G) h_k'(Z) G, G and Z independent: by quadrature
    x, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    for k in (1, 2, 3):
        second = (w @ (O.link(k, x) ** 2 * x**2)) * (w @ O.dlink(k, x) ** 2)
        mean = (w @ (O.link(k, x) * x)) * (w @ O.dlink(k, x))
        assert second - mean**2 == pytest.approx(T.along_variance(k), rel=1e-10)
    rng = np.random.default_rng(1)
    # the overlap after one step of eq-ch8-step from m = 0 has variance eta^2 D_k / B (for
    # eta^2 d small: large kicks also enlarge the norm the retraction divides by)
    k, d, n, eta = 2, 16, 400_000, 1e-4
    W = np.zeros((n, d))
    W[:, 1] = 1.0
    X = rng.standard_normal((n, 1, d))
    m1 = O.sgd_step(W, X, O.link(k, X[..., 0]), eta, k)[:, 0]
    B = 1 + eta**2 * (d - 1) * T.noise_constant(k)
    assert np.var(m1) == pytest.approx(eta**2 * T.along_variance(k) / B, rel=0.05)


def test_noise_constant_is_k_by_monte_carlo():
    rng = np.random.default_rng(0)
    g, z = rng.standard_normal((2, 400_000))
    for k in (1, 2, 3):
        mc = np.mean(O.link(k, g) ** 2 * O.dlink(k, z) ** 2)
        assert mc == pytest.approx(T.noise_constant(k), rel=0.05)


@pytest.fixture(params=[0, 1, 2])
def seed(request):
    return request.param


def test_sgd_step_check(seed):
    assert check_sgd_step(O.sgd_step, rng=seed).passed

    def no_projection(W, X, y, eta, k):
        G = np.einsum("sb,sbd->sd", y * O.dlink(k, np.einsum("sbd,sd->sb", X, W)), X) / X.shape[1]
        V = W + eta * G
        return V / np.linalg.norm(V, axis=1, keepdims=True)

    with pytest.raises(GradingError, match="projected"):
        check_sgd_step(no_projection, rng=seed)
    with pytest.raises(GradingError, match="wrong way"):
        check_sgd_step(lambda W, X, y, eta, k: O.sgd_step(W, X, -y, eta, k), rng=seed)
    with pytest.raises(GradingError, match="shape"):
        check_sgd_step(lambda W, X, y, eta, k: O.sgd_step(W, X, y, eta, k).T, rng=seed)


def test_tanh_student_step_matches_direct_computation():
    rng = np.random.default_rng(3)
    W = O.init_sphere(3, 7, rng)
    X = rng.standard_normal((3, 1, 7))
    y = rng.standard_normal((3, 1))
    out = O.sgd_step(W, X, y, 0.4, 3, student="tanh")
    for s in range(3):
        z = X[s, 0] @ W[s]
        g = y[s, 0] * (1 - np.tanh(z) ** 2) * X[s, 0]
        g = g - (g @ W[s]) * W[s]
        v = W[s] + 0.4 * g
        np.testing.assert_allclose(out[s], v / np.linalg.norm(v), atol=1e-12)
    with pytest.raises(ValueError):
        O.student_pair(3, "relu")


def test_reuse_rates_closed_forms():
    # h_3 student: D(0) = 81 c^2 exactly (eq-ch8-reuse-coefficient; the first visit adds 0)
    D, _ = T.reuse_rates(np.array([0.0]), 0.3, n_nodes=60, student="hermite")
    np.testing.assert_allclose(D, 81 * 0.3**2, rtol=1e-9)
    # tanh student, small c: D(0) ~ (c^2/2) E[y^3 G] E[s'^2 s'''] (eq-ch8-reuse-expansion)
    g, w = np.polynomial.hermite_e.hermegauss(120)
    w = w / w.sum()
    t = np.tanh(g)
    s1 = 1 - t**2
    s3 = -2 * s1 * (1 - 3 * t**2)                      # tanh'''
    Ey3G = np.sum(w * ((g**3 - 3 * g) / np.sqrt(6)) ** 3 * g)
    c = 0.005   # the series in c is asymptotic only (moments of y grow fast): c small
    D, P = T.reuse_rates(np.array([0.0]), c)
    np.testing.assert_allclose(D, 0.5 * c**2 * Ey3G * np.sum(w * s1**2 * s3), rtol=1e-2)
    # P(0) -> 2 E[y^2] E[s'^2] as c -> 0
    np.testing.assert_allclose(P, 2 * np.sum(w * s1**2), rtol=1e-2)


def test_reuse_ode_starts_with_the_drift():
    D, _ = T.reuse_rates(np.array([0.0]), 1.0)
    m = T.reuse_ode(1.0, np.array([0.0, 1e-3]))
    assert m[0] == 0.0
    np.testing.assert_allclose(m[1] / 1e-3, D[0], rtol=1e-2)


def test_reuse_sweep_shapes_and_pairing():
    out = O.reuse_sweep([16, 32], 3, 1.0, 1.0, n_records=4, rng=1)
    assert out["tau"].shape == (5,)
    for name in ("one pass", "reuse"):
        assert out[name].shape == (2, 3, 5)
    # same streams: identical starting overlaps
    np.testing.assert_array_equal(out["one pass"][:, :, 0], out["reuse"][:, :, 0])


def test_smoothed_dlink_against_monte_carlo():
    # E_z h_3(<u, x>) over z uniform on the sphere orthogonal to w, by Monte Carlo; its
    # derivative in a = <w, x> (x fixed, w moved along x) against smoothed_dlink
    rng = np.random.default_rng(0)
    d, lam = 12, 1.7
    x = rng.standard_normal(d)
    Z = rng.standard_normal((400000, d))

    def smoothed(w):
        P = Z - np.outer(Z @ w, w)
        P /= np.linalg.norm(P, axis=1, keepdims=True)
        u = (w + lam * P) / np.sqrt(1 + lam**2)
        return O.link(3, u @ x).mean()

    w0 = rng.standard_normal(d)
    w0 /= np.linalg.norm(w0)
    e = x - (x @ w0) * w0
    e /= np.linalg.norm(e)
    h = 0.05
    wp, wm = np.cos(h) * w0 + np.sin(h) * e, np.cos(h) * w0 - np.sin(h) * e
    num = (smoothed(wp) - smoothed(wm)) / (wp @ x - wm @ x)
    np.testing.assert_allclose(num, O.smoothed_dlink(w0 @ x, x @ x, d, lam), rtol=0.05,
                               atol=0.02)
    np.testing.assert_allclose(O.smoothed_dlink(0.3, 5.0, d, 0.0), O.dlink(3, 0.3))


def test_smoothed_escape_runs():
    s = O.smoothed_escape(16, 3, 0.05, 1.0, max_steps=50, level=0.0, rng=1)
    assert s.shape == (3,) and np.all(s == 1)


def test_overlap_chain_has_the_escape_law_of_the_full_sgd():
    # lem-ch8-overlap-chain: the 1-d chain and the d-dimensional runs, independent streams
    k, d, n = 2, 48, 600
    eta = T.optimal_batch_step(k, d, 1, 0.5)
    chain = np.log(O.overlap_chain(k, d, n, eta, max_steps=20_000, rng=3))
    full = np.log(O.escape_runs(k, d, n, eta, max_steps=20_000, rng=4).steps)
    assert np.isfinite(chain).all() and np.isfinite(full).all()
    se = np.hypot(chain.std() / np.sqrt(n), full.std() / np.sqrt(n))
    assert abs(chain.mean() - full.mean()) < 4 * se
    # and it is a different law from the mean map's escape time (lucky seeds dominate E q)
    assert abs(chain.mean() - np.log(T.escape_steps(k, d, eta))) > 4 * se


def test_overlap_chain_validates_and_caps():
    with pytest.raises(ValueError):
        O.overlap_chain(2, 2, 10, 0.01, max_steps=10)
    with pytest.raises(ValueError):
        O.overlap_chain(2, 32, 10, 0.01, max_steps=10, level=1.5)
    assert np.isinf(O.overlap_chain(3, 64, 5, 1e-6, max_steps=3, rng=0)).all()
