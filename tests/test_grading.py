"""Tests of the graded checks (lecnotes.<subject>.grading): right passes, wrong is named."""

import numpy as np
import pytest

from lecnotes.book.grading import GradingError, runs
from lecnotes.chapters import CHECKS
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import get_link
from lecnotes.exponents.grading import check_gen4_partner
from lecnotes.first_moment.grading import check_optimal_q
from lecnotes.giant_steps.grading import check_giant_step
from lecnotes.mean_field_vs_ntk.grading import check_relu_ntk
from lecnotes.partial_trace.grading import check_partial_trace_matvec
from lecnotes.setting.grading import check_noise_level
from lecnotes.spectral.grading import check_top_eigenvector
from lecnotes.two_steps.grading import check_self_term

CHAPTERS = (0, 1, 2, 3, 4, 5, 6, 7, 8)  # the chapters whose code these tests cover


@pytest.fixture(params=[0, 1, 2])
def seed(request):
    """The hidden instances of each check, drawn from three seeds: the verdicts hold on each."""
    return request.param


def good_noise_level(link, d):
    f = get_link(link)
    along = gaussian_expectation(lambda g: (f(g) * g) ** 2, breakpoints=(0.0,))
    energy = gaussian_expectation(lambda g: f(g) ** 2, breakpoints=(0.0,))
    return along / ((d - 1) * energy)


def good_optimal_q(tau):
    return 2 / np.pi * gaussian_expectation(lambda z: np.tanh((1 + tau * z) / tau**2) ** 2)


def test_correct_solutions_pass(seed):
    rep = check_noise_level(good_noise_level, rng=seed)
    assert rep.passed and "hidden instances pass" in str(rep)
    assert check_optimal_q(good_optimal_q, rng=seed).passed


@pytest.mark.parametrize(
    "func, phrase",
    [
        (lambda link, d: 1 / 0, "raised ZeroDivisionError"),
        (lambda link, d: np.ones(3), "single number"),
        (lambda link, d: -good_noise_level(link, d), "sign is reversed"),
        (lambda link, d: good_noise_level(link, d) * (d - 1) / d, "divide by d-1"),
        (lambda link, d: 1.1 * good_noise_level(link, d), "off by 10.0%"),
        (lambda link, d: float("nan"), "NaN"),
    ],
)
def test_wrong_noise_levels_are_explained_without_the_answer(func, phrase, seed):
    with pytest.raises(GradingError) as err:
        check_noise_level(func, rng=seed)
    msg = str(err.value)
    assert phrase in msg
    assert "expected 0." not in msg  # never prints the reference value


def test_unwritten_exercise_says_so(seed):
    def stub(tau):
        raise NotImplementedError("your code here")

    with pytest.raises(GradingError, match="not written yet"):
        check_optimal_q(stub, rng=seed)


def test_optimal_q_diagnoses_raw_labels_and_missing_factor(seed):
    with pytest.raises(GradingError, match="raw labels"):
        check_optimal_q(lambda tau: 2 / np.pi / (1 + tau**2), rng=seed)
    with pytest.raises(GradingError, match="2/pi"):
        check_optimal_q(lambda tau: good_optimal_q(tau) * np.pi / 2, rng=seed)
    with pytest.raises(GradingError, match=r"\[0, 1\]"):
        check_optimal_q(lambda tau: 2.0, rng=seed)


def test_checks_registry_names_chapter_exercises():
    assert set(CHECKS) >= {"ex-ch0-noise-level", "ex-ch3-coding"}


def good_ntk(X, Z):
    d = X.shape[1]
    nx, nz = np.linalg.norm(X, axis=1), np.linalg.norm(Z, axis=1)
    G = X @ Z.T
    c = np.clip(G / np.outer(nx, nz), -1.0, 1.0)
    th = np.arccos(c)
    return np.outer(nx, nz) / np.pi * (np.sin(th) + (np.pi - th) * c) / (2 * d) + 0.5 * G * (
        1 - th / np.pi)


def test_relu_ntk_check(seed):
    assert check_relu_ntk(good_ntk, rng=seed).passed
    with pytest.raises(GradingError, match="transposed"):
        check_relu_ntk(lambda X, Z: good_ntk(X, Z).T, rng=seed)
    with pytest.raises(GradingError, match="first-layer part"):
        check_relu_ntk(lambda X, Z: good_ntk(X, Z) - 0.5 * (X @ Z.T) * (
            1 - np.arccos(np.clip((X @ Z.T) / np.outer(np.linalg.norm(X, axis=1),
                                                       np.linalg.norm(Z, axis=1)), -1, 1))
            / np.pi))
    with pytest.raises(GradingError, match="factor 2"):
        check_relu_ntk(lambda X, Z: 2 * good_ntk(X, Z), rng=seed)


def test_gen4_partner_check(seed):
    from scipy.optimize import brentq

    def partner(a):
        return brentq(lambda u: u * np.exp(-u**2 / 2) - a * np.exp(-a**2 / 2), 1.0, 40.0,
                      xtol=1e-14)

    assert check_gen4_partner(partner, rng=seed).passed
    with pytest.raises(GradingError, match="trivial solution"):
        check_gen4_partner(lambda a: a, rng=seed)
    with pytest.raises(GradingError, match="larger than 1"):
        check_gen4_partner(lambda a: 0.5 * (1 + a), rng=seed)
    with pytest.raises(GradingError, match="accurate"):
        check_gen4_partner(lambda a: partner(a) + 1e-4, rng=seed)


def test_top_eigenvector_check(seed):
    def good(X, y, T):
        return np.linalg.eigh((X * T(y)[:, None]).T @ X / len(y))[1][:, -1]

    assert check_top_eigenvector(good, rng=seed).passed
    # the sign of an eigenvector is arbitrary
    assert check_top_eigenvector(lambda X, y, T: -good(X, y, T), rng=seed).passed
    with pytest.raises(GradingError, match="smallest eigenvalue"):
        check_top_eigenvector(
            lambda X, y, T: np.linalg.eigh((X * T(y)[:, None]).T @ X)[1][:, 0], rng=seed)
    with pytest.raises(GradingError, match="not normalised"):
        check_top_eigenvector(lambda X, y, T: 2 * good(X, y, T), rng=seed)
    with pytest.raises(GradingError, match="shape"):
        check_top_eigenvector(lambda X, y, T: good(X, y, T)[:-1], rng=seed)


def test_giant_step_check(seed):
    from lecnotes.models import layerwise as LW

    def ref(W, a, X, y, eta, **kw):
        return LW.giant_step(W, a, X, y, eta, scaling=W.shape[0] ** -0.5, **kw)

    assert check_giant_step(ref, rng=seed).passed
    for bad, phrase in [
        (lambda W, a, X, y, eta: 2 * W - ref(W, a, X, y, eta), "sign is reversed"),
        (lambda W, a, X, y, eta: ref(W, a, X, y, eta, loss="correlation"), "correlation loss"),
        (lambda W, a, X, y, eta: ref(W, a, X, y, eta).T, "transposed"),
        (lambda W, a, X, y, eta: W, "did not move"),
    ]:
        with pytest.raises(GradingError, match=phrase):
            check_giant_step(bad, rng=seed)
def good_partial_trace_matvec(X, t, v):
    n, d = X.shape
    s = np.einsum("ij,ij->i", X, X) - d
    return X.T @ (t * (s - 4) * (X @ v)) / n - np.mean(t * (s - 2)) * v


def dense_partial_trace_matvec(X, t, v):
    n, d = X.shape
    s = np.einsum("ij,ij->i", X, X) - d
    M = (X * (t * (s - 4))[:, None]).T @ X / n - np.mean(t * (s - 2)) * np.eye(d)
    return M @ v


def no_identity(X, t, v):
    n, d = X.shape
    s = np.einsum("ij,ij->i", X, X) - d
    return X.T @ (t * (s - 4) * (X @ v)) / n


def moments(X, t, v):
    return X.T @ (t * np.einsum("ij,ij->i", X, X) * (X @ v)) / len(t)


def test_partial_trace_matvec_check(seed):
    assert check_partial_trace_matvec(good_partial_trace_matvec, rng=seed).passed
    assert "ex-ch5-partial-trace-matvec" in CHECKS
    cases = [
        (no_identity, "identity term"),
        (moments, "monomial tensor"),
        (lambda X, t, v: len(t) * good_partial_trace_matvec(X, t, v), "divide by n"),
        (lambda X, t, v: -good_partial_trace_matvec(X, t, v), "sign"),
        (lambda X, t, v: good_partial_trace_matvec(X, t, v) / np.sqrt(24), r"sqrt\(24\)"),
        (lambda X, t, v: good_partial_trace_matvec(X, t, v)[:, None], "shape"),
        (lambda X, t, v: 1.01 * good_partial_trace_matvec(X, t, v), "accurate to 1e-8"),
        (dense_partial_trace_matvec, "d x d matrix"),
    ]
    for func, phrase in cases:
        with pytest.raises(GradingError, match=phrase):
            check_partial_trace_matvec(func, rng=seed)


def test_self_term_check(seed):
    def good(X, y, W0, a, eta, dsigma):
        sq = np.einsum("ij,ij->i", X, X)
        return eta * dsigma(X @ W0.T) * (y * sq / X.shape[0])[:, None] * a[None, :]

    assert check_self_term(good, rng=seed).passed
    with pytest.raises(GradingError, match="sign is reversed"):
        check_self_term(lambda *args: -good(*args), rng=seed)
    with pytest.raises(GradingError, match="transposed"):
        check_self_term(lambda *args: good(*args).T, rng=seed)
    with pytest.raises(GradingError, match="1/n"):
        check_self_term(lambda X, *rest: len(X) * good(X, *rest), rng=seed)


def test_a_seed_fixes_the_hidden_instances():
    """Checks follow the rng convention: a seed reproduces the instances, None draws new ones."""
    seen = []

    def spy(tau):
        seen.append(tau)
        return good_optimal_q(tau)

    check_optimal_q(spy, rng=5)
    check_optimal_q(spy, rng=5)
    check_optimal_q(spy)
    assert seen[:4] == seen[4:8] and seen[8:] != seen[:4]


def test_one_table_of_checks_in_reading_order():
    labels = list(CHECKS)
    chapters = [int(label.split("-")[1][2:]) for label in labels]
    assert chapters == sorted(chapters) == list(range(12))
    for label, check in CHECKS.items():
        assert check.__module__.endswith(".grading")
        assert label in (check.__doc__ or "")


def test_runs_passes_a_wrong_but_working_answer_and_names_what_does_not_run(seed):
    """runs: the first part of an autograder's score, blind to right and wrong."""
    assert runs(check_noise_level, lambda link, d: -1.0, rng=seed).passed

    def stub(link, d):
        raise NotImplementedError("your code here")

    for func, phrase in [(stub, "not written yet"), (lambda link, d: 1 / 0, "ZeroDivisionError"),
                         (lambda link, d: float("nan"), "finite"),
                         (lambda link, d: "one", "finite")]:
        with pytest.raises(GradingError, match=phrase):
            runs(check_noise_level, func, rng=seed)
