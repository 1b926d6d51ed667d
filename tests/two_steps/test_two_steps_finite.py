"""Tests of lecnotes.two_steps.finite (chapter 7): the finite-N kernel of one step, square BBP."""

import math

import numpy as np
import pytest

from lecnotes.core import rmt
from lecnotes.two_steps import experiments as SP
from lecnotes.two_steps import theory as TST

CHAPTERS = (7,)  # the chapters whose code these tests cover: make chapter CH=N


def _closed_form(c, s, nodes=80):
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    A, G = np.meshgrid(x, x, indexing="ij")
    K = np.exp(-(1 + s**2 * A**2) / 2) * (np.sin(c * A * G) + np.cos(c * A * G)
                                          - np.exp(-(c * A) ** 2 / 2))
    return np.linalg.svd(np.sqrt(w)[:, None] * K * np.sqrt(w), compute_uv=False)


def test_kernel_matches_closed_form_and_small_shift_limit():
    """Quadrature in Z against e^{-(1+s^2a^2)/2}(sin+cos)(cag) centred; sigma_k ~ e^{-1/2}c^k."""
    for c, s in [(0.3, 0.2), (0.6, 0.5), (1.0, 0.0)]:
        np.testing.assert_allclose(TST.kernel_singular_values(c, s, 5), _closed_form(c, s)[:5],
                                   atol=1e-10)
    c = 1e-2
    sv = TST.kernel_singular_values(c, 0.0, 2)
    assert sv[0] / c == pytest.approx(math.exp(-0.5), rel=1e-3)
    assert sv[1] / c**2 == pytest.approx(math.exp(-0.5) * math.sqrt(1.5), rel=1e-3)
    # the neuron-specific shift only damps
    assert np.all(TST.kernel_singular_values(0.5, 0.7, 4) < TST.kernel_singular_values(0.5, 0, 4))


def test_kernel_matrix_singular_values_are_sqrt_n_sigma_k():
    """The n x N matrix K(a_j, g_i)/sqrt(n) of Gaussian a, g has top singular values sqrt(N)
    sigma_k (Monte Carlo at N = n = 1500)."""
    rng = np.random.default_rng(1)
    N = 1500
    c, s = 0.5, 0.4
    a, g = rng.standard_normal(N), rng.standard_normal(N)
    A, G = a[None, :], g[:, None]
    K = np.exp(-(1 + s**2 * A**2) / 2) * (np.sin(c * A * G) + np.cos(c * A * G)
                                          - np.exp(-(c * A) ** 2 / 2))
    top = np.linalg.svd(K / math.sqrt(N), compute_uv=False)[:2]
    np.testing.assert_allclose(top, math.sqrt(N) * TST.kernel_singular_values(c, s, 2), rtol=0.06)


def test_square_bbp_against_simulation():
    rng = np.random.default_rng(2)
    N = 800
    u, v = rng.standard_normal((2, N))
    u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
    noise = 0.9 * rng.standard_normal((N, N)) / math.sqrt(N)          # edge 1.8
    top = np.linalg.svd(noise + 2.0 * np.outer(u, v), compute_uv=False)[0]
    assert top == pytest.approx(TST.square_bbp(2.0, 1.8), rel=0.02)
    assert TST.square_bbp(2.0, 1.8) == pytest.approx(2.0 + 0.81 / 2.0)
    assert np.isnan(TST.square_bbp(0.8, 1.8))
    with pytest.raises(ValueError):
        TST.square_bbp(-1.0, 1.8)
    with pytest.raises(ValueError):
        TST.square_bbp(1.0, 0.0)


def test_finite_n_counts_tend_to_the_theorem():
    """Finite-N counts never exceed the theorem's and reach it at astronomically large N."""
    for al in (0.1, 0.2, 0.3, 0.36):
        th = TST.one_step_spike_count(al)
        for N in (10**3, 10**6):
            assert TST.finite_n_spikes(N, al, 1.8)[0] <= th
        assert TST.finite_n_spikes(10**16, al, 1.8)[0] == th  # below the SVD floor
    count, pos = TST.finite_n_spikes(1000, 0.35, 1.8, threshold=1.85)
    assert count == pos.size == 2 and np.all(np.diff(pos) < 0)
    # the Taylor-term sizes are the first-order limit of the kernel's singular values
    N, al = 10**14, 0.3
    ratio = TST.finite_n_spike_strengths(N, al, kmax=1) / TST.taylor_spike_strengths(N, al, kmax=1)
    assert ratio[0] == pytest.approx(1.0, rel=1e-3)
    with pytest.raises(ValueError):
        TST.finite_n_spike_strengths(100, 0.5)
    with pytest.raises(ValueError):
        TST.kernel_singular_values(-1.0, 0.0, 2)


def test_compare_one_step_counts_shapes():
    alphas = np.array([0.2, 0.4])
    sims = {n: SP.simulate_one_step_spikes(n, alphas, 2, kmax=2, rng=n) for n in (80, 120)}
    margin = rmt.null_margin([s for r in sims.values() for s in r.null])
    counts = {n: rmt.outlier_counts(r.s, r.edge, r.scale, margin) for n, r in sims.items()}
    cmp = TST.compare_one_step_counts(sims, counts, alphas, margin)
    assert cmp.predicted.shape == cmp.agree.shape == (2, 2)
    assert np.all(cmp.low <= cmp.high)
    assert np.all(cmp.threshold > cmp.edge) and np.all(cmp.band > 0)


def test_run_kernel_strengths_tracks_the_run():
    """A run's own kernel places its top outlier near the simulated one (N = 300)."""
    N, al = 300, 0.35
    sim = SP.simulate_one_step_spikes(N, [al], 2, kmax=2, rng=7)
    edge = np.mean([rmt.fit_bulk_edge(s).edge for s in sim.null])
    pop = TST.finite_n_spike_strengths(N, al, kmax=2)
    for r in range(2):
        own = TST.square_bbp(sim.kernel[r, 0, :1], edge)[0]
        assert own == pytest.approx(sim.s[r, 0, 0], rel=0.1)
        assert sim.kernel[r, 0, 0] == pytest.approx(pop[0], rel=0.2)
    with pytest.raises(ValueError):
        TST.run_kernel_strengths(np.zeros((3, 4)), np.zeros((3, 5)), np.zeros((2, 4)), 0.2)


def test_power_basis_and_spike_free_nulls():
    """The null removes exactly the components of both updates along a, ..., a^K."""
    from lecnotes.core import targets
    from lecnotes.core import validate as V
    from lecnotes.core.activations import SINCOS
    from lecnotes.models import layerwise as LW
    from lecnotes.models import networks as NW
    from lecnotes.two_steps.phase import power_basis

    a = np.random.default_rng(0).standard_normal(50)
    Q = power_basis(a, 4)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-10)
    assert abs(Q[:, 0] @ a) == pytest.approx(np.linalg.norm(a))
    assert abs(Q[:, 1:].T @ a).max() < 1e-10             # column k is new in a^(k+1)
    N, a1, a2 = 60, 0.3, 0.2
    for layer in ("gaussian", "uniform"):
        two = SP.simulate_two_step_counts(N, [a1], [a2], 1, null_powers=4,
                                          second_layer=layer, vectors=True, rng=2)
        rng = V.stream(2, 0)
        X, y, _ = targets.single_index(N, N, "linear", rng=rng)
        W0, a = NW.init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
        if layer == "uniform":
            a = np.sqrt(3.0) * (2.0 * rng.random(N) - 1.0)
            assert np.all(np.abs(a) <= np.sqrt(3.0))
        W1, W2 = LW.multi_step(W0, a, [(X, y), (X, y)], [N**a1, N**a2], SINCOS, "correlation",
                               scaling=N**-0.5)
        P = np.eye(N) - power_basis(a, 4) @ power_basis(a, 4).T
        null2 = W0 + P @ (W2 - W0)
        assert two.null2_top[0, 0, 0] == pytest.approx(np.linalg.svd(null2)[1][0], rel=1e-9)
        assert two.null1_top[0, 0] == pytest.approx(np.linalg.svd(W0 + P @ (W1 - W0))[1][0],
                                                    rel=1e-9)
        assert np.all((two.power_overlap >= 0) & (two.power_overlap <= 1 + 1e-12))
    with pytest.raises(ValueError):
        SP.simulate_two_step_counts(N, [0.1], [0.1], 1, second_layer="cauchy")


def test_stein_coefficient_fixed_rule_matches_adaptive():
    from lecnotes.core import targets
    for act in ("tanh", "relu"):
        fixed = TST.reuse_stein_coefficient(targets.HE3, act, 1.0, 2.0)
        adaptive = TST.reuse_stein_coefficient(targets.HE3, act, 1.0, 2.0, nodes=None)
        assert fixed == pytest.approx(adaptive, abs=1e-7)


def test_outlier_alignment_shapes_and_reuse_arm():
    """Arm 0 reuses the batch: its W_2 is the two-step matrix on the same batch."""
    from lecnotes.core import linalg, targets
    from lecnotes.core import validate as V
    from lecnotes.core.activations import SINCOS
    from lecnotes.models import layerwise as LW
    from lecnotes.models import networks as NW

    N = 60
    ov = SP.outlier_alignment(N, 0.3, 0.4, 2, k=3, rng=5)
    assert ov.shape == (2, 2, 3) and np.all((ov >= 0) & (ov <= 1))
    rng = V.stream(5, 0)
    X, y, w = targets.single_index(N, N, "he3", rng=rng)
    targets.single_index(N, N, "he3", rng=rng, w_star=w)
    W0, a = NW.init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    W2 = LW.multi_step(W0, a, [(X, y), (X, y)], [N**0.3, N**0.4], SINCOS, "correlation",
                       scaling=N**-0.5)[-1]
    np.testing.assert_allclose(ov[0, 0], np.abs(linalg.top_singular_vectors(W2, 3)[1] @ w),
                               atol=1e-8)
