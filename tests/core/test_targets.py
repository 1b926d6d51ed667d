"""Tests of lecnotes.core.targets (chapter 0)."""

import math

import numpy as np
import pytest

from lecnotes.core import targets as T

CHAPTERS = (0,)  # the chapters whose code these tests cover: make chapter CH=N


def test_catalogue_has_the_required_links():
    for name in ["linear", "quadratic", "cubic", "he3", "he4", "abs", "relu", "tanh", "sign"]:
        assert name in T.LINKS
    u = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(T.LINKS["relu"](u), [0, 0, 0, 0.5, 2])
    np.testing.assert_allclose(T.LINKS["he3"](u), u**3 - 3 * u)
    np.testing.assert_allclose(T.LINKS["sign"](u), np.sign(u))


def test_single_index_shapes_norm_and_labels():
    X, y, w = T.single_index(50, 7, "cubic", rng=0)
    assert X.shape == (50, 7) and y.shape == (50,) and w.shape == (7,)
    assert np.linalg.norm(w) == pytest.approx(1.0)
    np.testing.assert_allclose(y, (X @ w) ** 3)


def test_single_index_is_reproducible_with_a_seed():
    a = T.single_index(10, 4, "tanh", noise=0.5, rng=3)
    b = T.single_index(10, 4, "tanh", noise=0.5, rng=3)
    c = T.single_index(10, 4, "tanh", noise=0.5, rng=4)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert not np.allclose(a[0], c[0])


def test_single_index_noise_has_the_right_variance():
    X, y, w = T.single_index(200_000, 2, "linear", noise=0.7, rng=1)
    resid = y - X @ w
    assert resid.std() == pytest.approx(0.7, rel=0.01)


def test_single_index_given_direction_and_callable_link():
    X, y, w = T.single_index(5, 3, lambda u: 2 * u, w_star=[3.0, 0, 4.0], rng=0)
    np.testing.assert_allclose(w, [0.6, 0, 0.8])
    np.testing.assert_allclose(y, 2 * X @ w)


def test_multi_index_and_staircase():
    X, y, W = T.multi_index(30, 6, T.staircase(2), k=2, rng=0)
    np.testing.assert_allclose(W @ W.T, np.eye(2), atol=1e-12)
    Z = X @ W.T
    np.testing.assert_allclose(y, Z[:, 0] + Z[:, 0] * Z[:, 1])


def test_random_orthonormal_is_haar_like():
    rng = np.random.default_rng(0)
    # the first coordinate of a Haar row has E = 0 and E[x^2] = 1/d
    rows = np.array([T.random_orthonormal(2, 5, rng)[0] for _ in range(4000)])
    assert abs(rows[:, 0].mean()) < 0.03
    assert np.mean(rows[:, 0] ** 2) == pytest.approx(0.2, abs=0.02)


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.single_index(0, 3, "relu"),
        lambda: T.single_index(3, 0, "relu"),
        lambda: T.single_index(3.5, 3, "relu"),
        lambda: T.single_index(3, 3, "nope"),
        lambda: T.single_index(3, 3, 42),
        lambda: T.single_index(3, 3, "relu", noise=-1.0),
        lambda: T.single_index(3, 3, "relu", noise=float("nan")),
        lambda: T.single_index(3, 3, lambda u: np.full_like(u, np.nan)),
        lambda: T.single_index(3, 3, lambda u: u[:1]),
        lambda: T.single_index(3, 3, "relu", rng="seed"),
        lambda: T.single_index(3, 3, "relu", w_star=np.zeros(3)),
        lambda: T.multi_index(3, 3, T.staircase(2), k=4),
        lambda: T.multi_index(3, 3, "not callable", k=2),
        lambda: T.random_orthonormal(0, 3),
        lambda: T.staircase(0),
        lambda: T.staircase(3)(np.zeros((4, 2))),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_get_link():
    assert T.get_link("relu") is T.LINKS["relu"]
    f = np.sin
    assert T.get_link(f) is f


def test_link_moments_closed_forms():
    m = T.link_moments("relu")
    assert m.mean == pytest.approx(1 / math.sqrt(2 * math.pi), abs=1e-12)
    assert m.c1 == pytest.approx(0.5, abs=1e-12)
    assert m.c2 == pytest.approx(1 / math.sqrt(4 * math.pi), abs=1e-12)
    assert m.ey2 == pytest.approx(0.5, abs=1e-12)
    assert m.ey2g2 == pytest.approx(1.5, abs=1e-12)  # E[G^4 1{G > 0}] = 3/2
    assert tuple(T.link_moments("quadratic")) == pytest.approx((1.0, 0.0, math.sqrt(2), 3.0, 15.0))


def test_link_expectation_with_noise():
    # Y = G + tau Z: E[Y^2] = 1 + tau^2, E[Y G] = 1, E[Y^4] = 3 (1 + tau^2)^2
    tau = 0.7
    vals = T.link_expectation(lambda g, y: np.stack([y * y, y * g, y**4], axis=-1), "linear", tau)
    np.testing.assert_allclose(vals, [1 + tau**2, 1.0, 3 * (1 + tau**2) ** 2], rtol=1e-9)
    assert float(T.link_expectation(lambda g, y: y * y, "sign")) == pytest.approx(1.0, abs=1e-12)


def test_gen4_partner():
    for a in (0.1, 0.5, 0.9):
        b = T.gen4_partner(a)
        assert b > 1 and a * math.exp(-a * a / 2) == pytest.approx(b * math.exp(-b * b / 2),
                                                                   abs=1e-15)
    assert T.LINKS["gen4"].breakpoints == (-T.GEN4_B, -T.GEN4_A, T.GEN4_A, T.GEN4_B)
    with pytest.raises(ValueError):
        T.gen4_partner(1.5)
