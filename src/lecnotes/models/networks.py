r"""Two-layer networks: scalings, gradients and full-batch training (chapters 1, 6, 7).

The network of the book ({prf:ref}`def-ch1-scalings`) is

.. math:: f(x;W,a) = s_m\sum_{k=1}^m a_k\,\sigma(\langle w_k,x\rangle),
          \qquad W\in\mathbb R^{m\times d},\ a\in\mathbb R^m,

with the output scale :math:`s_m` fixing the *scaling*:

* ``"ntk"`` (lazy): :math:`s_m = m^{-1/2}`, trained with step sizes of order one;
* ``"mf"`` (mean-field): :math:`s_m = m^{-1}`, trained with step sizes of order :math:`m`
  (use :func:`step_size`), so that every neuron moves by an amount independent of the width;
* a positive number: :math:`s_m` itself, e.g. ``1.0`` for the giant-step convention of
  chapter 6, :math:`f = \sigma(XW^\top)a` with the width absorbed in ``a``.

Inputs are the rows of ``X`` (n x d); first-layer rows are initialised as
:math:`w_k\sim N(0, I_d/d)` (:func:`init_params`). Losses come from
:data:`lecnotes.core.activations.LOSSES`. A forward pass is one matrix product :math:`XW^\top`,
the first-layer gradient a second one,

.. math:: \nabla_W\hat R = s_m\,\big[(g\,\mathbf 1^\top)\odot\sigma'(XW^\top)\odot
          (\mathbf 1 a^\top)\big]^\top X,\qquad g_i = \partial\hat R/\partial f(x_i).

Chapters 6 and 7 train the first layer alone and fit the second by ridge: those steps are in
:mod:`lecnotes.models.layerwise`. Activations
and losses live in :mod:`lecnotes.core.activations`, overlap measures in
:mod:`lecnotes.core.overlaps`,
the chapter-6 experiments and one-step theory in :mod:`lecnotes.giant_steps.experiments` and
:mod:`lecnotes.giant_steps.theory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.activations import get_activation, get_loss, loss_and_dual

__all__ = [
    "output_scale",
    "step_size",
    "init_params",
    "check_params",
    "features",
    "forward",
    "loss_value",
    "gradients",
    "first_layer_gradient",
    "TrainResult",
    "train",
    "empirical_ntk",
]


def output_scale(m: int, scaling="ntk") -> float:
    r"""The output scale :math:`s_m` of {prf:ref}`def-ch1-scalings`.

    Parameters
    ----------
    m : int
        Width.
    scaling : {"ntk", "mf"} or float
        ``"ntk"`` gives :math:`m^{-1/2}`, ``"mf"`` gives :math:`m^{-1}`, a positive number is
        returned as is.

    Returns
    -------
    float
    """
    m = V.positive_int(m, "m")
    if isinstance(scaling, str):
        if scaling == "ntk":
            return m**-0.5
        if scaling == "mf":
            return 1.0 / m
        raise ValueError(f"scaling must be 'ntk', 'mf' or a positive number, got {scaling!r}")
    return V.positive_float(scaling, "scaling")


def step_size(eta0: float, m: int, scaling="ntk") -> float:
    r"""The natural gradient step of each scaling ({prf:ref}`def-ch1-scalings`).

    ``eta0`` for ``"ntk"`` (steps of order one) and ``eta0 * m`` for ``"mf"`` (steps of order
    ``m``). With these steps the mean-field dynamics in time :math:`t=\eta_0\cdot`(steps) has
    a width-independent limit, and so does the lazy one.

    Parameters
    ----------
    eta0 : float
        Step in units of the scaling (> 0).
    m : int
        Width.
    scaling : {"ntk", "mf"}

    Returns
    -------
    float
    """
    eta0 = V.positive_float(eta0, "eta0")
    m = V.positive_int(m, "m")
    if scaling == "ntk":
        return eta0
    if scaling == "mf":
        return eta0 * m
    raise ValueError(f"scaling must be 'ntk' or 'mf', got {scaling!r}")


def init_params(m: int, d: int, *, rng=None, symmetric: bool = True,
                second_layer: str = "sign", a_scale: float = 1.0):
    r"""Initial weights: rows :math:`w_k\sim N(0,I_d/d)`, second layer of size ``a_scale``.

    The one initialisation of the book: chapter 1 ({prf:ref}`def-ch1-scalings`, symmetric
    pairs), chapter 6 ({prf:ref}`def-ch6-two-phase`: ``symmetric=False``,
    ``a_scale = p**-0.5``, signs or Gaussian), chapter 7 ({prf:ref}`def-ch7-two-steps`:
    ``symmetric=False``, ``second_layer="gaussian"``; ``"balanced"`` for the reuse section).
    With ``symmetric=True`` (``m`` even) the second half of
    the neurons copies the first half with opposite :math:`a_k`, so :math:`f(\cdot;W_0,a_0)=0`
    in every scaling (the "doubling trick" of Chizat, Oyallon and Bach): training then starts
    from the zero function and the output scale only sets the dynamics. The draws are the rows
    of :math:`W` first, then the second layer.

    Parameters
    ----------
    m, d : int
        Width and input dimension.
    rng : Generator, int or None
    symmetric : bool
        Antisymmetric pairs of neurons (needs even ``m``).
    second_layer : {"sign", "gaussian", "balanced", "zero"}
        :math:`a_k = \pm` ``a_scale`` (independent signs), :math:`a_k\sim N(0,` ``a_scale**2``
        :math:`)`, ``a_scale`` times a random permutation of alternating signs
        :math:`(+1,-1,+1,\dots)` (as many of each sign as possible), or 0.
    a_scale : float

    Returns
    -------
    W : ndarray (m, d), a : ndarray (m,)
    """
    m = V.positive_int(m, "m")
    d = V.positive_int(d, "d")
    a_scale = V.nonneg_float(a_scale, "a_scale")
    rng = V.generator(rng)
    if second_layer not in ("sign", "gaussian", "balanced", "zero"):
        raise ValueError("second_layer must be 'sign', 'gaussian', 'balanced' or 'zero', "
                         f"got {second_layer!r}")
    if symmetric and m % 2:
        raise ValueError(f"a symmetric initialisation needs an even width, got m = {m}")
    half = m // 2 if symmetric else m
    W = rng.standard_normal((half, d)) / np.sqrt(d)
    if second_layer == "sign":
        a = a_scale * rng.choice([-1.0, 1.0], size=half)
    elif second_layer == "gaussian":
        a = a_scale * rng.standard_normal(half)
    elif second_layer == "balanced":
        a = np.where(np.arange(half) % 2 == 0, 1.0, -1.0)
        rng.shuffle(a)
        a = a * a_scale
    else:
        a = np.zeros(half)
    if symmetric:
        W = np.concatenate([W, W])
        a = np.concatenate([a, -a])
    return W, a


def check_params(W, a, X=None):
    """Validate network parameters (and inputs): shapes and finiteness.

    Parameters
    ----------
    W : array_like (m, d)
    a : array_like (m,)
    X : array_like (n, d), optional

    Returns
    -------
    W, a : ndarray
        And ``X`` as a third entry when it is given.
    """
    W = V.finite_array(W, "W", ndim=2)
    a = V.finite_array(a, "a", ndim=1)
    if W.shape[0] < 1:
        raise ValueError("the network needs at least one neuron (m >= 1)")
    if a.shape[0] != W.shape[0]:
        raise ValueError(f"W has {W.shape[0]} rows (neurons) but a has {a.shape[0]} entries")
    if X is not None:
        X = V.finite_array(X, "X", ndim=2)
        if X.shape[1] != W.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns but W has {W.shape[1]} (input dim)")
        return W, a, X
    return W, a


def features(W, X, activation="relu") -> np.ndarray:
    r"""The hidden layer :math:`\sigma(XW^\top)` (chapter 1; the features of chapter 6).

    Parameters
    ----------
    W : array_like (m, d)
    X : array_like (n, d)
    activation : str, (sigma, dsigma) pair or Activation

    Returns
    -------
    ndarray (n, m)
    """
    W = V.finite_array(W, "W", ndim=2)
    X = V.finite_array(X, "X", ndim=2)
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but W has {W.shape[1]} (input dim)")
    return np.asarray(get_activation(activation).sigma(X @ W.T), dtype=float)


def forward(W, a, X, activation="relu", scaling="ntk") -> np.ndarray:
    r"""Network output :math:`f(x_i) = s_m\sum_k a_k\sigma(\langle w_k,x_i\rangle)`.

    The network of {prf:ref}`def-ch1-scalings`, in one matrix product :math:`XW^\top`.

    Parameters
    ----------
    W : array_like (m, d)
    a : array_like (m,)
    X : array_like (n, d)
    activation : str, (sigma, dsigma) pair or Activation
    scaling : {"ntk", "mf"} or float
        As in :func:`output_scale`.

    Returns
    -------
    ndarray (n,)
    """
    W, a, X = check_params(W, a, X)
    s = output_scale(W.shape[0], scaling)
    return s * (get_activation(activation).sigma(X @ W.T) @ a)


def loss_value(W, a, X, y, activation="relu", scaling="ntk", loss="square") -> float:
    r"""Empirical risk: :math:`\frac1{2n}\sum_i(f(x_i)-y_i)^2` or :math:`-\frac1n\sum_iy_if(x_i)`.

    The risk of {prf:ref}`def-ch1-scalings` (square loss) or of chapter 7 (correlation loss).

    Parameters
    ----------
    W, a, X, activation, scaling
        As in :func:`forward`.
    y : array_like (n,)
        Labels.
    loss : str or Loss
        A name from :data:`lecnotes.core.activations.LOSSES`.

    Returns
    -------
    float
    """
    X, y = V.data_pair(X, y)
    return loss_and_dual(forward(W, a, X, activation, scaling), y, loss)[0]


def _grads(W, a, X, y, act, s, loss, need_a=True):
    Z = X @ W.T  # product 1
    if not need_a and get_loss(loss).output_free:
        # the dual variable does not involve the outputs: no sigma(Z), no forward pass (the
        # risk is not returned); the same g as loss_and_dual with the outputs
        S, value = None, None
        g = get_loss(loss).derivative(y, np.zeros(y.shape[0])) / y.shape[0]
    else:
        S = act.sigma(Z)
        f = s * (S @ a)
        value, g = loss_and_dual(f, y, loss)
    M = act.dsigma(Z) * g[:, None]  # a new array: never modifies Z or S in place
    M *= s * a[None, :]
    gW = M.T @ X  # product 2
    ga = s * (S.T @ g) if need_a else None
    return gW, ga, value


def gradients(W, a, X, y, activation="relu", scaling="ntk", loss="square"):
    r"""Gradients of the empirical risk with respect to both layers (chapter 1).

    .. math:: \nabla_{w_k}\hat R = s_m a_k\sum_i g_i\sigma'(\langle w_k,x_i\rangle)x_i,\qquad
              \partial_{a_k}\hat R = s_m\sum_i g_i\sigma(\langle w_k,x_i\rangle),

    with :math:`g_i = (f(x_i)-y_i)/n` (square loss) or :math:`-y_i/n` (correlation loss).

    Parameters
    ----------
    W, a, X, y, activation, scaling, loss
        As in :func:`loss_value`.

    Returns
    -------
    grad_W : ndarray (m, d)
    grad_a : ndarray (m,)
    value : float
        The risk at ``(W, a)``.
    """
    W, a, X = check_params(W, a, X)
    X, y = V.data_pair(X, y)
    s = output_scale(W.shape[0], scaling)
    return _grads(W, a, X, y, get_activation(activation), s, loss)


def first_layer_gradient(W, a, X, y, activation="relu", scaling=1.0, loss="square", *,
                         chunk: int | None = None):
    r"""First-layer gradient :math:`\nabla_W\hat R` in two matrix products (chapters 1 and 6).

    The module-level formula: :math:`Z = XW^\top`, then
    :math:`[g\odot\sigma'(Z)\odot s_m a]^\top X`. No loop over samples or neurons.

    Parameters
    ----------
    W, a, X, y, activation, loss
        As in :func:`loss_value`.
    scaling : {"ntk", "mf"} or float
        Default ``1.0`` (the giant-step convention :math:`f=\sigma(XW^\top)a`).
    chunk : int, optional
        Add up the contributions of blocks of ``chunk`` samples (the same result up to
        rounding): the ``n x m`` pre-activations are never formed at once, which chapter 6
        needs at ``n = d^2``, ``d = 512``. ``None`` (default): one block.

    Returns
    -------
    ndarray (m, d)
    """
    W, a, X = check_params(W, a, X)
    X, y = V.data_pair(X, y)
    s = output_scale(W.shape[0], scaling)
    act = get_activation(activation)
    n = X.shape[0]
    if chunk is None or V.positive_int(chunk, "chunk") >= n:
        return _grads(W, a, X, y, act, s, loss, need_a=False)[0]
    out = np.zeros_like(W)
    for start in range(0, n, chunk):
        Xc, yc = X[start:start + chunk], y[start:start + chunk]
        out += (Xc.shape[0] / n) * _grads(W, a, Xc, yc, act, s, loss, need_a=False)[0]
    return out


@dataclass
class TrainResult:
    """Outcome of :func:`train`.

    Attributes
    ----------
    W, a : ndarray
        Final weights.
    losses : ndarray
        Training risk before each step (``losses[t]`` at step ``t``) and after the last one.
    steps : int
        Number of steps taken.
    reached : bool
        Whether ``target_loss`` was reached or ``stop`` fired (``True`` when neither was
        given).
    records : list
        ``(step, monitor(W, a))`` every ``record_every`` steps (and at the end).
    """

    W: np.ndarray
    a: np.ndarray
    losses: np.ndarray
    steps: int
    reached: bool
    records: list = field(default_factory=list)


def train(W, a, X, y, *, eta: float, steps: int, activation="relu", scaling="ntk",
          loss: str = "square", train_second_layer: bool = True,
          target_loss: float | None = None, stop: Callable | None = None,
          monitor: Callable | None = None, record_every: int = 10) -> TrainResult:
    r"""Full-batch gradient descent on both layers (chapter 1).

    :math:`(W,a)\leftarrow(W,a)-\eta\nabla\hat R` for ``steps`` steps, or until the training
    risk is at most ``target_loss``. Use :func:`step_size` for ``eta``: order one in the NTK
    scaling, order ``m`` in the mean-field scaling.

    Parameters
    ----------
    W, a : array_like
        Initial weights (not modified).
    X, y : array_like
        Training data (n x d) and labels (n,).
    eta : float
        Step size (> 0).
    steps : int
        Maximal number of steps (>= 0).
    activation, scaling, loss
        As in :func:`gradients`.
    train_second_layer : bool
        ``False`` keeps ``a`` fixed.
    target_loss : float, optional
        Stop as soon as the risk is at most this value.
    stop : callable, optional
        ``stop(W, a) -> bool`` checked before every step; training stops when it returns
        ``True`` (e.g. when a norm budget is exhausted, chapter 1). ``reached`` is then
        ``True``.
    monitor : callable, optional
        ``monitor(W, a) -> float`` recorded every ``record_every`` steps.
    record_every : int

    Returns
    -------
    TrainResult
    """
    W, a, X = check_params(W, a, X)
    X, y = V.data_pair(X, y)
    eta = V.positive_float(eta, "eta")
    steps = V.positive_int(steps, "steps", minimum=0)
    record_every = V.positive_int(record_every, "record_every")
    if target_loss is not None:
        target_loss = V.nonneg_float(target_loss, "target_loss")
    if monitor is not None and not callable(monitor):
        raise ValueError("monitor must be a callable monitor(W, a)")
    if stop is not None and not callable(stop):
        raise ValueError("stop must be a callable stop(W, a) -> bool")
    act = get_activation(activation)
    s = output_scale(W.shape[0], scaling)
    W, a = W.copy(), a.copy()
    losses, records = [], []
    reached = target_loss is None and stop is None
    t = 0
    for t in range(steps + 1):
        if monitor is not None and t % record_every == 0:
            records.append((t, float(monitor(W, a))))
        with np.errstate(over="ignore", invalid="ignore"):
            gW, ga, value = _grads(W, a, X, y, act, s, loss, need_a=train_second_layer)
        losses.append(value)
        if not np.isfinite(value):
            raise FloatingPointError(f"training diverged at step {t}: reduce eta")
        if (target_loss is not None and value <= target_loss) or (
            stop is not None and stop(W, a)
        ):
            reached = True
            break
        if t == steps:
            break
        W -= eta * gW
        if train_second_layer:
            a -= eta * ga
    if monitor is not None and (not records or records[-1][0] != t):
        records.append((t, float(monitor(W, a))))
    return TrainResult(W, a, np.asarray(losses), t, reached, records)


def empirical_ntk(W, a, X, Z=None, activation="relu", scaling="ntk") -> np.ndarray:
    r"""Empirical neural tangent kernel :math:`\langle\nabla_\theta f(x),\nabla_\theta f(z)\rangle`.

    The tangent kernel of the lazy regime of chapter 1 ({prf:ref}`prop-ch1-lazy-movement`),
    without forming the Jacobian:

    .. math:: K(X,Z) = s_m^2\big[\sigma(XW^\top)\sigma(ZW^\top)^\top +
              (XZ^\top)\odot\big(\sigma'(XW^\top)\,\mathrm{diag}(a^2)\,\sigma'(ZW^\top)^\top\big)\big].

    Parameters
    ----------
    W, a, X, activation, scaling
        As in :func:`forward`.
    Z : array_like (n_Z, d), optional
        Second set of inputs (default ``X``).

    Returns
    -------
    ndarray (n_X, n_Z)
    """
    W, a, X = check_params(W, a, X)
    Z = X if Z is None else check_params(W, a, Z)[2]
    act = get_activation(activation)
    s = output_scale(W.shape[0], scaling)
    UX, UZ = X @ W.T, Z @ W.T
    K = act.sigma(UX) @ act.sigma(UZ).T
    K += (X @ Z.T) * ((act.dsigma(UX) * a**2) @ act.dsigma(UZ).T)
    return s**2 * K


