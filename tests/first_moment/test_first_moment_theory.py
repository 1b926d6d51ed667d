"""Tests of the first-moment closed forms (lecnotes.first_moment.theory, chapter 3)."""

import numpy as np
import pytest

from lecnotes.core.overlaps import overlap
from lecnotes.core.targets import single_index
from lecnotes.first_moment.experiments import first_moment
from lecnotes.first_moment.theory import first_moment_moments, first_moment_overlap

CHAPTERS = (3,)  # the chapters whose code these tests cover: make chapter CH=N


def test_closed_forms():
    assert first_moment_moments("relu") == pytest.approx((0.5 + 1 / np.pi,) * 2, abs=1e-9)
    assert first_moment_moments("relu", T=lambda y: y) == pytest.approx((0.5, 0.5), abs=1e-12)
    assert first_moment_moments("cubic", T=lambda y: y) == pytest.approx((3.0, 15.0))
    assert first_moment_moments("cubic") == pytest.approx((1.0, 1.0), abs=1e-8)
    mu, m2 = first_moment_moments("he3", T=lambda y: y)
    assert abs(mu) < 1e-12 and m2 == pytest.approx(6.0)
    assert first_moment_moments("quadratic")[0] < 1e-12


def test_noisy_sign_against_its_closed_form():
    from lecnotes.core.hermite import gaussian_expectation

    for tau in [0.3, 1.0]:
        q = 2 / np.pi * gaussian_expectation(lambda z, t=tau: np.tanh((1 + t * z) / t**2) ** 2)
        assert first_moment_moments("sign", noise=tau)[0] == pytest.approx(q, abs=1e-7)
        mu, m2 = first_moment_moments("sign", T=lambda y: y, noise=tau)
        assert mu == pytest.approx(np.sqrt(2 / np.pi), abs=1e-8)
        assert m2 == pytest.approx(1 + tau**2, abs=1e-8)


def test_overlap_formula_and_optimality():
    deltas = np.array([0.5, 1.0, 4.0])
    q = 0.5 + 1 / np.pi
    np.testing.assert_allclose(first_moment_overlap("relu", deltas), deltas * q / (1 + deltas * q),
                               rtol=1e-8)
    for T in [lambda y: y, lambda y: np.clip(y, 0, 1), lambda y: y - 0.3]:
        assert np.all(first_moment_overlap("relu", deltas, T=T)
                      <= first_moment_overlap("relu", deltas) + 1e-12)
    assert isinstance(first_moment_overlap("relu", 2.0), float)


@pytest.mark.parametrize("seed", [0, 1])
def test_theory_against_a_large_simulation(seed):
    d, delta = 1000, 3
    T = lambda y: np.clip(y, -1, 1)  # noqa: E731
    vals = []
    for s in range(4):
        X, y, w = single_index(delta * d, d, "he3", rng=np.random.default_rng([seed, s]))
        vals.append(overlap(first_moment(X, y, T), w) ** 2)
    assert np.mean(vals) == pytest.approx(first_moment_overlap("he3", delta, T=T), abs=0.03)


@pytest.mark.parametrize(
    "call",
    [
        lambda: first_moment_overlap("relu", 0.0),
        lambda: first_moment_overlap("relu", -1.0),
        lambda: first_moment_overlap("relu", 1.0, noise=-0.1),
        lambda: first_moment_overlap("nope", 1.0),
        lambda: first_moment_overlap("relu", 1.0, T="y"),
        lambda: first_moment_overlap("relu", 1.0, T=lambda y: 0 * y),
        lambda: first_moment_overlap("relu", [1.0, np.nan]),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("link,noise", [("he3", 0.0), ("relu", 0.0), ("cubic", 0.0),
                                        ("sign", 0.5)])
def test_closed_form_optimal_preprocessing_matches_quadrature(link, noise):
    from lecnotes.core.conditional_hermite import conditional_hermite
    from lecnotes.first_moment.theory import optimal_preprocessing

    _, y, _ = single_index(2000, 2, link, noise=noise, rng=4)
    y = np.concatenate([y, [0.0, 1.999, 2.001, -2.5]]) if link == "he3" else y
    np.testing.assert_allclose(optimal_preprocessing(link, noise)(y),
                               conditional_hermite(link, 1, noise=noise)(y), atol=1e-9)


def test_closed_form_optimal_preprocessing_rejects_unknown():
    from lecnotes.first_moment.theory import optimal_preprocessing

    for args in [("tanh",), ("sign",), ("relu", 0.5)]:
        with pytest.raises(ValueError):
            optimal_preprocessing(*args)
