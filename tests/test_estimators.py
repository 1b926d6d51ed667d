"""Tests of lecnotes.estimators (chapters 0 and 3)."""

import numpy as np
import pytest

from lecnotes import estimators as E
from lecnotes.targets import random_orthonormal, single_index


def test_first_moment_is_unit_and_matches_formula():
    X, y, w = single_index(100, 5, "relu", rng=0)
    v = E.first_moment(X, y, T=lambda t: t - 1)
    ref = X.T @ (y - 1)
    np.testing.assert_allclose(v, ref / np.linalg.norm(ref))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_first_moment_overlap_matches_the_limit_for_several_seeds(seed):
    # chapter 0 claim "relu-first-moment": rho^2 -> delta/(delta+2) for the ReLU
    d, delta = 800, 4
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(6):
        X, y, w = single_index(delta * d, d, "relu", rng=rng)
        vals.append(E.overlap(E.first_moment(X, y), w) ** 2)
    assert np.mean(vals) == pytest.approx(delta / (delta + 2), abs=0.03)


def test_overlap_properties():
    assert E.overlap([1.0, 0.0], [0.0, 2.0]) == 0.0
    assert E.overlap([-3.0, 0.0], [1.0, 0.0]) == 1.0
    assert E.overlap([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / np.sqrt(2))


def test_subspace_overlap():
    W = random_orthonormal(2, 10, rng=0)
    assert E.subspace_overlap(W, W) == pytest.approx(1.0)
    assert E.subspace_overlap(W[:1], W) == pytest.approx(0.5)
    assert E.subspace_overlap(3 * W[::-1], W) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: E.first_moment(np.zeros((3, 2)), np.zeros(4)),
        lambda: E.first_moment(np.zeros((3, 2)), np.zeros(3)),
        lambda: E.first_moment(np.ones((3, 2)), np.ones(3), T="abs"),
        lambda: E.first_moment(np.ones((3, 2)), np.ones(3), T=lambda y: y[:2]),
        lambda: E.first_moment(np.ones((3, 2)), np.array([1.0, np.nan, 2.0])),
        lambda: E.overlap([0.0, 0.0], [1.0, 0.0]),
        lambda: E.overlap([1.0], [1.0, 0.0]),
        lambda: E.subspace_overlap(np.zeros((1, 3)), np.eye(3)[:1]),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
