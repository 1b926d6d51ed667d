"""Tests of lecnotes.exponents.experiments (chapter 2): information and generative exponents."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

from lecnotes.core import conditional_hermite as CH
from lecnotes.core.hermite import gaussian_expectation, h, he
from lecnotes.core.targets import LINKS, Link
from lecnotes.exponents import experiments as E

CHAPTERS = (2,)  # the chapters whose code these tests cover: make chapter CH=N


GAMMA0 = 1.0 / math.sqrt(2.0 * math.pi)


def dead_zone(u):
    return np.sign(u) * (np.abs(u) > 1.0)


# ----------------------------------------------------------------------------- exponents
IE = {
    "linear": 1, "quadratic": 2, "cubic": 1, "he2": 2, "he3": 3, "he4": 4, "he5": 5,
    "he6": 6, "abs": 2, "relu": 1, "tanh": 1, "sign": 1, "gen4": 4,
}
GE = {
    "linear": 1, "quadratic": 2, "cubic": 1, "he2": 2, "he3": 1, "he4": 2, "he5": 1,
    "he6": 2, "abs": 2, "relu": 1, "tanh": 1, "sign": 1, "gen4": 4,
}


@pytest.mark.parametrize("name", sorted(IE))
def test_information_exponent_catalogue(name):
    assert E.information_exponent(name) == IE[name]


@pytest.mark.parametrize("name", sorted(GE))
def test_generative_exponent_catalogue(name):
    assert E.generative_exponent(name) == GE[name]
    assert E.generative_exponent(name) <= E.information_exponent(name)


def test_every_polynomial_has_generative_exponent_at_most_two():
    rng = np.random.default_rng(0)
    for _ in range(6):
        coef = rng.standard_normal(rng.integers(2, 7))  # degree 1..5
        if np.abs(coef[1:]).max() < 0.1:
            continue
        assert E.generative_exponent(lambda u, c=coef: np.polynomial.polynomial.polyval(u, c)) <= 2


# ----------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_norms_closed_forms(k):
    hk1 = float(h(k - 1, 0.0))
    relu = 0.5 + 2 * hk1**2 * GAMMA0**2 / k  # atom at 0 plus the injective half-line
    sign = 4 * hk1**2 * GAMMA0**2 / k if k % 2 else 0.0
    even = 1.0 if k % 2 == 0 else 0.0
    got = {n: CH.conditional_hermite_norms(n, 5)[k - 1] for n in
           ("relu", "sign", "abs", "quadratic", "he2", "tanh", "cubic", "linear")}
    assert got["relu"] == pytest.approx(relu, abs=1e-10)
    assert got["sign"] == pytest.approx(sign, abs=1e-12)
    for n in ("abs", "quadratic", "he2"):
        assert got[n] == pytest.approx(even, abs=1e-10)
    for n in ("tanh", "cubic", "linear"):  # injective links: zeta_k(Y) = h_k(G)
        assert got[n] == pytest.approx(1.0, abs=1e-10)


def test_zeta_he3_matches_cubic_roots():
    zeta1 = CH.conditional_hermite("he3", 1)
    zeta3 = CH.conditional_hermite("he3", 3)
    ys = np.array([-10.0, -3.0, -1.9, -0.5, 0.3, 1.5, 1.99, 2.01, 7.0])

    def direct(y):
        r = np.roots([1.0, 0.0, -3.0, -y])
        r = r[np.abs(r.imag) < 1e-9].real
        w = np.exp(-(r**2) / 2) / np.abs(3 * r**2 - 3)
        return np.sum(w * r) / np.sum(w)

    assert np.allclose(zeta1(ys), [direct(y) for y in ys], atol=1e-12)
    assert np.allclose(zeta3(ys), ys / math.sqrt(6.0), atol=1e-12)  # Y = sqrt(6) h_3(G)
    assert CH.conditional_hermite_norms("he3", 3)[2] == pytest.approx(1.0, abs=1e-10)


def test_noisy_linear_link_mehler():
    tau = 0.5  # G | Y is Gaussian with correlation 1/(1+tau^2): E[zeta_k^2] = (1+tau^2)^-k
    got = CH.conditional_hermite_norms("linear", 4, noise=tau)
    assert np.allclose(got, (1 + tau**2) ** -np.arange(1.0, 5.0), rtol=1e-6)
    z = CH.conditional_hermite("linear", 1, noise=tau)(np.array([-2.0, 0.3, 1.0]))
    assert np.allclose(z, np.array([-2.0, 0.3, 1.0]) / (1 + tau**2), atol=1e-10)


def test_noisy_sign_closed_form():
    tau = 0.7  # zeta_1(y) = sqrt(2/pi) tanh(y / tau^2)
    y = np.linspace(-3, 3, 13)
    z = CH.conditional_hermite("sign", 1, noise=tau)(y)
    assert np.allclose(z, math.sqrt(2 / math.pi) * np.tanh(y / tau**2), atol=1e-12)
    ref = (2 / math.pi) * gaussian_expectation(lambda t: np.tanh((1 + tau * t) / tau**2) ** 2)
    assert CH.conditional_hermite_norms("sign", 1, noise=tau)[0] == pytest.approx(ref, rel=1e-8)


# ----------------------------------------------------------------------------- gen4 link
def test_gen4_interval_and_link():
    a, b = E.gen4_interval()
    assert (a, b) == (E.GEN4_A, pytest.approx(2.131777344456144, abs=1e-14))
    assert a * math.exp(-a * a / 2) == pytest.approx(b * math.exp(-b * b / 2), abs=1e-15)
    assert LINKS["gen4"].breakpoints == (-b, -a, a, b)
    g = np.array([0.1, 0.3, 2.0, 2.2, -0.3, -2.2])
    assert np.array_equal(LINKS["gen4"](g), [0, 1, 1, 0, 1, 0])
    # 0.2254 is the maximiser of E[zeta_4^2] over the family, rounded to its 4 digits
    res = minimize_scalar(lambda t: -E.gen4_stats(t).zeta4_norm, bounds=(0.05, 0.95),
                          method="bounded", options={"xatol": 1e-9})
    assert round(res.x, 4) == a == E.GEN4_A
    # the link of the catalogue is built from the constant and its computed partner
    assert (E.GEN4_A, E.gen4_partner(E.GEN4_A)) == (a, b)
    a2, b2 = E.gen4_interval("balanced")
    assert 2 * (ndtr(b2) - ndtr(a2)) == pytest.approx(0.5, abs=1e-13)
    a3, b3 = E.gen4_interval(0.5)
    assert a3 == 0.5 and 0.5 * math.exp(-0.125) == pytest.approx(b3 * math.exp(-b3**2 / 2))


def test_gen4_zetas():
    a, b = E.gen4_interval()
    p = 2 * (ndtr(b) - ndtr(a))
    n4 = 2 * ((a**3 - 3 * a) * math.exp(-a * a / 2) - (b**3 - 3 * b) * math.exp(-b * b / 2))
    n4 /= math.sqrt(2 * math.pi) * math.sqrt(24)
    norms = CH.conditional_hermite_norms("gen4", 6)
    assert np.all(norms[:3] < 1e-25)
    assert norms[3] == pytest.approx(n4**2 / (p * (1 - p)), rel=1e-12)
    assert norms[3] == pytest.approx(0.155173445, abs=1e-8)
    # E[G^2 | Y] = 1 on both labels: zeta_2 = E[(G^2-1)/sqrt 2 | Y] vanishes at y = 0 and 1
    assert np.allclose(CH.conditional_hermite("gen4", 2)([0.0, 1.0]), 0.0, atol=1e-15)
    assert E.generative_exponent("gen4") == 4 == E.information_exponent("gen4")
    with pytest.raises(E.ExponentNotFound):
        E.generative_exponent("gen4", kmax=3)


# ----------------------------------------------------------------------------- tolerances
def test_information_exponent_tiny_coefficients():
    assert E.information_exponent(lambda u: he(3, u) + 1e-6 * u) == 1
    assert E.information_exponent(lambda u: he(4, u) + 1e-7 * he(3, u)) == 3
    # below the documented tolerance INFO_RTOL * sd = 1e-9 * sqrt(6): not resolved
    assert E.information_exponent(lambda u: he(3, u) + 1e-12 * u) == 3
    assert E.information_exponent(lambda u: 1e6 + 1e-3 * he(2, u)) == 2  # scale-free
    assert E.information_exponent(lambda u, s=1e-4: s * (he(3, u) + 1e-6 * u)) == 1


def test_generative_exponent_tiny_signal():
    for eps, expected in [(1e-3, 1), (1e-4, 1), (1e-6, 2)]:
        link = lambda u, e=eps: u**2 + e * u  # noqa: E731
        assert E.generative_exponent(link) == expected
        # E[zeta_1^2] = eps^2/2 (1 + O(eps^2)): accurate far below the tolerance
        assert CH.conditional_hermite_norms(link, 1)[0] == pytest.approx(eps**2 / 2, rel=1e-6)
    tilted = lambda u: LINKS["gen4"](u) + 1e-3 * u  # noqa: E731
    assert E.generative_exponent(tilted, noise=0.5) == 1
    assert E.generative_exponent("gen4", noise=0.5) == 4


def test_discontinuous_links_without_breakpoints():
    for name in ("sign", "gen4"):
        plain = lambda u, f=LINKS[name].func: f(np.asarray(u))  # noqa: E731
        assert np.allclose(CH.conditional_hermite_norms(plain, 5),
                           CH.conditional_hermite_norms(name, 5), atol=1e-12)
        assert E.information_exponent(plain) == IE[name]


# ----------------------------------------------------------------------------- noise
def test_noise_changes_neither_exponent_but_shrinks_norms():
    for name in ("quadratic", "sign", "gen4", "abs"):
        assert E.generative_exponent(name, kmax=4, noise=0.5) == GE[name]
    for name, k in (("sign", 1), ("gen4", 4)):
        vals = [CH.conditional_hermite_norms(name, k, noise=t)[k - 1] for t in (0, 0.5, 1, 2)]
        assert np.all(np.diff(vals) < 0)


@pytest.mark.parametrize("link,k,m", [("sign", 1, 1), ("gen4", 4, 1), (dead_zone, 2, 2)])
def test_large_noise_asymptotics(link, k, m):
    m_got, c = E.large_noise_asymptotics(link, k)
    assert m_got == m
    val = CH.conditional_hermite_norms(link, k, noise=16.0)[k - 1]
    assert val / (c * 16.0 ** (-2 * m)) == pytest.approx(1.0, abs=0.01)


# ----------------------------------------------------------------------------- API details
def test_conditional_hermite_shapes_and_support():
    z = CH.conditional_hermite("relu", 2)
    y = np.array([[0.0, 0.5], [1.0, 2.0]])
    assert z(y).shape == (2, 2)
    assert z(0.0).shape == ()
    assert np.isnan(z(-1.0))  # ReLU labels are never negative
    assert np.allclose(CH.conditional_hermite("he3", 0)([0.0, 5.0]), 1.0)
    # the atom of ReLU at 0: E[h_1(G) | G < 0] = -2 gamma(0)
    assert CH.conditional_hermite("relu", 1)(0.0) == pytest.approx(-2 * GAMMA0, abs=1e-15)


def test_constant_link_raises_documented_error():
    const = lambda u: 0.0 * u + 2.0  # noqa: E731
    with pytest.raises(E.ExponentNotFound) as info:
        E.information_exponent(const)
    assert isinstance(info.value, ValueError) and info.value.kmax == 8
    with pytest.raises(E.ExponentNotFound) as info:
        E.generative_exponent(const, kmax=5)
    assert info.value.values.shape == (5,)
    with pytest.raises(E.ExponentNotFound):
        E.information_exponent("he6", kmax=5)


@pytest.mark.parametrize(
    "call",
    [
        lambda: E.information_exponent(42),
        lambda: E.information_exponent("no-such-link"),
        lambda: E.generative_exponent([1, 2, 3]),
        lambda: E.information_exponent("he3", kmax=0),
        lambda: E.generative_exponent("he3", kmax=13),
        lambda: E.generative_exponent("he3", kmax=2.5),
        lambda: E.generative_exponent("he3", noise=-1.0),
        lambda: E.generative_exponent("he3", noise=float("nan")),
        lambda: E.generative_exponent("he3", tol=0.0),
        lambda: E.information_exponent("he3", rtol=-1.0),
        lambda: CH.conditional_hermite("he3", -1),
        lambda: CH.conditional_hermite("he3", 1)(np.array([np.nan])),
        lambda: CH.conditional_hermite_norms(lambda u: np.where(u > 0, np.inf, 0.0), 2),
        lambda: CH.conditional_hermite_norms(lambda u: np.ones(3), 2),
        lambda: E.large_noise_asymptotics("sign", 0),
        lambda: E.gen4_interval(1.5),
        lambda: E.gen4_interval("widest"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_link_objects_and_determinism():
    custom = Link("dz", dead_zone, "", (-1.0, 0.0, 1.0))
    a = CH.conditional_hermite_norms(custom, 4)
    b = CH.conditional_hermite_norms(dead_zone, 4)  # same link, break points found by the scan
    assert np.allclose(a, b, atol=1e-13)
    assert np.array_equal(a, CH.conditional_hermite_norms(custom, 4))


# ----------------------------------------------------------------------------- chapter helpers
def test_format_number_and_markdown_table():
    assert E.format_number(1e-14) == "0" and E.format_number(0.5) == "+0.5000"
    assert E.format_number(-2.0, ".1f") == "-2.0"
    table = E.markdown_table(["a", "b"], [["$|u|$", 1]])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| $\\vert u\\vert $ | 1 |"]


def test_random_polynomial_links_have_information_exponent_at_least_three():
    links = E.random_polynomial_links(6, rng=1)
    u = np.linspace(-2, 2, 5)
    for phi in links:
        assert phi(u).shape == u.shape
        assert E.information_exponent(phi) >= 3
    again = E.random_polynomial_links(6, rng=1)
    assert all(np.array_equal(p(u), q(u)) for p, q in zip(links, again, strict=True))


def test_noise_decay_of_the_sign_link_against_its_closed_form():
    taus = np.array([0.5, 2.0])
    vals = E.noise_decay("sign", 1, taus)
    ref = [(2 / math.pi) * gaussian_expectation(lambda t, tau=tau: np.tanh((1 + tau * t) / tau**2)
                                                ** 2) for tau in taus]
    np.testing.assert_allclose(vals, ref, rtol=1e-6)
