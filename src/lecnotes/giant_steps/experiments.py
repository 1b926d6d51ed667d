r"""Chapter 6, giant steps: the experiments of the chapter and the two-phase procedure.

The chapter's network {eq}`eq-ch6-network` is
:math:`f(x) = p^{-1/2}\sum_ia_i\sigma(\langle w_i,x\rangle)` with
:math:`w_i^0\sim N(0,I_d/d)`, :math:`a_i = b_i/\sqrt p`
(:func:`lecnotes.models.networks.init_params`
with ``symmetric=False, a_scale=p**-0.5``), trained on the first layer by giant steps
(:func:`lecnotes.models.layerwise.giant_step`, learning rate
:func:`lecnotes.giant_steps.theory.giant_step_size`), then on the second by ridge
(:func:`two_phase`, {prf:ref}`def-ch6-two-phase`). This module holds the procedure and the
sweeps over seeds and sizes of the chapter, each returning arrays with seeds on axis 0:
:func:`one_step_spectra`, :func:`one_step_sweep`, :func:`leap2_sweep`,
:func:`two_direction_sweep`, :func:`fresh_steps` / :func:`fresh_steps_sweep`,
:func:`staircase_runs`, :func:`generalisation_sweep`, :func:`reference_sweep`. The closed
forms, targets and activations of the chapter are in :mod:`lecnotes.giant_steps.theory`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation
from lecnotes.core.linalg import top_singular
from lecnotes.core.overlaps import neuron_overlaps, overlap_gram
from lecnotes.core.targets import random_orthonormal, single_index, staircase
from lecnotes.giant_steps.ridge_theory import (
    equivalent_learning_curve,
    feature_label_moments,
    ridge_test_error,
)
from lecnotes.giant_steps.theory import (
    CUBIC,
    draw_two_direction,
    giant_step_size,
    remove_linear_part,
    two_direction_target,
)
from lecnotes.models.layerwise import giant_step, multi_step, ridge_second_layer
from lecnotes.models.networks import forward, init_params

__all__ = [
    "TwoPhaseResult",
    "two_phase",
    "OneStepSpectra",
    "one_step_spectra",
    "OneStepSweep",
    "one_step_sweep",
    "leap2_sweep",
    "TwoDirectionSweep",
    "two_direction_sweep",
    "fresh_steps",
    "fresh_steps_sweep",
    "STAIRCASE_RUNS",
    "staircase_runs",
    "GeneralisationRuns",
    "generalisation_sweep",
    "ReferenceRuns",
    "reference_sweep",
]


@dataclass(frozen=True)
class TwoPhaseResult:
    """Outcome of :func:`two_phase`: first layers after each step and the ridge second layer.

    ``Ws`` the first layer after each step (``W = Ws[-1]`` predicts), ``a`` the ridge second
    layer, ``offset`` and ``linear`` the constant and linear parts added back to the output
    (zero unless the linear part of the labels was removed), ``activation`` and ``scaling`` as
    used for training.
    """

    Ws: list
    a: np.ndarray
    offset: float
    linear: np.ndarray
    activation: object = "relu"
    scaling: object = 1.0

    @property
    def W(self) -> np.ndarray:
        """The first layer after the last step, ``Ws[-1]``."""
        return self.Ws[-1]

    def predict(self, X) -> np.ndarray:
        r"""Prediction :math:`A+\langle B,x\rangle+f(x;W_T,\hat a)` on the rows of ``X``.

        Parameters
        ----------
        X : array_like (n, d)

        Returns
        -------
        ndarray (n,)
        """
        X = V.finite_array(X, "X", ndim=2)
        return self.offset + X @ self.linear + forward(self.W, self.a, X, self.activation,
                                                        self.scaling)


def two_phase(W0, a0, batches: Sequence, ridge_batch, eta, lam: float, activation="relu", *,
              scaling=1.0, loss: str = "square", remove_linear: bool = False,
              chunk: int | None = None) -> TwoPhaseResult:
    r"""The two-phase procedure of Dandi et al., {prf:ref}`def-ch6-two-phase`.

    Phase 1: one first-layer gradient step per batch in ``batches`` (fresh batches; the same
    pair twice is a reused batch), second layer fixed at ``a0``
    (:func:`lecnotes.models.layerwise.multi_step`). Phase 2: ridge regression of the labels of
    ``ridge_batch`` on the features :math:`s\,\sigma(XW_T^\top)`
    (:func:`lecnotes.models.layerwise.ridge_second_layer`; ``lam`` in its convention).

    With ``remove_linear=True`` the empirical constant and linear parts
    (:func:`remove_linear_part`) are removed from the labels of every batch before it is
    used, the ridge is fitted on the residual labels of ``ridge_batch``, and the constant and
    linear parts estimated on ``ridge_batch`` are added back to the prediction: the leap-2
    protocol of the paper's reference code, with every estimate taken from training data.

    Parameters
    ----------
    W0, a0 : array_like
        Initial first layer (p, d) and second layer (p,).
    batches : sequence of (X, y) pairs
        One batch per first-layer step; ``ridge_batch`` the batch of the ridge.
    ridge_batch : (X, y) pair
    eta : float or sequence of float
        Learning rate(s) of the steps; ``lam`` the ridge.
    lam : float
    activation, scaling, loss, chunk
        As in :func:`lecnotes.models.layerwise.giant_step`.
    remove_linear : bool

    Returns
    -------
    TwoPhaseResult
    """
    if not isinstance(batches, Sequence) or len(batches) < 1:
        raise ValueError("batches must be a non-empty sequence of (X, y) pairs")
    if remove_linear:
        batches = [(Xb, remove_linear_part(Xb, yb)[0]) for Xb, yb in batches]
    Ws = multi_step(W0, a0, batches, eta, activation, loss, scaling=scaling, chunk=chunk)
    Xr, yr = V.data_pair(*ridge_batch)
    if remove_linear:
        yr, offset, linear = remove_linear_part(Xr, yr)
    else:
        offset, linear = 0.0, np.zeros(Xr.shape[1])
    a = ridge_second_layer(Ws[-1], Xr, yr, lam, activation, scaling=scaling, chunk=chunk)
    return TwoPhaseResult(Ws, a, offset, linear, activation, scaling)


# --- one step: spectra and overlaps -----------------------------------------------------------
def _init(p, d, rng, second_layer="sign"):
    return init_params(p, d, rng=rng, symmetric=False, second_layer=second_layer,
                       a_scale=p**-0.5)


class OneStepSpectra(NamedTuple):
    """Outcome of :func:`one_step_spectra`: weights and singular values (decreasing)."""

    W0: np.ndarray
    W1: np.ndarray
    s_W0: np.ndarray
    s_W1: np.ndarray
    s_update: np.ndarray
    s_reference: np.ndarray | None
    eta_bar: float


def one_step_spectra(link, d: int, p: int, delta: int, eta0: float, rng=None,
                     reference_variance: float | None = None) -> OneStepSpectra:
    r"""One giant step at :math:`n = \delta d`: spectra of :math:`W_0`, :math:`W_1` and the update.

    The spike plus bulk of {eq}`eq-ch6-spike-bulk`: from one stream, a batch
    (:func:`lecnotes.core.targets.single_index`), the network (signs :math:`b_i = \pm1`), one step
    (:func:`lecnotes.models.layerwise.giant_step`, :func:`giant_step_size`). With
    ``reference_variance`` :math:`v`, a Gaussian :math:`p\times d` matrix with entries of
    variance :math:`v/d` is drawn afterwards from the same stream (the finite-size reference
    of the bulk law).

    Parameters
    ----------
    link, d, p, delta, eta0
        Link, dimension, width, :math:`n/d` and :math:`\eta_0`.
    rng : Generator, int or None
    reference_variance : float, optional

    Returns
    -------
    OneStepSpectra
    """
    rng = V.generator(rng)
    n = delta * d
    X, y, _ = single_index(n, d, link, rng=rng)
    W0, a0 = _init(p, d, rng)
    eta = giant_step_size(p, n, d, eta0)
    W1 = giant_step(W0, a0, X, y, eta, scaling=p**-0.5)
    sv = [np.linalg.svd(M, compute_uv=False) for M in (W0, W1, W1 - W0)]
    ref = None
    if reference_variance is not None:
        G = rng.standard_normal((p, d)) * np.sqrt(reference_variance / d)
        ref = np.linalg.svd(G, compute_uv=False)
    return OneStepSpectra(W0, W1, *sv, ref, eta / p)


class OneStepSweep(NamedTuple):
    """Outcome of :func:`one_step_sweep`: arrays (seeds, len(dims)).

    ``neuron_overlap`` the mean over neurons of :math:`|\\cos(w_i^1, w_\\star)|`,
    ``spike_overlap`` :math:`|\\langle v_1, w_\\star\\rangle|` (:math:`v_1` the top right singular
    vector of :math:`W_1`), ``s1`` the top singular value of :math:`W_1`, ``update_s1`` and
    ``update_s2`` the two largest singular values of :math:`W_1 - W_0`; ``f0_effect``
    :math:`\\|W_1-W_1^{(0)}\\|_F/\\|W_1^{(0)}-W_0\\|_F` and ``neuron_overlap_f0`` the neuron
    overlap of :math:`W_1^{(0)}`, the step from the same rows with :math:`f_0` set to zero
    (the symmetric initialisation of {prf:ref}`thm-ch6-staircase`: the correlation-loss step).
    """

    neuron_overlap: np.ndarray
    spike_overlap: np.ndarray
    s1: np.ndarray
    update_s1: np.ndarray
    update_s2: np.ndarray
    f0_effect: np.ndarray
    neuron_overlap_f0: np.ndarray


def one_step_sweep(link, dims, seeds: int, delta: int, eta0: float, p_over_d: int = 2,
                   rng=None) -> OneStepSweep:
    r"""One giant step at :math:`n = \delta d`, :math:`p = 2d`, over dimensions and seeds.

    Measures the overlaps of {eq}`eq-ch6-neuron-overlap` and the spike of
    {prf:ref}`prop-ch6-spike-bulk`. Seed ``s`` at dimension ``d`` uses its own stream
    ``V.stream(rng, d, s)`` (:func:`lecnotes.core.validate.stream`): adding a size or a seed
    leaves the other draws unchanged.

    Parameters
    ----------
    link, dims, seeds, delta, eta0
        Link, dimensions, number of seeds, :math:`n/d` and :math:`\eta_0`.
    p_over_d : int
    rng : Generator, int or None

    Returns
    -------
    OneStepSweep
    """
    dims = np.asarray(dims)
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    rec = np.zeros((seeds, len(dims), 7))
    for seed in range(seeds):
        for j, d_j in enumerate(dims):
            gen = V.stream(rng, d_j, seed)
            p_j, n_j = p_over_d * d_j, delta * d_j
            X, y, w_star = single_index(n_j, d_j, link, rng=gen)
            W0, a0 = _init(p_j, d_j, gen)
            eta = giant_step_size(p_j, n_j, d_j, eta0)
            W1 = giant_step(W0, a0, X, y, eta, scaling=p_j**-0.5)
            W1_f0 = giant_step(W0, a0, X, y, eta, scaling=p_j**-0.5, loss="correlation")
            s, Vt = top_singular(W1, 1)
            s_up = top_singular(W1 - W0, 2)[0]
            rec[seed, j] = [np.abs(neuron_overlaps(W1, w_star)).mean(), abs(Vt[0] @ w_star),
                            s[0], *s_up, np.linalg.norm(W1 - W1_f0) / np.linalg.norm(W1_f0 - W0),
                            np.abs(neuron_overlaps(W1_f0, w_star)).mean()]
    return OneStepSweep(*np.moveaxis(rec, -1, 0))


def leap2_sweep(link, dims, ns, seeds: int, p: int = 128, eta0: float = 1.0,
                rng=None) -> np.ndarray:
    r"""Mean squared neuron overlap after one giant step, over dimensions and seeds.

    The measurement of {eq}`eq-ch6-leap2`: batch size ``ns[j]`` at dimension ``dims[j]``,
    width ``p``, :math:`\eta` from :func:`giant_step_size`. Seed ``s`` uses the stream
    ``V.stream(rng, d, n, s)``.

    Parameters
    ----------
    link, dims, ns, seeds, p, eta0
        Link, dimensions and the batch size at each, number of seeds, width, :math:`\eta_0`.
    rng : Generator, int or None

    Returns
    -------
    ndarray (seeds, len(dims))
        :math:`\frac1p\sum_i\cos^2(w_i^1, w_\star)`.
    """
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    if len(dims) != len(ns):
        raise ValueError("dims and ns must have the same length")
    out = np.zeros((seeds, len(dims)))
    for s in range(seeds):
        for j, (d, n) in enumerate(zip(dims, ns, strict=True)):
            gen = V.stream(rng, d, n, s)
            X, y, w_star = single_index(n, d, link, rng=gen)
            W0, a0 = _init(p, d, gen)
            W1 = giant_step(W0, a0, X, y, giant_step_size(p, n, d, eta0), scaling=p**-0.5)
            out[s, j] = np.mean(neuron_overlaps(W1, w_star) ** 2)
    return out


class TwoDirectionSweep(NamedTuple):
    """Outcome of :func:`two_direction_sweep`.

    ``eigenvalues`` (seeds, len(dims), 2): of the overlap matrix :math:`Q`
    (:func:`lecnotes.core.overlaps.overlap_gram`), decreasing; ``first_seed``: for seed 0 at each
    dimension, the (p, 2) neuron overlaps with :math:`(w^\\star_1, w^\\star_2)`.
    """

    eigenvalues: np.ndarray
    first_seed: list


def two_direction_sweep(dims, ns, seeds: int, remove_linear: bool,
                        rng=None) -> TwoDirectionSweep:
    r"""One giant step on :func:`two_direction_target`, :math:`p = 2d`, over dimensions and seeds.

    Specialisation of the neurons (:math:`\eta` of the reference code,
    :math:`\eta_0 = 10\sqrt{d/p}`); with ``remove_linear`` the empirical linear part of the
    labels is removed first (leap 2, {prf:ref}`thm-ch6-leap`). Seed ``s`` uses the stream
    ``V.stream(rng, d, n, s)``.

    Parameters
    ----------
    dims, ns, seeds, remove_linear
        Dimensions, batch sizes, number of seeds; remove the linear part of the labels.
    rng : Generator, int or None

    Returns
    -------
    TwoDirectionSweep
    """
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    eig = np.zeros((seeds, len(dims), 2))
    first = []
    for s in range(seeds):
        for j, (d, n) in enumerate(zip(dims, ns, strict=True)):
            gen = V.stream(rng, d, n, s)
            W_star = random_orthonormal(2, d, gen)
            X = gen.standard_normal((n, d))
            y = two_direction_target(X @ W_star.T)
            if remove_linear:
                y = remove_linear_part(X, y)[0]
            p = 2 * d
            W0, a0 = _init(p, d, gen)
            W1 = giant_step(W0, a0, X, y, giant_step_size(p, n, d, 10 * np.sqrt(d / p)),
                            scaling=p**-0.5)
            eig[s, j] = np.linalg.eigvalsh(overlap_gram(W1, W_star))[::-1]
            if s == 0:
                first.append(neuron_overlaps(W1, W_star))
    return TwoDirectionSweep(eig, first)


# --- several fresh steps ----------------------------------------------------------------------
def fresh_steps(target: Callable, k: int, d: int, steps: int, rng=None, activation="relu",
                p: int = 128, delta: int = 8, eta_bar: float = 2.0) -> np.ndarray:
    r"""Giant steps on fresh batches of :math:`n = \delta d` samples ({prf:ref}`thm-ch6-staircase`).

    From one stream: ``k`` orthonormal directions, the network (signs), then per step a
    fresh batch of the multi-index ``target`` and a step of :math:`\eta = \bar\eta p`.

    Parameters
    ----------
    target : callable
        ``target(Z)`` of the projections ``Z`` (n, k).
    k, d, steps, p, delta : int
    rng : Generator, int or None
    activation : str, pair or Activation
    eta_bar : float

    Returns
    -------
    ndarray (steps, k + 1)
        Per step, the mean squared overlap with each direction (diagonal of
        :func:`lecnotes.core.overlaps.overlap_gram`) and :math:`\|W_t\|/\|W_0\|`; after an
        overflow the overlaps are NaN and the norm inf.
    """
    rng = V.generator(rng)
    W_star = random_orthonormal(k, d, rng)
    W, a0 = _init(p, d, rng)
    norm0, out = np.linalg.norm(W), np.full((steps, k + 1), np.nan)
    out[:, -1] = np.inf
    with np.errstate(all="ignore"):  # a diverging run must not print warnings
        for t in range(steps):
            X = rng.standard_normal((delta * d, d))
            W = giant_step(W, a0, X, target(X @ W_star.T), eta_bar * p, activation,
                           scaling=p**-0.5)
            if not np.all(np.isfinite(W)):
                break
            out[t] = [*np.diag(overlap_gram(W, W_star)), np.linalg.norm(W) / norm0]
    return out


def fresh_steps_sweep(target: Callable, k: int, dims, steps: int, seeds: int,
                      activation="relu", eta_bar: float = 2.0, rng=None, **kw) -> np.ndarray:
    r""":func:`fresh_steps` over dimensions and seeds ({prf:ref}`thm-ch6-staircase`).

    Seed ``s`` at dimension ``d`` uses the stream ``V.stream(rng, d, s)``.

    Parameters
    ----------
    target, k, steps, activation, eta_bar
        As in :func:`fresh_steps`.
    dims : sequence of int
    seeds : int
    rng : Generator, int or None
    **kw
        ``p``, ``delta`` of :func:`fresh_steps`.

    Returns
    -------
    ndarray (seeds, len(dims), steps, k + 1)
    """
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    return np.array([[fresh_steps(target, k, d, steps, V.stream(rng, d, s),
                                  activation, eta_bar=eta_bar, **kw) for d in dims]
                     for s in range(seeds)])


STAIRCASE_RUNS = (("cubic", 32), ("relu", 32), ("cubic", 8))
"""The (activation, sample ratio) of the networks of :func:`staircase_runs`."""


def staircase_runs(dims, seeds: int, steps: int = 4, rng=None, p: int = 128,
                   eta_bar: float = 2.0, runs=STAIRCASE_RUNS) -> np.ndarray:
    r"""Fresh giant steps on :math:`z_1+z_1z_2+z_1z_2z_3` with the output under control.

    The protocol of the staircase section ({prf:ref}`thm-ch6-staircase`): per step a fresh
    batch, one step of the correlation loss (:func:`lecnotes.models.layerwise.giant_step` with
    ``loss="correlation"``: :math:`w_i \leftarrow w_i+\frac{\bar\eta b_i}{n}\sum_\nu y_\nu
    \sigma'(\langle w_i,x_\nu\rangle)x_\nu`, which does not involve the output), then every
    row renormalised to the unit sphere. The networks of ``runs`` (activation ``"cubic"``
    = :data:`lecnotes.giant_steps.theory.CUBIC` or ``"relu"``, sample ratio
    :math:`\delta`) start from the same rows and see the first :math:`\delta d` samples of one
    shared batch per step. Seed ``s`` at dimension ``d`` uses the stream
    ``V.stream(rng, d, s)``: the directions, the network, then the batches. The products
    are in single precision (the overlaps are statistical quantities).

    Parameters
    ----------
    dims : sequence of int
    seeds, steps, p : int
    rng : Generator, int or None
    eta_bar : float
    runs : sequence of (str, int)

    Returns
    -------
    ndarray (seeds, len(dims), len(runs), steps, 3)
        Mean squared overlap :math:`\cos^2(w_i^t, w^\star_k)` over neurons, per step and
        direction.
    """
    seeds, steps = V.positive_int(seeds, "seeds"), V.positive_int(steps, "steps")
    rng, target = V.generator(rng), staircase(3)  # rng: the root of the streams
    acts = [get_activation(CUBIC if a == "cubic" else a).dsigma for a, _ in runs]
    deltas = [V.positive_int(delta, "delta") for _, delta in runs]
    out = np.zeros((seeds, len(dims), len(runs), steps, 3))
    for s in range(seeds):
        for j, d in enumerate(dims):
            gen = V.stream(rng, d, s)
            W_star = random_orthonormal(3, d, gen).astype(np.float32)
            W0, a0 = _init(p, d, gen)
            b = np.sign(a0).astype(np.float32)[:, None]
            Ws = [(W0 / np.linalg.norm(W0, axis=1, keepdims=True)).astype(np.float32)
                  for _ in runs]
            for t in range(steps):
                X = gen.standard_normal((max(deltas) * d, d), dtype=np.float32)
                y = target(X @ W_star.T).astype(np.float32)
                for r, (dsigma, delta) in enumerate(zip(acts, deltas, strict=True)):
                    Xr, yr = X[: delta * d], y[: delta * d]
                    G = np.asarray(dsigma(Xr @ Ws[r].T), dtype=np.float32) * yr[:, None]
                    W = Ws[r] + (eta_bar / len(yr)) * b * (G.T @ Xr)
                    Ws[r] = W / np.linalg.norm(W, axis=1, keepdims=True)
                    out[s, j, r, t] = np.mean((Ws[r] @ W_star.T) ** 2, axis=0)
    return out


# --- generalisation and the reference setting -------------------------------------------------
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
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    gen_err = np.zeros((seeds, len(n_list), 3))
    pred, pop = np.zeros((seeds, len(n_list), 2)), np.zeros((seeds, len(n_list), 2))
    for seed in range(seeds):
        gen = V.stream(rng, seed)
        W_star = random_orthonormal(2, d, gen)
        test = draw_two_direction(n_test, W_star, gen)
        W0, a0 = _init(p, d, gen)
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
    seeds = V.positive_int(seeds, "seeds")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    out = np.zeros((seeds, 2))
    for s in range(seeds):
        gen = V.stream(rng, n, s)
        W_star = random_orthonormal(2, d, gen)
        X = gen.standard_normal((n, d))
        y = two_direction_target(X @ W_star.T)
        W0, a0 = _init(p, d, gen, second_layer="gaussian")
        res = two_phase(W0, a0, [(X, y)], (X, y), 10 * np.sqrt(n * p), 1.0 / n,
                        scaling=p**-0.5, remove_linear=True, chunk=8192)
        Xt = gen.standard_normal((n_test, d))
        yt = two_direction_target(Xt @ W_star.T)
        exact_linear = Xt @ (W_star[0] + W_star[1]) / 2
        net = forward(res.W, res.a, Xt, "relu", p**-0.5)
        leak_free = res.offset + Xt @ res.linear + net     # res.predict(Xt), one forward pass
        out[s] = np.mean((exact_linear + net - yt) ** 2), np.mean((leak_free - yt) ** 2)
    return ReferenceRuns(out[:, 0], out[:, 1])
