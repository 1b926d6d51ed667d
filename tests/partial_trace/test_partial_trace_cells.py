"""Tests of what the chapter 5 notebook calls in one line: the identity checks, the gen3 link,
the collapse ratio, the scale run and the two multi-panel figures."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes import partial_trace as PT  # noqa: E402
from lecnotes.core import conditional_hermite, exponents  # noqa: E402
from lecnotes.core import validate as V  # noqa: E402
from lecnotes.partial_trace import explorer  # noqa: E402

CHAPTERS = (5,)  # the chapters whose code these tests cover: make chapter CH=N


def test_extreme_eigenpair_picks_the_requested_end():
    A = np.diag([-3.0, 1.0, 2.0])
    assert PT.extreme_eigenpair(A)[0] == pytest.approx(-3.0)
    assert PT.extreme_eigenpair(A, "top")[0] == pytest.approx(2.0)
    val, vec = PT.extreme_eigenpair(A, "bottom")
    assert val == pytest.approx(-3.0) and abs(vec[0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="which"):
        PT.extreme_eigenpair(A, "largest")
    with pytest.raises(ValueError, match="square"):
        PT.extreme_eigenpair(np.ones((2, 3)))


def test_tensor_contraction_errors_are_rounding():
    gen = V.generator(3)
    x, u = gen.standard_normal(3), gen.standard_normal(3)
    u /= np.linalg.norm(u)
    errs = PT.tensor_contraction_errors(x, u, kmax=4)
    assert errs.shape == (5,) and errs.max() < 1e-10
    with pytest.raises(ValueError, match="unit"):
        PT.tensor_contraction_errors(x, 2 * u)
    with pytest.raises(ValueError, match="kmax"):
        PT.tensor_contraction_errors(x, u, kmax=7)
    with pytest.raises(ValueError, match="kmax"):
        PT.tensor_contraction_errors(x, u, kmax=1.5)


def test_trace_identity_errors_see_a_wrong_closed_form():
    pts = [V.generator(d).standard_normal((2, d)) for d in (1, 3)]
    errs = PT.trace_identity_errors(pts)
    assert errs.shape == (4,) and errs.max() < 1e-12
    with pytest.raises(ValueError, match="points"):
        PT.trace_identity_errors([np.ones((2, 13))])
    with pytest.raises(ValueError, match="points"):
        PT.trace_identity_errors([np.full((1, 2), np.nan)])


def test_gen3_link_has_generative_exponent_3():
    link = PT.gen3_link()
    assert link.name == "gen3"
    norms = conditional_hermite.conditional_hermite_norms(link, 3)
    assert norms[:2].max() < 1e-20
    assert norms[2] == pytest.approx(4 * np.log(2) ** 2 / (3 * np.pi), rel=1e-9)
    assert exponents.generative_exponent(link) == 3


def _fake_runs(scaling, dims=(8, 16, 32), seeds=6, rng=0):
    """Overlaps that are a function of n / d**scaling, plus noise."""
    gen, out = V.generator(rng), {}
    for d in dims:
        ns = np.round(np.array([0.5, 1, 2, 4]) * d**scaling).astype(int)
        mean = 1 - 1 / (1 + ns / d**scaling)
        out[d] = (ns, mean + 0.02 * gen.standard_normal((seeds, ns.size)))
    return out


def test_collapse_ratio_prefers_the_true_scaling():
    right = PT.collapse_ratio(_fake_runs(2.0), n_boot=20, rng=1)
    assert right.log_ratio > 3 * right.se > 0  # n/d^2 collapses, n/d does not
    again = PT.collapse_ratio(_fake_runs(2.0), n_boot=20, rng=1)
    assert again == right  # one stream
    with pytest.raises(ValueError, match="two dimensions"):
        PT.collapse_ratio({8: _fake_runs(2.0)[8]})
    with pytest.raises(ValueError, match="n_boot"):
        PT.collapse_ratio(_fake_runs(2.0), n_boot=0)


def test_scale_run_measures_time_memory_and_agrees_with_dense():
    run = PT.scale_run(20, 2000, rng=0)
    assert run.data_bytes == 2000 * 20 * 8
    assert 0 < run.peak < 2 * run.data_bytes and run.cpu >= 0
    assert 1 - abs(run.vector @ run.vector_dense) < 1e-8
    assert PT.scale_run(20, 2000, dense=False, rng=0).vector_dense is None
    with pytest.raises(ValueError, match="d"):
        PT.scale_run(1, 100)
    with pytest.raises(ValueError, match="n"):
        PT.scale_run(10, 0)


def test_the_two_figures_draw():
    sims = PT.partial_trace_sweep([0.5, 1.0], [8, 10], 2, rng=0)
    runs = {d: (s.n, s.rho2) for d, s in sims.items()}
    state = explorer.CollapseState(runs, np.array([0.5, 1.0]), 0.537)
    fig = explorer.collapse_and_blind_figure(state, sims, [0.5, 1.0])
    assert len(fig.axes) == 3
    plt.close(fig)
    with pytest.raises(ValueError, match="sims"):
        explorer.collapse_and_blind_figure(state, {}, [0.5, 1.0])
    vec = PT.vector_contraction_estimator
    rv = PT.overlap_sweep(vec, [8, 10], [0.5, 1.0], 2, 2, PT.gen3_link(), rng=0)
    fig = explorer.odd_degree_figure(rv, rv, rv, [0.5, 1.0], 0.2)
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="runs_vec_same"):
        explorer.odd_degree_figure(rv, rv, {8: rv[8]}, [0.5, 1.0], 0.2)
    with pytest.raises(ValueError, match="betas"):
        explorer.odd_degree_figure(rv, rv, rv, [-1.0, 1.0], 0.2)


def test_goe_noise_has_the_requested_variance():
    W = PT.surrogate.goe_noise(30, 0.5, 40, rng=0)
    assert W.shape == (40, 30, 30) and np.allclose(W, W.transpose(0, 2, 1))
    off = W[:, ~np.eye(30, dtype=bool)]
    assert np.var(off) == pytest.approx(0.5, rel=0.05)
    assert np.var(W[:, np.eye(30, dtype=bool)]) == pytest.approx(1.0, rel=0.15)
    with pytest.raises(ValueError, match="variance"):
        PT.surrogate.goe_noise(10, 0.0, 2)
    with pytest.raises(ValueError, match="m"):
        PT.surrogate.goe_noise(1, 1.0, 2)


def test_surrogate_half_point_follows_the_wigner_bbp_law():
    # spike theta plus Wigner noise of semicircle radius 2 sigma, sigma^2 = m v n0 / n: the
    # overlap 1 - sigma^2 / theta^2 is 1/2 at sigma^2 = theta^2 / 2
    m, d, n0, theta = 200, 20, 400, -1.0
    v = 1.0 / m  # sigma = 1 at n = n0
    noise = PT.surrogate.goe_noise(m, v, 20, rng=1)
    alphas = np.array([1.0, 1.5, 2.0, 3.0, 4.0, 6.0])  # n0 / d^2 = 1: sigma^2 = 1 / alpha
    r = PT.surrogate.surrogate_half_point(noise, n0, theta, alphas, d, rng=2)
    assert r.rho2.shape == (20, alphas.size)
    assert r.half_point == pytest.approx(2.0, rel=0.2)  # sigma^2 = 1/2 at alpha = 2
    with pytest.raises(ValueError, match="lambda4"):
        PT.surrogate.surrogate_half_point(noise, n0, 0.0, alphas, d)
    with pytest.raises(ValueError, match="noise"):
        PT.surrogate.surrogate_half_point(noise[:1], n0, theta, alphas, d)
    with pytest.raises(ValueError, match="alphas"):
        PT.surrogate.surrogate_half_point(noise, n0, theta, alphas[::-1], d)


def test_half_point_reads_the_crossing():
    ns = np.array([10, 20, 40])
    rho2 = np.array([[0.1, 0.5, 0.9], [0.1, 0.5, 0.9]])
    h, se = PT.surrogate.half_point(ns, rho2, 2)
    assert h == pytest.approx(20 / 4) and se == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="rho2"):
        PT.surrogate.half_point(ns, rho2[:1], 2)


def test_power_law_intercept_is_not_zero_for_a_pure_power_law():
    # exact half-points of n = 3 d^1.7: the A + B/d fit gives a positive A although there is
    # no d^2 limit (the point of the chapter's claim extrapolation-not-separated)
    runs = {}
    for d in (48, 72, 108, 162, 256, 384):
        h = 3 * d**1.7
        ns = np.array([h / 2, 2 * h])
        runs[d] = (ns, np.array([[0.0, 1.0], [0.0, 1.0]]))  # crossing at 1.25 h
    out = PT.power_law_intercept(runs)
    assert out.kappa == pytest.approx(1.7, abs=1e-9)
    assert out.A > 0.3
    with pytest.raises(ValueError, match="two dimensions"):
        PT.power_law_intercept({48: runs[48]})
