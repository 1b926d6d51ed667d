"""Chapter 10: the shallow baselines against a direct computation (models' giant step, ridge)."""

import math

import numpy as np
import pytest

from lecnotes.core import validate as V
from lecnotes.hierarchical import shallow as SH
from lecnotes.hierarchical import theory as T
from lecnotes.models.layerwise import giant_step
from lecnotes.models.networks import features

CHAPTERS = (10,)


def _direct_ridge_error(F, y, Ft, yt, lam):
    """Ridge on centred labels, solved directly, and its test mean squared error."""
    n, p = F.shape
    ybar = y.mean()
    a = np.linalg.solve(F.T @ F / n + lam * np.eye(p), F.T @ (y - ybar) / n)
    return np.mean((ybar + Ft @ a - yt) ** 2)


def test_ridge_path_errors_match_direct_solves():
    rng = np.random.default_rng(1)
    S, n, nt, p = 3, 50, 40, 7
    F, Ft = rng.standard_normal((S, n, p)) + 0.3, rng.standard_normal((S, nt, p)) + 0.3
    y, yt = rng.standard_normal((S, n)) + 1.0, rng.standard_normal((S, nt)) + 1.0
    lams = np.array([1e-3, 0.1, 10.0])
    ybar = y.mean(1)
    got = SH.ridge_path_errors(
        np.einsum("snp,snq->spq", F, F) / n,
        np.einsum("snp,sn->sp", F, y - ybar[:, None]) / n, ybar,
        np.einsum("snp,snq->spq", Ft, Ft) / nt, np.einsum("snp,sn->sp", Ft, yt) / nt,
        Ft.mean(1), np.mean((yt - ybar[:, None]) ** 2, 1), lams)
    want = [[_direct_ridge_error(F[s], y[s], Ft[s], yt[s], lam) for lam in lams]
            for s in range(S)]
    np.testing.assert_allclose(got, want, rtol=1e-9)
    with pytest.raises(ValueError):
        SH.ridge_path_errors(np.eye(3), np.ones(3), 0.0, np.eye(3), np.ones(3), np.ones(3),
                             1.0, [0.0])
    direct = SH.ridge_path_test_errors(
        np.einsum("snp,snq->spq", F, F) / n,
        np.einsum("snp,sn->sp", F, y - ybar[:, None]) / n, ybar, Ft, yt, lams)
    np.testing.assert_allclose(direct, want, rtol=1e-9)
    with pytest.raises(ValueError):
        SH.ridge_path_test_errors(np.eye(3), np.ones(3), 0.0, np.ones((4, 3)), np.ones(4),
                                  [0.0])
    with pytest.raises(ValueError):
        SH.ridge_path_test_errors(np.eye(3), np.ones(3), 0.0, np.ones((4, 2)), np.ones(4),
                                  [1.0])


def test_one_giant_step_matches_the_models_giant_step_per_seed():
    rng = np.random.default_rng(2)
    S, n, p, d, eta0 = 2, 30, 5, 6, 1.7
    W0, a0 = rng.standard_normal((S, p, d)), rng.choice([-1.0, 1.0], (S, p)) / math.sqrt(p)
    X, y = rng.standard_normal((S, n, d)), rng.standard_normal((S, n))
    got = SH.one_giant_step(W0, a0, X, y, eta0)
    for s in range(S):
        want = giant_step(W0[s], a0[s], X[s], y[s], eta0 * p * math.sqrt(n / d),
                          scaling=p**-0.5)
        np.testing.assert_allclose(got[s], want, rtol=1e-12)
        np.testing.assert_allclose(SH.relu_features(X, W0)[s], features(W0[s], X[s]),
                                   rtol=1e-5, atol=1e-5)  # single precision
    with pytest.raises(ValueError):
        SH.one_giant_step(W0[0], a0, X, y)


def _draw(gen, n, d, r, c):
    X = gen.standard_normal((n, d))
    y = T.link(T.feature(np.sum(X[:, :r] ** 2, 1), r), c)
    return np.hstack([X, np.ones((n, 1))]), y


def _layer(gen, p, d):
    return np.hstack([gen.standard_normal((p, d)) / math.sqrt(d), gen.standard_normal((p, 1))])


def test_shallow_sweep_matches_a_direct_computation():
    d, r, c, p, seeds, eta0, nt = 9, 3, 0.5, 6, 2, 1.3, 25
    ns = np.array([32, 48, 80])
    sw = SH.shallow_sweep([d], ns, seeds, c, p=p, eta0=eta0, n_test=nt, eps=0.5, chunk=20,
                          rng=7)
    assert sw.ranks[0] == r and sw.width == p
    var = T.feature_law(r, c).var
    for s in range(seeds):
        key = lambda k, s=s: V.stream(7, d, s, k)  # noqa: E731
        Xt, yt = _draw(key(6), nt, d, r, c)
        Xa, ya = _draw(key(7), ns[-1], d, r, c)
        Wrf = _layer(key(10), p, d)
        g11 = key(11)
        W0 = _layer(g11, p, d)
        a0 = g11.choice([-1.0, 1.0], size=p) / math.sqrt(p)
        Xs, ys = _draw(key(8), ns[-1] // 2, d, r, c)
        Xr, yr = _draw(key(9), ns[-1] // 2, d, r, c)
        for i, n in enumerate(ns):
            F, Ft = features(Wrf, Xa[:n]), features(Wrf, Xt)
            lams = np.trace(F.T @ F / n) / p * SH.RIDGES
            rf = min(_direct_ridge_error(F, ya[:n], Ft, yt, lam) for lam in lams) / var
            assert sw.rf_error[s, 0, i] == pytest.approx(rf, rel=1e-3)  # single precision
            h = n // 2
            W1 = giant_step(W0, a0, Xs[:h], ys[:h], eta0 * p * math.sqrt(h / d),
                            scaling=p**-0.5)
            F, Ft = features(W1, Xr[:h]), features(W1, Xt)
            lams = np.trace(F.T @ F / h) / p * SH.RIDGES
            gs = min(_direct_ridge_error(F, yr[:h], Ft, yt, lam) for lam in lams) / var
            assert sw.gs_error[s, 0, i] == pytest.approx(gs, rel=1e-3)
            lat = np.mean(np.sum(W1[:, :r] ** 2, 1) / np.sum(W1[:, :d] ** 2, 1))
            assert sw.gs_latent[s, 0, i] == pytest.approx(lat, rel=1e-5)  # single-precision step


def test_shallow_sweep_validates_its_input():
    with pytest.raises(ValueError):
        SH.shallow_sweep([3], [32], 1, 0.5)
    with pytest.raises(ValueError):
        SH.shallow_sweep([16], [64, 32], 1, 0.5)
    with pytest.raises(ValueError):
        SH.shallow_sweep([16], [64], 1, 0.5, p=1)


def test_null_errors_are_the_constant_predictor_on_the_depth_sweep_test_set():
    d, c, nt = 16, 0.5, 300
    got = SH.null_errors([d], 3, c, n_test=nt, rng=5)
    law = T.feature_law(4, c)
    for s in range(3):
        _, yt = _draw(V.stream(5, d, s, 6), nt, d, 4, c)
        assert got[s, 0] == pytest.approx(np.mean((yt - law.mean) ** 2) / law.var)


def test_trend_size_inverts_a_power_law():
    ns = 2.0 ** np.arange(8, 17)
    errors = np.stack([3.0 * ns**-0.25, np.full(ns.size, 0.5), 0.01 * ns**0.0])
    slope, size = SH.trend_size(ns, errors, [0.1, 0.2, 0.2], last=4)
    np.testing.assert_allclose(slope, [-0.25, 0.0, 0.0], atol=1e-12)
    assert size[0] == pytest.approx((3.0 / 0.1) ** 4)
    assert size[1] == np.inf and size[2] == ns[-1]
    with pytest.raises(ValueError):
        SH.trend_size(ns, errors, 0.2, last=1)
