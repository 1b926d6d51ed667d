"""Tests of lecnotes.online_sgd.sweeps (chapter 8): each sweep is the loop it replaces, on
the same streams, and every public function refuses bad sizes with a ValueError naming them."""

import math

import numpy as np
import pytest

from lecnotes.online_sgd import experiments as O
from lecnotes.online_sgd import sweeps as W
from lecnotes.online_sgd import theory as T

CHAPTERS = (8,)


def test_escape_sweep_is_the_loop_over_dimensions():
    dims = [8, 12]
    sw = W.escape_sweep(2, dims, 3, 0.5, rng=5)
    for j, d in enumerate(dims):
        r = O.escape_runs(2, d, 3, T.optimal_batch_step(2, d, 1, 0.5),
                          max_steps=W.search_budget(2, d), record_every=max(1, d // 16), rng=5)
        np.testing.assert_array_equal(sw.steps[:, j], r.steps)
        np.testing.assert_array_equal(sw.runs[j].overlaps, r.overlaps)
    assert sw.steps.shape == (3, 2)


def test_chain_and_map_sweeps_are_the_loops():
    ch = W.chain_sweep(1, [8, 16], 50, 0.5, rng=3)
    ref = O.overlap_chain(1, 16, 50, T.optimal_batch_step(1, 16, 1, 0.5),
                          max_steps=W.search_budget(1, 16), rng=3)
    np.testing.assert_array_equal(ch[:, 1], ref)
    mp = W.map_escape_sweep(3, [16, 32], 1.0)
    assert mp[1] == T.escape_steps(3, 32, T.optimal_batch_step(3, 32, 1, 1.0))
    assert mp[1] > mp[0] > 0


def test_log_time_z_detects_a_shift():
    rng = np.random.default_rng(0)
    chain = np.exp(rng.normal(5.0, 1.0, (4000, 2)))
    runs = np.exp(rng.normal(5.0, 1.0, (400, 2)))
    assert W.log_time_z(runs, chain, np.log(chain).mean(0)) < 4.5
    assert W.log_time_z(runs, chain, np.log(chain).mean(0) - 1.0) > 10


def test_batch_sweep_caps_only_the_capped_protocol():
    bs = W.batch_sweep(16, 2, [4, 512], 1.0, eta_max=1.0, max_steps=200, rng=1)
    assert bs.etas["capped"][1] == 1.0 and bs.etas["correlation"][1] == 512 / 64
    np.testing.assert_array_equal(bs.steps["capped"][:, 0], bs.steps["correlation"][:, 0])
    assert bs.steps["capped"].shape == (2, 2) and bs.pred["capped"].shape == (2,)


def test_smoothing_sweep_matches_smoothed_escape():
    out = W.smoothing_sweep([16], 2, rng=4)
    lam = 16**0.25
    ref = O.smoothed_escape(16, 2, lam * (1 + lam**2) ** 1.5 / 16**1.5, lam,
                            max_steps=W.search_budget(3, 16), rng=4)
    np.testing.assert_array_equal(out[:, 0], ref)


def test_reuse_first_coefficient_is_81_c_squared():
    assert math.isclose(W.reuse_first_coefficient(0.2), 81 * 0.04, rel_tol=1e-9)


def test_reuse_late_means_the_late_window():
    tau = np.linspace(0, 4, 5)
    sweep = {"tau": tau, "one pass": np.zeros((2, 3, 5)), "reuse": -np.ones((2, 3, 5))}
    sweep["reuse"][:, :, :3] = 0.0
    late = W.reuse_late(sweep, np.full(5, 0.5), late_from=3.0)
    np.testing.assert_allclose(late.gain, 1.0)
    np.testing.assert_allclose(late.gain_se, 0.0)
    assert late.ode == 0.5 and late.one_pass.shape == (2, 3)
    with pytest.raises(ValueError, match="late_from"):
        W.reuse_late(sweep, np.full(5, 0.5), late_from=5.0)


BAD_SIZES = [0, -1, 1.5, float("nan")]


@pytest.mark.parametrize("bad", BAD_SIZES)
def test_bad_sizes_name_the_argument(bad):
    cases = [
        (lambda: O.student_pair(bad), "k"),
        (lambda: O.link(bad, [0.0]), "k"),
        (lambda: O.dlink(bad, [0.0]), "k"),
        (lambda: O.init_sphere(bad, 4), "n_seeds"),
        (lambda: O.escape_runs(3, bad, 2, 0.1, max_steps=5), "d"),
        (lambda: O.overlap_chain(3, 16, bad, 0.1, max_steps=5), "n_paths"),
        (lambda: O.overlap_after(3, 16, 2, 0.1, bad), "n_samples"),
        (lambda: O.reuse_sweep([16], bad, 1.0, 1.0), "n_seeds"),
        (lambda: O.smoothed_dlink([0.0], [1.0], bad, 1.0), "d"),
        (lambda: O.smoothed_escape(16, bad, 0.1, 1.0, max_steps=5), "n_seeds"),
        (lambda: T.mean_map(0.1, 3, bad, 0.1), "d"),
        (lambda: T.ode_rhs(0.1, 3, bad, 0.1), "d"),
        (lambda: T.escape_steps(3, bad, 0.1), "d"),
        (lambda: T.ode_escape_time(3, bad, 0.1), "d"),
        (lambda: T.optimal_batch_step(3, 16, bad), "batch"),
        (lambda: T.break_point(bad, 16), "k"),
        (lambda: T.noise_constant(bad), "k"),
        (lambda: T.along_variance(bad), "k"),
        (lambda: T.reuse_rates(0.0, 1.0, n_nodes=bad), "n_nodes"),
        (lambda: W.search_budget(3, bad), "d"),
        (lambda: W.escape_sweep(3, [bad], 2, 1.0), "dims"),
        (lambda: W.chain_sweep(3, [16], bad, 1.0), "n_paths"),
        (lambda: W.map_escape_sweep(bad, [16], 1.0), "k"),
        (lambda: W.batch_sweep(16, bad, [4], 1.0), "n_seeds"),
        (lambda: W.smoothing_sweep([bad], 2), "dims"),
        (lambda: W.reuse_first_coefficient(0.2, n_nodes=bad), "n_nodes"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_values_name_the_argument(bad):
    cases = [
        (lambda: O.escape_runs(3, 16, 2, bad, max_steps=5), "eta"),
        (lambda: O.overlap_chain(3, 16, 4, bad, max_steps=5), "eta"),
        (lambda: T.mean_map(0.1, 3, 16, bad), "eta"),
        (lambda: T.escape_steps(3, 16, bad), "eta"),
        (lambda: T.optimal_batch_step(3, 16, 1, bad), "c"),
        (lambda: T.logistic_k2(0.1, bad, [0.0]), "eta"),
        (lambda: T.reuse_ode(bad, [0.0, 1.0]), "c"),
        (lambda: W.escape_sweep(3, [16], 2, bad), "c"),
        (lambda: W.reuse_first_coefficient(bad), "c"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()
    with pytest.raises(ValueError, match="q"):
        T.mean_map(1.5, 3, 16, 0.1)
    with pytest.raises(ValueError, match="m0"):
        T.tanh_k1(1.0, 0.1, [0.0])
    with pytest.raises(ValueError, match="level"):
        T.escape_steps(3, 16, 0.1, level=1.5)


def test_threshold_of_the_mean_map_tends_to_the_limit():
    assert math.isclose(T.limit_threshold(3), math.sqrt(27 * 7), rel_tol=1e-12)
    c64, c_big = T.map_threshold(3, 64), T.map_threshold(3, 10**6)
    assert c64 < c_big and abs(c_big / T.limit_threshold(3) - 1) < 0.02
    q_lo = T.map_trajectory(1 / 64, 3, 64, T.optimal_batch_step(3, 64, 1, 0.9 * c64), 1, 1)
    assert q_lo[1] > q_lo[0]
    with pytest.raises(ValueError, match="k"):
        T.limit_threshold(2)


def test_map_trajectory_is_the_iterated_map():
    tr = T.map_trajectory(0.01, 3, 32, 0.2, 4, 3)
    q = 0.01
    for t in range(3):
        q = float(T.mean_map(q, 3, 32, 0.2, 4))
        assert tr[t + 1] == q


def test_chain_stop_fraction_keeps_the_escaped_paths():
    full = O.overlap_chain(2, 16, 40, 0.05, max_steps=4000, rng=2)
    part = O.overlap_chain(2, 16, 40, 0.05, max_steps=4000, stop_fraction=0.5, rng=2)
    done = np.isfinite(part)
    assert done.sum() >= 20 and np.all(part[done] == full[done])
    with pytest.raises(ValueError, match="stop_fraction"):
        O.overlap_chain(2, 16, 40, 0.05, max_steps=10, stop_fraction=1.5)


def test_chain_groups_fix_every_median_and_keep_the_draws():
    """groups=G stops once more than half of every block escaped: each block's median is
    final and equals that of the paths run out (a fraction alone left one block with an
    infinite median at seed roots 3 and 4 of chapter 8)."""
    full = O.overlap_chain(2, 16, 60, 0.05, max_steps=4000, rng=5)
    part = O.overlap_chain(2, 16, 60, 0.05, max_steps=4000, groups=6, rng=5)
    done = np.isfinite(part)
    assert np.all(part[done] == full[done])
    assert np.all(done.reshape(6, 10).sum(1) >= 6)
    np.testing.assert_array_equal(np.median(part.reshape(6, 10), 1),
                                  np.median(full.reshape(6, 10), 1))
    with pytest.raises(ValueError, match="groups"):
        O.overlap_chain(2, 16, 60, 0.05, max_steps=10, groups=7)


def test_chain_exponent_of_k1_is_near_one():
    ce = W.chain_exponent(1, [16, 64], 0.5, n_groups=8, group_size=40, rng=1)
    assert ce.medians.shape == (8, 2) and np.all(np.isfinite(ce.medians))
    assert abs(ce.slope - 1.0) < 0.3 and ce.slope_se > 0


def test_chain_step_scan_shapes_and_streams():
    sc = W.chain_step_scan(1, 16, [0.25, 0.5], 30, rng=3)
    assert sc.shape == (30, 2) and np.all(np.isfinite(sc))
    np.testing.assert_array_equal(W.chain_step_scan(1, 16, [0.5], 30, rng=3)[:, 0] * 0,
                                  sc[:, 1] * 0)
    with pytest.raises(ValueError, match="cs"):
        W.chain_step_scan(1, 16, [0.0], 30)


def test_ratio_of_means_matches_the_delta_method():
    rng = np.random.default_rng(0)
    b = rng.uniform(5, 15, 4000)
    a = 0.3 * b + rng.normal(0, 1, 4000)
    r, se = W.ratio_of_means(a, b)
    assert r == pytest.approx(0.3, abs=4 * se)
    boot = [W.ratio_of_means(a[i], b[i])[0]
            for i in rng.integers(0, 4000, (200, 4000))]
    assert se == pytest.approx(np.std(boot), rel=0.25)
    with pytest.raises(ValueError):
        W.ratio_of_means([1.0], [1.0])
    with pytest.raises(ValueError):
        W.ratio_of_means([1.0, 2.0], [-1.0, -2.0])


def test_chain_step_limit_shares_and_streams():
    lim = W.chain_step_limit(2, 16, 0.5, 1.0, 40, rng=3)
    assert lim.n_paths == 40 and lim.horizon == pytest.approx(2 * lim.median_small)
    assert 0.5 <= lim.share_small <= 1 and 0 <= lim.share_large <= 1
    assert W.chain_step_limit(2, 16, 0.5, 1.0, 40, rng=3) == lim
    with pytest.raises(ValueError):
        W.chain_step_limit(2, 16, 0.5, 0.0, 40)
