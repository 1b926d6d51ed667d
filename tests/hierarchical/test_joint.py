"""Chapter 10: the jointly trained three-layer network against direct computations."""

import math

import numpy as np
import pytest

from lecnotes.hierarchical import joint as J

CHAPTERS = (10,)


def _tiny(seed=0, S=2, n=7, d=5, p1=4, p2=3):
    rng = np.random.default_rng(seed)
    W1, W2, a = J.init_network([np.random.default_rng(seed + s) for s in range(S)], d, p1, p2)
    X = np.concatenate([rng.standard_normal((S, n, d)), np.ones((S, n, 1))], axis=2)
    return W1, W2, a, X, rng.standard_normal((S, n))


def _loss(W1, W2, a, X, y, s):
    """Half the summed squared error of seed s, from a direct per-sample loop."""
    total = 0.0
    for x, t in zip(X[s], y[s], strict=True):
        h1 = np.append(np.maximum(W1[s] @ x, 0), 1.0)
        f = a[s] @ np.maximum(W2[s] @ h1, 0) / math.sqrt(a.shape[1])
        total += 0.5 * (f - t) ** 2
    return total


def test_gradients_match_central_differences():
    W1, W2, a, X, y = _tiny()
    g1, g2 = J.joint_gradients(W1, W2, a, X, y)
    eps = 1e-6
    for s in range(2):
        for W, g in ((W1, g1), (W2, g2)):
            for idx in np.ndindex(W.shape[1:]):
                old = W[(s, *idx)]
                W[(s, *idx)] = old + eps
                up = _loss(W1, W2, a, X, y, s)
                W[(s, *idx)] = old - eps
                down = _loss(W1, W2, a, X, y, s)
                W[(s, *idx)] = old
                assert g[(s, *idx)] == pytest.approx((up - down) / (2 * eps), abs=1e-6)


def test_forward_matches_the_loop_and_shapes():
    W1, W2, a, X, y = _tiny(1)
    f, H2 = J.forward(W1, W2, a, X)
    assert f.shape == (2, 7) and H2.shape == (2, 7, 3)
    assert W1.shape == (2, 4, 6) and W2.shape == (2, 3, 5) and a.shape == (2, 3)
    np.testing.assert_allclose(0.5 * np.sum((f[1] - y[1]) ** 2), _loss(W1, W2, a, X, y, 1))
    np.testing.assert_allclose(np.abs(a), 3**-0.5)


def test_step_sizes_and_renormalisation():
    W1, W2, a, X, y = _tiny(2)
    g1, g2 = J.joint_gradients(W1, W2, a, X, y)
    n, p1, p2, d = 7, 4, 3, 5
    V1, V2 = J.joint_step(W1, W2, a, g1, g2, n, 2.0)
    np.testing.assert_allclose(V1, W1 - 2.0 * math.sqrt(p1 * p2) * math.sqrt(n / d) * g1 / n)
    np.testing.assert_allclose(V2, W2 - 2.0 * p2 * math.sqrt(n / p1) * g2 / n)
    norms = (np.linalg.norm(W1, axis=-1), np.linalg.norm(W2, axis=-1))
    R1, R2 = J.joint_step(W1, W2, a, g1, g2, n, 2.0, norms)
    np.testing.assert_allclose(np.linalg.norm(R1, axis=-1), norms[0])
    np.testing.assert_allclose(R2 / np.linalg.norm(R2, axis=-1, keepdims=True),
                               V2 / np.linalg.norm(V2, axis=-1, keepdims=True))


def test_bad_input():
    W1, W2, a, X, y = _tiny(3)
    with pytest.raises(ValueError):
        J.joint_gradients(W1, W2, a, X[:, :, :-1], y)
    with pytest.raises(ValueError):
        J.joint_gradients(W1, W2, a, X, y[:, :-1])
    with pytest.raises(ValueError):
        J.forward(W1, W2[:, :, :-1], a, X)
    with pytest.raises(ValueError):
        J.joint_step(W1, W2, a, W1, W1, 7)
    with pytest.raises(ValueError):
        J.init_network([], 5, 4, 3)
    with pytest.raises(ValueError):
        J.joint_sweep([64], [32, 16], 1, 0.5)
    with pytest.raises(ValueError):
        J.joint_sweep([64], [32], 1, 0.5, steps=0)


def test_sweep_shapes_initial_latent_energy_and_nesting():
    js = J.joint_sweep([16], [64, 128], 3, 0.5, steps=2, p1=8, p2=6, n_test=200, chunk=50,
                       rng=4)
    assert js.latent.shape == js.corr.shape == js.error.shape == (3, 1, 2, 3)
    # step 0 is the same initialisation at every budget, energy near r/d = 4/16
    np.testing.assert_array_equal(js.latent[:, :, 0, 0], js.latent[:, :, 1, 0])
    assert abs(js.latent[:, 0, 0, 0].mean() - 0.25) < 0.1
    assert np.all((js.corr >= 0) & (js.corr <= 1)) and np.all(js.error > 0)
    again = J.joint_sweep([16], [64, 128], 3, 0.5, steps=2, p1=8, p2=6, n_test=200, chunk=64,
                          rng=4)
    np.testing.assert_allclose(again.latent, js.latent)  # blocks do not change the result


def test_joint_controls_equal_the_frozen_modes():
    """The one-step controls of ``controls=True`` are the ``mode="first"``/``"second"`` runs."""
    kw = dict(p1=8, p2=8, eta0=3.0, rng=3, n_test=50)
    both = J.joint_sweep([16], [64], 2, 0.5, steps=2, controls=True, **kw)
    for m in ("first", "second"):
        one = J.joint_sweep([16], [64], 2, 0.5, steps=1, mode=m, **kw)
        for k, q in (("latent", one.latent), ("corr", one.corr), ("error", one.error)):
            np.testing.assert_allclose(both.controls[m][k], q[..., 1], rtol=1e-12)
    with pytest.raises(ValueError):
        J.joint_sweep([16], [64], 2, 0.5, mode="first", controls=True, **kw)
