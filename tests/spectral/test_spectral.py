"""Tests of lecnotes.spectral.estimators and .experiments (chapter 4; Lanczos: also ch. 5)."""

import math
import warnings

import numpy as np
import pytest

from lecnotes import spectral as S
from lecnotes.core import linalg, stats
from lecnotes.core import preprocessing as PP
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.hermite_tensors import he4_partial_trace
from lecnotes.core.targets import single_index
from lecnotes.core.validate import stream
from lecnotes.spectral import theory as TH

CHAPTERS = (4,)  # the chapters whose code these tests cover: make chapter CH=N


PRE = ["trimmed", "trimmed-centred", "mondelli-montanari", "luo-alghamdi-lu"]


# ---------------------------------------------------------------------------------------
# Named preprocessings
# ---------------------------------------------------------------------------------------
def test_named_preprocessings_values():
    y = np.array([0.5, 2.0, 7.0, 9.0])
    np.testing.assert_allclose(PP.trimmed(7.0)(y), [0.5, 2.0, 7.0, 0.0])
    assert PP.trimmed(7.0).breakpoints == (7.0,)
    np.testing.assert_allclose(PP.luo_alghamdi_lu()(y), 1 - 1 / y)
    np.testing.assert_allclose(PP.mondelli_montanari(2.0)(y), (y - 1) / (y + 1))
    np.testing.assert_allclose(PP.raw()(y), y)
    # at delta = 1/2 the Mondelli-Montanari preprocessing is 1 - 1/y
    np.testing.assert_allclose(PP.mondelli_montanari(0.5)(y), 1 - 1 / y)
    fam = PP.get_preprocessing("mondelli-montanari")
    assert isinstance(fam, PP.PreprocessingFamily)
    np.testing.assert_allclose(fam.at(8.0)(y), (y - 1) / (y + 3))


def test_trimmed_centred_has_mean_zero():
    T = PP.trimmed_centred(5.0)
    m = gaussian_expectation(lambda g: T(g**2), breakpoints=(-math.sqrt(5), math.sqrt(5)))
    assert abs(float(m)) < 1e-9
    # Monte Carlo cross-check of the centring constant, tolerance 5 standard errors
    g = np.random.default_rng(0).standard_normal(400_000)
    t = T(g**2)
    assert abs(t.mean()) < 5 * t.std() / math.sqrt(g.size)


def test_resolve_preprocessing():
    assert PP.resolve_preprocessing(None)(np.array([3.0])) == 3.0
    assert PP.resolve_preprocessing("trimmed").name == "trimmed"
    assert PP.resolve_preprocessing("mondelli-montanari", 2.0).name == "mondelli-montanari"
    f = lambda y: y  # noqa: E731
    assert PP.resolve_preprocessing(f) is f


@pytest.mark.parametrize(
    "call",
    [
        lambda: PP.get_preprocessing("nope"),
        lambda: PP.trimmed(-1.0),
        lambda: PP.mondelli_montanari(0.4),
        lambda: PP.resolve_preprocessing("mondelli-montanari"),  # needs delta
        lambda: PP.resolve_preprocessing(3.0),
    ],
)
def test_preprocessing_bad_input(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------------------------------
# The Lanczos engine
# ---------------------------------------------------------------------------------------
def _random_symmetric(d, rng, top_gap=1.0):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    ev = np.sort(rng.uniform(-1, 1, d))
    ev[-1] = ev[-2] + top_gap
    return (Q * ev) @ Q.T, ev, Q[:, -1]


@pytest.mark.parametrize("method", ["dense", "lanczos", "auto"])
def test_top_eigenpair_known_matrix(method):
    rng = np.random.default_rng(1)
    A, ev, v = _random_symmetric(400, rng, top_gap=0.3)
    vec, val, info = linalg.top_eigenpair(lambda x: A @ x, 400, method=method)
    assert val == pytest.approx(ev[-1], abs=1e-9)
    assert abs(vec @ v) == pytest.approx(1.0, abs=1e-9)
    assert np.linalg.norm(vec) == pytest.approx(1.0)
    assert vec[np.argmax(np.abs(vec))] > 0  # canonical sign
    assert info.residual < 1e-6


def test_top_eigenpair_degenerate_top_cluster():
    # three equal top eigenvalues: any unit vector of the top eigenspace is a right answer
    rng = np.random.default_rng(2)
    d = 500
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    ev = np.concatenate([np.linspace(-1, 0.9, d - 3), [1.0, 1.0, 1.0]])
    A = (Q * ev) @ Q.T
    vec, val, info = linalg.top_eigenpair(lambda x: A @ x, d, method="lanczos")
    assert val == pytest.approx(1.0, abs=1e-8)
    assert np.sum((Q[:, -3:].T @ vec) ** 2) == pytest.approx(1.0, abs=1e-8)


def test_top_eigenpair_recovers_from_arpack_non_convergence():
    # a nearly degenerate top (gap 1e-7) and a tiny iteration budget make ARPACK fail;
    # the helper must restart / fall back and still return the exact pair, silently
    rng = np.random.default_rng(3)
    A, ev, v = _random_symmetric(600, rng, top_gap=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vec, val, info = linalg.top_eigenpair(lambda x: A @ x, 600, method="lanczos", maxiter=1,
                                         ncv=8, tol=1e-14)
    assert any("no convergence" in a for a in info.attempts)
    assert info.method in ("lanczos-restarted", "dense-fallback")
    assert val == pytest.approx(ev[-1], abs=1e-9)


def test_top_eigenpair_last_resort_warns(monkeypatch):
    monkeypatch.setattr(linalg, "DENSE_FALLBACK_MAX_D", 10)
    rng = np.random.default_rng(4)
    A, ev, v = _random_symmetric(300, rng, top_gap=1e-9)
    with pytest.warns(RuntimeWarning, match="did not converge"):
        vec, val, info = linalg.top_eigenpair(lambda x: A @ x, 300, method="lanczos", maxiter=1,
                                         ncv=6, tol=1e-15)
    assert info.method == "lanczos-unconverged"
    assert ev[0] - 1e-12 <= val <= ev[-1] + 1e-12  # a Rayleigh quotient: inside the spectrum
    assert val == pytest.approx(vec @ A @ vec)


def test_top_eigenpair_bad_input():
    with pytest.raises(ValueError):
        linalg.top_eigenpair("not callable", 3)
    with pytest.raises(ValueError):
        linalg.top_eigenpair(lambda v: v, 0)
    with pytest.raises(ValueError):
        linalg.top_eigenpair(lambda v: v, 10, method="qr")
    with pytest.raises(ValueError):
        linalg.top_eigenpair(lambda v: v, 400, method="lanczos", v0=np.zeros(400))
    with pytest.raises(ValueError):
        linalg.top_eigenpair(lambda v: v, 10, dense_matrix=lambda: np.eye(3), method="dense")


# ---------------------------------------------------------------------------------------
# Spectral estimator
# ---------------------------------------------------------------------------------------
def test_spectral_matrix_formula():
    X, y, w = single_index(50, 6, "quadratic", rng=0)
    D = S.spectral_matrix(X, y, "trimmed")
    t = np.where(y <= 7, y, 0.0)
    np.testing.assert_allclose(D, sum(ti * np.outer(x, x) for ti, x in zip(t, X, strict=True)) / 50)


def test_dense_and_lanczos_agree_and_are_reproducible():
    X, y, w = single_index(1600, 400, "quadratic", rng=5)
    v1, l1, _ = S.spectral_estimator(X, y, "trimmed", method="dense")
    v2, l2, info = S.spectral_estimator(X, y, "trimmed", method="lanczos")
    assert info.method.startswith("lanczos")
    assert l1 == pytest.approx(l2, rel=1e-9)
    assert abs(v1 @ v2) == pytest.approx(1.0, abs=1e-7)
    v3, l3, _ = S.spectral_estimator(X, y, "trimmed", method="lanczos")
    np.testing.assert_array_equal(v2, v3)
    assert np.linalg.norm(v1) == pytest.approx(1.0)


def test_heavy_negative_tail_goes_dense():
    # T = 1 - 1/y reaches about -n^2 / delta: Krylov methods are hopeless, auto is dense
    X, y, w = single_index(1600, 400, "quadratic", rng=6)
    v, top, info = S.spectral_estimator(X, y, "luo-alghamdi-lu")
    assert info.method == "dense"
    vd, topd, _ = S.spectral_estimator(X, y, "luo-alghamdi-lu", method="dense")
    assert top == pytest.approx(topd)


def test_family_is_evaluated_at_n_over_d():
    X, y, w = single_index(800, 400, "quadratic", rng=7)
    v1, l1, _ = S.spectral_estimator(X, y, "mondelli-montanari", method="dense")
    v2, l2, _ = S.spectral_estimator(X, y, PP.mondelli_montanari(2.0), method="dense")
    assert l1 == pytest.approx(l2)


@pytest.mark.parametrize("name", PRE)
def test_theory_matches_simulation_at_one_point(name):
    # d = 600, delta = 4, 4 seeds. Tolerance: 4 standard errors, from the per-run standard
    # deviation measured over 20 seeds at the same size (0.040, 0.037, 0.018, 0.008 for rho^2;
    # 0.16, 0.13, 0.022, 0.031 for the top eigenvalue), plus 0.01 of finite-size bias.
    sd = {"trimmed": (0.040, 0.16), "trimmed-centred": (0.037, 0.13),
          "mondelli-montanari": (0.018, 0.022), "luo-alghamdi-lu": (0.008, 0.031)}[name]
    seeds = 4
    out = S.simulate_spectral({name: name}, [4.0], 600, seeds, rng=11)[name]
    rho2, top = TH.spectral_overlap("quadratic", 4.0, name)
    assert out.rho2.mean() == pytest.approx(rho2, abs=4 * sd[0] / 2 + 0.01)
    assert out.top.mean() == pytest.approx(top, abs=4 * sd[1] / 2 + 0.01)


def test_simulate_spectral_nested_samples_match_the_estimator():
    out = S.simulate_spectral({"t": "trimmed", "m": "mondelli-montanari"}, [1.0, 2.0], 50, 2,
                              rng=3)
    assert out["t"].rho2.shape == (2, 2)
    X = stream(3, 0).standard_normal((100, 50))  # seed 0's data set (documented stream)
    y = X[:, 0] ** 2
    for j, n in enumerate([50, 100]):
        v, top, _ = S.spectral_estimator(X[:n], y[:n], "trimmed")
        assert out["t"].top[0, j] == pytest.approx(top)
        assert out["t"].rho2[0, j] == pytest.approx(v[0] ** 2)
        v, top, _ = S.spectral_estimator(X[:n], y[:n], "mondelli-montanari")
        assert out["m"].top[0, j] == pytest.approx(top)
    again = S.simulate_spectral({"t": "trimmed"}, [1.0, 2.0], 50, 2, rng=3)
    np.testing.assert_array_equal(again["t"].rho2, out["t"].rho2)


def test_simulate_spectral_first_seed_extends_a_sweep():
    pre = {"t": "trimmed", "m": "mondelli-montanari"}
    full = S.simulate_spectral(pre, [1.0, 2.0], 40, 4, rng=5)
    tail = S.simulate_spectral(pre, [1.0, 2.0], 40, 2, rng=5, first_seed=2)
    for k in pre:  # the same draws: seeds 2 and 3 of the full sweep
        np.testing.assert_allclose(tail[k].rho2, full[k].rho2[2:], rtol=1e-7, atol=1e-12)
    with pytest.raises(ValueError):
        S.simulate_spectral(pre, [1.0], 40, 2, rng=5, first_seed=-1)


def test_simulate_spectral_fewer_samples_than_dimensions_against_a_dense_eigh():
    # n_max < d takes the matrix-free path; checked against the dense matrix written out
    out = S.simulate_spectral({"t": "trimmed"}, [0.375, 0.75], 400, 2, rng=4)["t"]
    X = stream(4, 1).standard_normal((300, 400))  # seed 1's data set (documented stream)
    y = X[:, 0] ** 2
    t = y * (y <= 7)
    for j, n in enumerate([150, 300]):
        ev, vec = np.linalg.eigh(X[:n].T @ (t[:n, None] * X[:n]) / n)
        assert out.top[1, j] == pytest.approx(ev[-1], rel=1e-8)
        assert out.rho2[1, j] == pytest.approx(vec[0, -1] ** 2, rel=1e-6, abs=1e-10)


def test_spectrum_contains_the_top_eigenvalue():
    X, y, w = single_index(300, 60, "quadratic", rng=8)
    ev = S.spectrum(X, y, "trimmed")
    v, top, _ = S.spectral_estimator(X, y, "trimmed")
    assert ev[-1] == pytest.approx(top)
    assert np.all(np.diff(ev) >= 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: S.spectral_estimator(np.ones((3, 2)), np.ones(4)),
        lambda: S.spectral_estimator(np.ones((3, 2)), np.array([1.0, np.nan, 1.0])),
        lambda: S.spectral_estimator(np.ones((3, 2)), np.ones(3), T=5),
        lambda: S.spectral_estimator(np.ones((3, 2)), np.ones(3), T=lambda y: y[:2]),
        lambda: S.spectral_estimator(np.ones((3, 2)), np.zeros(3), T="luo-alghamdi-lu"),
        lambda: S.spectral_estimator(np.ones((3, 2)), np.ones(3), method="magic"),
        lambda: S.simulate_spectral({}, [1.0], 10, 1),
        lambda: S.simulate_spectral({"t": "trimmed"}, [2.0, 1.0], 10, 1),
        lambda: S.simulate_spectral({"t": "trimmed"}, [1.0], 1, 1),
    ],
)
def test_spectral_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_top_eigenpair_with_the_partial_trace_product():
    # chapter 5 reuses the engine with the degree-4 partial-trace product

    X, y, w = single_index(3000, 350, "he4", rng=9)
    t = y - y.mean()
    vec, val, info = linalg.top_eigenpair(lambda v: he4_partial_trace(X, t, v), 350,
                                     method="lanczos")
    M = he4_partial_trace(X, t, np.eye(350))
    ev = np.linalg.eigvalsh(0.5 * (M + M.T))
    assert info.method.startswith("lanczos")
    assert val == pytest.approx(ev[-1], rel=1e-8)


# ---------------------------------------------------------------------------------------
# The sweeps of chapter 4 (keyed streams, properties that hold run by run)
# ---------------------------------------------------------------------------------------
def test_streams_are_keyed_by_seed_and_size():
    # adding a seed or a size never changes the draws of the others
    a = S.spectra_over_seeds([1.0, 2.0], 12, 2, "trimmed", rng=5)
    b = S.spectra_over_seeds([1.0, 2.0], 12, 3, "trimmed", rng=5)
    np.testing.assert_array_equal(a.eigenvalues, b.eigenvalues[:2])
    assert a.n.tolist() == [12, 24] and a.eigenvalues.shape == (2, 2, 12)
    one = S.spectral_sweep({"t": "trimmed"}, [1.0, 2.0], [30], 2, rng=7)
    two = S.spectral_sweep({"t": "trimmed"}, [1.0, 2.0], [20, 30], 2, rng=7)
    np.testing.assert_array_equal(one[30]["t"].rho2, two[30]["t"].rho2)
    assert not np.array_equal(S.spectra_over_seeds([1.0], 12, 1, rng=6).eigenvalues,
                              S.spectra_over_seeds([1.0], 12, 1, rng=5).eigenvalues)


def test_spectral_sweep_simulates_a_family_where_it_is_defined():
    out = S.spectral_sweep({"t": "trimmed", "m": "mondelli-montanari"}, [0.3, 0.5, 1.0], [20],
                           2, rng=1)[20]
    np.testing.assert_array_equal(out["t"].deltas, [0.3, 0.5, 1.0])
    np.testing.assert_array_equal(out["m"].deltas, [0.5, 1.0])
    assert out["m"].rho2.shape == (2, 2)


def test_sample_spectral_matrices_mean_is_the_identity_for_constant_labels():
    # T = 1: E[D_T] = I; largest deviation over the 21 distinct entries below 4.5 standard
    # errors (probability of a false failure about 1.4e-4)
    mats = S.sample_spectral_matrices(6, 40, 300, T=lambda y: np.ones_like(y), rng=2)
    assert mats.shape == (300, 6, 6)
    m, se = stats.mean_and_error(mats)
    assert np.max(np.abs(m - np.eye(6)) / se) < 4.5


def test_simulated_threshold_reads_back_a_known_offset():
    grid = np.linspace(1.0, 10.0, 2001)
    curve = np.maximum(0.0, 1.0 - 2.0 / grid)  # threshold 2
    deltas = np.array([2.6, 3.0, 4.0, 6.0, 9.0])
    shifted = np.maximum(0.0, 1.0 - 2.0 / (deltas - 0.3))  # the same curve, 0.3 to the right
    est = S.simulated_threshold(deltas, np.vstack([shifted, shifted]), grid, curve, 2.0)
    assert est.estimate == pytest.approx(2.3, abs=1e-4)
    assert est.se == pytest.approx(0.0, abs=1e-4)


def test_raw_label_sweep_run_by_run_inequalities():
    res = S.raw_label_sweep(2.0, [20, 40], 2, rng=3)
    assert res.raw.shape == (2, 2)
    # every Rayleigh quotient is at most the top eigenvalue, and the heaviest sample's is at
    # least its own term y_i |x_i|^2 / n (labels are non-negative)
    assert np.all(res.top >= res.heavy - 1e-12)
    assert np.all((0 <= res.loc) & (res.loc <= 1 + 1e-12))


def test_davis_kahan_sweep_bound_never_exceeds_the_overlap():
    dk = S.davis_kahan_sweep(np.array([4, 32, 128]), 30, 2, "trimmed-centred", rng=4)
    assert dk.rho2.shape == (2, 3) and dk.beta > 0
    assert np.all(dk.bound <= dk.rho2 + 1e-12)
    assert np.all((dk.bound == 0) | (2 * dk.norm < dk.beta))
    # the perturbation shrinks like delta^(-1/2): a factor about 4 from delta = 4 to 64
    assert np.all(dk.norm[:, 0] > 2.5 * dk.norm[:, 1])
