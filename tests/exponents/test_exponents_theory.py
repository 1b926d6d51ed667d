"""Tests of the landscape heuristics of chapter 2 (lecnotes.exponents.theory)."""

import math

import numpy as np
import pytest

from lecnotes.exponents import theory as T

CHAPTERS = (2,)  # the chapters whose code these tests cover: make chapter CH=N


def test_sphere_overlap_moments_match_monte_carlo_and_closed_form():
    m = T.sphere_overlap_moments(7, 4)
    assert m[0] == 1 and m[1] == m[3] == 0
    assert m[2] == pytest.approx(1 / 7) and m[4] == pytest.approx(3 / (7 * 9))
    rng = np.random.default_rng(0)
    u = rng.standard_normal((200_000, 7))
    rho = u[:, 0] / np.linalg.norm(u, axis=1)       # overlap with a fixed direction
    assert np.mean(rho**4) == pytest.approx(m[4], rel=0.02)


def test_low_degree_norm_leading_terms():
    # k* = 2, D = 2: only j = 1 survives, n a_2 E[rho^2] = n a_2 / d
    assert T.low_degree_norm([0.0, 0.5], 30.0, 10, 2) == pytest.approx(30 * 0.5 / 10)
    # k* = 1, D = 2: n a_1^2-free j = 1 term vanishes (odd moment), j = 2 gives C(n,2) a_1^2 / d
    assert T.low_degree_norm([0.4], 30.0, 10, 2) == pytest.approx(30 * 29 / 2 * 0.16 / 10)
    # the threshold inverts the norm
    nc = T.low_degree_threshold([0.0, 0.5], 100, 2)
    assert T.low_degree_norm([0.0, 0.5], nc, 100, 2) == pytest.approx(1.0)


def test_sgd_escape_steps_closed_form():
    d, eta = 400, 1e-3
    m0, m1 = d**-0.5, 0.5
    exact = (1 / m0 - 1 / m1 + math.atanh(m1) - math.atanh(m0)) / (3 * eta)
    assert T.sgd_escape_steps(3, d, eta) == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("call", [
    lambda: T.low_degree_norm([-0.1], 10.0, 5, 2),
    lambda: T.low_degree_norm([0.1], -1.0, 5, 2),
    lambda: T.low_degree_threshold([0.0, 0.0], 10, 2),
    lambda: T.sgd_escape_steps(3, 2, 0.1, target=0.5),
    lambda: T.sphere_overlap_moments(1, 2),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unfolded_spike_overlap_follows_bbp():
    # below the square-matrix BBP threshold the overlap is that of noise, above it 1 - 1/theta^2
    out = T.unfolding_sweep([12], [0.25, 8.0], seeds=6, rng=0)
    assert out.shape == (6, 1, 2)
    assert out[:, 0, 0].mean() < 0.1
    assert abs(out[:, 0, 1].mean() - (1 - 1 / 8)) < 0.03
    assert T.unfolded_spike_overlap(6, 10_000_000, rng=1) > 0.99
    with pytest.raises(ValueError):
        T.unfolded_spike_overlap(1, 10)
