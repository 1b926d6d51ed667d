r"""First-moment estimators and overlaps (chapters 0 and 3).

The first-moment (Stein) estimator with label preprocessing :math:`T` is
:math:`v = \frac1n\sum_i T(y_i)x_i` (chapter 3, eq. (first moment)); its mean is
:math:`\mathbb E[T(Y)G]\,w_\star` by Stein's lemma. The overlap of an estimate
:math:`\hat w` with :math:`w_\star` is :math:`\rho = |\langle\hat w,w_\star\rangle|/\|\hat w\|`
(book, *Notation*).
"""

from __future__ import annotations

import numpy as np

from . import _validate as V

__all__ = [
    "preprocess",
    "first_moment",
    "overlap",
    "subspace_overlap",
    "LOSSES",
    "loss_preprocessing",
    "single_neuron_gradient",
    "simulate_first_moment_overlaps",
]


def preprocess(y, T=None) -> np.ndarray:
    """Apply a label preprocessing ``T`` (a vectorised callable; ``None`` = identity).

    Raises ``ValueError`` if ``T`` is not callable or returns the wrong shape or NaN.
    """
    y = V.finite_array(y, "y", ndim=1)
    if T is None:
        return y
    if not callable(T):
        raise ValueError(f"T must be a callable of the labels or None, got {T!r}")
    t = np.asarray(T(y), dtype=float)
    if t.shape == ():
        t = np.full_like(y, float(t))
    if t.shape != y.shape:
        raise ValueError(f"T must be vectorised: T(y) has shape {t.shape}, y has {y.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("T(y) contains NaN or infinite values")
    return t


def first_moment(X, y, T=None) -> np.ndarray:
    r"""The normalised first-moment estimator :math:`v/\|v\|`, :math:`v=\frac1n\sum T(y_i)x_i`.

    Chapter 3, eq. (first moment). One matrix-vector product, O(nd).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    T : callable or None
        Label preprocessing; ``None`` uses the raw labels.

    Returns
    -------
    ndarray (d,), unit norm (a random-looking direction if ``v = 0`` exactly is impossible;
    a zero ``v`` raises ``ValueError``).
    """
    X, y = V.data_pair(X, y)
    t = preprocess(y, T)
    v = X.T @ t / X.shape[0]
    nv = np.linalg.norm(v)
    if nv == 0:
        raise ValueError("the estimator is exactly zero (all preprocessed labels vanish)")
    return v / nv


def overlap(w_hat, w_star) -> float:
    r"""Overlap :math:`\rho = |\langle\hat w,w_\star\rangle|/(\|\hat w\|\|w_\star\|)` in [0, 1].

    Book, *Notation*. Sign-blind, since spectral estimators are defined up to sign.
    """
    w_hat = V.finite_array(w_hat, "w_hat", ndim=1)
    w_star = V.finite_array(w_star, "w_star", ndim=1)
    if w_hat.shape != w_star.shape:
        raise ValueError(f"shapes differ: {w_hat.shape} vs {w_star.shape}")
    nh, ns = np.linalg.norm(w_hat), np.linalg.norm(w_star)
    if nh == 0 or ns == 0:
        raise ValueError("overlap of a zero vector is undefined")
    return float(abs(w_hat @ w_star) / (nh * ns))


def subspace_overlap(W_hat, W_star) -> float:
    r"""Subspace overlap :math:`\|P_{\hat W}W_\star^\top\|_F^2/k \in [0,1]` (chapters 0, 6).

    ``W_hat`` (r, d) spans the estimated subspace (any rank), ``W_star`` (k, d) has orthonormal
    rows. 1 means ``span(W_star)`` lies in ``span(W_hat)``; a random r-dimensional subspace
    gives about ``r/d``.
    """
    W_hat = V.finite_array(W_hat, "W_hat", ndim=2)
    W_star = V.finite_array(W_star, "W_star", ndim=2)
    if W_hat.shape[1] != W_star.shape[1]:
        raise ValueError(f"dimensions differ: {W_hat.shape[1]} vs {W_star.shape[1]}")
    q, r = np.linalg.qr(W_hat.T)
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-10 * max(1.0, np.abs(r).max())))
    if rank == 0:
        raise ValueError("W_hat spans the zero subspace")
    q = q[:, np.abs(np.diag(r)) > 1e-10 * max(1.0, np.abs(r).max())]
    return float(np.sum((W_star @ q) ** 2) / W_star.shape[0])


def simulate_first_moment_overlaps(
    link, dims, deltas, preprocessings, seeds: int = 5, noise: float = 0.0, seed: int = 0
):
    r"""Squared overlaps of first-moment estimators on simulated data (chapters 0 and 3).

    For every dimension ``d`` in ``dims``, sample ratio ``delta`` in ``deltas`` and seed, one
    data set of the single-index model with ``n = round(delta d)`` is drawn and every
    preprocessing is applied to the same labels, so that preprocessings are compared on
    identical data.

    Parameters
    ----------
    link : callable or str
    dims : sequence of int
    deltas : sequence of float, positive
    preprocessings : dict of name -> callable or None
        ``None`` means the raw labels.
    seeds : int
        Repetitions per (d, delta).
    noise : float
        Label-noise standard deviation.
    seed : int
        Base seed; the data for (d, repetition) use ``numpy.random.default_rng([seed, d, r])``.

    Returns
    -------
    dict of name -> ndarray of shape ``(len(dims), seeds, len(deltas))`` holding
    :math:`\rho^2`.
    """
    from .targets import single_index

    dims = [V.positive_int(d, "d") for d in dims]
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if np.any(deltas <= 0):
        raise ValueError("deltas must be positive")
    seeds = V.positive_int(seeds, "seeds")
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict of name -> callable or None")
    out = {name: np.empty((len(dims), seeds, len(deltas))) for name in preprocessings}
    for i, d in enumerate(dims):
        for r in range(seeds):
            rng = np.random.default_rng([seed, d, r])
            for j, delta in enumerate(deltas):
                n = max(1, int(round(delta * d)))
                X, y, w = single_index(n, d, link, noise=noise, rng=rng)
                for name, T in preprocessings.items():
                    out[name][i, r, j] = overlap(first_moment(X, y, T), w) ** 2
    return out


# ---------------------------------------------------------------------------------------
# One gradient step of a single neuron is a first-moment estimator (chapter 3)
# ---------------------------------------------------------------------------------------
def _huber_grad(y, f, c=1.0):
    return -np.clip(y - f, -c, c)


LOSSES = {
    "square": lambda y, f: f - y,  # l = (y - f)^2 / 2
    "correlation": lambda y, f: -y * np.ones_like(f),  # l = -y f
    "huber": _huber_grad,  # l = Huber_1(y - f): quadratic below 1, linear above
    "logistic": lambda y, f: -y / (1.0 + np.exp(y * f)),  # l = log(1 + exp(-y f))
}
r"""Derivatives :math:`\partial_f\ell(y, f)` of the losses used in the book (vectorised)."""


def _loss_grad(loss):
    if callable(loss):
        return loss
    try:
        return LOSSES[loss]
    except (KeyError, TypeError):
        raise ValueError(
            f"loss must be a name from LOSSES ({', '.join(LOSSES)}) or a callable dl/df(y, f), "
            f"got {loss!r}"
        ) from None


def loss_preprocessing(loss="square", f0: float = 0.0):
    r"""The label preprocessing chosen by a loss: :math:`T(y) = -\partial_f\ell(y; f_0)`.

    Chapter 3, eq. (gradient step): at an initialisation where the network outputs
    :math:`f_0 = \sigma(0)` on every input, one gradient step on the first layer is the
    first-moment estimator with this :math:`T` (times :math:`\eta\sigma'(0)`).

    Parameters
    ----------
    loss : str or callable
        A name from :data:`LOSSES` or a callable :math:`\partial_f\ell(y, f)`.
    f0 : float
        The output of the network at initialisation.
    """
    g = _loss_grad(loss)
    f0 = float(f0)
    return lambda y: -np.asarray(g(np.asarray(y, dtype=float), np.full(np.shape(y), f0)))


def single_neuron_gradient(X, y, w, activation="tanh", loss="square") -> np.ndarray:
    r"""Gradient of :math:`\hat R(w) = \frac1n\sum_i\ell(y_i, \sigma(\langle w, x_i\rangle))`.

    Chapter 3, eq. (gradient step):
    :math:`\nabla\hat R(w) = \frac1n\sum_i\partial_f\ell(y_i,\sigma(\langle w,x_i\rangle))\,
    \sigma'(\langle w,x_i\rangle)\,x_i`, two matrix-vector products. At :math:`w = 0` it is
    :math:`-\sigma'(0)` times the first-moment vector with
    :math:`T = -\partial_f\ell(\cdot;\sigma(0))` (:func:`loss_preprocessing`).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    w : array_like (d,)
    activation : str, (sigma, dsigma) pair or Activation
        See :func:`lecnotes.networks.get_activation`.
    loss : str or callable
        See :data:`LOSSES`.
    """
    from .networks import get_activation

    X, y = V.data_pair(X, y)
    w = V.finite_array(w, "w", ndim=1)
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries, X has {X.shape[1]} columns")
    act = get_activation(activation)
    g = _loss_grad(loss)
    u = X @ w
    weights = np.asarray(g(y, act.sigma(u)), dtype=float) * act.dsigma(u)
    return X.T @ weights / X.shape[0]
