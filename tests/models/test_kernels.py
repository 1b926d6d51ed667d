"""Tests of lecnotes.models.kernels (chapter 1)."""

import numpy as np
import pytest

from lecnotes.core.hermite import he
from lecnotes.models import kernel_methods as KM
from lecnotes.models import kernels as K
from lecnotes.models import networks as N

CHAPTERS = (1,)  # the chapters whose code these tests cover: make chapter CH=N


def _X(n=6, d=4, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


# --- closed-form kernels ------------------------------------------------------------------------
@pytest.mark.parametrize("order", [0, 1, 2])
def test_arccos_kernel_against_monte_carlo(order):
    X, Z = _X(3, 4, 1), _X(2, 4, 2)
    W = np.random.default_rng(3).standard_normal((400_000, 4))
    PX, PZ = X @ W.T, Z @ W.T
    mc = 2 * ((PX > 0) * np.maximum(PX, 0) ** order) @ ((PZ > 0) * np.maximum(PZ, 0) ** order).T
    mc /= W.shape[0]
    exact = K.arccos_kernel(X, Z, order)
    np.testing.assert_allclose(exact, mc, rtol=0.03 * (1 + order), atol=0.01)


def test_arccos_kernel_diagonal_and_symmetry():
    X = _X()
    np.testing.assert_allclose(np.diag(K.arccos_kernel(X, order=0)), 1.0)
    np.testing.assert_allclose(np.diag(K.arccos_kernel(X, order=1)), np.sum(X**2, 1))
    np.testing.assert_allclose(np.diag(K.arccos_kernel(X, order=2)), 3 * np.sum(X**2, 1) ** 2)
    K1 = K.arccos_kernel(X)
    np.testing.assert_allclose(K1, K1.T, atol=1e-12)
    with pytest.raises(ValueError):
        K.arccos_kernel(X, order=3)
    with pytest.raises(ValueError):
        K.arccos_kernel(np.vstack([X, np.zeros(4)]))
    with pytest.raises(ValueError):
        K.arccos_kernel(X, _X(3, 5))


def test_relu_ntk_matches_wide_network():
    X, Z = _X(5, 20, 0), _X(3, 20, 1)
    W, a = N.init_params(100_000, 20, rng=2, symmetric=False)
    emp = N.empirical_ntk(W, a, X, Z)
    np.testing.assert_allclose(emp, K.relu_ntk(X, Z), atol=0.12)  # entries of size ~ d/2
    emp_xx = N.empirical_ntk(W, a, X)
    rel = np.abs(emp_xx - K.relu_ntk(X)) / np.abs(K.relu_ntk(X)).max()
    assert rel.max() < 0.01
    # second-layer part alone (a_var = 0) is the arc-cosine kernel / (2d)
    np.testing.assert_allclose(K.relu_ntk(X, a_var=0.0), K.arccos_kernel(X) / 40)


def test_relu_ntk_is_rotation_invariant_and_psd():
    X = _X(30, 6, 4)
    Q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((6, 6)))
    np.testing.assert_allclose(K.relu_ntk(X @ Q), K.relu_ntk(X), atol=1e-10)
    assert np.linalg.eigvalsh(K.relu_ntk(X)).min() > -1e-10
    with pytest.raises(ValueError):
        K.relu_ntk(X, w_var=-1.0)
    with pytest.raises(ValueError):
        K.relu_ntk(X, a_var=-1.0)


def test_rbf_kernel():
    X, Z = _X(4, 3), _X(2, 3, 1)
    G = K.rbf_kernel(X, Z, 2.0)
    expected = np.exp(-np.sum((X[:, None] - Z[None]) ** 2, -1) / (2 * 4 * 3))
    np.testing.assert_allclose(G, expected)
    np.testing.assert_allclose(np.diag(K.rbf_kernel(X)), 1.0)
    with pytest.raises(ValueError):
        K.rbf_kernel(X, bandwidth=0.0)


def test_random_features_converge_and_reuse():
    X = _X(4, 10)
    Phi, W = K.random_features(X, 200_000, rng=0)
    np.testing.assert_allclose(Phi @ Phi.T, K.arccos_kernel(X) / 20, atol=0.01)
    Phi2, _ = K.random_features(X, W=W)
    np.testing.assert_array_equal(Phi, Phi2)
    a, _ = K.random_features(X, 5, rng=3)
    b, _ = K.random_features(X, 5, rng=3)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        K.random_features(X)
    with pytest.raises(ValueError):
        K.random_features(X, 0, rng=0)
    with pytest.raises(ValueError):
        K.random_features(X, 3, W=W)


# --- kernel ridge regression ---------------------------------------------------------------------
@pytest.mark.parametrize("n,d", [(20, 5), (5, 20)])
def test_kernel_ridge_against_direct_least_squares(n, d):
    rng = np.random.default_rng(1)
    X, y, Xt = rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal((3, d))
    lam = 0.2
    A = np.vstack([X, np.sqrt(n * lam) * np.eye(d)])
    w = np.linalg.lstsq(A, np.concatenate([y, np.zeros(d)]), rcond=None)[0]
    alpha = KM.kernel_ridge(X @ X.T, y, lam)
    np.testing.assert_allclose(Xt @ X.T @ alpha, Xt @ w, atol=1e-10)
    # lam = 0: minimum-norm least squares (interpolation when n <= d)
    alpha0 = KM.kernel_ridge(X @ X.T, y, 0.0)
    np.testing.assert_allclose(Xt @ X.T @ alpha0, Xt @ np.linalg.lstsq(X, y, rcond=None)[0],
                               atol=1e-8)


def test_kernel_ridge_bad_input():
    X = _X()
    G, y = K.relu_ntk(X), np.ones(6)
    with pytest.raises(ValueError):
        KM.kernel_ridge(G, y, -0.1)
    with pytest.raises(ValueError):
        KM.kernel_ridge(G, y[:-1], 0.1)
    with pytest.raises(ValueError):
        KM.kernel_ridge(G[:, :-1], y, 0.1)
    with pytest.raises(ValueError):
        KM.kernel_ridge(-np.eye(6) * 10, y, 0.01)  # not a kernel matrix


def test_ridge_norm_and_loss_budget():
    X = _X(40, 8, 3)
    y = np.random.default_rng(4).standard_normal(40)
    G = K.relu_ntk(X)
    lams = np.array([1e-4, 1e-2, 1.0])
    # against the eigendecomposition: alpha(lam) = U diag(1/(mu + n lam)) U^T y
    mu, U = np.linalg.eigh(G)
    path = [U @ ((U.T @ y) / (mu + 40 * lam)) for lam in lams]
    for lam, alpha in zip(lams, path, strict=True):
        np.testing.assert_allclose(KM.kernel_ridge(G, y, lam), alpha, atol=1e-8)
    norms = [KM.rkhs_norm(G, al) for al in path]
    assert norms[0] > norms[1] > norms[2]
    lam, alpha = KM.kernel_ridge_at_loss(G, y, 0.1)
    loss = 0.5 * np.mean((G @ alpha - y) ** 2)
    assert loss <= 0.1 and loss == pytest.approx(0.1, rel=1e-3)
    with pytest.raises(ValueError):
        KM.kernel_ridge_at_loss(G, y, 0.1, lam_range=(10.0, 100.0))
    with pytest.raises(ValueError):
        KM.rkhs_norm(G, np.ones(3))


def test_kernel_gradient_descent_matches_iteration():
    X = _X(15, 4, 2)
    y = np.random.default_rng(0).standard_normal(15)
    G = K.relu_ntk(X)
    f0 = 0.1 * np.arange(15.0)
    eta, steps = 0.7, 25
    f, alpha = f0.copy(), np.zeros(15)
    for _ in range(steps):
        r = f - y
        alpha -= eta * r / 15
        f = f0 + G @ alpha
    np.testing.assert_allclose(KM.kernel_gradient_descent(G, y, eta, steps, f0), alpha, atol=1e-10)
    np.testing.assert_allclose(KM.kernel_gradient_descent(G, y, eta, 0), 0.0)
    t = KM.kernel_gd_steps_to_loss(G, y, eta, 0.05)
    loss = lambda s: 0.5 * np.mean((G @ KM.kernel_gradient_descent(G, y, eta, s) - y) ** 2)  # noqa: E731
    assert loss(t) <= 0.05 < loss(t - 1)
    assert KM.kernel_gd_steps_to_loss(G, y, eta, 100.0) == 0
    with pytest.raises(ValueError):
        KM.kernel_gd_steps_to_loss(G, y, eta, 0.0, max_steps=10)
    with pytest.raises(ValueError):
        KM.kernel_gradient_descent(G, y, -1.0, 3)


# --- Rademacher complexity ------------------------------------------------------------------------
def test_rademacher_rkhs_linear_class():
    n = 10
    X = _X(n, 7, 5)
    G = X @ X.T
    mean, se = KM.rademacher_rkhs(G, 2.0, n_mc=4000, rng=0)
    # exact value by enumerating the 2^n sign vectors: sup over ||w|| <= 2 of <w, X^T s>/n
    S = np.array(np.meshgrid(*[[-1.0, 1.0]] * n)).reshape(n, -1).T
    exact = np.mean(2.0 / n * np.linalg.norm(S @ X, axis=1))
    assert abs(mean - exact) < 4 * se and 0 < se < 0.05 * exact
    assert exact <= KM.rademacher_rkhs_bound(G, 2.0)
    assert KM.rademacher_rkhs_bound(G, 2.0) == pytest.approx(2.0 / n * np.sqrt(np.sum(X**2)))
    with pytest.raises(ValueError):
        KM.rademacher_rkhs(G, -1.0)
    with pytest.raises(ValueError):
        KM.rademacher_rkhs(G, 1.0, n_mc=1)


# --- risk estimator ------------------------------------------------------------------------------
def test_single_index_risk_exact_cases():
    d = 6
    w = np.zeros(d)
    w[2] = 2.0  # normalised inside

    def link(u):
        return he(1, u) + he(2, u) / np.sqrt(2)

    r, se, c = KM.single_index_risk(lambda Z: link(Z[:, 2]), w, link, rng=0)
    assert r == pytest.approx(0.0, abs=1e-12) and se == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(c, [0.0, 1.0, 1.0], atol=1e-10)
    r, se, c = KM.single_index_risk(lambda Z: Z[:, 2], w, link, rng=0)  # predicts h_1 only
    assert r == pytest.approx(1.0, abs=1e-10)
    # a predictor using an orthogonal direction: risk = E[h1^2 + h2^2] + E[x_0^2] = 3 on average
    r, se, _ = KM.single_index_risk(lambda Z: Z[:, 0], w, link, n_perp=4000, rng=1)
    assert abs(r - 3.0) < 4 * se
    with pytest.raises(ValueError):
        KM.single_index_risk(3, w, link)
    with pytest.raises(ValueError):
        KM.single_index_risk(lambda Z: Z[:, :2], w, link)
    with pytest.raises(ValueError):
        KM.single_index_risk(lambda Z: Z[:, 0], np.zeros(d), link)
