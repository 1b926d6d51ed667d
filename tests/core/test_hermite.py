"""Tests of lecnotes.core.hermite (chapter 0, 2, 5 conventions)."""

from math import factorial, pi, sqrt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecnotes.core import hermite as H
from lecnotes.core import hermite_tensors as HT
from lecnotes.core.targets import LINKS

CHAPTERS = (0, 2, 5)  # the chapters whose code these tests cover: make chapter CH=N


def test_first_polynomials_match_closed_forms():
    x = np.linspace(-3, 3, 13)
    P = H.hermite_polys(x, 4)
    np.testing.assert_allclose(P[0], 1)
    np.testing.assert_allclose(P[1], x)
    np.testing.assert_allclose(P[2], x**2 - 1)
    np.testing.assert_allclose(P[3], x**3 - 3 * x)
    np.testing.assert_allclose(P[4], x**4 - 6 * x**2 + 3)


def test_normalised_equals_scaled_unnormalised():
    x = np.linspace(-5, 5, 21)
    He, h = H.hermite_polys(x, 12), H.hermite_polys(x, 12, normalized=True)
    scale = np.sqrt([factorial(k) for k in range(13)])
    np.testing.assert_allclose(h * scale[:, None], He, rtol=1e-12, atol=1e-9)


def test_he_and_h_single_degree_and_shape():
    x = np.arange(6.0).reshape(2, 3)
    assert H.he(3, x).shape == (2, 3)
    np.testing.assert_allclose(H.h(3, x), (x**3 - 3 * x) / sqrt(6))
    assert H.hermite_polys(1.5, 2).shape == (3,)


def test_orthogonality_by_quadrature():
    K = 12
    gram = H.gaussian_expectation(
        lambda g: np.einsum("jn,kn->njk", *(2 * [H.hermite_polys(g, K, normalized=True)]))
    )
    np.testing.assert_allclose(gram, np.eye(K + 1), atol=1e-10)


def test_gaussian_moments():
    for p, m in [(0, 1.0), (2, 1.0), (4, 3.0), (6, 15.0), (8, 105.0)]:
        assert H.gaussian_expectation(lambda g, p=p: g**p) == pytest.approx(m, rel=1e-12)
    assert H.gaussian_expectation(lambda g: np.abs(g)) == pytest.approx(sqrt(2 / pi), abs=1e-12)


def test_expectation_of_indicator_finds_unannounced_jumps():
    from scipy.stats import norm

    a, b = 0.3137, 2.2718
    f = lambda g: ((np.abs(g) > a) & (np.abs(g) < b)).astype(float)  # noqa: E731
    exact = 2 * (norm.cdf(b) - norm.cdf(a))
    assert H.gaussian_expectation(f) == pytest.approx(exact, abs=1e-10)


@pytest.mark.parametrize(
    "name, exact",
    [
        ("quadratic", [1, 0, 2, 0, 0, 0]),
        ("cubic", [0, 3, 0, 6, 0, 0]),
        ("he3", [0, 0, 0, 6, 0, 0]),
        ("he4", [0, 0, 0, 0, 24, 0]),
        ("abs", [sqrt(2 / pi), 0, sqrt(2 / pi), 0, -sqrt(2 / pi), 0]),
        ("relu", [1 / sqrt(2 * pi), 0.5, 1 / sqrt(2 * pi), 0, -1 / sqrt(2 * pi), 0]),
        ("sign", [0, 2 / sqrt(2 * pi), 0, -2 / sqrt(2 * pi), 0, 6 / sqrt(2 * pi)]),
    ],
)
def test_unnormalised_coefficients_closed_forms(name, exact):
    lam = H.hermite_coefficients(LINKS[name], 5, normalized=False)
    tol = 1e-8 if name == "sign" else 1e-9
    np.testing.assert_allclose(lam, exact, atol=tol)


def test_normalised_is_unnormalised_over_sqrt_factorial():
    lam = H.hermite_coefficients(LINKS["tanh"], 9, normalized=False)
    c = H.hermite_coefficients(LINKS["tanh"], 9)
    np.testing.assert_allclose(c, lam / np.sqrt([factorial(k) for k in range(10)]), atol=1e-12)


def test_sign_coefficients_to_high_degree():
    c = H.hermite_coefficients(LINKS["sign"], 21)
    for k in range(1, 22, 2):
        exact = 2 / sqrt(2 * pi) * H.he(k - 1, 0.0) / sqrt(factorial(k))
        assert abs(c[k] - exact) < 1e-8
    assert np.max(np.abs(c[::2])) < 1e-10


def test_parseval_for_a_polynomial():
    f = lambda g: 1 + 2 * g - g**3 + 0.5 * g**4  # noqa: E731
    c = H.hermite_coefficients(f, 8)
    energy = H.gaussian_expectation(lambda g: f(g) ** 2)
    assert np.sum(c**2) == pytest.approx(energy, rel=1e-12)
    assert np.max(np.abs(c[5:])) < 1e-10


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=6))
def test_coefficients_recover_a_random_hermite_combination(coefs):
    coefs = np.array(coefs)
    f = lambda g: coefs @ H.hermite_polys(g, len(coefs) - 1, normalized=True)  # noqa: E731
    c = H.hermite_coefficients(f, len(coefs) + 1)
    np.testing.assert_allclose(c[: len(coefs)], coefs, atol=1e-9)
    np.testing.assert_allclose(c[len(coefs):], 0, atol=1e-9)


def test_coefficients_of_a_link_use_its_breakpoints():
    # a Link carries its kinks; the bare function with the same breakpoint gives the same values
    relu = LINKS["relu"]
    np.testing.assert_allclose(
        H.hermite_coefficients(relu, 3), H.hermite_coefficients(relu.func, 3, breakpoints=(0.0,))
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: H.hermite_polys([0.0], -1),
        lambda: H.hermite_polys([np.nan], 2),
        lambda: H.hermite_polys([0.0], 2.5),
        lambda: H.hermite_coefficients(LINKS["relu"], -1),
        lambda: H.hermite_coefficients("no-such-link", 2),
        lambda: H.hermite_coefficients(3.0, 2),
        lambda: H.hermite_coefficients(lambda g: np.full_like(g, np.nan), 2),
        lambda: H.gaussian_expectation("not callable"),
        lambda: H.gaussian_expectation(lambda g: g[:1]),
        lambda: H.he(-1, 0.0),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_quadrature_rules_integrate_closed_forms():
    x, w = H.gauss_legendre(5)
    assert w.sum() == pytest.approx(2.0) and np.sum(w * x**8) == pytest.approx(2 / 9)
    nodes, weights = H.panel_rule(np.array([0.0, 1.0]), np.array([1.0, 3.0]), 4)
    assert nodes.shape == weights.shape == (2, 4)
    assert np.sum(weights * nodes**3) == pytest.approx(81 / 4)  # int_0^3 x^3 dx
    g, wg = H.gauss_hermite(12)
    assert np.sum(wg) == pytest.approx(1.0) and np.sum(wg * g**6) == pytest.approx(15.0)
    zs, wz = H.split_gaussian_rule(80)
    assert np.sum(wz * np.abs(zs)) == pytest.approx(sqrt(2 / pi), abs=1e-12)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 5])
def test_hermite_tensor_contracts_to_scalar_hermite(k):
    rng = np.random.default_rng(k)
    x = rng.standard_normal(4)
    w = rng.standard_normal(4)
    w /= np.linalg.norm(w)
    t = HT.hermite_tensor(x, k)
    assert t.shape == (4,) * k
    for _ in range(k):
        t = t @ w
    assert float(t) == pytest.approx(float(H.he(k, x @ w)), abs=1e-10)


def test_hermite_tensor_is_symmetric_and_centred():
    rng = np.random.default_rng(0)
    t = HT.hermite_tensor(rng.standard_normal(3), 4)
    for perm in [(1, 0, 2, 3), (0, 2, 1, 3), (3, 1, 2, 0)]:
        np.testing.assert_allclose(t, np.transpose(t, perm))
    # E[He_4(x)] = 0: average over many x (Monte Carlo, loose tolerance)
    X = rng.standard_normal((20000, 2))
    mean = np.mean([HT.hermite_tensor(x, 4) for x in X[:2000]], axis=0)
    assert np.max(np.abs(mean)) < 0.8


def test_hermite_tensor_refuses_large_sizes():
    with pytest.raises(ValueError):
        HT.hermite_tensor(np.zeros(100), 4)
    with pytest.raises(ValueError):
        HT.hermite_tensor(np.zeros((2, 2)), 2)


@pytest.mark.parametrize("d", [2, 5, 8])
def test_he4_partial_trace_matches_explicit_tensor(d):
    rng = np.random.default_rng(d)
    n = 7
    X = rng.standard_normal((n, d))
    T = rng.standard_normal(n)
    v = rng.standard_normal(d)
    M = sum(T[i] * np.einsum("abjj->ab", HT.hermite_tensor(X[i], 4)) for i in range(n)) / n
    np.testing.assert_allclose(HT.he4_partial_trace(X, T, v), M @ v, atol=1e-9)
    V2 = rng.standard_normal((d, 3))
    np.testing.assert_allclose(HT.he4_partial_trace(X, T, V2), M @ V2, atol=1e-9)


def test_he4_partial_trace_bad_input():
    with pytest.raises(ValueError):
        HT.he4_partial_trace(np.zeros((3, 2)), np.zeros(4), np.zeros(2))
    with pytest.raises(ValueError):
        HT.he4_partial_trace(np.zeros((3, 2)), np.zeros(3), np.zeros(5))
