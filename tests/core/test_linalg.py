"""Tests of lecnotes.core.linalg: the named eigen-result, the one sign rule, the start vector."""

import numpy as np
import pytest

from lecnotes.core import linalg

CHAPTERS = (4, 5, 6, 7)  # the chapters whose code these tests cover: make chapter CH=N


def test_canonical_sign_vectors_and_rows():
    v = np.array([0.1, -0.9, 0.3])
    np.testing.assert_array_equal(linalg.canonical_sign(v), -v)
    np.testing.assert_array_equal(linalg.canonical_sign(-v), -v)
    rows = np.array([[0.1, -0.9, 0.3], [0.5, 0.2, -0.1], [0.0, 0.0, 0.0]])
    out = linalg.canonical_sign(rows)
    np.testing.assert_array_equal(out, [[-0.1, 0.9, -0.3], [0.5, 0.2, -0.1], [0, 0, 0]])
    with pytest.raises(ValueError):
        linalg.canonical_sign(np.zeros((2, 2, 2)))


def test_top_eigenpair_returns_direction_first_and_a_fixed_start():
    rng = np.random.default_rng(0)
    d = 400
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    ev = np.linspace(-1, 1, d)
    ev[-1] = 3.0
    A = (Q * ev) @ Q.T
    res = linalg.top_eigenpair(lambda x: A @ x, d, method="lanczos")
    assert isinstance(res, linalg.EigenResult)
    assert res.value == pytest.approx(3.0, rel=1e-8)
    assert abs(res.vector @ Q[:, -1]) == pytest.approx(1.0, abs=1e-8)
    assert res.vector[np.argmax(np.abs(res.vector))] > 0  # the sign rule
    # the default start vector is lanczos_start(d), whatever the global numpy state
    again = linalg.top_eigenpair(lambda x: A @ x, d, method="lanczos",
                                 v0=linalg.lanczos_start(d))
    np.testing.assert_array_equal(res.vector, again.vector)
    np.testing.assert_array_equal(linalg.lanczos_start(5),
                                  np.random.default_rng(linalg.LANCZOS_START_SEED)
                                  .standard_normal(5))


def test_singular_vectors_share_the_sign_rule_and_reconstruct():
    rng = np.random.default_rng(1)
    M = rng.standard_normal((300, 280))
    M += 40 * np.outer(rng.standard_normal(300), rng.standard_normal(280)) / 280
    U, Vt = linalg.top_singular_vectors(M, 3)
    s, V2 = linalg.top_singular(M, 3)
    # the same vectors, the same signs, from the two routes
    np.testing.assert_allclose(np.abs(np.sum(Vt * V2, axis=1)), 1.0, atol=1e-8)
    np.testing.assert_allclose(Vt, V2, atol=1e-7)
    for row in Vt:
        assert row[np.argmax(np.abs(row))] > 0
    # U follows Vt: M v_k = s_k u_k
    np.testing.assert_allclose(M @ Vt.T, U * s, atol=1e-6)


def test_weighted_gram_is_the_weighted_product():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 7))
    t = rng.standard_normal(50)
    ref = sum(t[i] * np.outer(X[i], X[i]) for i in range(50)) / 50
    np.testing.assert_allclose(linalg.weighted_gram(X, t), ref, atol=1e-12)
    with pytest.raises(ValueError):
        linalg.weighted_gram(X, t[:3])
