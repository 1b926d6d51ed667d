"""Tests of lecnotes.spectral.theory: second moments, spectral estimators (chapter 4)."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from lecnotes.core import conditional_hermite as CH
from lecnotes.core import preprocessing as S
from lecnotes.core import rmt
from lecnotes.spectral import theory as TH

CHAPTERS = (4,)  # the chapters whose code these tests cover: make chapter CH=N


LAL = S.luo_alghamdi_lu()


def test_marchenko_pastur_is_the_constant_preprocessing():
    one = lambda y: np.ones_like(y)  # noqa: E731
    for delta in [0.5, 2.0, 4.0]:
        lo, hi = rmt.marchenko_pastur_edges(delta)
        # T = 1 has E[T He2] = 0: no outlier, the top eigenvalue is the MP edge
        rho2, top = TH.spectral_overlap("quadratic", delta, one)
        assert rho2 == 0.0
        assert top == pytest.approx(hi, abs=1e-7)
        assert TH.bulk_edge("quadratic", delta, one) == pytest.approx(hi, abs=1e-7)
    x = np.linspace(0.05, 3.0, 60)
    np.testing.assert_allclose(TH.bulk_density(x, "quadratic", 2.0, one),
                               rmt.marchenko_pastur_density(x, 2.0),
                               atol=1e-4)
    mass = np.trapezoid(rmt.marchenko_pastur_density(np.linspace(1e-6, 3, 20001), 2.0),
                        np.linspace(1e-6, 3, 20001))
    assert mass == pytest.approx(1.0, abs=1e-3)


def test_bulk_density_removes_the_atom_at_zero():
    # delta < 1: an atom of mass 1 - delta at 0, not part of the returned density
    one = lambda y: np.ones_like(y)  # noqa: E731
    x = np.array([0.0, 1e-12, 1.0])
    dens = TH.bulk_density(x, "quadratic", 0.5, one)
    assert dens[0] < 1.0 and dens[1] < 1.0
    assert dens[2] == pytest.approx(rmt.marchenko_pastur_density(1.0, 0.5), abs=1e-5)


def test_thresholds_known_values():
    # 1 - 1/y (Luo-Alghamdi-Lu) and the Mondelli-Montanari family: threshold 1/2 = delta_u
    assert TH.spectral_threshold("quadratic", LAL) == pytest.approx(0.5, abs=1e-3)
    assert TH.spectral_threshold("quadratic", "mondelli-montanari") == pytest.approx(0.5, abs=1e-3)
    assert CH.weak_recovery_ratio("quadratic") == pytest.approx(0.5, abs=1e-9)
    # |u| has E[G^2 | Y] = Y^2: the same delta_u
    assert CH.weak_recovery_ratio("abs") == pytest.approx(0.5, abs=1e-8)
    # the sign carries no second-moment information
    assert CH.weak_recovery_ratio("sign") == math.inf


@pytest.mark.parametrize("delta0", [0.8, 2.0, 8.0])
def test_fixed_member_of_the_mm_family_has_threshold_sqrt_delta0_over_2(delta0):
    # chapter 4, exercise: T_{delta0} used at every delta has delta_c = sqrt(delta0 / 2)
    assert TH.spectral_threshold("quadratic", S.mondelli_montanari(delta0)) == pytest.approx(
        math.sqrt(delta0 / 2), abs=1e-6
    )


@pytest.mark.parametrize("delta", [0.7, 1.0, 3.0, 10.0])
def test_lal_top_eigenvalue_is_one_over_delta(delta):
    # chapter 4, exercise: for T = 1 - 1/y the outlier sits at 1/delta
    rho2, top = TH.spectral_overlap("quadratic", delta, LAL)
    assert rho2 > 0
    assert top == pytest.approx(1 / delta, abs=1e-8)


def test_cauchy_schwarz_lower_bound_on_thresholds():
    du = CH.weak_recovery_ratio("quadratic")
    for T in [S.trimmed(4.0), S.trimmed(7.0), S.trimmed_centred(7.0), S.mondelli_montanari(3.0),
              lambda y: np.minimum(y, 3.0)]:
        assert TH.spectral_threshold("quadratic", T) >= du - 1e-9


def test_threshold_separates_zero_and_positive_overlap():
    T = S.trimmed(7.0)
    dc = TH.spectral_threshold("quadratic", T)
    assert dc == pytest.approx(1.4867, abs=1e-3)
    assert TH.spectral_overlap("quadratic", dc * 0.999, T)[0] == 0.0
    assert TH.spectral_overlap("quadratic", dc * 1.001, T)[0] > 0.0
    # the overlap starts linearly and increases
    r = [TH.spectral_overlap("quadratic", dc * f, T)[0] for f in (1.01, 1.02, 1.5, 3.0)]
    assert 0 < r[0] < r[1] < r[2] < r[3] < 1
    assert r[1] / r[0] == pytest.approx(2.0, rel=0.05)


def test_threshold_by_direct_scan_of_the_outlier():
    # the one-equation formula of spectral_threshold agrees with scanning spectral_overlap
    T = S.trimmed_centred(5.0)
    dc = TH.spectral_threshold("quadratic", T)
    lo, hi = 0.5, 5.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if TH.spectral_overlap("quadratic", mid, T)[0] > 0 else (mid, hi)
    assert dc == pytest.approx(0.5 * (lo + hi), abs=1e-6)


def test_scale_invariance():
    T = S.trimmed_centred(7.0)
    T3 = lambda y: 3.0 * T(y)  # noqa: E731
    T3.breakpoints = (7.0,)
    r1, t1 = TH.spectral_overlap("quadratic", 2.5, T)
    r3, t3 = TH.spectral_overlap("quadratic", 2.5, T3)
    assert r3 == pytest.approx(r1, abs=1e-9)
    assert t3 == pytest.approx(3 * t1, rel=1e-9)
    assert TH.spectral_threshold("quadratic", T3) == pytest.approx(
        TH.spectral_threshold("quadratic", T), abs=1e-8)


def test_spectral_functions_derivatives():
    sf = TH.spectral_functions("quadratic", 3.0, S.trimmed(7.0))
    lam = np.array([sf.lambda_bar * 1.1, sf.lambda_bar * 1.7])
    h = 1e-5
    np.testing.assert_allclose(sf.dpsi(lam), (sf.psi(lam + h) - sf.psi(lam - h)) / (2 * h),
                               rtol=1e-5)
    np.testing.assert_allclose(sf.dphi(lam), (sf.phi(lam + h) - sf.phi(lam - h)) / (2 * h),
                               rtol=1e-5)
    assert sf.dpsi(sf.lambda_bar) == pytest.approx(0.0, abs=1e-9)  # interior minimum
    assert sf.psi(sf.lambda_star) == pytest.approx(sf.phi(sf.lambda_star), rel=1e-9)
    assert sf.edge == pytest.approx(float(sf.psi(sf.lambda_bar)))
    assert sf.top > sf.edge


def test_unbounded_preprocessing_has_no_proportional_threshold():
    with pytest.warns(TH.NoProportionalThresholdWarning):
        assert TH.spectral_overlap("quadratic", 5.0, lambda y: y) == (0.0, math.inf)
    with pytest.warns(TH.NoProportionalThresholdWarning):
        assert TH.spectral_threshold("quadratic", lambda y: np.log1p(y)) == math.inf
    with pytest.raises(ValueError):
        TH.spectral_functions("quadratic", 2.0, lambda y: y)


def test_useless_preprocessing_has_infinite_threshold():
    # T = 1{y <= 1} favours small |G|: E[T He2] < 0, the top eigenvector is not w_star
    T = lambda y: (y <= 1.0).astype(float)  # noqa: E731
    T.breakpoints = (1.0,)
    assert TH.spectral_threshold("quadratic", T) == math.inf
    assert TH.spectral_overlap("quadratic", 50.0, T)[0] == 0.0


def test_other_links():
    # |u| with T(y) = 1 - 1/y^2 is the same estimator as phase retrieval with 1 - 1/y
    T = lambda y: 1 - 1 / y**2  # noqa: E731
    assert TH.spectral_threshold("abs", T) == pytest.approx(0.5, abs=1e-3)
    r_abs = TH.spectral_overlap("abs", 2.0, T)
    r_pr = TH.spectral_overlap("quadratic", 2.0, LAL)
    np.testing.assert_allclose(r_abs, r_pr, atol=1e-8)


@pytest.mark.parametrize(
    "call",
    [
        lambda: TH.spectral_overlap("quadratic", 0.0, LAL),
        lambda: TH.spectral_overlap("quadratic", -1.0, LAL),
        lambda: TH.spectral_overlap("quadratic", 1.0, "not-a-name"),
        lambda: TH.spectral_overlap("quadratic", 1.0, 42),
        lambda: TH.spectral_overlap("quadratic", 2.0, lambda y: -1.0 - y),  # never positive
        lambda: TH.spectral_overlap("quadratic", 2.0, lambda y: y[:1]),  # not vectorised
        lambda: TH.spectral_overlap("quadratic", 2.0, lambda y: np.sqrt(y - 1.0)),  # NaN
        lambda: TH.spectral_overlap("unknown-link", 2.0, LAL),
        lambda: TH.spectral_threshold("quadratic", LAL, tol=0.0),
        lambda: TH.bulk_density([1.0], "quadratic", 2.0, LAL, eta=0.0),
        lambda: TH.bulk_density([1.0], "quadratic", 2.0, lambda y: y),
        lambda: rmt.marchenko_pastur_density([1.0], 0.0),
    ],
)
def test_theory_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_mean_matrix_coefficients_closed_form():
    # trimmed labels y 1{y <= t}, y = G^2, c = sqrt(t): with P = P(|G| <= c), phi = N(0,1) density
    # E[G^2 1] = P - 2 c phi(c), E[G^4 1] = 3 P - 2 phi(c) (c^3 + 3 c)
    for t in (2.0, 7.0):
        c = math.sqrt(t)
        P, ph = 2 * norm.cdf(c) - 1, norm.pdf(c)
        m2, m4 = P - 2 * c * ph, 3 * P - 2 * ph * (c**3 + 3 * c)
        mean_T, beta = TH.mean_matrix_coefficients("quadratic", S.trimmed(t))
        assert mean_T == pytest.approx(m2, rel=1e-9)
        assert beta == pytest.approx(m4 - m2, rel=1e-9)
    assert TH.mean_matrix_coefficients("quadratic", lambda y: np.ones_like(y)) == \
        pytest.approx((1.0, 0.0), abs=1e-10)
    with pytest.raises(ValueError):
        TH.mean_matrix_coefficients("quadratic", LAL)  # E[1/G^2] is infinite


def test_threshold_by_bisection_agrees_with_the_formula():
    T = S.trimmed(7.0)
    assert TH.threshold_by_bisection("quadratic", T, 1.0, 3.0) == pytest.approx(
        TH.spectral_threshold("quadratic", T), abs=1e-7)
    with pytest.raises(ValueError):
        TH.threshold_by_bisection("quadratic", T, 3.0, 1.0)
