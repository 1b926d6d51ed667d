"""Tests of the experiments of chapter 1 (lecnotes.mean_field_vs_ntk.experiments)."""

import math

import numpy as np
import pytest

from lecnotes.mean_field_vs_ntk import experiments as M

CHAPTERS = (1,)  # the chapters whose code these tests cover: make chapter CH=N


def test_target_is_h1_plus_h2():
    u = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(M.target(u), u + (u**2 - 1) / math.sqrt(2), atol=1e-14)


def test_movement_sweep_shapes_and_lazy_prediction():
    res = M.movement_sweep(4, 16, [8, 32], eps=0.05, eta0=0.5, seeds=2, steps=3000,
                           n_test=50, rng=0)
    for sc in ("ntk", "mf"):
        assert res.movement[sc].shape == res.gap[sc].shape == (2, 2)
        assert np.all(res.movement[sc] > 0)
    assert res.reached.shape == (2, 2, 2) and res.reached.dtype == bool
    assert res.lazy_prediction.shape == (2,) and np.all(res.lazy_prediction > 0)
    # NTK scaling moves less at the larger width; mean-field moves more than NTK
    assert np.all(res.movement["ntk"][:, 1] < res.movement["ntk"][:, 0])
    assert np.all(res.movement["mf"][:, 1] > res.movement["ntk"][:, 1])
    # one stream per seed: dropping a seed leaves the others unchanged
    one = M.movement_sweep(4, 16, [8, 32], eps=0.05, eta0=0.5, seeds=1, steps=3000, n_test=50,
                           rng=0)
    np.testing.assert_array_equal(one.movement["mf"][0], res.movement["mf"][0])


def test_movement_sweep_halves_the_step_of_a_run_that_misses():
    """A run that diverges (or misses the loss) restarts from its own initialisation with
    half the step, drawing nothing: at eta0 = 2 the mean-field runs of seed 0 diverge, and
    after one halving they are exactly the eta0 = 1 runs of the same seed."""
    kw = dict(eps=0.05, seeds=2, steps=500, n_test=50, rng=0)
    with pytest.raises(FloatingPointError):
        M.movement_sweep(4, 16, [8, 32], eta0=2.0, max_halvings=0, **kw)
    two = M.movement_sweep(4, 16, [8, 32], eta0=2.0, **kw)
    one = M.movement_sweep(4, 16, [8, 32], eta0=1.0, **kw)
    assert two.reached.all() and one.halvings.sum() == 0
    np.testing.assert_array_equal(two.halvings[0, 1], [1, 1])  # seed 0, mean field
    for sc in ("movement", "gap"):
        np.testing.assert_array_equal(getattr(two, sc)["mf"][0], getattr(one, sc)["mf"][0])
    untouched = two.halvings == 0  # the other runs are those of a cap with no halving
    assert untouched[:, 0].all()


def test_rademacher_linear_sweep_bounds_are_ordered():
    res = M.rademacher_linear_sweep([5, 20], [3, 30], n_mc=200, rng=0)
    assert set(res.values) == {3, 30} and res.values[3].shape == (2, 4)
    for rows in res.values.values():
        mc, se, bound, low = rows.T
        assert np.all(low <= bound) and np.all(se > 0)
    assert res.inside.shape == (2, 2) and res.inside.all()


def test_norm_budget_sweep_small():
    res = M.norm_budget_sweep(4, 16, [2, 4], eps=0.1, eta0=0.5, seeds=1, steps=2000, rng=0)
    assert set(res.values) == set(M.BUDGET_KEYS)
    for v in res.values.values():
        assert v.shape == (1, 2) and np.all(np.isfinite(v))
    assert np.all(res.values["lo_MF"] <= res.values["up_MF"])
    assert res.reached_target.shape == res.spent_budget.shape == (1, 2, 2)


def _synthetic_barrier(c2_of):
    """A barrier sweep whose c2 is c2_of(n, d) exactly, the same for 3 seeds; risk = 1 - c2."""
    out = {}
    for d in (8, 16, 128):
        n_list = d * 2 ** np.arange(0, 8)
        c2 = c2_of(n_list, d)
        vals = np.stack([1 - c2, c2], axis=-1)
        out[d] = (n_list, np.repeat(vals[None], 3, axis=0))
    return out


@pytest.mark.parametrize("gamma", [1.0, 2.0, 1.5])
def test_c2_scaling_exponent_recovers_gamma(gamma):
    # c2 = g(n/d^gamma) with g a power law (exact log-log interpolation) or a saturating curve
    for g in (lambda x: 0.3 * x**0.8, lambda x: x / (1 + x)):
        barrier = _synthetic_barrier(lambda n, d, g=g: g(n / d**gamma))
        est = M.c2_scaling_exponent(barrier, 8, 16, max_ratio=4.0, n_min=1)
        assert est.shape == (3,)
        np.testing.assert_allclose(est, gamma, atol=1e-9 if g(1.0) == 0.3 else 0.1)
    with pytest.raises(ValueError):
        M.c2_scaling_exponent(barrier, 8, 16, max_ratio=1e-3)


def test_c2_linear_fits_window_and_d_squared():
    barrier = _synthetic_barrier(lambda n, d: 0.1 + 2.0 * n / d**2)
    fits = M.c2_linear_fits(barrier, max_ratio=0.25, n_min=4)
    np.testing.assert_allclose(fits, np.tile([2.0, 0.1], (3, 1)), atol=1e-10)
    # window 4d <= n <= d^2/16: empty for d = 8 and 16; n = 512, 1024 for d = 128
    c2 = M.barrier_window(barrier, 1, max_ratio=1 / 16, n_min=4)
    assert c2.shape == (3, 2)
    np.testing.assert_allclose(c2[0], [0.1 + 2 * 512 / 128**2, 0.1 + 2 * 1024 / 128**2],
                               atol=1e-12)
    np.testing.assert_allclose(M.barrier_window(barrier, 0), 1 - c2, atol=1e-12)
    at = M.risk_at_d_squared(barrier)       # n = d^2 is in the grid for d = 8, 16, 128
    np.testing.assert_allclose(at, [1 - 2.1] * 3, atol=1e-12)


def test_krr_point_and_barrier_sweep_small():
    risk, c2 = M.krr_point(4, 32, 0, rng=0)
    assert risk > 0 and np.isfinite(c2)
    barrier = M.krr_barrier_sweep({4: 16}, seeds=2, rng=0)
    n_list, vals = barrier[4]
    assert list(n_list) == [4, 8, 16] and vals.shape == (2, 3, 2)
    assert vals[0, 2, 0] == pytest.approx(M.krr_point(4, 16, 0, rng=0)[0])


def test_krr_barrier_sweep_extends_by_seed():
    """Later seeds on a window of the grid stack onto the sweep's own seeds (keyed streams)."""
    barrier = M.krr_barrier_sweep({4: 16}, seeds=2, rng=0)
    extra = M.krr_barrier_sweep({4: 16}, seeds=1, rng=0, n_min=2, first_seed=2)
    assert list(extra[4][0]) == [8, 16]
    both = M.with_seeds(barrier, extra)
    n_list, vals = both[4]
    assert list(n_list) == [8, 16] and vals.shape == (3, 2, 2)
    np.testing.assert_array_equal(vals[:2], barrier[4][1][:, 1:])
    assert vals[2, 1, 0] == pytest.approx(M.krr_point(4, 16, 2, rng=0)[0])


@pytest.mark.parametrize("call", [
    lambda: M.movement_sweep(0, 16, [8], 0.05, 0.5, seeds=1, rng=0),
    lambda: M.movement_sweep(4, 16, [8], -0.05, 0.5, seeds=1, rng=0),
    lambda: M.movement_sweep(4, 16, [8], 0.05, 0.5, seeds=1, rng=None),
    lambda: M.rademacher_linear_sweep([5, 1.5], [3]),
    lambda: M.rademacher_linear_sweep([5], [3], n_mc=1),
    lambda: M.norm_budget_sweep(4, 8, [2], float("nan"), 0.5, seeds=1),
    lambda: M.norm_budget_sweep(4, 8, [0], 0.1, 0.5, seeds=1),
    lambda: M.krr_point(4, 0, 0),
    lambda: M.krr_point(4, 8, -1),
    lambda: M.krr_barrier_sweep({}, seeds=1),
    lambda: M.krr_barrier_sweep({8: 16}, seeds=0),
    lambda: M.with_seeds({}, {}),
    lambda: M.c2_scaling_exponent({8: (np.array([8]), np.ones((1, 1, 2)))}, 8, 16),
    lambda: M.c2_linear_fits({}),
    lambda: M.barrier_window({8: (np.array([32]), np.ones((1, 1, 2)))}, 2),
    lambda: M.risk_at_d_squared([]),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()
