"""Tests of lecnotes.giant_steps (chapter 6): the modules split out of ``experiments`` (the
procedure, many steps, generalisation), the notebook's experiment functions and figures, and
bad input to every public function of the chapter."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.core.activations import activation_moments  # noqa: E402
from lecnotes.core.targets import link_moments  # noqa: E402
from lecnotes.giant_steps import experiments as GS  # noqa: E402
from lecnotes.giant_steps import explorer as GX  # noqa: E402
from lecnotes.giant_steps import generalisation as GG  # noqa: E402
from lecnotes.giant_steps import many_steps as GM  # noqa: E402
from lecnotes.giant_steps import procedure as GP  # noqa: E402
from lecnotes.giant_steps import ridge_theory as GR  # noqa: E402
from lecnotes.giant_steps import theory as GT  # noqa: E402
from lecnotes.models.networks import init_params  # noqa: E402

CHAPTERS = (6,)


def test_init_network_is_the_chapter_network():
    W, a = GP.init_network(6, 4, np.random.default_rng(3))
    W2, a2 = init_params(6, 4, rng=np.random.default_rng(3), symmetric=False,
                         second_layer="sign", a_scale=6**-0.5)
    np.testing.assert_array_equal(W, W2)
    np.testing.assert_array_equal(a, a2)
    assert np.allclose(np.abs(a), 6**-0.5)


def test_check_callable():
    with pytest.raises(TypeError, match="link"):
        GP.check_callable(3, "link")


def test_one_step_comparison_is_the_sweep_and_its_theory():
    dims = np.array([8, 16])
    c = GS.one_step_comparison(GT.tanh2, dims, 2, 4, 1.0, rng=5)
    ref = GS.one_step_sweep(GT.tanh2, dims, 2, 4, 1.0, rng=5)
    for a, b in zip(c.runs, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    assert c.eta_bar == 2.0  # eta0 sqrt(n/d)
    assert c.neuron_theory == GT.one_step_neuron_overlap(GT.tanh2, 2.0, 4)
    assert [s.s1 for s in c.spike_theory] == [
        GT.one_step_spike(GT.tanh2, 2.0, 4, 2 * d, d).s1 for d in dims]
    np.testing.assert_array_equal(c.dims, dims)


def test_leap2_runs_are_two_sweeps_and_the_formula():
    dl, ds = np.array([8, 16]), np.array([6, 8])
    r = GS.leap2_runs(GT.h2, dl, ds, 2, 3, p=8, rng=4)
    np.testing.assert_array_equal(r.linear, GS.leap2_sweep(GT.h2, dl, 4 * dl, 2, p=8, rng=4))
    np.testing.assert_array_equal(r.square, GS.leap2_sweep(GT.h2, ds, ds**2, 3, p=8, rng=4))
    assert r.square.shape == (3, 2)
    np.testing.assert_allclose(r.theory_square,
                               [GT.leap2_neuron_overlap(GT.h2, math.sqrt(d), d * d, d)
                                for d in ds])
    np.testing.assert_allclose(r.theory_linear,
                               [GT.leap2_neuron_overlap(GT.h2, 2.0, 4 * d, d) for d in dl])


def test_two_direction_runs_are_two_sweeps_with_a_snapshot():
    r = GS.two_direction_runs([8, 16], [8, 12], 2, snapshot_d=8, rng=3)
    raw = GS.two_direction_sweep([8, 16], [32, 64], 2, remove_linear=False, rng=3)
    leap = GS.two_direction_sweep([8, 12], [256, 576], 2, remove_linear=True, rng=3)
    np.testing.assert_array_equal(r.eigenvalues["4d"], raw.eigenvalues)
    np.testing.assert_array_equal(r.eigenvalues["4d2"], leap.eigenvalues)
    np.testing.assert_array_equal(r.snapshot["4d"], raw.first_seed[0])
    np.testing.assert_array_equal(r.snapshot["4d2"], leap.first_seed[0])
    with pytest.raises(ValueError, match="snapshot_d"):
        GS.two_direction_runs([8, 16], [12], 2, snapshot_d=8, rng=3)


def test_barrier_runs_are_fresh_steps_on_the_rotated_targets():
    r = GM.barrier_runs([8, 16], steps=2, seeds_symmetric=1, seeds_asymmetric=2, rng=2)
    sym = GM.fresh_steps_sweep(GT.rotated(GT.symmetric_target), 2, [8, 16], 2, 1, rng=2)
    np.testing.assert_array_equal(r.symmetric, sym)
    assert r.asymmetric.shape == (2, 2, 2, 3)


def test_leap2_many_steps_by_hand():
    dims = np.array([8, 16])
    r = GM.leap2_many_steps(dims, steps=4, seeds=2, level=0.05, rng=1)
    curves = GM.fresh_steps_sweep(lambda Z: GT.h2(Z[:, 0]), 1, dims, 4, 2, rng=1)[..., 0]
    np.testing.assert_array_equal(r.curves, curves)
    growth = np.exp(np.mean(np.log(curves[:, -1, 1:3] / curves[:, -1, :2])))
    assert math.isclose(r.growth, growth, rel_tol=1e-12)
    tau = GT.steps_to_level(curves, 0.05)
    np.testing.assert_array_equal(r.tau, tau)
    np.testing.assert_allclose(r.per_doubling, tau[:, 1] - tau[:, 0])  # two points: a line
    for bad in ({"level": 1.0}, {"steps": 2}, {"dims": [8]}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            GM.leap2_many_steps(**{"dims": dims, "steps": 4, "seeds": 1, **bad})


def test_the_figures_draw_what_they_are_given():
    c = GS.one_step_comparison(GT.tanh2, [8, 16], 2, 4, 1.0, rng=5)
    fig = GX.one_step_figure(c, 1.2)
    assert len(fig.axes) == 2 and len(fig.legends) == 1
    assert any(np.allclose(line.get_ydata(), c.neuron_theory) for line in fig.axes[0].lines)
    two = GS.two_direction_runs([8, 16], [8, 12], 2, snapshot_d=8, rng=3)
    assert len(GX.two_direction_figure(two).axes) == 3
    q = GM.staircase_runs([8, 16], 2, steps=2, rng=1, p=8)
    fig = GX.staircase_figure(q, [8, 16], ["a", "b", "c"])
    assert [ax.get_title() for ax in fig.axes] == ["a", "c", "b"]
    bar = GM.barrier_runs([8, 16], steps=2, seeds_symmetric=2, seeds_asymmetric=2, rng=2)
    assert len(GX.barrier_figure(bar, [8, 16]).axes[0].containers) == 4
    sim, pred = np.ones((2, 3, 3)), np.ones((2, 3, 2))
    fig = GX.generalisation_figure([2, 4, 8], sim, pred, GT.two_direction_floors())
    assert len(fig.axes[0].containers) == 3
    with pytest.raises(ValueError, match="comparison"):
        GX.one_step_figure(two, 1.2)
    with pytest.raises(ValueError, match="runs"):
        GX.two_direction_figure(c)
    with pytest.raises(ValueError, match="dims"):
        GX.barrier_figure(bar, [8])
    with pytest.raises(ValueError, match="q must"):
        GX.staircase_figure(q, [8], ["a", "b", "c"])
    with pytest.raises(ValueError, match="simulated"):
        GX.generalisation_figure([2, 4], sim, pred, GT.two_direction_floors())
    plt.close("all")


# --- bad input: every public function with a size or a positive number ----------------------
_rng = np.random.default_rng(0)
_W = _rng.standard_normal((8, 6)) / np.sqrt(6)
_WS = np.linalg.qr(_rng.standard_normal((6, 2)))[0].T
_X = _rng.standard_normal((20, 6))
_Y = GT.two_direction_target(_X @ _WS.T)
_MOM = GR.feature_label_moments(_W, _WS, GT.two_direction_target, 8**-0.5)
_CURVES = np.linspace(0.01, 1, 6)[None, None]


def _first(Z):
    return Z[:, 0]


# (function, valid keyword arguments, integer sizes, positive numbers)
CASES = [
    (GT.giant_step_size, dict(p=8, n=16, d=4, eta0=1.0), ["p", "n", "d"], ["eta0"]),
    (GT.draw_two_direction, dict(m=10, W_star=_WS, rng=0), ["m"], []),
    (GT.singular_value_ks, dict(s=np.linspace(0.5, 1.5, 8), p=8, d=6), ["p", "d"],
     ["variance"]),
    (GT.one_step_neuron_overlap, dict(link=GT.tanh2, eta_bar=2.0, delta=4), [],
     ["eta_bar", "delta"]),
    (GT.leap2_neuron_overlap, dict(link=GT.h2, eta_bar=2.0, n=64, d=16), ["n", "d"],
     ["eta_bar"]),
    (GT.one_step_bulk_variance, dict(link=GT.tanh2, eta_bar=2.0, delta=4), [],
     ["eta_bar", "delta"]),
    (GT.one_step_spike, dict(link=GT.tanh2, eta_bar=2.0, delta=4, p=32, d=16), ["p", "d"],
     ["eta_bar", "delta"]),
    (GT.steps_to_level, dict(curves=_CURVES, level=0.2), [], ["level"]),
    (GR.ridge_test_error, dict(W=_W, batch=(_X, _Y), val=(_X, _Y), test=(_X, _Y), p=8),
     ["p"], []),
    (GR.relu_feature_covariance, dict(W=_W), [], ["scaling"]),
    (GR.feature_label_moments, dict(W=_W, W_star=_WS, target=GT.two_direction_target), [],
     ["scaling"]),
    (GR.ridge_equivalent_error, dict(moments=_MOM, n=20, lam=0.1), ["n"], ["lam"]),
    (GR.equivalent_learning_curve, dict(moments=_MOM, n_list=[20, 40]), ["n_list"], []),
    (GR.ridge_second_layer_path, dict(W=_W, X=_X, y=_Y, lams=[0.1, 1.0]), [], ["lams"]),
    (GP.init_network, dict(p=4, d=3, rng=0), ["p", "d"], []),
    (GS.one_step_spectra, dict(link=GT.tanh2, d=8, p=16, delta=2, eta0=1.0, rng=0),
     ["d", "p", "delta"], ["eta0"]),
    (GS.one_step_sweep, dict(link=GT.tanh2, dims=[8], seeds=1, delta=2, eta0=1.0, rng=0),
     ["dims", "seeds", "delta", "p_over_d"], ["eta0"]),
    (GS.one_step_comparison, dict(link=GT.tanh2, dims=[8], seeds=1, delta=2, eta0=1.0, rng=0),
     ["dims", "seeds", "delta", "p_over_d"], ["eta0"]),
    (GS.leap2_sweep, dict(link=GT.h2, dims=[8], ns=[16], seeds=1, p=8, rng=0),
     ["dims", "ns", "seeds", "p"], ["eta0"]),
    (GS.leap2_runs, dict(link=GT.h2, dims_linear=[8], dims_square=[4], seeds_linear=1,
                         seeds_square=1, p=8, rng=0),
     ["dims_linear", "dims_square", "seeds_linear", "seeds_square", "p"], ["eta0"]),
    (GS.two_direction_sweep, dict(dims=[8], ns=[16], seeds=1, remove_linear=False, rng=0),
     ["dims", "ns", "seeds"], []),
    (GS.two_direction_runs, dict(dims_raw=[8], dims_leap=[8], seeds=1, snapshot_d=8, rng=0),
     ["dims_raw", "dims_leap", "seeds", "snapshot_d"], []),
    (GM.fresh_steps, dict(target=_first, k=1, d=8, steps=2, rng=0, p=8, delta=2),
     ["k", "d", "steps", "p", "delta"], ["eta_bar"]),
    (GM.fresh_steps_sweep, dict(target=_first, k=1, dims=[8], steps=2, seeds=1, rng=0, p=8,
                                delta=2), ["k", "dims", "steps", "seeds", "p", "delta"],
     ["eta_bar"]),
    (GM.staircase_runs, dict(dims=[8], seeds=1, steps=1, rng=0, p=8),
     ["dims", "seeds", "steps", "p"], ["eta_bar"]),
    (GM.barrier_runs, dict(dims=[8], steps=1, seeds_symmetric=1, seeds_asymmetric=1, rng=0),
     ["dims", "steps", "seeds_symmetric", "seeds_asymmetric"], []),
    (GM.leap2_many_steps, dict(dims=[8, 16], steps=3, seeds=1, level=0.5, rng=0),
     ["dims", "steps", "seeds"], ["level"]),
    (GG.generalisation_sweep, dict(d=6, p=8, n_list=[20], seeds=1, rng=0, n_test=50),
     ["d", "p", "n_list", "seeds", "n_test"], []),
    (GG.reference_sweep, dict(n=20, seeds=1, rng=0, d=6, p=8, n_test=50),
     ["n", "seeds", "d", "p", "n_test"], []),
]


def _bad_calls():
    for func, kw, ints, floats in CASES:
        for name in ints + floats:
            bads = (0, -1, 1.5, math.nan) if name in ints else (0.0, -1.0, math.nan, math.inf)
            for bad in bads:
                value = [bad] if isinstance(kw.get(name), list) else bad
                yield pytest.param(func, {**kw, name: value}, name,
                                   id=f"{func.__module__.split('.')[-1]}.{func.__name__}-"
                                      f"{name}={bad}")


@pytest.mark.parametrize(("func", "kw"), [pytest.param(f, k, id=f.__name__)
                                          for f, k, _, _ in CASES])
def test_the_valid_calls_of_the_probe_run(func, kw):
    func(**kw)


@pytest.mark.parametrize(("func", "kw", "name"), list(_bad_calls()))
def test_bad_sizes_and_numbers_raise_a_value_error_naming_the_argument(func, kw, name):
    with pytest.raises(ValueError, match=name):
        func(**kw)


def test_reference_sweep_with_an_empty_batch_or_width_says_so():
    """The review's case: n = 0 or p = 0 was a ZeroDivisionError."""
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        GG.reference_sweep(0, 1, rng=0, d=6, p=8, n_test=50)
    with pytest.raises(ValueError, match="p must be an integer >= 1"):
        GG.reference_sweep(20, 1, rng=0, d=6, p=0, n_test=50)


def test_a_link_that_is_not_a_function_is_a_type_error():
    with pytest.raises(TypeError, match="link"):
        GS.one_step_sweep(3.0, [8], 1, 2, 1.0, rng=0)
    with pytest.raises(TypeError, match="target"):
        GM.fresh_steps("z1", 1, 8, 1, rng=0)


def test_leap2_exact_norm_has_the_same_limit_and_is_smaller_at_finite_d():
    """eq-ch6-leap2-norm keeps the cross term 2 eta_bar b a z^2 / d of the squared norm."""
    for d in (32, 96):
        lead = GT.leap2_neuron_overlap(GT.h2, math.sqrt(d), d * d, d)
        exact = GT.leap2_neuron_overlap(GT.h2, math.sqrt(d), d * d, d, exact_norm=True)
        assert exact < lead
    big = 10**6
    assert math.isclose(GT.leap2_neuron_overlap(GT.h2, 1e3, big * big, big),
                        GT.leap2_neuron_overlap(GT.h2, 1e3, big * big, big, exact_norm=True),
                        rel_tol=1e-4)


def test_leap2_exact_norm_against_a_written_out_expectation():
    """The exact-norm form by quadrature equals a Monte Carlo average of the same ratio."""
    d, n, eta = 40, 1600, math.sqrt(40)
    _, _, c2, ey2, ey2g2 = link_moments(GT.h2)
    mo = activation_moments("relu")
    a = math.sqrt(2) * c2 * mo.beta1
    z = np.random.default_rng(0).standard_normal(400_000)
    vals = []
    for b in (1.0, -1.0):
        num = z**2 / d * (1 + eta * b * a) ** 2 + eta**2 * ey2g2 * mo.m2 / n
        vals.append(num / (1 - z**2 / d + eta**2 * ey2 * mo.m2 * (d - 1) / n + num))
    mc = 0.5 * (vals[0] + vals[1]).mean()
    got = GT.leap2_neuron_overlap(GT.h2, eta, n, d, exact_norm=True)
    assert abs(got - mc) < 4 * (0.5 * (vals[0] + vals[1])).std() / math.sqrt(z.size)


def test_staircase_more_seeds_repeat_the_first_ones():
    """Seed s is the same whatever ``first``, the runs kept and the number of steps."""
    full = GM.staircase_runs([8, 12], 3, steps=2, rng=7, p=8)
    more = GM.staircase_runs([8, 12], 2, steps=1, rng=7, p=8,
                             runs=GM.STAIRCASE_RUNS[:1], first=1)
    np.testing.assert_array_equal(more[:, :, 0, 0], full[1:, :, 0, 0])
    with pytest.raises(ValueError, match="first"):
        GM.staircase_runs([8], 1, rng=7, p=8, first=-1)


def test_leap2_runs_carry_the_exact_norm_formula():
    r = GS.leap2_runs(GT.h2, [8], [6], 1, 1, p=8, rng=4)
    assert r.theory_square_norm[0] == GT.leap2_neuron_overlap(GT.h2, math.sqrt(6), 36, 6,
                                                             exact_norm=True)
