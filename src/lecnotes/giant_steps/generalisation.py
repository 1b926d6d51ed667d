r"""Chapter 6, giant steps: the second layer after the step, and the paper's reference setting.

Phase 2 of {prf:ref}`def-ch6-two-phase`: :func:`generalisation_sweep` fits ridge on the
features of :math:`W_0`, of :math:`W_1` and of :math:`W_1` after a leap-2 step, beside the
deterministic equivalent of {prf:ref}`thm-ch6-ridge-equivalent`
(:mod:`lecnotes.giant_steps.ridge_theory`); :func:`reference_sweep` runs
:func:`lecnotes.giant_steps.procedure.two_phase` in the setting of the paper's reference code.
Seeds on axis 0, one stream per seed (and batch size).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.targets import random_orthonormal
from lecnotes.giant_steps.procedure import init_network, two_phase
from lecnotes.giant_steps.ridge_theory import (
    equivalent_learning_curve,
    feature_label_moments,
    ridge_test_error,
)
from lecnotes.giant_steps.theory import (
    draw_two_direction,
    giant_step_size,
    remove_linear_part,
    two_direction_target,
)
from lecnotes.models.layerwise import giant_step
from lecnotes.models.networks import forward

__all__ = ["GeneralisationRuns", "generalisation_sweep", "ReferenceRuns", "reference_sweep"]


class GeneralisationRuns(NamedTuple):
    r"""Outcome of :func:`generalisation_sweep`, seeds on axis 0.

    ``simulated`` (seeds, n, 3): test errors of ridge on the features of :math:`W_0`,
    :math:`W_1`, and :math:`W_1` after a step on the labels without their linear part;
    ``predicted`` (seeds, n, 2): the deterministic equivalent of the first two
    ({prf:ref}`thm-ch6-ridge-equivalent`), conditional on the same :math:`W_0`, :math:`W_1`;
    ``population`` (seeds, n, 2): the exact population error of the same two fitted ridges
    (no test-set noise).
    """

    simulated: np.ndarray
    predicted: np.ndarray
    population: np.ndarray


def generalisation_sweep(d: int, p: int, n_list, seeds: int, rng=None,
                         n_test: int = 10_000) -> GeneralisationRuns:
    r"""Test errors of random features, one step, and one step on the leap-2 labels.

    For :func:`two_direction_target` in dimension ``d``, width ``p``: per seed (stream
    ``V.stream(rng, s)``) the directions, a test set and the network; then for each
    :math:`n` three fresh batches (step, ridge, validation), one step with the learning rate
    of the reference code, and :func:`ridge_test_error` on the features of :math:`W_0`,
    :math:`W_1`, and :math:`W_1` after a step on the labels without their linear part (added
    back as an offset). Phase 2 of {prf:ref}`def-ch6-two-phase`. Beside each of the first two,
    the deterministic equivalent of the same ridge on the same features
    (:func:`lecnotes.giant_steps.ridge_theory.equivalent_learning_curve`), which draws no
    random numbers.

    Parameters
    ----------
    d, p, seeds, n_test : int
    n_list : sequence of int
    rng : Generator, int or None

    Returns
    -------
    GeneralisationRuns
    """
    d, p = V.positive_int(d, "d", minimum=2), V.positive_int(p, "p")
    n_list, seeds = V.sizes(n_list, "n_list"), V.positive_int(seeds, "seeds")
    n_test = V.positive_int(n_test, "n_test", minimum=2)
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    gen_err = np.zeros((seeds, len(n_list), 3))
    pred, pop = np.zeros((seeds, len(n_list), 2)), np.zeros((seeds, len(n_list), 2))
    for seed in range(seeds):
        gen = V.stream(rng, seed)
        W_star = random_orthonormal(2, d, gen)
        test = draw_two_direction(n_test, W_star, gen)
        W0, a0 = init_network(p, d, gen)
        M0 = feature_label_moments(W0, W_star, two_direction_target, p**-0.5)
        pred[seed, :, 0] = equivalent_learning_curve(M0, n_list)
        for j, n_j in enumerate(n_list):
            step, batch, val = (draw_two_direction(n_j, W_star, gen) for _ in range(3))
            eta = giant_step_size(p, n_j, d, 10 * np.sqrt(d / p))
            W1 = giant_step(W0, a0, *step, eta, scaling=p**-0.5)
            W1_l2 = giant_step(W0, a0, step[0], remove_linear_part(*step)[0], eta,
                               scaling=p**-0.5)
            _, A, B = remove_linear_part(*batch)
            M1 = feature_label_moments(W1, W_star, two_direction_target, p**-0.5)
            (e0, pop[seed, j, 0]), (e1, pop[seed, j, 1]) = (ridge_test_error(
                W, batch, val, test, p, moments=M) for W, M in ((W0, M0), (W1, M1)))
            gen_err[seed, j] = [e0, e1, ridge_test_error(W1_l2, batch, val, test, p,
                                                         lambda Z, A=A, B=B: A + Z @ B)]
            pred[seed, j, 1] = equivalent_learning_curve(M1, [n_j])[0]
    return GeneralisationRuns(gen_err, pred, pop)


class ReferenceRuns(NamedTuple):
    """Outcome of :func:`reference_sweep`: test errors, one per seed.

    ``exact_linear``: with the exact linear part of the target added back (what the
    reference code's test-set estimate tends to); ``leak_free``: with the linear part
    estimated on the training batch (:meth:`TwoPhaseResult.predict`).
    """

    exact_linear: np.ndarray
    leak_free: np.ndarray


def reference_sweep(n: int, seeds: int, rng=None, d: int = 512, p: int = 1024,
                    n_test: int = 20_000) -> ReferenceRuns:
    r"""The reference setting of Dandi et al.: :func:`two_phase` with the linear part removed.

    :func:`two_direction_target`, Gaussian second layer, one step with
    :math:`\eta = 10\sqrt{np}`, ridge :math:`1/n` on the same batch
    ({prf:ref}`def-ch6-two-phase`). Seed ``s`` uses the stream ``V.stream(rng, n, s)``.

    Parameters
    ----------
    n, seeds, d, p, n_test : int
    rng : Generator, int or None

    Returns
    -------
    ReferenceRuns
    """
    n, seeds = V.positive_int(n, "n"), V.positive_int(seeds, "seeds")
    d, p = V.positive_int(d, "d", minimum=2), V.positive_int(p, "p")
    n_test = V.positive_int(n_test, "n_test")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    out = np.zeros((seeds, 2))
    for s in range(seeds):
        gen = V.stream(rng, n, s)
        W_star = random_orthonormal(2, d, gen)
        X = gen.standard_normal((n, d))
        y = two_direction_target(X @ W_star.T)
        W0, a0 = init_network(p, d, gen, second_layer="gaussian")
        res = two_phase(W0, a0, [(X, y)], (X, y), 10 * np.sqrt(n * p), 1.0 / n,
                        scaling=p**-0.5, remove_linear=True, chunk=8192)
        Xt = gen.standard_normal((n_test, d))
        yt = two_direction_target(Xt @ W_star.T)
        exact_linear = Xt @ (W_star[0] + W_star[1]) / 2
        net = forward(res.W, res.a, Xt, "relu", p**-0.5)
        leak_free = res.offset + Xt @ res.linear + net     # res.predict(Xt), one forward pass
        out[s] = np.mean((exact_linear + net - yt) ** 2), np.mean((leak_free - yt) ** 2)
    return ReferenceRuns(out[:, 0], out[:, 1])
