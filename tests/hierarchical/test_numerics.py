"""The numerical helpers of chapter 10 against plain NumPy (review12 of chapter 10, MINOR 4)."""

import numpy as np
import pytest

from lecnotes.hierarchical import numerics as NU
from lecnotes.models.kernel_methods import kernel_ridge


def test_ridge_coefficients_against_a_direct_solve():
    """Full-rank Grams, batched, several ridges: (G + lam I)^{-1} b for each."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((3, 40, 7))
    gram = np.einsum("bni,bnj->bij", F, F) / 40
    rhs = rng.standard_normal((3, 7))
    lams = np.array([1e-4, 1e-2, 1.0])
    coef = NU.ridge_coefficients(gram, rhs, lams)
    assert coef.shape == (3, 7, 3)
    for b in range(3):
        for i, lam in enumerate(lams):
            direct = np.linalg.solve(gram[b] + lam * np.eye(7), rhs[b])
            np.testing.assert_allclose(coef[b, :, i], direct, rtol=1e-9, atol=1e-12)


def test_ridge_coefficients_of_a_rank_deficient_gram_agree_with_the_clipped_solution():
    """Fewer samples than features (float32 Gram): the ridge solution still solves the system
    up to the rounding of the Gram, for ridges far above its negative eigenvalues."""
    rng = np.random.default_rng(1)
    F = rng.standard_normal((20, 30)).astype(np.float32)
    gram = (F.T @ F / 20).astype(float)
    rhs = rng.standard_normal(30)
    lams = np.array([1e-3, 1e-1])
    coef = NU.ridge_coefficients(gram, rhs, lams)
    for i, lam in enumerate(lams):
        direct = np.linalg.solve(gram + lam * np.eye(30), rhs)
        np.testing.assert_allclose(coef[:, i], direct, rtol=1e-6, atol=1e-8)


def test_top_eigenvectors_span_the_top_eigenspace():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((12, 12))
    D = A + A.T
    V = NU.top_eigenvectors(D, 3)
    w, U = np.linalg.eigh(D)
    P, Q = V @ V.T, U[:, -3:] @ U[:, -3:].T
    np.testing.assert_allclose(P, Q, atol=1e-10)


@pytest.mark.parametrize("n", [5, 9])
def test_kernel_ridge_block_is_kernel_ridge_on_the_leading_block(n):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((9, 4))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    y = rng.standard_normal(n)
    expected = kernel_ridge(K[:n, :n].copy(), y, 0.1)
    np.testing.assert_allclose(NU.kernel_ridge_block(K.copy(), n, y, 0.1), expected,
                               rtol=1e-10, atol=1e-12)
