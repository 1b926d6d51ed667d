"""Tests of the helpers chapter 2's notebook calls: tables, sweeps, figures (issue 38)."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.core import conditional_hermite as CH  # noqa: E402
from lecnotes.core.hermite import hermite_coefficients  # noqa: E402
from lecnotes.core.targets import LINKS  # noqa: E402
from lecnotes.exponents import experiments as E  # noqa: E402
from lecnotes.exponents import figures as F  # noqa: E402
from lecnotes.exponents import theory as T  # noqa: E402

CHAPTERS = (2,)  # the chapters whose code these tests cover: make chapter CH=N


def test_stein_closed_forms_match_quadrature():
    closed = T.stein_closed_forms(6)
    assert set(closed) == {"quadratic", "cubic", "he3", "he4", "abs", "relu", "sign"}
    for name, lam in closed.items():
        assert len(lam) == 7
        quad = hermite_coefficients(LINKS[name], 6, normalized=False)
        np.testing.assert_allclose(quad, lam, atol=1e-9)
    # |u|: lambda_2 = 2 He_0(0) gamma(0), lambda_4 = 2 He_2(0) gamma(0) = -2 gamma(0)
    g0 = 1 / math.sqrt(2 * math.pi)
    assert closed["abs"][2] == pytest.approx(2 * g0) and closed["abs"][4] == pytest.approx(-2 * g0)


def test_exponent_table_of_he3_and_gen4():
    t = E.exponent_table(["he3", "gen4"], kmax=4)
    assert t.ie == {"he3": 3, "gen4": 4} and t.ge == {"he3": 1, "gen4": 4}
    assert t.norms["he3"].shape == (4,) and t.norms["he3"][0] == pytest.approx(0.6678, abs=1e-3)
    assert t.norms["gen4"][:3].max() < 1e-20


def test_annulus_link_partner_kills_zeta2_and_a_shift_does_not():
    a, b = E.gen4_interval()
    exact = E.annulus_link(a, b)
    assert exact.breakpoints == (-b, -a, a, b)
    np.testing.assert_array_equal(exact(np.array([0.0, 1.0, -1.0, 3.0])), [0, 1, 1, 0])
    assert CH.conditional_hermite_norms(exact, 2)[1] < 1e-18
    assert CH.conditional_hermite_norms(E.annulus_link(a, b + 1e-3), 2)[1] > 1e-8


def test_noise_curves_follow_the_sign_closed_form():
    taus = np.array([1.0, 10.0, 40.0])
    out = E.noise_curves([("sign", 1)], taus, at=-1)
    assert out.laws[0].m == 1 and out.laws[0].C == pytest.approx(2 / math.pi)
    assert out.values[0].shape == (3,)
    assert np.all(np.diff(out.values[0]) < 0)  # noise only shrinks the norm
    assert out.ratio["sign (k = 1)"] == pytest.approx(1.0, abs=0.01)


def test_raw_floor_constant_recovers_a_planted_ratio():
    rng = np.random.default_rng(0)
    dims, deltas = [10, 20], [1.0, 2.0, 4.0]
    n = np.round(np.outer(dims, deltas))
    b = rng.exponential(6.0, size=(400, 2, 3))  # n |v_perp|^2 / (d - 1), mean 6
    a = 7 * b * rng.exponential(1.0, size=b.shape)  # n <v, w*>^2, ratio of means 7
    signal, noise = a / n, b * (np.array(dims)[:, None] - 1) / n
    out = E.raw_floor_constant(signal, noise, dims, deltas)
    assert out.count == a.size
    assert abs(out.K - 7) < 4 * out.se and 0 < out.se < 0.5


def test_log_slopes_of_a_power_law():
    x = np.array([1e2, 1e3, 1e4])
    np.testing.assert_allclose(E.log_slopes(x, 3 * x**1.5), [1.5, 1.5])


def test_low_degree_thresholds_grow_like_d_to_the_kstar_over_two():
    out = T.low_degree_thresholds(["he4", "gen4"], [10**5, 10**6], degree=12)
    assert out.n_c["he4"].shape == (2,)
    assert out.slopes["he4"][0] == pytest.approx(1.0, abs=0.01)
    assert out.slopes["gen4"][0] == pytest.approx(2.0, abs=0.01)


def test_figures_draw_their_panels():
    grids = {"he3": np.linspace(-3, 3, 41), "quadratic": np.linspace(0.1, 3, 20),
             "relu": np.linspace(0.1, 2, 20), "gen4": np.array([0.0, 1.0])}
    fig = F.zeta_figure(grids, kmax=2)
    assert len(fig.axes) == 4 and len(fig.axes[0].lines) == 2
    taus = np.array([1.0, 4.0])
    fig2 = F.noise_figure(taus, E.noise_curves([("sign", 1)], taus), [("sign", 1)])
    assert len(fig2.axes[0].lines) == 2
    unf = np.full((3, 2, 2), 0.5)
    fig3 = F.unfolding_figure([8, 12], [1.0, 4.0], unf)
    assert len(fig3.axes) == 2
    plt.close("all")


@pytest.mark.parametrize("call", [
    lambda: T.stein_closed_forms(1),
    lambda: T.stein_closed_forms(2.5),
    lambda: T.low_degree_thresholds(["he4"], [100], 4),
    lambda: T.low_degree_thresholds(["he4"], [100, 50], 4),
    lambda: T.low_degree_thresholds(["he4"], [100, 0], 4),
    lambda: T.low_degree_thresholds("he4", [10, 100], 4),
    lambda: E.exponent_table([], 4),
    lambda: E.exponent_table(["no-such-link"], 4),
    lambda: E.exponent_table(["he3"], 0),
    lambda: E.annulus_link(2.0, 1.0),
    lambda: E.annulus_link(float("nan"), 1.0),
    lambda: E.noise_curves([("sign", 1)], [0.0, 1.0]),
    lambda: E.noise_curves([("sign", 1)], [1.0, 2.0], at=5),
    lambda: E.noise_curves([("sign", 1)], [1.0, 2.0], at=1.5),
    lambda: E.noise_curves([], [1.0]),
    lambda: E.raw_floor_constant(np.ones((3, 1, 1)), np.ones((3, 1, 2)), [10], [1.0]),
    lambda: E.raw_floor_constant(np.ones((1, 1, 1)), np.ones((1, 1, 1)), [10], [1.0]),
    lambda: E.raw_floor_constant(np.ones((3, 1, 1)), np.ones((3, 1, 1)), [1.5], [1.0]),
    lambda: E.raw_floor_constant(np.ones((3, 1, 1)), np.ones((3, 1, 1)), [10], [-1.0]),
    lambda: E.log_slopes([1.0], [1.0]),
    lambda: E.log_slopes([1.0, -2.0], [1.0, 2.0]),
    lambda: F.zeta_figure({"he3": np.ones(3)}),
    lambda: F.unfolding_figure([8], [1.0], np.ones((2, 2, 1))),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# ------------------------------------------------------------------ the online-SGD overlap ODE
from lecnotes.exponents import sgd as S  # noqa: E402
from lecnotes.online_sgd import theory as OT  # noqa: E402


def test_sgd_constants_of_he3_and_he4():
    c3 = S.sgd_constants(3)
    assert (c3.A, c3.C, c3.D) == pytest.approx((18.0, 108.0, 756.0))
    c4 = S.sgd_constants(4)  # A = 4 * 24, C = 24 * 16 * 6, D = E[He_4^2 G^2] * 384 = 54 * 384
    assert (c4.A, c4.C, c4.D) == pytest.approx((96.0, 2304.0, 20736.0))


def test_sgd_ode_is_chapter_8s_with_the_step_rescaled_by_k_factorial():
    # He_3 = sqrt(6) h_3 in target and student: the gradient is 6 times chapter 8's
    c3, d, eta = S.sgd_constants(3), 500, 0.05 * 500**-1.5
    q = np.linspace(0.001, 0.5, 7)
    np.testing.assert_allclose(S.ode_rhs(q, c3, d, eta), OT.ode_rhs(q, 3, d, 6 * eta), rtol=1e-12)
    assert S.ode_escape_steps(c3, d, eta) == pytest.approx(OT.ode_escape_time(3, d, 6 * eta),
                                                           rel=1e-5)
    # the threshold: chapter 8's 21^(3/2)/7 = 13.75 for h_3, six times smaller for He_3
    assert 6 * S.step_threshold(c3) == pytest.approx(21**1.5 / 7)


def test_escape_iff_below_the_threshold_and_the_limit_constant():
    c3 = S.sgd_constants(3)
    cs, d = S.step_threshold(c3), 10**6
    assert math.isfinite(S.ode_escape_steps(c3, d, 0.98 * cs * d**-1.5))
    assert math.isinf(S.ode_escape_steps(c3, d, 1.02 * cs * d**-1.5))
    assert S.measured_threshold(c3, d, 0.5 * cs, 2 * cs, rtol=1e-3) == pytest.approx(cs, rel=2e-3)
    t = S.ode_escape_steps(c3, d, 0.5 * cs * d**-1.5)
    assert t / d**2 == pytest.approx(S.escape_constant(c3, 0.5 * cs), rel=5e-3)


def test_sgd_ode_sweep_shapes_and_scaling():
    out = S.sgd_ode_sweep(3, [0.5, 3.0], [10**3], [10**4, 10**5], 1.0)
    assert out.scan.shape == (1, 2) and math.isfinite(out.scan[0, 0]) and math.isinf(out.scan[0, 1])
    assert out.steps.shape == (2,) and out.drift_only.shape == (2,)
    assert np.log10(out.steps[1] / out.steps[0]) == pytest.approx(2.0, abs=0.02)
    assert out.drift_only[1] > out.steps[1]  # the noise lifts the overlap: faster than drift alone
    fig = F.sgd_ode_figure([out])
    assert len(fig.axes) == 2
    plt.close("all")


def test_raw_floor_ratio_and_its_limit_model():
    rho2 = np.full((4, 2, 3), 7 / 106)
    rho2[:, 1] = 7 / 206
    out = E.raw_floor_ratio(rho2, [100, 200])
    np.testing.assert_allclose(out.mean, 1.0) and np.testing.assert_allclose(out.se, 0.0)
    # second order: 1 - 12/d; exactly 0.912 at d = 100 (Beta(1/2, 99/2) quadrature)
    assert T.raw_floor_limit(100) == pytest.approx(0.9123, abs=1e-3)
    assert abs(T.raw_floor_limit(10**4) - (1 - 12 / 10**4)) < 5e-5


@pytest.mark.parametrize("call", [
    lambda: S.sgd_constants(2),
    lambda: S.sgd_constants(9),
    lambda: S.sgd_constants(3.0),
    lambda: S.ode_rhs(0.1, (3, 1, 1, 1), 10, 0.1),
    lambda: S.ode_rhs(0.1, S.sgd_constants(3), 1, 0.1),
    lambda: S.ode_escape_steps(S.sgd_constants(3), 100, float("nan")),
    lambda: S.ode_escape_steps(S.sgd_constants(3), 100, 1e-3, target=0.05),
    lambda: S.escape_constant(S.sgd_constants(3), 3.0),
    lambda: S.measured_threshold(S.sgd_constants(3), 1000, 3.0, 4.0),
    lambda: S.sgd_ode_sweep(3, [], [100], [100], 1.0),
    lambda: S.sgd_ode_sweep(3, [1.0], [0], [100], 1.0),
    lambda: F.sgd_ode_figure([]),
    lambda: E.raw_floor_ratio(np.ones((1, 1, 1)), [10]),
    lambda: E.raw_floor_ratio(np.ones((3, 2, 1)), [10]),
    lambda: T.raw_floor_limit(1),
    lambda: T.raw_floor_limit(10, constant=0.0),
])
def test_sgd_and_floor_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_overlap_constants_and_the_late_threshold():
    m = np.array([0.0, 0.2, 0.5])
    a, C = S.overlap_constants(3, m)
    np.testing.assert_allclose(a, 18 * m**2 * (1 - m**2), atol=1e-12)  # k c_k^2 m^(k-1)(1-m^2)
    assert C[0] == pytest.approx(108.0) and np.all(np.diff(C) > 0)
    rng = np.random.default_rng(1)
    G, X = rng.standard_normal((2, 400_000))
    z = 0.5 * G + math.sqrt(0.75) * X
    g = (G**3 - 3 * G) * (3 * z**2 - 3)
    assert C[2] == pytest.approx(np.mean(g**2), rel=0.05)
    lo, hi = S.late_threshold(3, 400), S.late_threshold(3, 40_000)
    assert hi / lo == pytest.approx(10.0) and lo < S.step_threshold(S.sgd_constants(3))
    with pytest.raises(ValueError):
        S.overlap_constants(3, [1.0])
    with pytest.raises(ValueError):
        S.late_threshold(3, 400, m_lo=0.6, m_hi=0.5)
