"""Tests of lecnotes.mixtures.sparse (chapter 11): diagonal thresholding, PCA, batched AMP."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.mixtures import amp as A  # noqa: E402
from lecnotes.mixtures import explorer as XP  # noqa: E402
from lecnotes.mixtures import sparse as SP  # noqa: E402
from lecnotes.mixtures import thresholds as TH  # noqa: E402

CHAPTERS = (11,)


def planted(n, d, k, rho, lam, seed):
    X0, U, Vm = A.sample_sparse_gmm(n, d, k, rho, 0.0, rng=seed)
    return X0 + math.sqrt(lam / d) * U @ Vm.T, X0, U, Vm


def test_oracle_support_is_the_expected_support_size():
    assert SP.oracle_support(2000, 3, 0.01) == round(2000 * (1 - 0.99**3))
    assert SP.oracle_support(10, 3, 1e-6) == 2  # at least k - 1


def test_dt_recovers_the_support_at_a_huge_signal():
    X, _, _, Vm = planted(400, 300, 3, 0.03, 400.0, 1)
    P = np.eye(3) - 1 / 3
    true = np.nonzero(np.linalg.norm(Vm @ P, axis=1) > 0)[0]
    res = SP.diagonal_thresholding(X, 3, true.size)
    assert set(res.support) == set(true)
    assert TH.subspace_cosine(res.E, Vm) > 0.97
    assert np.allclose(res.E.T @ res.E, np.eye(2), atol=1e-10)


def test_overlaps_at_zero_signal_are_at_the_random_level():
    d, k = 300, 3
    dt, pc = [], []
    for s in range(6):
        X, _, _, Vm = planted(600, d, k, 0.05, 0.0, 10 + s)
        dt.append(TH.subspace_cosine(SP.diagonal_thresholding(X, k, 40).E, Vm))
        pc.append(TH.subspace_cosine(SP.pca(X, k), Vm))
    # random level (k - 1) / d = 0.0067; signal-level overlaps are O(1)
    assert np.mean(dt) < 5 * (k - 1) / d and np.mean(pc) < 5 * (k - 1) / d


def test_pca_matches_a_dense_eigendecomposition():
    X, _, _, Vm = planted(500, 150, 3, 0.2, 4.0, 2)
    E = SP.pca(X, 3)
    F = np.linalg.eigh(X.T @ X / 500)[1][:, -2:]
    assert np.linalg.norm(E @ E.T - F @ F.T) < 1e-6


def test_amp_lams_is_amp_for_every_lambda():
    _, X0, U, Vm = planted(300, 150, 3, 0.1, 0.0, 3)
    lams = [1.5, 2.5]
    Vh = SP.amp_lams(X0, U, Vm, lams, 0.1, 10, 1e-3, [5, 6])
    for i, lam in enumerate(lams):
        r = A.amp(X0 + math.sqrt(lam / 150) * U @ Vm.T, 3, 0.1, lam, 10, 1e-3, Vm=Vm, rng=5 + i)
        assert np.allclose(r.V, Vh[i], atol=1e-4)  # amp_lams: single-precision products


def test_sweep_uses_the_same_data_and_methods_as_the_direct_calls():
    sw = SP.sparse_sweep([120], [1.0, 6.0], 2, 3, 0.1, 2.0, 5, rng=4)
    from lecnotes.core import validate as V

    X0, U, Vm = A.sample_sparse_gmm(240, 120, 3, 0.1, 0.0, rng=V.stream(4, 120, 1))
    X = X0 + math.sqrt(6.0 / 120) * U @ Vm.T
    dt = SP.diagonal_thresholding(X, 3, int(sw.m[0]))
    assert math.isclose(TH.subspace_cosine(dt.E, Vm), sw.dt[1, 0, 1], rel_tol=1e-6)
    assert math.isclose(TH.subspace_cosine(SP.pca(X, 3), Vm), sw.pca[1, 0, 1], rel_tol=1e-6)
    assert sw.amp.shape == (2, 1, 2) and np.all(sw.dt[:, 0, 1] > sw.dt[:, 0, 0])


def test_sparse_bad_input():
    X, X0, U, Vm = planted(50, 20, 3, 0.2, 1.0, 5)
    with pytest.raises(ValueError):
        SP.diagonal_thresholding(X, 3, 21)
    with pytest.raises(ValueError):
        SP.diagonal_thresholding(X, 3, 1)
    with pytest.raises(ValueError):
        SP.pca(X[:, :2], 3)
    with pytest.raises(ValueError):
        SP.oracle_support(20, 3, 1.5)
    with pytest.raises(ValueError):
        SP.amp_lams(X0, U[:10], Vm, [1.0], 0.2)
    with pytest.raises(ValueError):
        SP.amp_lams(X0, U, Vm, [1.0, 2.0], 0.2, rngs=[1])
    with pytest.raises(ValueError):
        SP.sparse_sweep([20], [0.0], 2, 3, 0.2, 2.0)


def test_sparse_figure_draws():
    sw = SP.sparse_sweep([40, 60], [1.5, 3.0], 2, 3, 0.2, 2.0, 3, rng=0)
    fig = XP.sparse_figure(sw, 3, 2.0, amp_limit=([2.2, 3.0], [0.5, 0.8]), lam_it=1.0)
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) >= 3
    with pytest.raises(ValueError):
        XP.sparse_figure("not a sweep", 3, 2.0)


def test_sweep_takes_one_density_per_size():
    both = SP.sparse_sweep([40, 60], [2.0], 2, 3, [0.2, 0.1], 2.0, 3, rng=2)
    assert np.allclose(both.rhos, [0.2, 0.1])
    for j, (d, rho) in enumerate(((40, 0.2), (60, 0.1))):
        one = SP.sparse_sweep([d], [2.0], 2, 3, rho, 2.0, 3, rng=2)
        assert one.m[0] == both.m[j] == SP.oracle_support(d, 3, rho)
        for key in ("dt", "pca", "amp"):
            assert np.allclose(getattr(one, key)[:, 0], getattr(both, key)[:, j], atol=1e-12)
    fig = XP.sparse_figure(both, 3, 2.0, amp_limit=[([2.2, 3.0], [0.5, 0.8])] * 2,
                           lam_it=[1.0, 0.9])
    assert len(fig.axes[0].lines) >= 6  # two limits, two lambda_it, lambda_alg, PCA
    with pytest.raises(ValueError):
        SP.sparse_sweep([40, 60], [2.0], 2, 3, [0.2, 0.1, 0.05], 2.0)
    with pytest.raises(ValueError):
        SP.sparse_sweep([40], [2.0], 2, 3, [1.5], 2.0)


def test_amp_lams_takes_one_eps_per_run_and_returns_the_starts():
    _, X0, U, Vm = planted(200, 100, 3, 0.2, 0.0, 4)
    both, starts = SP.amp_lams(X0, U, Vm, [2.5, 2.5], 0.2, 5, [1e-3, 1.0], [7, 8], starts=True)
    one = SP.amp_lams(X0, U, Vm, [2.5], 0.2, 5, 1.0, [8])
    assert np.allclose(both[1], one[0], atol=1e-4)
    assert starts.shape == (2, 100, 3)
    # the start's overlap grows with the side channel's precision
    assert A.subspace_overlap(starts[1], Vm) > 10 * A.subspace_overlap(starts[0], Vm)
    with pytest.raises(ValueError):
        SP.amp_lams(X0, U, Vm, [1.0, 2.0], 0.2, eps=[1e-3, 1e-3, 1.0])


def test_realised_pca_overlap_is_the_limit_at_exact_spikes():
    d, k = 300, 3
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((d, k)))[0] * math.sqrt(d)
    assert TH.realised_pca_overlap(Q, 4.0, 2.0) == pytest.approx(TH.pca_overlap(4.0, 3, 2.0))
    # spikes lambda/(k-1) are larger, so is the overlap
    assert TH.realised_pca_overlap(Q, 4.0, 2.0, divisor=2) == pytest.approx(
        TH.pca_overlap(4.0 * 3 / 2, 3, 2.0))
    assert TH.realised_pca_overlap(Q, 1.0, 2.0) == 0.0  # below the transition


def test_amp_lams_records_the_same_runs_at_earlier_iterations():
    _, X0, U, Vm = planted(200, 100, 3, 0.2, 0.0, 6)
    final, seen = SP.amp_lams(X0, U, Vm, [2.5, 3.0], 0.2, 8, 1e-3, [1, 2], record=[3, 8])
    short = SP.amp_lams(X0, U, Vm, [2.5, 3.0], 0.2, 3, 1e-3, [1, 2])
    assert seen.shape == (2, 2, 100, 3)
    assert np.allclose(seen[0], short, atol=1e-10) and np.allclose(seen[1], final, atol=1e-12)
    with pytest.raises(ValueError):
        SP.amp_lams(X0, U, Vm, [2.5], 0.2, 5, record=[6])
