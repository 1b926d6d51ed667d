"""Tests of the matched two-layer learner of chapter 10 (lecnotes.hierarchical.matched)."""

import math

import numpy as np
import pytest

from lecnotes.hierarchical import joint as J
from lecnotes.hierarchical import matched as M


def test_hermite_index_counts_the_polynomials_of_degree_at_most_four():
    for r in (1, 3, 8):
        assert M.hermite_index(r, 4).shape == (math.comb(r + 4, 4), 4)
    with pytest.raises(ValueError):
        M.hermite_index(0, 4)


def test_hermite_features_are_the_normalised_products():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((7, 2))
    idx = M.hermite_index(2, 4)
    F = M.hermite_features(Z, idx)
    he = {0: np.ones(7), 1: Z, 2: Z**2 - 1, 3: Z**3 - 3 * Z, 4: Z**4 - 6 * Z**2 + 3}
    want = {}
    for a in range(5):
        for b in range(5 - a):
            ha = he[a] if a == 0 else he[a][:, 0]
            hb = he[b] if b == 0 else he[b][:, 1]
            want[(a, b)] = ha * hb / math.sqrt(math.factorial(a) * math.factorial(b))
    got = sorted(np.round(F.T.astype(float), 4).tolist())
    ref = sorted(np.round(np.array(list(want.values())), 4).tolist())
    np.testing.assert_allclose(got, ref, atol=2e-3)


def test_latent_ridge_learns_a_degree_four_polynomial_of_the_subspace():
    rng = np.random.default_rng(1)
    d, r, n = 6, 2, 4000
    U = np.linalg.qr(rng.standard_normal((d, r)))[0]
    X, Xt = rng.standard_normal((n, d)), rng.standard_normal((500, d))
    f = lambda A: (A @ U[:, 0]) ** 2 * (A @ U[:, 1]) ** 2 - 1  # noqa: E731
    err = M.latent_ridge_errors(U, X, f(X), Xt, f(Xt), M.hermite_index(r, 4), [1e-6])
    assert err[0] < 1e-4 * np.var(f(Xt))


def test_welch_z_of_equal_errors_and_seeds():
    z, t = M.welch_z(1.0, 0.1, 10, 0.0, 0.1, 10)
    assert z == pytest.approx(1 / math.sqrt(0.02))
    assert t > 3  # 18 degrees of freedom at level 0.999
    with pytest.raises(ValueError):
        M.welch_z(1.0, 0.0, 10, 0.0, 0.1, 10)


def test_frozen_layer_controls_leave_that_layer_at_initialisation():
    js = J.joint_sweep([16], [64], 2, 0.5, steps=1, p1=8, p2=8, n_test=50, mode="second",
                       rng=3)
    assert np.allclose(js.latent[:, :, :, 1], js.latent[:, :, :, 0])
    with pytest.raises(ValueError):
        J.joint_sweep([16], [64], 2, 0.5, mode="both")
