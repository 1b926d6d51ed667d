r"""Chapter 7, the two-step phase diagram: spectra of :math:`W_1`, :math:`W_2` and their nulls.

The simulation of {prf:ref}`thm-ch7-two-step-outliers` on a grid of step-size exponents, with
a Gaussian second layer (what the theorem assumes) or a bounded one of the same variance, and
the **spike-free nulls** against which outliers are counted: the same matrices with the
components along :math:`\mathrm{span}\{a, a^{\circ2},\dots,a^{\circ K}\}` removed from both
updates, :math:`W_0+\eta_1(I-P)D_1+\eta_2(I-P)U_2` ({eq}`eq-ch7-null`). Re-exported by
:mod:`lecnotes.two_steps.experiments`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import svds

from lecnotes.core import validate as V
from lecnotes.core.activations import SINCOS, get_activation
from lecnotes.core.linalg import top_singular_vectors
from lecnotes.core.rmt import localisation
from lecnotes.core.targets import single_index
from lecnotes.models.layerwise import giant_step, multi_step
from lecnotes.models.networks import first_layer_gradient, init_params
from lecnotes.two_steps.theory import check_alpha

__all__ = ["power_basis", "TwoStepSpectra", "simulate_two_step_counts", "outlier_alignment",
           "OutlierLocalisation", "outlier_localisation"]


def power_basis(a, kmax: int) -> np.ndarray:
    r"""Orthonormal basis of :math:`\mathrm{span}\{a, a^{\circ2},\dots,a^{\circ k_{\max}}\}`.

    Gram-Schmidt in the order of the powers (QR of the normalised powers), so that column
    :math:`k` is the part of :math:`a^{\circ(k+1)}` new with respect to the lower powers: the
    left vector of the :math:`k`-th term of {eq}`eq-ch7-second-taylor`.

    Parameters
    ----------
    a : array_like (N,)
    kmax : int

    Returns
    -------
    ndarray (N, kmax)
    """
    a = V.finite_array(a, "a", ndim=1)
    kmax = V.positive_int(kmax, "kmax")
    if kmax >= a.size:
        raise ValueError(f"kmax must be below the width {a.size}")
    P = np.stack([a**k for k in range(1, kmax + 1)], axis=1)
    Q, R = np.linalg.qr(P / np.linalg.norm(P, axis=0))
    return Q * np.sign(np.diag(R))


class TwoStepSpectra(NamedTuple):
    """Outcome of :func:`simulate_two_step_counts` (seeds on axis 0).

    ``s2`` (seeds, A1, A2, 8) the largest singular values of :math:`W_2`, ``s1`` (seeds, A1, 8)
    those of :math:`W_1`; ``null1_top`` (seeds, A1) and ``null2_top`` (seeds, A1, A2) the
    largest singular values of their spike-free nulls; ``power_overlap``
    (seeds, A1, A2, 6, 4) the overlaps of the six top left singular vectors of :math:`W_2`
    with the first four columns of :func:`power_basis` (zeros unless requested).
    """

    s2: np.ndarray
    s1: np.ndarray
    null1_top: np.ndarray
    null2_top: np.ndarray
    power_overlap: np.ndarray


def _top(M, k):
    """The k largest singular values of M, decreasing (Lanczos, deterministic start)."""
    s = svds(M, k=k, v0=np.ones(min(M.shape)), tol=1e-10, return_singular_vectors=False)
    return np.sort(s)[::-1]


def _second_layer(N, rng, kind):
    W0, a = init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    if kind == "uniform":  # bounded, variance one
        a = np.sqrt(3.0) * (2.0 * rng.random(N) - 1.0)
    elif kind != "gaussian":
        raise ValueError(f"second_layer must be 'gaussian' or 'uniform', got {kind!r}")
    return W0, a


def simulate_two_step_counts(N: int, alphas1, alphas2, seeds: int, *, reuse: bool = True,
                             link="linear", activation=None,
                             second_layer: str = "gaussian", null_powers: int = 8,
                             vectors: bool = False, rng=None) -> TwoStepSpectra:
    r"""Spectra of :math:`W_1`, :math:`W_2` and of their nulls over a grid of exponents.

    :math:`n = d = N`, :math:`\eta_i = N^{\alpha_i}`, correlation loss, second layer fixed,
    ``scaling = N**-0.5``. For each seed and :math:`\alpha_1`, one call of
    :func:`lecnotes.models.layerwise.multi_step` with steps :math:`(N^{\alpha_1}, 1)` returns
    :math:`W_1` and :math:`W_1+U_2`; the second update is linear in :math:`\eta_2`, so
    :math:`W_2 = W_1+N^{\alpha_2}U_2` for every :math:`\alpha_2`. The nulls remove from
    :math:`D_1` and :math:`U_2` their components along the first ``null_powers`` powers of
    :math:`a` ({eq}`eq-ch7-null`), where every spike of the theorem lives.

    Parameters
    ----------
    N : int
    alphas1, alphas2 : array_like
        Exponents of the two steps, in :math:`[0, 1/2)`.
    seeds : int
    reuse : bool
        Same batch twice, or a fresh second batch.
    link, activation
        As in :func:`lecnotes.two_steps.experiments.simulate_one_step_spikes`.
    second_layer : {"gaussian", "uniform"}
        :math:`a_j\sim N(0,1)` or :math:`U[-\sqrt3,\sqrt3]`.
    null_powers : int
    vectors : bool
        Compute ``power_overlap``.
    rng : Generator, int or None
        Seed ``r`` uses the stream ``V.stream(rng, r)``.

    Returns
    -------
    TwoStepSpectra
    """
    N = V.positive_int(N, "N", minimum=10)
    seeds = V.positive_int(seeds, "seeds")
    al1 = check_alpha(np.atleast_1d(alphas1), "alphas1")
    al2 = check_alpha(np.atleast_1d(alphas2), "alphas2")
    act = SINCOS if activation is None else get_activation(activation)
    null_powers = V.positive_int(null_powers, "null_powers")
    root = V.generator(rng)  # the root of the streams V.stream(root, ...)
    A1, A2 = len(al1), len(al2)
    out = TwoStepSpectra(np.empty((seeds, A1, A2, 8)), np.empty((seeds, A1, 8)),
                         np.empty((seeds, A1)), np.empty((seeds, A1, A2)),
                         np.zeros((seeds, A1, A2, 6, 4)))
    for r in range(seeds):
        rng = V.stream(root, r)
        X, y, w = single_index(N, N, link, rng=rng)
        second = (X, y) if reuse else single_index(N, N, link, rng=rng, w_star=w)[:2]
        W0, a = _second_layer(N, rng, second_layer)
        Q = power_basis(a, null_powers)
        G0 = first_layer_gradient(W0, a, X, y, act, N**-0.5, "correlation")  # every alpha_1
        for i, a1 in enumerate(al1):
            W1 = W0 - N**a1 * G0  # = multi_step's first step, its gradient computed once
            W2u = giant_step(W1, a, *second, 1.0, act, scaling=N**-0.5, loss="correlation")
            U2 = W2u - W1
            null1 = W1 - Q @ (Q.T @ (W1 - W0))
            U2n = U2 - Q @ (Q.T @ U2)
            out.s1[r, i], out.null1_top[r, i] = _top(W1, 8), _top(null1, 1)[0]
            for j, a2 in enumerate(al2):
                W2 = W1 + N**a2 * U2
                out.s2[r, i, j] = _top(W2, 8)
                out.null2_top[r, i, j] = _top(null1 + N**a2 * U2n, 1)[0]
                if vectors:
                    U = top_singular_vectors(W2, 6)[0]
                    out.power_overlap[r, i, j] = np.abs(U.T @ Q[:, :4])
    return out


def outlier_alignment(N: int, alpha1: float, alpha2: float, seeds: int, *, k: int = 3,
                      link="he3", second_layer: str = "gaussian", rng=None) -> np.ndarray:
    r"""Overlaps of :math:`w_\star` with the top right singular vectors of :math:`W_2`.

    The alignment part of {prf:ref}`thm-ch7-two-step-outliers`: :math:`n = d = N`, steps
    :math:`N^{\alpha_1}, N^{\alpha_2}`, the second on the same batch (reused) or on a fresh
    one, from the same :math:`W_0, a` and first batch. Returns the norm of the projection of
    :math:`w_\star` on the span of the ``k`` top right singular vectors of :math:`W_2`
    (:math:`\sqrt{k/N}` for random directions).

    Parameters
    ----------
    N : int
    alpha1, alpha2 : float
    seeds : int
    k : int
        Number of singular vectors (the spike of the first step and :math:`\Lambda` outliers).
    link : str or callable
        Default the :math:`\mathrm{He}_3` link (information exponent 3).
    second_layer : {"gaussian", "uniform"}
    rng : Generator, int or None
        Seed ``r`` uses the stream ``V.stream(rng, r)``.

    Returns
    -------
    ndarray (seeds, 2, k)
        Index 0 of axis 1 the reused batch, 1 the fresh batch.
    """
    N = V.positive_int(N, "N")
    seeds = V.positive_int(seeds, "seeds")
    a1 = float(check_alpha(alpha1, "alpha1"))
    a2 = float(check_alpha(alpha2, "alpha2"))
    k = V.positive_int(k, "k")
    root = V.generator(rng)
    out = np.empty((seeds, 2, k))
    for r in range(seeds):
        rng = V.stream(root, r)
        X, y, w = single_index(N, N, link, rng=rng)
        fresh = single_index(N, N, link, rng=rng, w_star=w)[:2]
        W0, a = _second_layer(N, rng, second_layer)
        (W1,) = multi_step(W0, a, [(X, y)], N**a1, SINCOS, "correlation", scaling=N**-0.5)
        for c, second in enumerate(((X, y), fresh)):  # the first step is shared by both arms
            W2 = giant_step(W1, a, *second, N**a2, SINCOS, scaling=N**-0.5, loss="correlation")
            Vt = top_singular_vectors(W2, k)[1]
            out[r, c] = np.abs(Vt @ w)
    return out


class OutlierLocalisation(NamedTuple):
    r"""Outcome of :func:`outlier_localisation` (seeds on axis 0).

    ``powers`` (seeds, kmax) the participation ratio of :math:`a^{\circ(k+1)}`,
    :math:`k = 1..k_{\max}`, of each seed's second layer; ``vectors`` (seeds, A2, 6) that of the
    six top left singular vectors of :math:`W_2` at each :math:`\alpha_2`.
    """

    powers: np.ndarray
    vectors: np.ndarray


def outlier_localisation(N: int, alpha1: float, alphas2, seeds: int, *, kmax: int = 3,
                         link="linear", second_layer: str = "gaussian",
                         rng=None) -> OutlierLocalisation:
    r"""On how many neurons the second layer's powers and the outliers of :math:`W_2` live.

    The participation ratio :math:`(\sum_jv_j^2)^2/\sum_jv_j^4`
    (:func:`lecnotes.core.rmt.localisation`; :math:`N/3` for a Gaussian vector, 1 for one
    neuron) of the realised :math:`a^{\circ(k+1)}`, the left vector of the :math:`k`-th term of
    {eq}`eq-ch7-second-taylor`, and of the top left singular vectors of :math:`W_2`
    ({prf:ref}`thm-ch7-two-step-outliers`). Seed ``r`` draws exactly what seed ``r`` of
    :func:`simulate_two_step_counts` with the same ``rng`` draws (reused batch), so these are
    the second layers and matrices of that simulation.

    Parameters
    ----------
    N : int
    alpha1 : float
    alphas2 : array_like
        Exponents in :math:`[0, 1/2)`.
    seeds, kmax : int
    link : str or callable
    second_layer : {"gaussian", "uniform"}
    rng : Generator, int or None
        Seed ``r`` uses the stream ``V.stream(rng, r)``.

    Returns
    -------
    OutlierLocalisation
    """
    N = V.positive_int(N, "N", minimum=10)
    seeds = V.positive_int(seeds, "seeds")
    kmax = V.positive_int(kmax, "kmax")
    a1 = float(check_alpha(alpha1, "alpha1"))
    al2 = check_alpha(np.atleast_1d(alphas2), "alphas2")
    root = V.generator(rng)
    powers, vectors = np.empty((seeds, kmax)), np.empty((seeds, al2.size, 6))
    for r in range(seeds):
        rng = V.stream(root, r)
        X, y, _ = single_index(N, N, link, rng=rng)
        W0, a = _second_layer(N, rng, second_layer)
        powers[r] = [localisation(a ** (k + 1)) for k in range(1, kmax + 1)]
        W1, W2u = multi_step(W0, a, [(X, y), (X, y)], [N**a1, 1.0], SINCOS, "correlation",
                             scaling=N**-0.5)
        for j, a2 in enumerate(al2):
            U = top_singular_vectors(W1 + N**a2 * (W2u - W1), 6)[0]
            vectors[r, j] = [localisation(U[:, i]) for i in range(6)]
    return OutlierLocalisation(powers, vectors)
