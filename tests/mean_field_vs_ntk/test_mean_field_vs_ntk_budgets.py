"""Tests of lecnotes.mean_field_vs_ntk.budgets: the equivalent kernel and the smoothed fits."""

import math

import numpy as np
import pytest

from lecnotes.core import validate as V
from lecnotes.core.targets import single_index
from lecnotes.mean_field_vs_ntk import budgets as B
from lecnotes.mean_field_vs_ntk.theory import smoothed_fit_error, target
from lecnotes.models.kernel_methods import kernel_ridge_at_loss, rkhs_norm
from lecnotes.models.kernels import relu_ntk

CHAPTERS = (1,)


def test_taylor_coefficients_match_the_kernel_on_the_sphere():
    d = 30
    t = B.ntk_taylor(d)
    u = np.zeros(d)
    u[0] = math.sqrt(d)

    def f(c):  # the NTK of two inputs of norm sqrt(d) with cosine c
        v = math.sqrt(d) * np.r_[c, math.sqrt(1 - c * c), np.zeros(d - 2)]
        return relu_ntk(u[None], v[None])[0, 0]

    h = 1e-5
    assert f(0.0) == pytest.approx(t.f0, rel=1e-12)
    assert (f(h) - f(-h)) / (2 * h) == pytest.approx(t.f1, rel=1e-8)
    assert f(1.0) - t.f0 - t.f1 == pytest.approx(t.gamma, rel=1e-7)  # arccos near 1


def test_woodbury_solve_equals_the_dense_equivalent():
    X, y, _ = single_index(80, 10, target, rng=0)
    n, d = X.shape
    t, nu = B.ntk_taylor(d), np.linalg.norm(X, axis=1)
    K = t.f0 * np.outer(nu, nu) / d + t.f1 * X @ X.T / d
    K[np.diag_indices(n)] = np.diag(relu_ntk(X))
    dense = rkhs_norm(K, kernel_ridge_at_loss(K, y, 0.1, iters=60)[1])
    assert B.equivalent_min_norm(X, y, 0.1) == pytest.approx(dense, rel=1e-6)


def test_equivalent_tracks_the_kernel_at_small_n_and_heuristic_scales_like_sqrt_n():
    d = 32
    X, y, _ = single_index(2 * d, d, target, rng=V.stream(0, 0))
    K = relu_ntk(X)
    exact = rkhs_norm(K, kernel_ridge_at_loss(K, y, 0.1)[1])
    assert B.equivalent_min_norm(X, y, 0.1) == pytest.approx(exact, rel=0.05)
    assert B.heuristic_min_norm(4 * d, d, 0.1) / B.heuristic_min_norm(d, d, 0.1) == (
        pytest.approx(2.0))
    # the sweep draws the data of norm_budget_sweep: a fresh copy of stream(rng, s)
    sweep = B.equivalent_norm_sweep(d, [2], 0.1, seeds=1, rng=0)
    assert sweep[0, 0] == pytest.approx(B.equivalent_min_norm(X, y, 0.1))


def test_smoothed_path_norms_grow_as_the_error_falls():
    errs, paths = B.smoothed_path_norms(np.linspace(-1, 1, 11), [1e-1, 1e-2, 1e-3])
    assert np.all(np.diff(errs) < 0) and np.all(np.diff(paths) > 0)
    # a large penalty cannot beat the unpenalised best fit of the same dictionary
    assert errs[-1] >= smoothed_fit_error(np.linspace(-1, 1, 11)) - 1e-9


@pytest.mark.parametrize("call", [
    lambda: B.ntk_taylor(0), lambda: B.ntk_taylor(1.5),
    lambda: B.heuristic_min_norm(0, 4, 0.1), lambda: B.heuristic_min_norm(4, 4, 0.5),
    lambda: B.heuristic_min_norm(4, 4, float("nan")),
    lambda: B.equivalent_min_norm(np.ones((3, 2)), np.ones(3), 0.0),
    lambda: B.equivalent_min_norm(np.ones((3, 2)), np.ones(3), 0.6),
    lambda: B.equivalent_min_norm(np.ones((3, 2)), np.ones(2), 0.1),
    lambda: B.equivalent_norm_sweep(4, [1.5], 0.1, seeds=1),
    lambda: B.equivalent_norm_sweep(4, [2], 0.1, seeds=0),
    lambda: B.equivalent_norm_sweep(-4, [2], 0.1, seeds=1),
    lambda: B.smoothed_path_norms([2.0], [0.1]),
    lambda: B.smoothed_path_norms([0.5], [0.0]),
    lambda: B.smoothed_path_norms([], [0.1]),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()
