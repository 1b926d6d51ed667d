"""Tests of lecnotes.models.networks (chapter 1; layer-wise training of chapters 6 and 7)."""

import numpy as np
import pytest

from lecnotes.core import activations as ACT
from lecnotes.mean_field_vs_ntk import experiments as MF
from lecnotes.models import layerwise as LW
from lecnotes.models import networks as N

CHAPTERS = (1, 6, 7)  # the chapters whose code these tests cover: make chapter CH=N


ACTS = ["relu", "tanh", "linear", "quadratic"]
SCALINGS = ["ntk", "mf", 1.0, 0.3]


def _data(n=7, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal(n)


def _numerical_grad(fun, P, eps=1e-6):
    G = np.zeros_like(P)
    for idx in np.ndindex(P.shape):
        Pp, Pm = P.copy(), P.copy()
        Pp[idx] += eps
        Pm[idx] -= eps
        G[idx] = (fun(Pp) - fun(Pm)) / (2 * eps)
    return G


# --- activations --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ACTS)
def test_activation_derivative_matches_finite_difference(name):
    act = ACT.get_activation(name)
    u = np.linspace(-2.3, 2.1, 17)  # avoids the ReLU kink at 0
    num = (act.sigma(u + 1e-6) - act.sigma(u - 1e-6)) / 2e-6
    np.testing.assert_allclose(act.dsigma(u), num, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ACT.LOSSES))
def test_loss_table_values_and_derivatives(name):
    rng = np.random.default_rng(1)
    y, f = rng.choice([-1.0, 1.0], 11) * rng.uniform(0.5, 2, 11), rng.standard_normal(11) * 2
    written = {"square": 0.5 * (y - f) ** 2, "correlation": -y * f,
               "huber": np.where(np.abs(y - f) <= 1, 0.5 * (y - f) ** 2, np.abs(y - f) - 0.5),
               "logistic": np.log1p(np.exp(-y * f))}[name]
    loss = ACT.get_loss(name)
    assert loss.total(y, f) == pytest.approx(written.sum(), rel=1e-12)
    num = [(loss.total(y, f + 1e-6 * e) - loss.total(y, f - 1e-6 * e)) / 2e-6 for e in np.eye(11)]
    np.testing.assert_allclose(loss(y, f), num, atol=1e-6)  # the derivative, by differences
    value, dual = ACT.loss_and_dual(f, y, name)
    assert value == pytest.approx(written.mean(), rel=1e-12)
    np.testing.assert_allclose(dual, loss.derivative(y, f) / 11)
    assert ACT.loss_derivative(name) is loss and ACT.get_loss(loss) is loss
    with pytest.raises(ValueError):
        ACT.get_loss("hinge")


def test_hermite_moments_closed_forms():
    # ReLU: mu_0 = mu_2 = phi(0), mu_1 = 1/2, and mu_k = phi(0) He_{k-2}(0) for k >= 2
    phi0 = 1 / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(ACT.hermite_moments("relu", 6),
                               [phi0, 0.5, phi0, 0, -phi0, 0, 3 * phi0], atol=1e-9)
    # quadratic u^2: E[G^2] = 1, E[2G] = 0, E[2] = 2, then 0
    np.testing.assert_allclose(ACT.hermite_moments("quadratic", 4), [1, 0, 2, 0, 0], atol=1e-9)
    m = ACT.activation_moments("tanh")
    mu = ACT.hermite_moments("tanh", 3)
    assert (m.mu1, m.beta1, m.lambda3) == pytest.approx(tuple(mu[1:]), abs=1e-12)
    assert m.m2 == pytest.approx(np.mean(ACT.get_activation("tanh").dsigma(
        np.random.default_rng(0).standard_normal(400_000)) ** 2), abs=2e-3)


def test_activation_by_pair_and_object():
    act = ACT.get_activation((np.sin, np.cos))
    assert act.name == "custom"
    assert ACT.get_activation(act) is act
    X, y = _data()
    W, a = N.init_params(4, 5, rng=0, symmetric=False)
    g1 = N.gradients(W, a, X, y, (np.tanh, lambda u: 1 / np.cosh(u) ** 2))
    g2 = N.gradients(W, a, X, y, "tanh")
    np.testing.assert_allclose(g1[0], g2[0])


@pytest.mark.parametrize("bad", ["softplus", 3, (np.sin,), (np.sin, 2.0), None])
def test_activation_bad_input(bad):
    with pytest.raises(ValueError):
        ACT.get_activation(bad)


# --- scalings and initialisation -------------------------------------------------------------
def test_output_scale_and_step_size():
    assert N.output_scale(16, "ntk") == pytest.approx(0.25)
    assert N.output_scale(16, "mf") == pytest.approx(1 / 16)
    assert N.output_scale(16, 2.5) == 2.5
    assert N.step_size(0.5, 100, "ntk") == 0.5
    assert N.step_size(0.5, 100, "mf") == 50.0
    for bad in [("x", 4), (-1.0, 4), (0.0, 4)]:
        with pytest.raises(ValueError):
            N.output_scale(bad[1], bad[0])
    with pytest.raises(ValueError):
        N.output_scale(0, "ntk")
    with pytest.raises(ValueError):
        N.step_size(1.0, 4, 1.0)
    with pytest.raises(ValueError):
        N.step_size(-1.0, 4, "mf")


@pytest.mark.parametrize("scaling", ["ntk", "mf"])
def test_symmetric_init_gives_zero_function(scaling):
    W, a = N.init_params(10, 6, rng=3)
    X, _ = _data(d=6)
    np.testing.assert_allclose(N.forward(W, a, X, "relu", scaling), 0.0, atol=1e-14)
    np.testing.assert_allclose(W[:5], W[5:])
    np.testing.assert_allclose(a[:5], -a[5:])


def test_init_params_options_and_reproducibility():
    W1, a1 = N.init_params(8, 4, rng=5)
    W2, a2 = N.init_params(8, 4, rng=5)
    np.testing.assert_array_equal(W1, W2)
    np.testing.assert_array_equal(a1, a2)
    assert set(np.abs(a1)) == {1.0}
    _, ag = N.init_params(9, 4, rng=0, symmetric=False, second_layer="gaussian", a_scale=0.1)
    assert ag.shape == (9,) and np.all(np.abs(ag) < 1)
    _, az = N.init_params(4, 4, rng=0, second_layer="zero")
    assert np.all(az == 0)
    W, _ = N.init_params(4000, 50, rng=1, symmetric=False)
    assert np.mean(np.sum(W**2, axis=1)) == pytest.approx(1.0, abs=0.02)  # rows N(0, I/d)
    with pytest.raises(ValueError):
        N.init_params(7, 4, symmetric=True)
    with pytest.raises(ValueError):
        N.init_params(0, 4)
    with pytest.raises(ValueError):
        N.init_params(4, 4, second_layer="uniform")
    with pytest.raises(ValueError):
        N.init_params(4, 4, rng="seed")


@pytest.mark.parametrize("m", [10, 11])
def test_init_params_balanced_and_the_draw_order(m):
    # W is drawn first, so every second-layer option sees the same W for the same seed
    W, a = N.init_params(m, 6, rng=3, symmetric=False, second_layer="balanced", a_scale=0.1)
    Wg, ag = N.init_params(m, 6, rng=3, symmetric=False, second_layer="gaussian")
    np.testing.assert_array_equal(W, Wg)
    np.testing.assert_array_equal(W, np.random.default_rng(3).standard_normal((m, 6)) / np.sqrt(6))
    assert np.sum(a > 0) == (m + 1) // 2 and np.sum(a < 0) == m // 2  # as many of each as can be
    np.testing.assert_allclose(np.abs(a), 0.1)
    rng = np.random.default_rng(3)
    rng.standard_normal((m, 6))
    np.testing.assert_array_equal(ag, rng.standard_normal(m))  # then the Gaussian layer
    # the chapter-7 convention: a_j ~ N(0, 1), rows of norm about 1
    W7, a7 = N.init_params(300, 200, rng=0, symmetric=False, second_layer="gaussian")
    assert np.mean(np.sum(W7**2, axis=1)) == pytest.approx(1.0, abs=0.02)
    assert np.std(a7) == pytest.approx(1.0, abs=0.1)


# --- forward pass and gradients ---------------------------------------------------------------
@pytest.mark.parametrize("scaling", SCALINGS)
def test_forward_matches_explicit_sum(scaling):
    X, _ = _data()
    W, a = N.init_params(6, 5, rng=1, symmetric=False, second_layer="gaussian")
    s = N.output_scale(6, scaling)
    explicit = np.array([s * sum(a[k] * np.tanh(W[k] @ x) for k in range(6)) for x in X])
    np.testing.assert_allclose(N.forward(W, a, X, "tanh", scaling), explicit)
    np.testing.assert_allclose(N.features(W, X, "tanh"), np.tanh(X @ W.T))


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("loss", ["square", "correlation", "huber", "logistic"])
def test_gradients_match_finite_differences(act, scaling, loss):
    X, y = _data(seed=2)
    W, a = N.init_params(6, 5, rng=4, symmetric=False, second_layer="gaussian")
    gW, ga, value = N.gradients(W, a, X, y, act, scaling, loss)
    assert value == pytest.approx(N.loss_value(W, a, X, y, act, scaling, loss))
    numW = _numerical_grad(lambda P: N.loss_value(P, a, X, y, act, scaling, loss), W)
    numa = _numerical_grad(lambda P: N.loss_value(W, P, X, y, act, scaling, loss), a)
    np.testing.assert_allclose(gW, numW, atol=1e-7)
    np.testing.assert_allclose(ga, numa, atol=1e-7)
    np.testing.assert_allclose(N.first_layer_gradient(W, a, X, y, act, scaling, loss), gW)


def test_gradient_does_not_modify_inputs_for_identity_pairs():
    X, y = _data()
    W, a = N.init_params(4, 5, rng=0, symmetric=False)
    ident = (lambda u: u, lambda u: u)  # sigma returns its input: must not be overwritten
    W0 = W.copy()
    g1 = N.gradients(W, a, X, y, ident, "ntk")
    g2 = N.gradients(W, a, X, y, (lambda u: u.copy(), lambda u: u.copy()), "ntk")
    np.testing.assert_allclose(g1[1], g2[1])
    np.testing.assert_array_equal(W, W0)


def test_bad_shapes_raise():
    X, y = _data()
    W, a = N.init_params(4, 5, rng=0)
    with pytest.raises(ValueError):
        N.forward(W, a[:3], X)
    with pytest.raises(ValueError):
        N.forward(W[:, :4], a, X)
    with pytest.raises(ValueError):
        N.gradients(W, a, X, y[:-1])
    with pytest.raises(ValueError):
        N.forward(np.zeros((0, 5)), np.zeros(0), X)
    with pytest.raises(ValueError):
        N.gradients(W, a, X, y, loss="hinge")
    with pytest.raises(ValueError):
        N.forward(W, a, X * np.nan)


# --- training -------------------------------------------------------------------------------
def _linear_gd_losses(X, y, eff_eta, steps):
    """Risk of gradient descent on the least-squares problem in beta = s W^T a (closed form).

    With a linear activation and a fixed second layer, f(x) = <beta, x> with
    beta = s W^T a, and a gradient step on W moves beta by -eta s^2 ||a||^2 X^T r / n: plain
    gradient descent on a convex quadratic, whose risks we iterate directly.
    """
    n = X.shape[0]
    beta, out = np.zeros(X.shape[1]), []
    for _ in range(steps + 1):
        r = X @ beta - y
        out.append(0.5 * r @ r / n)
        beta = beta - eff_eta * X.T @ r / n
    return np.array(out)


@pytest.mark.parametrize("scaling", ["ntk", "mf"])
def test_train_stops_at_the_first_step_below_target_on_a_convex_problem(scaling):
    # Linear activation, fixed second layer: training is gradient descent on a convex
    # quadratic (see _linear_gd_losses), so the risk decreases at every step and the step at
    # which it first drops below a target is known in advance. The target sits half-way
    # between two consecutive risks, so no rounding can move the stopping step.
    X, y = _data(n=40, d=5, seed=3)
    m = 32
    W0, a0 = N.init_params(m, 5, rng=0)
    eta = N.step_size(0.02, m, scaling)  # a small step: the risk decreases slowly
    s = N.output_scale(m, scaling)
    predicted = _linear_gd_losses(X, y, eta * s**2 * (a0 @ a0), 400)
    t_stop = 60
    assert np.all(np.diff(predicted[: t_stop + 1]) < -1e-6 * predicted[0])
    target = 0.5 * (predicted[t_stop - 1] + predicted[t_stop])
    res = N.train(W0, a0, X, y, eta=eta, steps=400, activation="linear", scaling=scaling,
                  train_second_layer=False, target_loss=target)
    assert res.reached and res.steps == t_stop == len(res.losses) - 1
    assert res.losses[-1] <= target < res.losses[-2]
    np.testing.assert_allclose(res.losses, predicted[: t_stop + 1], rtol=1e-10)
    np.testing.assert_array_equal(W0, N.init_params(m, 5, rng=0)[0])  # input not modified
    np.testing.assert_array_equal(res.a, a0)
    # an unreachable target: all steps are taken and reached is False
    below = N.train(W0, a0, X, y, eta=eta, steps=30, activation="linear", scaling=scaling,
                    train_second_layer=False, target_loss=0.5 * predicted[-1])
    assert not below.reached and below.steps == 30 and len(below.losses) == 31


@pytest.mark.parametrize("scaling", ["ntk", "mf"])
def test_training_decreases_the_risk(scaling):
    # Properties that do not depend on the (chaotic, in the mean-field scaling) trajectory
    # beyond its first steps: gradient descent with a small step decreases the risk at every
    # early step, and a few hundred steps remove most of it. No step count is asserted.
    X, y = _data(n=40, d=5, seed=3)
    W0, a0 = N.init_params(32, 5, rng=0)
    eta = N.step_size(0.5, 32, scaling)
    res = N.train(W0, a0, X, y, eta=eta, steps=300, scaling=scaling)
    assert res.reached and res.steps == 300
    assert np.all(np.diff(res.losses[:20]) < 0)
    assert res.losses[-1] < 0.5 * res.losses[0]


def test_movement_scales_with_width_as_the_scaling_says():
    # After the same number of steps, the relative first-layer movement of the NTK scaling
    # shrinks like m^(-1/2) (ratio 1/4 from m = 64 to m = 1024), that of the mean-field
    # scaling stays of order one (ratio 1). The bands separate the two predictions widely.
    X, y = _data(n=40, d=5, seed=3)
    ratio = {}
    for scaling in ("ntk", "mf"):
        move = []
        for m in (64, 1024):
            W0, a0 = N.init_params(m, 5, rng=1)
            res = N.train(W0, a0, X, y, eta=N.step_size(0.5, m, scaling), steps=50,
                          scaling=scaling)
            move.append(MF.relative_movement(res.W, W0))
        ratio[scaling] = move[1] / move[0]
    assert 0.15 < ratio["ntk"] < 0.4
    assert 0.6 < ratio["mf"] < 1.6


def test_train_stop_monitor_and_fixed_second_layer():
    X, y = _data(n=30, d=4, seed=1)
    W0, a0 = N.init_params(16, 4, rng=2)
    res = N.train(W0, a0, X, y, eta=0.5, steps=500,
                  stop=lambda W, a: MF.param_distance(W, a, W0, a0) >= 0.3,
                  monitor=lambda W, a: MF.param_distance(W, a, W0, a0), record_every=1)
    assert res.reached
    assert MF.param_distance(res.W, res.a, W0, a0) >= 0.3
    assert res.records[-2][1] < 0.3  # the step before stopping was within the budget
    fixed = N.train(W0, a0, X, y, eta=0.5, steps=10, train_second_layer=False)
    np.testing.assert_array_equal(fixed.a, a0)
    assert not fixed.reached or fixed.steps == 10
    zero = N.train(W0, a0, X, y, eta=0.5, steps=0)
    np.testing.assert_array_equal(zero.W, W0)
    assert len(zero.losses) == 1


def test_train_bad_input_and_divergence():
    X, y = _data()
    W0, a0 = N.init_params(4, 5, rng=0)
    for kw in [dict(eta=-1.0, steps=3), dict(eta=0.1, steps=-1), dict(eta=0.1, steps=1.5),
               dict(eta=0.1, steps=3, target_loss=-1), dict(eta=0.1, steps=3, monitor=3),
               dict(eta=0.1, steps=3, stop="x"), dict(eta=0.1, steps=3, record_every=0)]:
        with pytest.raises(ValueError):
            N.train(W0, a0, X, y, **kw)
    with pytest.raises(FloatingPointError):
        N.train(W0, a0, X * 30, y * 30, eta=1e6, steps=200, activation="quadratic")


# --- norms, movement, tangent kernel -----------------------------------------------------------
def test_norms_and_movement():
    W = np.array([[3.0, 4.0], [0.0, 1.0]])
    a = np.array([2.0, -1.0])
    assert MF.path_norm(W, a, "mf") == pytest.approx((2 * 5 + 1 * 1) / 2)
    assert MF.path_norm(W, a, 1.0) == pytest.approx(11.0)
    assert MF.relative_movement(W + 1, W) == pytest.approx(2 / np.sqrt(26))
    assert MF.param_distance(W + 1, a + 1, W, a) == pytest.approx(np.sqrt(6))
    X = np.ones((4, 2))
    assert MF.path_norm_rademacher_bound(X, 3.0) == pytest.approx(2 * 3 * np.sqrt(8) / 4)
    with pytest.raises(ValueError):
        MF.relative_movement(W, np.zeros_like(W))
    with pytest.raises(ValueError):
        MF.relative_movement(W, W[:1])
    with pytest.raises(ValueError):
        MF.param_distance(W, a, W[:1], a[:1])
    with pytest.raises(ValueError):
        MF.path_norm_rademacher_bound(X, -1.0)


@pytest.mark.parametrize("scaling", ["ntk", "mf"])
def test_empirical_ntk_is_jacobian_gram(scaling):
    X, _ = _data(n=5, d=3)
    Z, _ = _data(n=4, d=3, seed=9)
    W, a = N.init_params(6, 3, rng=1, symmetric=False, second_layer="gaussian")
    theta = np.concatenate([W.ravel(), a])

    def jac(P):
        def f(th):
            return N.forward(th[:18].reshape(6, 3), th[18:], P, "tanh", scaling)
        return np.stack([_numerical_grad(lambda t, i=i: f(t)[i], theta) for i in range(len(P))])

    JX, JZ = jac(X), jac(Z)
    np.testing.assert_allclose(N.empirical_ntk(W, a, X, Z, "tanh", scaling), JX @ JZ.T,
                               atol=1e-7)
    Kxx = N.empirical_ntk(W, a, X, activation="tanh", scaling=scaling)
    np.testing.assert_allclose(Kxx, Kxx.T, atol=1e-12)


# --- layer-wise training (chapters 6, 7) ---------------------------------------------------------
def test_giant_step_and_multi_step():
    X, y = _data(n=20, d=5)
    W, a = N.init_params(8, 5, rng=0, symmetric=False, second_layer="gaussian")
    g = N.first_layer_gradient(W, a, X, y)
    np.testing.assert_allclose(LW.giant_step(W, a, X, y, 2.0), W - 2.0 * g)
    # the formula of the step, written out sample by sample (relu, square loss, scaling 1)
    ref = np.zeros_like(W)
    for x_i, y_i in zip(X, y, strict=True):
        r_i = (np.maximum(W @ x_i, 0) @ a - y_i) / len(y)
        ref += r_i * ((W @ x_i > 0) * a)[:, None] * x_i[None, :]
    np.testing.assert_allclose(g, ref, atol=1e-12)
    Ws = LW.multi_step(W, a, [(X, y), (X, y)], [2.0, 1.0])
    np.testing.assert_allclose(Ws[0], W - 2.0 * g)
    W1 = Ws[0]
    np.testing.assert_allclose(Ws[1], W1 - N.first_layer_gradient(W1, a, X, y))
    corr = LW.multi_step(W, a, [(X, y)], 1.0, loss="correlation")[0]
    np.testing.assert_allclose(corr, W - N.first_layer_gradient(W, a, X, y, loss="correlation"))
    with pytest.raises(ValueError):
        LW.multi_step(W, a, [], 1.0)
    with pytest.raises(ValueError):
        LW.multi_step(W, a, [(X, y)], [1.0, 2.0])
    with pytest.raises(ValueError):
        LW.giant_step(W, a, X, y, -1.0)


@pytest.mark.parametrize("n,p", [(30, 8), (8, 30)])
def test_ridge_second_layer_against_lstsq(n, p):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((n, 4)), rng.standard_normal(n)
    W = rng.standard_normal((p, 4))
    lam = 0.3
    F = np.maximum(X @ W.T, 0) * 0.5
    A = np.vstack([F, np.sqrt(n * lam) * np.eye(p)])
    b = np.concatenate([y, np.zeros(p)])
    expected = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(LW.ridge_second_layer(W, X, y, lam, scaling=0.5), expected,
                               atol=1e-10)
    # lam = 0: the minimum-norm least-squares solution, written out through the normal
    # equations (full column rank when n > p) or the minimum-norm formula F^T (F F^T)^-1 y
    ref = (np.linalg.solve(F.T @ F, F.T @ y) if n > p else F.T @ np.linalg.solve(F @ F.T, y))
    np.testing.assert_allclose(LW.ridge_second_layer(W, X, y, 0.0, scaling=0.5), ref, atol=1e-8)
    # and the limit of small ridges
    np.testing.assert_allclose(LW.ridge_second_layer(W, X, y, 1e-10, scaling=0.5), ref,
                               atol=1e-6)
    with pytest.raises(ValueError):
        LW.ridge_second_layer(W, X, y, -1.0)
    with pytest.raises(ValueError):
        LW.ridge_second_layer(W, X, y[:-1], 1.0)
