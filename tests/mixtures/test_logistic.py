"""Logistic regression on the means mixture (chapter 11, prop-ch11-logistic)."""

import math

import numpy as np
import pytest

from lecnotes.core import stats
from lecnotes.mixtures import logistic as lg
from lecnotes.mixtures.experiments import sample
from lecnotes.mixtures.ridge import means_mixture, ridge_theory, scales_mixture


@pytest.mark.parametrize("theta", [0.0, math.pi / 3, math.pi / 2])
@pytest.mark.parametrize("target", ["sign", "linear"])
@pytest.mark.parametrize("gaussian", [False, True])
def test_square_loss_is_ridge(theta, target, gaussian):
    """The oracle: with the square loss the fixed point is thm-ch11-lowrank, derived apart."""
    model = means_mixture(2.0, theta, target)
    model = model.matched_gaussian() if gaussian else model
    for lam, alpha in ((0.1, 2.0), (0.5, 0.7)):
        sq = lg.logistic_theory(model, lam, alpha, loss="square")
        rt = ridge_theory(model, lam, alpha)
        assert sq.test_mse == pytest.approx(rt.test, rel=1e-9)
        # (y - t)^2 / 2 is half the squared residual of def-ch11-ridge
        assert 2 * sq.train_loss == pytest.approx(rt.train, rel=1e-9)


def test_orthogonal_means_are_universal_and_aligned_are_not():
    orth = means_mixture(2.0, math.pi / 2, "sign")
    a, b = (lg.logistic_theory(x, 0.05, 2.0) for x in (orth, orth.matched_gaussian()))
    assert a.test == pytest.approx(b.test, rel=1e-8)
    assert a.train_loss == pytest.approx(b.train_loss, rel=1e-8)
    assert abs(a.a[1]) < 1e-10  # no weight on the clusters' coordinate
    al = means_mixture(2.0, 0.0, "sign")
    a, b = (lg.logistic_theory(x, 0.05, 2.0) for x in (al, al.matched_gaussian()))
    assert b.test - a.test > 0.05  # 0.024 against 0.086


def test_quadrature_is_converged():
    model = means_mixture(2.0, 0.0, "sign")
    coarse = lg.logistic_theory(model, 0.05, 2.0, nodes=40, hermite=32)
    fine = lg.logistic_theory(model, 0.05, 2.0, nodes=80, hermite=64)
    assert coarse.test == pytest.approx(fine.test, rel=1e-6)
    assert coarse.q == pytest.approx(fine.q, rel=1e-6)


def test_alignment_curve_closes_the_gap():
    cur = lg.alignment_curve(2.0, 0.05, 2.0, [0.0, math.pi / 4, math.pi / 2])
    gap = cur.gaussian - cur.mixture
    assert np.all(np.diff(gap) < 0) and gap[0] > 0.05 and abs(gap[-1]) < 1e-8


@pytest.mark.parametrize("V_", [1e-3, 0.7, 30.0])
def test_prox_solves_its_equation(V_):
    rng = np.random.default_rng(0)
    omega = rng.normal(0, 8, 4000)
    y = np.sign(rng.standard_normal(4000))
    t = lg.prox(omega, y, V_)
    # t - omega = -V l'(y, t), l'(y, t) = -y sigmoid(-y t)
    resid = t - omega - V_ * y / (1 + np.exp(y * t))
    assert np.max(np.abs(resid)) < 1e-10 * (1 + V_ + np.abs(omega)).max()
    assert np.allclose(lg.prox(omega, y, V_, "square"), (omega + V_ * y) / (1 + V_))


def test_classification_error_against_monte_carlo():
    model = means_mixture(2.0, math.pi / 4, "sign")
    w = np.array([1.0, -0.4, 0.3, 0.2, -0.5])
    X, y = sample(model, 400_000, 5, rng=3)
    err = np.mean(np.sign(X @ w) != y)
    exact = lg.classification_error(model, w)
    assert exact == pytest.approx(err, abs=5 * math.sqrt(err * (1 - err) / 400_000))


def test_fit_is_the_minimiser():
    model = means_mixture(2.0, 0.0, "sign")
    for n, d in ((120, 60), (40, 80)):  # primal and Woodbury
        X, y = sample(model, n, d, rng=5)
        run = lg.logistic_fit(X, y, 0.05, model)
        grad = -X.T @ (y / (1 + np.exp(y * (X @ run.w)))) / n + 0.05 * run.w
        assert np.linalg.norm(grad) < 1e-9
        assert run.train == np.mean(np.sign(X @ run.w) != y)


def test_simulation_matches_the_limit():
    """Aligned mixture at d = 200, 8 seeds: the limit inside t SE, the matched Gaussian's
    limit outside."""
    model = means_mixture(2.0, 0.0, "sign")
    sw = lg.logistic_sweep(model, [200], 2.0, 0.05, 8, rng=12)
    th, alt = (lg.logistic_theory(x, 0.05, 2.0).test for x in (model, model.matched_gaussian()))
    m, se = stats.mean_and_error(sw.test[:, 0])
    t = stats.t_factor(8)
    assert abs(m - th) <= t * se < abs(m - alt)


def test_bad_input():
    model = means_mixture(2.0, 0.0, "sign")
    with pytest.raises(ValueError):
        lg.logistic_theory(model, 0.05, 2.0, loss="hinge")
    with pytest.raises(TypeError):
        lg.logistic_theory(model, 0.05, 2.0, loss=1)
    with pytest.raises(ValueError):  # the logistic loss needs the class label
        lg.logistic_theory(means_mixture(2.0, 0.0, "linear"), 0.05, 2.0)
    with pytest.raises(ValueError):
        lg.logistic_theory(means_mixture(2.0, 0.0, "sign", noise=0.5), 0.05, 2.0)
    with pytest.raises(ValueError):
        lg.logistic_theory(scales_mixture([0.5, 1.5], [0.5, 0.5]), 0.05, 2.0)
    with pytest.raises(ValueError):
        lg.logistic_theory(model, 0.0, 2.0)
    with pytest.raises(ValueError):
        lg.prox([0.0], [0.5], 1.0)
    with pytest.raises(ValueError):
        lg.alignment_curve(2.0, 0.05, 2.0, [2.0])
    X, y = sample(model, 20, 10, rng=0)
    with pytest.raises(ValueError):
        lg.logistic_fit(X, 0.5 * y, 0.05, model)
