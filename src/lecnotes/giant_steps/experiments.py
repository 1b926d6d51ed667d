r"""Chapter 6, giant steps: one step, its spectra and overlaps, and their theory beside them.

One giant step of the network of {eq}`eq-ch6-network` (:func:`init_network`) at
:math:`n=\delta d`: the spike plus bulk of :func:`one_step_spectra`, the overlaps of
:func:`one_step_sweep` (with their closed forms, :func:`one_step_comparison`), the leap-2
overlaps of :func:`leap2_sweep` (with eq. {eq}`eq-ch6-leap2`, :func:`leap2_runs`) and the
two-direction target of :func:`two_direction_sweep` / :func:`two_direction_runs`. Arrays
have seeds on axis 0, and seed ``s`` at size ``d`` has its own stream
(:func:`lecnotes.core.validate.stream`). Several steps are in
:mod:`lecnotes.giant_steps.many_steps`, the second layer in
:mod:`lecnotes.giant_steps.generalisation`, the procedure in
:mod:`lecnotes.giant_steps.procedure`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.linalg import top_singular
from lecnotes.core.overlaps import neuron_overlaps, overlap_gram
from lecnotes.core.targets import random_orthonormal, single_index
from lecnotes.giant_steps.procedure import check_callable, init_network
from lecnotes.giant_steps.theory import (
    OneStepSpike,
    giant_step_size,
    leap2_neuron_overlap,
    one_step_neuron_overlap,
    one_step_spike,
    remove_linear_part,
    two_direction_target,
)
from lecnotes.models.layerwise import giant_step

__all__ = [
    "OneStepSpectra",
    "one_step_spectra",
    "OneStepSweep",
    "one_step_sweep",
    "OneStepComparison",
    "one_step_comparison",
    "leap2_sweep",
    "Leap2Runs",
    "leap2_runs",
    "TwoDirectionSweep",
    "two_direction_sweep",
    "TwoDirectionRuns",
    "two_direction_runs",
]


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
    check_callable(link, "link")
    d, p = V.positive_int(d, "d"), V.positive_int(p, "p")
    delta, eta0 = V.positive_int(delta, "delta"), V.positive_float(eta0, "eta0")
    if reference_variance is not None:
        reference_variance = V.positive_float(reference_variance, "reference_variance")
    rng = V.generator(rng)
    n = delta * d
    X, y, _ = single_index(n, d, link, rng=rng)
    W0, a0 = init_network(p, d, rng)
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
    check_callable(link, "link")
    dims, seeds = V.sizes(dims, "dims"), V.positive_int(seeds, "seeds")
    delta, eta0 = V.positive_int(delta, "delta"), V.positive_float(eta0, "eta0")
    p_over_d = V.positive_int(p_over_d, "p_over_d")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    rec = np.zeros((seeds, len(dims), 7))
    for seed in range(seeds):
        for j, d_j in enumerate(dims):
            gen = V.stream(rng, d_j, seed)
            p_j, n_j = p_over_d * d_j, delta * d_j
            X, y, w_star = single_index(n_j, d_j, link, rng=gen)
            W0, a0 = init_network(p_j, d_j, gen)
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
    check_callable(link, "link")
    dims, ns = V.sizes(dims, "dims"), V.sizes(ns, "ns")
    seeds = V.positive_int(seeds, "seeds")
    p, eta0 = V.positive_int(p, "p"), V.positive_float(eta0, "eta0")
    rng = V.generator(rng)  # the root of the streams V.stream(rng, ...)
    if len(dims) != len(ns):
        raise ValueError("dims and ns must have the same length")
    out = np.zeros((seeds, len(dims)))
    for s in range(seeds):
        for j, (d, n) in enumerate(zip(dims, ns, strict=True)):
            gen = V.stream(rng, d, n, s)
            X, y, w_star = single_index(n, d, link, rng=gen)
            W0, a0 = init_network(p, d, gen)
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
    dims, ns = V.sizes(dims, "dims", minimum=2), V.sizes(ns, "ns")
    seeds = V.positive_int(seeds, "seeds")
    if len(dims) != len(ns):
        raise ValueError("dims and ns must have the same length")
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
            W0, a0 = init_network(p, d, gen)
            W1 = giant_step(W0, a0, X, y, giant_step_size(p, n, d, 10 * np.sqrt(d / p)),
                            scaling=p**-0.5)
            eig[s, j] = np.linalg.eigvalsh(overlap_gram(W1, W_star))[::-1]
            if s == 0:
                first.append(neuron_overlaps(W1, W_star))
    return TwoDirectionSweep(eig, first)




# --- the sweeps of the notebook, with their theory ----------------------------------------------
class OneStepComparison(NamedTuple):
    """Outcome of :func:`one_step_comparison`: the sweep and its closed forms.

    ``dims`` the dimensions, ``runs`` the :class:`OneStepSweep`; ``neuron_theory`` the
    limit of the mean neuron overlap ({eq}`eq-ch6-neuron-overlap`); ``spike_theory`` one
    :class:`~lecnotes.giant_steps.theory.OneStepSpike` per dimension (width
    ``p_over_d * d``); ``eta_bar`` the step :math:`\\bar\\eta = \\eta/p`.
    """

    dims: np.ndarray
    runs: OneStepSweep
    neuron_theory: float
    spike_theory: list[OneStepSpike]
    eta_bar: float


def one_step_comparison(link, dims, seeds: int, delta: int, eta0: float,
                        p_over_d: int = 2, rng=None) -> OneStepComparison:
    r""":func:`one_step_sweep` beside the limits of {eq}`eq-ch6-neuron-overlap` and the spike.

    The simulated overlaps, spike and update (same streams as :func:`one_step_sweep`) and
    the closed forms :func:`~lecnotes.giant_steps.theory.one_step_neuron_overlap` and
    :func:`~lecnotes.giant_steps.theory.one_step_spike` of {prf:ref}`prop-ch6-spike-bulk`
    at :math:`\bar\eta = \eta_0\sqrt\delta` (which does not depend on ``d``).

    Parameters
    ----------
    link, dims, seeds, delta, eta0, p_over_d, rng
        As in :func:`one_step_sweep`.

    Returns
    -------
    OneStepComparison
    """
    runs = one_step_sweep(link, dims, seeds, delta, eta0, p_over_d=p_over_d, rng=rng)
    dims = V.sizes(dims, "dims")
    eta_bar = giant_step_size(p_over_d * dims[-1], delta * dims[-1], dims[-1], eta0) / (
        p_over_d * dims[-1])
    spikes = [one_step_spike(link, eta_bar, delta, p_over_d * d, d) for d in dims]
    return OneStepComparison(dims, runs, one_step_neuron_overlap(link, eta_bar, delta), spikes,
                             eta_bar)


class Leap2Runs(NamedTuple):
    """Outcome of :func:`leap2_runs`: seeds x d arrays and eq. {eq}`eq-ch6-leap2` beside them.

    ``linear`` at :math:`n = 4d` over ``dims_linear``, ``square`` at :math:`n = d^2` over
    ``dims_square`` (mean squared neuron overlaps, :func:`leap2_sweep`); ``theory_linear``,
    ``theory_square`` the formula at the same sizes; ``theory_square_norm`` the formula with
    the exact squared norm of :math:`w_i^1` ({eq}`eq-ch6-leap2-norm`).
    """

    linear: np.ndarray
    square: np.ndarray
    theory_linear: np.ndarray
    theory_square: np.ndarray
    theory_square_norm: np.ndarray


def leap2_runs(link, dims_linear, dims_square, seeds_linear: int, seeds_square: int,
               p: int = 128, eta0: float = 1.0, rng=None) -> Leap2Runs:
    r"""One step on a leap-2 link at :math:`n = 4d` and :math:`n = d^2`, with {eq}`eq-ch6-leap2`.

    Two calls of :func:`leap2_sweep` with the same ``rng`` (their streams are keyed by
    :math:`(d, n, s)`, so they never overlap) and
    :func:`~lecnotes.giant_steps.theory.leap2_neuron_overlap` at
    :math:`\bar\eta = \eta_0\sqrt{n/d}`.

    Parameters
    ----------
    link : callable
    dims_linear, dims_square : sequence of int
        Dimensions of the two batch-size laws.
    seeds_linear, seeds_square, p : int
    eta0 : float
    rng : Generator, int or None

    Returns
    -------
    Leap2Runs
    """
    dl, ds = V.sizes(dims_linear, "dims_linear"), V.sizes(dims_square, "dims_square")
    p, eta0 = V.positive_int(p, "p"), V.positive_float(eta0, "eta0")
    seeds_linear = V.positive_int(seeds_linear, "seeds_linear")
    seeds_square = V.positive_int(seeds_square, "seeds_square")
    lin = leap2_sweep(link, dl, 4 * dl, seeds_linear, p=p, eta0=eta0, rng=rng)
    sq = leap2_sweep(link, ds, ds**2, seeds_square, p=p, eta0=eta0, rng=rng)
    th_lin = [leap2_neuron_overlap(link, eta0 * 2.0, 4 * d, d) for d in dl]
    th_sq = [leap2_neuron_overlap(link, eta0 * np.sqrt(d), d**2, d) for d in ds]
    th_norm = [leap2_neuron_overlap(link, eta0 * np.sqrt(d), d**2, d, exact_norm=True)
               for d in ds]
    return Leap2Runs(lin, sq, np.array(th_lin), np.array(th_sq), np.array(th_norm))


class TwoDirectionRuns(NamedTuple):
    """Outcome of :func:`two_direction_runs`, keyed ``"4d"`` (raw labels, :math:`n = 4d`) and
    ``"4d2"`` (linear part removed, :math:`n = 4d^2`).

    ``dims`` the dimensions, ``eigenvalues`` (seeds, len(dims), 2) of :math:`Q` per key,
    ``snapshot`` the (p, 2) neuron overlaps of seed 0 at ``snapshot_d`` per key.
    """

    dims: dict
    eigenvalues: dict
    snapshot: dict


def two_direction_runs(dims_raw, dims_leap, seeds: int, snapshot_d: int = 64,
                       rng=None) -> TwoDirectionRuns:
    r""":func:`two_direction_sweep` at :math:`n = 4d` (raw) and :math:`n = 4d^2` (leap 2).

    The specialisation experiment of {prf:ref}`thm-ch6-leap`: both calls take the same
    ``rng`` (streams keyed by :math:`(d, n, s)`).

    Parameters
    ----------
    dims_raw, dims_leap : sequence of int
        Dimensions at :math:`n = 4d` and at :math:`n = 4d^2`; both contain ``snapshot_d``.
    seeds, snapshot_d : int
    rng : Generator, int or None

    Returns
    -------
    TwoDirectionRuns
    """
    dims = {"4d": V.sizes(dims_raw, "dims_raw", minimum=2),
            "4d2": V.sizes(dims_leap, "dims_leap", minimum=2)}
    snapshot_d = V.positive_int(snapshot_d, "snapshot_d")
    for key, dd in dims.items():
        if snapshot_d not in dd:
            raise ValueError(f"snapshot_d = {snapshot_d} must be one of the dimensions of "
                             f"{'dims_raw' if key == '4d' else 'dims_leap'}")
    batch = {"4d": 4 * dims["4d"], "4d2": 4 * dims["4d2"] ** 2}
    runs = {key: two_direction_sweep(dd, batch[key], seeds, remove_linear=key == "4d2",
                                     rng=rng) for key, dd in dims.items()}
    eig = {key: r.eigenvalues for key, r in runs.items()}
    snap = {key: r.first_seed[list(dims[key]).index(snapshot_d)] for key, r in runs.items()}
    return TwoDirectionRuns(dims, eig, snap)
