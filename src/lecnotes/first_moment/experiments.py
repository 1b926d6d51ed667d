r"""Chapter 3, first-moment estimators: label preprocessing and one gradient step (also chapter 0).

The first-moment (Stein) estimator with label preprocessing :math:`T` is
:math:`v = \frac1n\sum_i T(y_i)x_i` (chapter 3, {eq}`eq-ch3-first-moment`); its mean is
:math:`\mathbb E[T(Y)G]\,w_\star` by Stein's lemma ({prf:ref}`prop-first-moment-mean`). The
overlap of an estimate :math:`\hat w` with :math:`w_\star` is
:math:`\rho = |\langle\hat w,w_\star\rangle|/\|\hat w\|` ({prf:ref}`def-overlap`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation, loss_derivative
from lecnotes.core.overlaps import overlap
from lecnotes.core.preprocessing import checked_values
from lecnotes.core.targets import get_link, single_index

__all__ = [
    "preprocess",
    "first_moment",
    "simulate_first_moment_overlaps",
    "reduced_first_moment_overlaps",
    "ReducedParts",
    "loss_preprocessing",
    "single_neuron_gradient",
    "StepComparison",
    "step_versus_estimator",
    "StepSweep",
    "gradient_step_sweep",
]


def preprocess(y, T=None) -> np.ndarray:
    """Apply a label preprocessing ``T`` (a vectorised callable; ``None`` = identity).

    The :math:`T(y_i)` of {eq}`eq-ch3-first-moment`. Raises ``ValueError`` if ``T`` is not
    callable or returns the wrong shape or NaN.

    Parameters
    ----------
    y : array_like (n,)
        Labels.
    T : callable or None
        Preprocessing.

    Returns
    -------
    ndarray (n,)
        :math:`T(y)`, checked.
    """
    y = V.finite_array(y, "y", ndim=1)
    if T is None:
        return y
    if not callable(T):
        raise ValueError(f"T must be a callable of the labels or None, got {T!r}")
    return checked_values(T(y), y)


def first_moment(X, y, T=None) -> np.ndarray:
    r"""The normalised first-moment estimator :math:`v/\|v\|`, :math:`v=\frac1n\sum T(y_i)x_i`.

    Chapter 3, {eq}`eq-ch3-first-moment`. One matrix-vector product, O(nd).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    T : callable or None
        Label preprocessing; ``None`` uses the raw labels.

    Returns
    -------
    ndarray (d,)
        :math:`v/\|v\|`, of unit norm (an exactly zero :math:`v` raises ``ValueError``).
    """
    X, y = V.data_pair(X, y)
    t = preprocess(y, T)
    v = X.T @ t / X.shape[0]
    nv = np.linalg.norm(v)
    if nv == 0:
        raise ValueError("the estimator is exactly zero (all preprocessed labels vanish)")
    return v / nv


def simulate_first_moment_overlaps(
    link, dims, deltas, preprocessings, seeds: int = 5, noise: float = 0.0, rng=None
) -> dict:
    r"""Squared overlaps of first-moment estimators on simulated data (chapters 0 and 3).

    The simulation side of {prf:ref}`thm-first-moment-overlap`.

    For every dimension ``d`` in ``dims``, sample ratio ``delta`` in ``deltas`` and seed, one
    data set of the single-index model with ``n = round(delta d)`` is drawn and every
    preprocessing is applied to the same labels, so that preprocessings are compared on
    identical data.

    Parameters
    ----------
    link : callable or str
        The link.
    dims : sequence of int
        Dimensions.
    deltas : sequence of float, positive
        Sample ratios.
    preprocessings : dict of name -> callable or None
        ``None`` means the raw labels.
    seeds : int
        Repetitions per (d, delta).
    noise : float
        Label-noise standard deviation.
    rng : Generator, int or None
        Random source (SPEC 7); the data of size ``d`` and repetition ``r`` come from the
        keyed stream ``stream(rng, d, r)`` (:mod:`lecnotes.core.validate`), shared by all
        ``deltas``, so adding a size or a seed leaves the other draws unchanged.

    Returns
    -------
    dict
        name -> ndarray of shape ``(seeds, len(dims), len(deltas))`` holding :math:`\rho^2`
        (seeds on axis 0).
    """

    dims = [V.positive_int(d, "d") for d in dims]
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if np.any(deltas <= 0):
        raise ValueError("deltas must be positive")
    seeds = V.positive_int(seeds, "seeds")
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict of name -> callable or None")
    out = {name: np.empty((seeds, len(dims), len(deltas))) for name in preprocessings}
    for i, d in enumerate(dims):
        for r in range(seeds):
            gen = V.stream(rng, d, r)
            for j, delta in enumerate(deltas):
                n = max(1, int(round(delta * d)))
                X, y, w = single_index(n, d, link, noise=noise, rng=gen)
                for name, T in preprocessings.items():
                    out[name][r, i, j] = overlap(first_moment(X, y, T), w) ** 2
    return out


def reduced_first_moment_overlaps(
    link, dims, deltas, preprocessings, replicates: int = 200, noise: float = 0.0, rng=None,
    chunk: int = 2_000_000, parts: bool = False,
) -> dict:
    r"""Squared overlaps of first-moment estimators through the exact reduction (chapter 3).

    {prf:ref}`prop-ch3-reduction`: :math:`\rho^2(v_T)` has the law of
    :math:`A/(A + S\,C)` with :math:`A = (\sum_i T(y_i)G_i)^2`, :math:`S = \sum_i T(y_i)^2`
    and :math:`C\sim\chi^2_{d-1}` independent of the :math:`n` pairs :math:`(G_i, y_i)`. One
    replicate costs :math:`O(n)` instead of the :math:`O(nd)` of
    :func:`simulate_first_moment_overlaps`, whose law it reproduces exactly (not
    approximately), so thousands of replicates are cheap.

    Parameters
    ----------
    link : callable or str
        The link.
    dims : sequence of int
        Dimensions (at least 2).
    deltas : sequence of float, positive
        Sample ratios; ``n = round(delta d)``.
    preprocessings : dict of name -> callable or None
        ``None`` means the raw labels; all are applied to the same labels.
    replicates : int
        Independent replicates per (d, delta).
    noise : float
        Label-noise standard deviation.
    rng : Generator, int or None
        Random source (SPEC 7); the cell (d, n) draws from ``stream(rng, d, n)``, so adding
        a size leaves the other draws unchanged.
    chunk : int
        Largest number of labels drawn at once (memory bound).
    parts : bool
        Also return the two parts of the overlap.

    Returns
    -------
    dict
        name -> ndarray ``(replicates, len(dims), len(deltas))`` of :math:`\rho^2` (replicates
        on axis 0); with ``parts=True`` name -> :class:`ReducedParts` instead.
    """
    phi = get_link(link)
    dims = [V.positive_int(d, "d", minimum=2) for d in dims]
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if np.any(deltas <= 0):
        raise ValueError("deltas must be positive")
    replicates = V.positive_int(replicates, "replicates")
    noise = V.nonneg_float(noise, "noise")
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict of name -> callable or None")
    shape = (replicates, len(dims), len(deltas))
    sig = {name: np.empty(shape) for name in preprocessings}
    noi = {name: np.empty(shape) for name in preprocessings}
    for i, d in enumerate(dims):
        for j, delta in enumerate(deltas):
            n = max(1, int(round(delta * d)))
            gen = V.stream(rng, d, n)
            step = max(1, chunk // n)
            for r0 in range(0, replicates, step):
                r1 = min(replicates, r0 + step)
                G = gen.standard_normal((r1 - r0, n))
                y = np.asarray(phi(G.ravel()), dtype=float)
                if noise > 0:
                    y = y + noise * gen.standard_normal(y.shape)
                C = gen.chisquare(d - 1, size=r1 - r0)
                for name, T in preprocessings.items():
                    t = preprocess(y, T).reshape(G.shape)
                    A = np.einsum("ij,ij->i", t, G) ** 2
                    S = np.einsum("ij,ij->i", t, t)
                    sig[name][r0:r1, i, j] = A / n**2
                    noi[name][r0:r1, i, j] = S * C / n**2
    if parts:
        return {name: ReducedParts(sig[name], noi[name]) for name in preprocessings}
    return {name: sig[name] / (sig[name] + noi[name]) for name in preprocessings}


class ReducedParts(NamedTuple):
    r"""The two parts of the overlap in {eq}`eq-ch3-reduction` (chapter 3)."""

    signal: np.ndarray
    r""":math:`\langle v_T, w_\star\rangle^2 = A/n^2`."""
    noise: np.ndarray
    r""":math:`\|v_T^\perp\|^2 = SC/n^2` (in law)."""


def loss_preprocessing(loss="square", f0: float = 0.0):
    r"""The label preprocessing chosen by a loss: :math:`T(y) = -\partial_f\ell(y; f_0)`.

    Chapter 3, {eq}`eq-ch3-gradient-step`: at an initialisation where the network outputs
    :math:`f_0 = \sigma(0)` on every input, one gradient step on the first layer is the
    first-moment estimator with this :math:`T` (times :math:`\eta\sigma'(0)`).

    Parameters
    ----------
    loss : str or callable
        A name from :data:`LOSSES` or a callable :math:`\partial_f\ell(y, f)`.
    f0 : float
        The output of the network at initialisation.

    Returns
    -------
    callable
        The vectorised preprocessing :math:`T`.
    """
    g = loss_derivative(loss)
    f0 = float(f0)
    return lambda y: -np.asarray(g(np.asarray(y, dtype=float), np.full(np.shape(y), f0)))


def single_neuron_gradient(X, y, w, activation="tanh", loss="square") -> np.ndarray:
    r"""Gradient of :math:`\hat R(w) = \frac1n\sum_i\ell(y_i, \sigma(\langle w, x_i\rangle))`.

    Chapter 3, {eq}`eq-ch3-gradient`:
    :math:`\nabla\hat R(w) = \frac1n\sum_i\partial_f\ell(y_i,\sigma(\langle w,x_i\rangle))\,
    \sigma'(\langle w,x_i\rangle)\,x_i`, two matrix-vector products. At :math:`w = 0` it is
    :math:`-\sigma'(0)` times the first-moment vector with
    :math:`T = -\partial_f\ell(\cdot;\sigma(0))` (:func:`loss_preprocessing`).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    w : array_like (d,)
        Weight vector of the neuron.
    activation : str, (sigma, dsigma) pair or Activation
        See :func:`lecnotes.core.activations.get_activation`.
    loss : str or callable
        See :data:`lecnotes.core.activations.LOSSES`.

    Returns
    -------
    ndarray (d,)
        :math:`\nabla\hat R(w)`.
    """

    X, y = V.data_pair(X, y)
    w = V.finite_array(w, "w", ndim=1)
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries, X has {X.shape[1]} columns")
    act = get_activation(activation)
    g = loss_derivative(loss)
    u = X @ w
    weights = np.asarray(g(y, act.sigma(u)), dtype=float) * act.dsigma(u)
    return X.T @ weights / X.shape[0]


class StepComparison(NamedTuple):
    """One gradient step against the first-moment estimator (:func:`step_versus_estimator`)."""

    loss: str
    """The loss of the step."""
    init: str
    """The name of the initialisation."""
    one_minus_cos: float
    r""":math:`1-\cos` of the angle between the step and :math:`v_T`."""
    overlap: float
    r"""The overlap of the step with :math:`w_\star`."""


def step_versus_estimator(X, y, w_star, inits: dict, losses=("square", "huber"),
                          activation="tanh") -> list:
    r"""One gradient step of a single neuron against the first-moment estimator (chapter 3).

    For each loss and initialisation :math:`w`, the step :math:`-\nabla\hat R(w)`
    (:func:`single_neuron_gradient`) is compared with :math:`v_T` for the preprocessing
    :math:`T = -\partial_f\ell(\cdot;\sigma(0))` of :func:`loss_preprocessing`: at :math:`w = 0`
    they are parallel ({eq}`eq-ch3-gradient-step`).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs.
    y : array_like (n,)
        Labels.
    w_star : array_like (d,)
        The direction to recover.
    inits : dict
        name -> initial weight vector (d,).
    losses : sequence of str
        Losses of :data:`lecnotes.core.activations.LOSSES`.
    activation : str
        Activation of the neuron.

    Returns
    -------
    list of StepComparison
        One per (loss, initialisation), losses in the outer loop.
    """
    f0 = float(get_activation(activation).sigma(np.zeros(1))[0])
    out = []
    for loss in losses:
        v = first_moment(X, y, T=loss_preprocessing(loss, f0=f0))
        for name, w in inits.items():
            g = -single_neuron_gradient(X, y, w, activation=activation, loss=loss)
            cos = g @ v / np.linalg.norm(g)
            out.append(StepComparison(loss, name, float(1 - cos), overlap(g, w_star)))
    return out


class StepSweep(NamedTuple):
    """One gradient step over independent data sets (:func:`gradient_step_sweep`)."""

    overlap: np.ndarray
    r"""(seeds, losses): overlap with :math:`w_\star` of the step from :math:`w = 0`."""
    small_init_ratio: np.ndarray
    r"""(seeds, losses): :math:`1-\cos(\text{step}, v_T)` from a random :math:`w_0` of norm
    ``init_norm``, divided by :math:`\|w_0\|^2(1+d/n)/(2\|v_T\|^2)`."""


def gradient_step_sweep(link, d: int, n: int, seeds: int, losses=("square", "huber"),
                        activation="tanh", init_norm: float = 1e-2, rng=None) -> StepSweep:
    r"""One gradient step of a single neuron on ``seeds`` independent data sets (chapter 3).

    For each data set (stream ``stream(rng, s)``) and loss, the step from :math:`w = 0`
    ({eq}`eq-ch3-gradient-step`) and the step from a random :math:`w_0` of norm
    ``init_norm``, compared with :math:`v_T` through :func:`step_versus_estimator`.

    Parameters
    ----------
    link : callable or str
        The link.
    d, n : int
        Dimension and number of samples.
    seeds : int
        Number of independent data sets.
    losses : sequence of str
        Losses of :data:`lecnotes.core.activations.LOSSES`.
    activation : str
        Activation of the neuron.
    init_norm : float
        Norm of the random initialisation.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    StepSweep
    """
    d, n, seeds = (V.positive_int(v, name) for v, name in ((d, "d"), (n, "n"), (seeds, "seeds")))
    init_norm = V.positive_float(init_norm, "init_norm")
    ov = np.empty((seeds, len(losses)))
    ratio = np.empty((seeds, len(losses)))
    for s in range(seeds):
        gen = V.stream(rng, s)
        X, y, w_star = single_index(n, d, link, rng=gen)
        w0 = gen.standard_normal(d)
        w0 *= init_norm / np.linalg.norm(w0)
        rows = step_versus_estimator(X, y, w_star, {"zero": np.zeros(d), "random": w0},
                                     losses=losses, activation=activation)
        f0 = float(get_activation(activation).sigma(np.zeros(1))[0])
        for k, loss in enumerate(losses):
            v = X.T @ preprocess(y, loss_preprocessing(loss, f0=f0)) / n
            ov[s, k] = rows[2 * k].overlap
            ratio[s, k] = rows[2 * k + 1].one_minus_cos / (
                init_norm**2 * (1 + d / n) / (2 * np.sum(v**2)))
    return StepSweep(ov, ratio)
