r"""Two-layer networks: scalings, gradients and full-batch training (chapters 1, 6, 7).

The network of the book (chapter 1, eq. (network)) is

.. math:: f(x;W,a) = s_m\sum_{k=1}^m a_k\,\sigma(\langle w_k,x\rangle),
          \qquad W\in\mathbb R^{m\times d},\ a\in\mathbb R^m,

with the output scale :math:`s_m` fixing the *scaling*:

* ``"ntk"`` (lazy): :math:`s_m = m^{-1/2}`, trained with step sizes of order one;
* ``"mf"`` (mean-field): :math:`s_m = m^{-1}`, trained with step sizes of order :math:`m`
  (use :func:`step_size`), so that every neuron moves by an amount independent of the width;
* a positive number: :math:`s_m` itself, e.g. ``1.0`` for the giant-step convention of
  chapter 6, :math:`f = \sigma(XW^\top)a` with the width absorbed in ``a``.

Inputs are the rows of ``X`` (n x d); first-layer rows are initialised as
:math:`w_k\sim N(0, I_d/d)` so that pre-activations are of order one. The empirical risk is
:math:`\hat R = \frac1{2n}\sum_i (f(x_i)-y_i)^2` (``loss="square"``) or
:math:`-\frac1n\sum_i y_i f(x_i)` (``loss="correlation"``, chapter 7).

Everything is vectorised: a forward pass is one matrix product :math:`XW^\top`, and the
first-layer gradient (chapter 1, eq. (gradient)) is a second one,

.. math:: \nabla_W\hat R = s_m\,\big[(g\,\mathbf 1^\top)\odot\sigma'(XW^\top)\odot
          (\mathbf 1 a^\top)\big]^\top X,\qquad g_i = \partial\hat R/\partial f(x_i).

Chapter 6 (giant steps) adds the layer-wise procedure of Dandi et al. (:func:`giant_step`,
:func:`multi_step`, :func:`two_phase`, :func:`giant_step_size`, :func:`remove_linear_part`),
overlap measures (:func:`neuron_overlaps`, :func:`overlap_gram`, :func:`subspace_energy`,
:func:`top_singular`) and the one-step theory (:func:`one_step_neuron_overlap`,
:func:`leap2_neuron_overlap`, :func:`one_step_bulk_variance`, :func:`one_step_spike`, the
Marchenko-Pastur law of the singular values :func:`gaussian_singular_value_density` and the
rectangular spiked model :func:`spiked_rectangular`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from . import _validate as V

__all__ = [
    "Activation",
    "ACTIVATIONS",
    "get_activation",
    "output_scale",
    "step_size",
    "init_params",
    "features",
    "forward",
    "loss_value",
    "gradients",
    "first_layer_gradient",
    "TrainResult",
    "train",
    "path_norm",
    "path_norm_rademacher_bound",
    "relative_movement",
    "param_distance",
    "empirical_ntk",
    "giant_step",
    "multi_step",
    "ridge_second_layer",
    "ridge_second_layer_path",
    "giant_step_size",
    "remove_linear_part",
    "neuron_overlaps",
    "overlap_gram",
    "subspace_energy",
    "top_singular",
    "ActivationMoments",
    "activation_moments",
    "one_step_neuron_overlap",
    "leap2_neuron_overlap",
    "one_step_bulk_variance",
    "gaussian_singular_value_edges",
    "gaussian_singular_value_density",
    "gaussian_singular_value_cdf",
    "spiked_rectangular",
    "one_step_spike",
    "TwoPhaseResult",
    "two_phase",
]


# ---------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Activation:
    r"""An activation :math:`\sigma` together with its derivative :math:`\sigma'`.

    Attributes
    ----------
    name : str
    sigma, dsigma : callable
        Vectorised functions of a numpy array.
    latex : str
        Formula for legends.
    homogeneous : bool
        ``True`` if :math:`\sigma(tu) = t\sigma(u)` for ``t > 0`` (ReLU, linear): then the path
        norm controls the Rademacher complexity (chapter 1, eq. (path-norm bound)).
    """

    name: str
    sigma: Callable[[np.ndarray], np.ndarray]
    dsigma: Callable[[np.ndarray], np.ndarray]
    latex: str = ""
    homogeneous: bool = False

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Activation({self.name!r})"


def _relu(u):
    return np.maximum(u, 0.0)


def _drelu(u):
    return (u > 0).astype(float)


def _dtanh(u):
    return 1.0 - np.tanh(u) ** 2  # no overflow of cosh for |u| > 710


ACTIVATIONS: dict[str, Activation] = {
    act.name: act
    for act in [
        Activation("relu", _relu, _drelu, r"\max(u,0)", homogeneous=True),
        Activation("tanh", np.tanh, _dtanh, r"\tanh(u)"),
        Activation("linear", lambda u: np.asarray(u, dtype=float), np.ones_like, "u", True),
        Activation("quadratic", np.square, lambda u: 2.0 * u, "u^2"),
    ]
}
"""Catalogue of named activations: relu, tanh, linear, quadratic."""


def get_activation(activation) -> Activation:
    """Resolve an activation given by name, as a ``(sigma, dsigma)`` pair, or as an Activation.

    Raises
    ------
    ValueError
        For an unknown name or anything else.
    """
    if isinstance(activation, Activation):
        return activation
    if isinstance(activation, str):
        try:
            return ACTIVATIONS[activation]
        except KeyError:
            raise ValueError(
                f"unknown activation {activation!r}; known: {', '.join(sorted(ACTIVATIONS))}"
            ) from None
    if (
        isinstance(activation, (tuple, list))
        and len(activation) == 2
        and all(callable(f) for f in activation)
    ):
        return Activation("custom", activation[0], activation[1])
    raise ValueError(
        "activation must be a name from ACTIVATIONS, a (sigma, dsigma) pair of callables or "
        f"an Activation, got {activation!r}"
    )


# ---------------------------------------------------------------------------------------
# Scalings
# ---------------------------------------------------------------------------------------
def output_scale(m: int, scaling="ntk") -> float:
    r"""The output scale :math:`s_m` of chapter 1, eq. (network).

    ``"ntk"`` gives :math:`m^{-1/2}`, ``"mf"`` gives :math:`m^{-1}`, a positive number is
    returned as is.
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
    r"""The natural gradient step of each scaling (chapter 1, eq. (steps)).

    ``eta0`` for ``"ntk"`` (steps of order one) and ``eta0 * m`` for ``"mf"`` (steps of order
    ``m``). With these steps the mean-field dynamics in time :math:`t=\eta_0\cdot`(steps) has
    a width-independent limit, and so does the lazy one.
    """
    eta0 = V.positive_float(eta0, "eta0")
    m = V.positive_int(m, "m")
    if scaling == "ntk":
        return eta0
    if scaling == "mf":
        return eta0 * m
    raise ValueError(f"scaling must be 'ntk' or 'mf', got {scaling!r}")


def init_params(
    m: int,
    d: int,
    *,
    rng=None,
    symmetric: bool = True,
    second_layer: str = "sign",
    a_scale: float = 1.0,
):
    r"""Initial weights: rows :math:`w_k\sim N(0,I_d/d)`, second layer of size ``a_scale``.

    Chapter 1, eq. (initialisation). With ``symmetric=True`` (``m`` even) the second half of
    the neurons copies the first half with opposite :math:`a_k`, so :math:`f(\cdot;W_0,a_0)=0`
    in every scaling (the "doubling trick" of Chizat, Oyallon and Bach): training then starts
    from the zero function and the output scale only sets the dynamics.

    Parameters
    ----------
    m, d : int
        Width and input dimension.
    rng : Generator, int or None
    symmetric : bool
        Antisymmetric pairs of neurons (needs even ``m``).
    second_layer : {"sign", "gaussian", "zero"}
        :math:`a_k = \pm` ``a_scale``, :math:`a_k\sim N(0,` ``a_scale**2`` :math:`)`, or 0.
    a_scale : float

    Returns
    -------
    W : ndarray (m, d), a : ndarray (m,)
    """
    m = V.positive_int(m, "m")
    d = V.positive_int(d, "d")
    a_scale = V.nonneg_float(a_scale, "a_scale")
    rng = V.generator(rng)
    if second_layer not in ("sign", "gaussian", "zero"):
        raise ValueError(f"second_layer must be 'sign', 'gaussian' or 'zero', got {second_layer!r}")
    if symmetric and m % 2:
        raise ValueError(f"a symmetric initialisation needs an even width, got m = {m}")
    half = m // 2 if symmetric else m
    W = rng.standard_normal((half, d)) / np.sqrt(d)
    if second_layer == "sign":
        a = a_scale * rng.choice([-1.0, 1.0], size=half)
    elif second_layer == "gaussian":
        a = a_scale * rng.standard_normal(half)
    else:
        a = np.zeros(half)
    if symmetric:
        W = np.concatenate([W, W])
        a = np.concatenate([a, -a])
    return W, a


# ---------------------------------------------------------------------------------------
# Forward pass, loss, gradients
# ---------------------------------------------------------------------------------------
def _check_params(W, a, X=None):
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
    r"""The hidden layer :math:`\sigma(XW^\top)`, shape (n, m) (chapter 1; chapter 6 features)."""
    W = V.finite_array(W, "W", ndim=2)
    X = V.finite_array(X, "X", ndim=2)
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but W has {W.shape[1]} (input dim)")
    return np.asarray(get_activation(activation).sigma(X @ W.T), dtype=float)


def forward(W, a, X, activation="relu", scaling="ntk") -> np.ndarray:
    r"""Network output :math:`f(x_i) = s_m\sum_k a_k\sigma(\langle w_k,x_i\rangle)` (chapter 1).

    One matrix product :math:`XW^\top`. Returns shape (n,).
    """
    W, a, X = _check_params(W, a, X)
    s = output_scale(W.shape[0], scaling)
    return s * (get_activation(activation).sigma(X @ W.T) @ a)


def _loss_and_dual(f, y, loss):
    n = y.shape[0]
    if loss == "square":
        r = f - y
        return 0.5 * float(r @ r) / n, r / n
    if loss == "correlation":
        return -float(y @ f) / n, -y / n
    raise ValueError(f"loss must be 'square' or 'correlation', got {loss!r}")


def loss_value(W, a, X, y, activation="relu", scaling="ntk", loss="square") -> float:
    r"""Empirical risk: :math:`\frac1{2n}\sum_i(f(x_i)-y_i)^2` or :math:`-\frac1n\sum_iy_if(x_i)`.

    Chapter 1, eq. (risk).
    """
    X, y = V.data_pair(X, y)
    return _loss_and_dual(forward(W, a, X, activation, scaling), y, loss)[0]


def _grads(W, a, X, y, act, s, loss, need_a=True):
    Z = X @ W.T  # product 1
    S = act.sigma(Z)
    f = s * (S @ a)
    value, g = _loss_and_dual(f, y, loss)
    M = act.dsigma(Z) * g[:, None]  # a new array: never modifies Z or S in place
    M *= s * a[None, :]
    gW = M.T @ X  # product 2
    ga = s * (S.T @ g) if need_a else None
    return gW, ga, value


def gradients(W, a, X, y, activation="relu", scaling="ntk", loss="square"):
    r"""Gradients of the empirical risk with respect to both layers (chapter 1, eq. (gradient)).

    .. math:: \nabla_{w_k}\hat R = s_m a_k\sum_i g_i\sigma'(\langle w_k,x_i\rangle)x_i,\qquad
              \partial_{a_k}\hat R = s_m\sum_i g_i\sigma(\langle w_k,x_i\rangle),

    with :math:`g_i = (f(x_i)-y_i)/n` (square loss) or :math:`-y_i/n` (correlation loss).

    Returns
    -------
    grad_W : ndarray (m, d)
    grad_a : ndarray (m,)
    value : float
        The risk at ``(W, a)``.
    """
    W, a, X = _check_params(W, a, X)
    X, y = V.data_pair(X, y)
    s = output_scale(W.shape[0], scaling)
    return _grads(W, a, X, y, get_activation(activation), s, loss)


def first_layer_gradient(W, a, X, y, activation="relu", scaling=1.0, loss="square", *,
                         chunk: int | None = None):
    r"""First-layer gradient :math:`\nabla_W\hat R` in two matrix products (chapters 1 and 6).

    The module-level formula: :math:`Z = XW^\top`, then
    :math:`[g\odot\sigma'(Z)\odot s_m a]^\top X`. No loop over samples or neurons.
    ``scaling`` defaults to ``1.0`` (the giant-step convention :math:`f=\sigma(XW^\top)a`).

    Parameters
    ----------
    chunk : int, optional
        Process the samples in blocks of ``chunk`` rows and add up the blocks' contributions
        (the risk is an average over samples, so the result is the same up to rounding).
        Only the memory changes: the ``n x m`` pre-activations are never formed at once, which
        is what chapter 6 needs at ``n = d^2`` with ``d = 512``. ``None`` (default) uses one
        block.

    Returns
    -------
    ndarray (m, d)
    """
    W, a, X = _check_params(W, a, X)
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


# ---------------------------------------------------------------------------------------
# Full-batch gradient descent
# ---------------------------------------------------------------------------------------
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


def train(
    W,
    a,
    X,
    y,
    *,
    eta: float,
    steps: int,
    activation="relu",
    scaling="ntk",
    loss: str = "square",
    train_second_layer: bool = True,
    target_loss: float | None = None,
    stop: Callable | None = None,
    monitor: Callable | None = None,
    record_every: int = 10,
) -> TrainResult:
    r"""Full-batch gradient descent on both layers (chapter 1, eq. (GD)).

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
    W, a, X = _check_params(W, a, X)
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


# ---------------------------------------------------------------------------------------
# Norms and movement
# ---------------------------------------------------------------------------------------
def path_norm(W, a, scaling="mf") -> float:
    r"""Path norm :math:`s_m\sum_k|a_k|\,\|w_k\|` (chapter 1, eq. (path norm)).

    For a positively homogeneous activation (ReLU) it bounds the Barron norm of the network
    function; with ``scaling="mf"`` it is :math:`\frac1m\sum_k|a_k|\|w_k\|`, of order one along
    mean-field training.
    """
    W, a = _check_params(W, a)
    s = output_scale(W.shape[0], scaling)
    return float(s * np.abs(a) @ np.linalg.norm(W, axis=1))


def path_norm_rademacher_bound(X, B: float) -> float:
    r"""Bound on the Rademacher complexity of ReLU networks with path norm at most ``B``.

    Chapter 1, eq. (path-norm bound) (Neyshabur, Tomioka, Srebro 2015):
    :math:`\widehat{\mathfrak R}_n \le 2B\sqrt{\sum_i\|x_i\|^2}/n`.
    """
    X = V.finite_array(X, "X", ndim=2)
    if X.shape[0] < 1:
        raise ValueError("X must have at least one row")
    B = V.nonneg_float(B, "B")
    return float(2.0 * B * np.sqrt(np.sum(X * X)) / X.shape[0])


def relative_movement(W, W0) -> float:
    r""":math:`\|W-W_0\|_F/\|W_0\|_F`, the relative movement of the first layer (chapter 1)."""
    W = V.finite_array(W, "W", ndim=2)
    W0 = V.finite_array(W0, "W0", ndim=2)
    if W.shape != W0.shape:
        raise ValueError(f"shapes differ: {W.shape} vs {W0.shape}")
    n0 = np.linalg.norm(W0)
    if n0 == 0:
        raise ValueError("W0 is zero: relative movement undefined")
    return float(np.linalg.norm(W - W0) / n0)


def param_distance(W, a, W0, a0) -> float:
    r""":math:`\|\theta-\theta_0\| = (\|W-W_0\|_F^2+\|a-a_0\|^2)^{1/2}` (chapter 1).

    In the lazy regime it bounds the RKHS norm (for the tangent kernel at initialisation) of
    the change of the network function, the "norm budget" of the linearised model.
    """
    W, a = _check_params(W, a)
    W0, a0 = _check_params(W0, a0)
    if W.shape != W0.shape:
        raise ValueError(f"shapes differ: {W.shape} vs {W0.shape}")
    return float(np.sqrt(np.sum((W - W0) ** 2) + np.sum((a - a0) ** 2)))


def empirical_ntk(W, a, X, Z=None, activation="relu", scaling="ntk") -> np.ndarray:
    r"""Empirical neural tangent kernel :math:`\langle\nabla_\theta f(x),\nabla_\theta f(z)\rangle`.

    Chapter 1, eq. (empirical NTK), without forming the Jacobian:

    .. math:: K(X,Z) = s_m^2\big[\sigma(XW^\top)\sigma(ZW^\top)^\top +
              (XZ^\top)\odot\big(\sigma'(XW^\top)\,\mathrm{diag}(a^2)\,\sigma'(ZW^\top)^\top\big)\big].

    Returns an (n_X, n_Z) array (``Z`` defaults to ``X``).
    """
    W, a, X = _check_params(W, a, X)
    Z = X if Z is None else _check_params(W, a, Z)[2]
    act = get_activation(activation)
    s = output_scale(W.shape[0], scaling)
    UX, UZ = X @ W.T, Z @ W.T
    K = act.sigma(UX) @ act.sigma(UZ).T
    K += (X @ Z.T) * ((act.dsigma(UX) * a**2) @ act.dsigma(UZ).T)
    return s**2 * K


# ---------------------------------------------------------------------------------------
# Layer-wise training (chapters 6, 7)
# ---------------------------------------------------------------------------------------
def giant_step(W, a, X, y, eta, activation="relu", *, scaling=1.0, loss="square",
               chunk: int | None = None):
    r"""One gradient step on the first layer, second layer fixed (chapter 6, eq. (giant step)).

    :math:`W_1 = W - \eta\nabla_W\hat R(W,a)` with :math:`f = s\,\sigma(XW^\top)a`
    (``scaling=1.0``: :math:`f=\sigma(XW^\top)a`, the width absorbed in ``a``). A "giant"
    step takes :math:`\eta` of order :math:`p\sqrt{n/d}` (Dandi et al. 2024; see
    :func:`giant_step_size`). ``chunk`` as in :func:`first_layer_gradient`.

    Returns
    -------
    ndarray (m, d), the updated first layer.
    """
    eta = V.positive_float(eta, "eta")
    return np.asarray(W, dtype=float) - eta * first_layer_gradient(
        W, a, X, y, activation, scaling, loss, chunk=chunk
    )


def multi_step(W, a, batches: Sequence, eta, activation="relu", loss="square", *, scaling=1.0,
               chunk: int | None = None):
    r"""Several first-layer steps, one per batch (chapters 6 and 7).

    ``batches`` is a sequence of ``(X, y)`` pairs; passing the same pair twice reuses the
    batch (chapter 7). ``eta`` is a number or one number per step. The second layer stays
    fixed.

    Returns
    -------
    list of ndarray
        The first layer after each step (``len(batches)`` arrays).
    """
    if not isinstance(batches, Sequence) or len(batches) < 1:
        raise ValueError("batches must be a non-empty sequence of (X, y) pairs")
    etas = np.asarray(eta, dtype=float)
    if etas.ndim == 0:
        etas = np.full(len(batches), float(etas))
    if etas.shape != (len(batches),):
        raise ValueError(f"eta must be a number or have one entry per batch ({len(batches)})")
    out = []
    for (Xb, yb), e in zip(batches, etas, strict=True):
        W = giant_step(W, a, Xb, yb, e, activation, scaling=scaling, loss=loss, chunk=chunk)
        out.append(W)
    return out


def ridge_second_layer(W, X, y, lam: float, activation="relu", *, scaling=1.0,
                       chunk: int | None = None) -> np.ndarray:
    r"""Second layer by ridge regression on the features (chapters 6 and 7).

    :math:`\hat a = \arg\min_a \frac1n\|y-F a\|^2+\lambda\|a\|^2`, :math:`F=s\,\sigma(XW^\top)`:
    :math:`\hat a=(F^\top F+n\lambda I)^{-1}F^\top y` when :math:`n\ge p`, or the equivalent
    :math:`F^\top(FF^\top+n\lambda I)^{-1}y` when :math:`n<p` (Cholesky solves, no inverse).
    ``lam = 0`` gives the minimum-norm least-squares solution.

    The ridge of the reference code of Dandi et al., :math:`(F^\top F+\lambda_{\rm code}I)`,
    is ``lam = lam_code / n`` here.

    Parameters
    ----------
    chunk : int, optional
        For ``n >= p`` and ``lam > 0``: accumulate :math:`F^\top F` and :math:`F^\top y` over
        blocks of ``chunk`` samples, so that the ``n x p`` feature matrix is never formed
        (ignored otherwise).

    Returns
    -------
    ndarray (p,)
    """
    X, y = V.data_pair(X, y)
    lam = V.nonneg_float(lam, "lam")
    W = V.finite_array(W, "W", ndim=2)
    if W.shape[0] < 1:
        raise ValueError("W must have at least one row (neuron)")
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but W has {W.shape[1]} (input dim)")
    s = output_scale(W.shape[0], scaling)
    n, p = X.shape[0], W.shape[0]
    if chunk is not None:
        chunk = V.positive_int(chunk, "chunk")
        if n >= p and lam > 0 and chunk < n:
            act = get_activation(activation)
            gram, rhs = np.zeros((p, p)), np.zeros(p)
            for start in range(0, n, chunk):
                Fc = s * act.sigma(X[start:start + chunk] @ W.T)
                gram += Fc.T @ Fc
                rhs += Fc.T @ y[start:start + chunk]
            gram[np.diag_indices(p)] += n * lam
            return sla.cho_solve(sla.cho_factor(gram), rhs)
    F = s * features(W, X, activation)
    if lam == 0:
        return np.linalg.lstsq(F, y, rcond=None)[0]
    if n >= p:
        return sla.cho_solve(sla.cho_factor(F.T @ F + n * lam * np.eye(p)), F.T @ y)
    return F.T @ sla.cho_solve(sla.cho_factor(F @ F.T + n * lam * np.eye(n)), y)


# ---------------------------------------------------------------------------------------
# Giant steps: step size, overlaps, one-step theory, two-phase training (chapter 6)
# ---------------------------------------------------------------------------------------
def giant_step_size(p: int, n: int, d: int, eta0: float = 1.0) -> float:
    r"""The giant-step learning rate :math:`\eta = \eta_0\,p\sqrt{n/d}` (chapter 6, eq. (scalings)).

    With :math:`f = p^{-1/2}\sigma(XW^\top)a` and :math:`a_i = b_i/\sqrt p`,
    :math:`b_i = O(1)`, neuron :math:`i` moves by :math:`\bar\eta\,b_i` times its own
    gradient direction, :math:`\bar\eta = \eta/p = \eta_0\sqrt{n/d}` (Dandi et al. 2024).
    The reference code of the paper uses :math:`\eta = 10\sqrt{np}`, i.e.
    :math:`\eta_0 = 10\sqrt{d/p}`.
    """
    p = V.positive_int(p, "p")
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    eta0 = V.positive_float(eta0, "eta0")
    return eta0 * p * math.sqrt(n / d)


def remove_linear_part(X, y):
    r"""Subtract the empirical constant and linear parts of the labels (chapter 6, leap 2).

    :math:`A = \frac1n\sum_iy_i`, :math:`B = \frac1n\sum_iy_ix_i` (the first-moment estimate
    of :math:`\mathbb E[yx]`, as in the reference code of Dandi et al.), and the residual
    labels :math:`y_i - A - \langle B,x_i\rangle`, whose first Hermite coefficients vanish
    up to :math:`O(\sqrt{d/n})`: a leap-2 step then sees only the degree-2 part.

    Returns
    -------
    residual : ndarray (n,), A : float, B : ndarray (d,)
    """
    X, y = V.data_pair(X, y)
    A = float(y.mean())
    B = X.T @ y / X.shape[0]
    return y - A - X @ B, A, B


def _unit_rows(M, name):
    M = V.finite_array(M, name)
    if M.ndim == 1:
        M = M[None, :]
    if M.ndim != 2:
        raise ValueError(f"{name} must be a 1-d or 2-d array, got shape {M.shape}")
    norms = np.linalg.norm(M, axis=1)
    if M.shape[0] < 1 or np.any(norms == 0):
        raise ValueError(f"{name} must have at least one row and no zero row")
    return M / norms[:, None]


def neuron_overlaps(W, W_star) -> np.ndarray:
    r"""Cosines :math:`\langle w_i,w^\star_k\rangle/(\|w_i\|\|w^\star_k\|)`, shape (p, k).

    Chapter 6.

    The *overlap matrix* of Dandi et al.: one row per neuron, one column per target
    direction. A 1-d ``W_star`` gives shape (p,). A random direction has cosines of order
    :math:`d^{-1/2}`; a learned one, of order one.
    """
    Wn = _unit_rows(W, "W")
    one = np.ndim(W_star) == 1
    Sn = _unit_rows(W_star, "W_star")
    if Sn.shape[1] != Wn.shape[1]:
        raise ValueError(f"dimensions differ: W has {Wn.shape[1]} columns, W_star {Sn.shape[1]}")
    C = Wn @ Sn.T
    return C[:, 0] if one else C


def overlap_gram(W, W_star) -> np.ndarray:
    r""":math:`Q = \frac1p C^\top C` for the overlap matrix :math:`C` (k x k) (chapter 6).

    :math:`Q_{kk}` is the mean squared overlap of the neurons with direction :math:`k`
    (about :math:`1/d` for an unlearned direction). Its eigenvalues say how many directions
    the neurons span: after one step with :math:`n` of order :math:`d` only one is of order
    one (the update is rank one), after one step with :math:`n` of order :math:`d^2` on a
    leap-2 target there are as many as target directions (specialisation).
    """
    C = neuron_overlaps(W, np.atleast_2d(V.finite_array(W_star, "W_star")))
    return C.T @ C / C.shape[0]


def subspace_energy(W, W_star) -> np.ndarray:
    r"""Per-neuron fraction of norm in the target subspace, :math:`\|\Pi^\star w_i\|^2/\|w_i\|^2`.

    Chapter 6 (the quantity bounded below in Dandi et al.'s one-step theorem and above in
    their sub-leap impossibility result). ``W_star`` (k, d) spans the subspace (it is
    orthonormalised here). Returns shape (p,).
    """
    Wn = _unit_rows(W, "W")
    S = V.finite_array(W_star, "W_star")
    S = np.atleast_2d(S)
    if S.shape[1] != Wn.shape[1]:
        raise ValueError(f"dimensions differ: W has {Wn.shape[1]} columns, W_star {S.shape[1]}")
    q, r = np.linalg.qr(S.T)
    keep = np.abs(np.diag(r)) > 1e-12 * max(1.0, float(np.abs(r).max()))
    if not keep.any():
        raise ValueError("W_star spans the zero subspace")
    return np.sum((Wn @ q[:, keep]) ** 2, axis=1)


def top_singular(W, k: int = 1):
    r"""The ``k`` largest singular values of ``W`` and their right singular vectors (chapter 6).

    Dense LAPACK for small matrices, Lanczos (``scipy.sparse.linalg.svds``, deterministic
    start) otherwise. Signs are fixed so that the largest entry of each vector is positive.

    Returns
    -------
    s : ndarray (k,), decreasing; V : ndarray (k, d), orthonormal rows.
    """
    W = V.finite_array(W, "W", ndim=2)
    k = V.positive_int(k, "k")
    if k > min(W.shape):
        raise ValueError(f"k = {k} exceeds min(W.shape) = {min(W.shape)}")
    if min(W.shape) <= 256 or k >= min(W.shape) - 1:
        _, s, Vt = np.linalg.svd(W, full_matrices=False)
        s, Vt = s[:k], Vt[:k]
    else:
        from scipy.sparse.linalg import svds

        v0 = np.ones(min(W.shape)) / math.sqrt(min(W.shape))
        _, s, Vt = svds(W, k=k, v0=v0, tol=1e-10)
        order = np.argsort(s)[::-1]
        s, Vt = s[order], Vt[order]
    idx = np.argmax(np.abs(Vt), axis=1)
    Vt = Vt * np.sign(Vt[np.arange(k), idx])[:, None]
    return s, Vt


@dataclass(frozen=True)
class ActivationMoments:
    r"""Gaussian moments of :math:`\sigma'` that enter the one-step theory (chapter 6).

    Attributes
    ----------
    mu1 : float
        :math:`\mathbb E[\sigma'(G)]`, the first Hermite coefficient of :math:`\sigma`
        (1/2 for ReLU): the weight of the rank-one part of the gradient.
    beta1 : float
        :math:`\mathbb E[\sigma'(G)G] = \mathbb E[\sigma''(G)]` (``1/sqrt(2 pi)`` for ReLU):
        the weight with which a step sees degree-2 structure.
    m2 : float
        :math:`\mathbb E[\sigma'(G)^2]` (1/2 for ReLU).
    var : float
        :math:`\mathrm{Var}\,\sigma'(G) = m_2-\mu_1^2` (1/4 for ReLU): the size of the
        per-neuron noise that is *not* rank one.
    lambda3 : float
        :math:`\mathbb E[\sigma'(G)\mathrm{He}_2(G)] = \mathbb E[\sigma(G)\mathrm{He}_3(G)]`,
        the unnormalised third Hermite coefficient of :math:`\sigma`: the weight of the third
        level of a staircase. Zero for the bias-free ReLU.
    """

    mu1: float
    beta1: float
    m2: float
    var: float
    lambda3: float


def activation_moments(activation="relu", breakpoints=None) -> ActivationMoments:
    r"""Compute :class:`ActivationMoments` by adaptive Gaussian quadrature (chapter 6).

    ``breakpoints`` are the kinks of :math:`\sigma` (jumps of :math:`\sigma'`); for
    ``"relu"`` the default is ``(0,)``, otherwise the quadrature finds jumps adaptively.
    """
    from .hermite import gaussian_expectation

    act = get_activation(activation)
    if breakpoints is None:
        breakpoints = (0.0,) if act.name == "relu" else ()

    def ds(g):
        return np.asarray(act.dsigma(g), dtype=float) * np.ones_like(g)

    vals = gaussian_expectation(
        lambda g: np.stack([ds(g), ds(g) * g, ds(g) ** 2, ds(g) * (g * g - 1.0)], axis=1),
        breakpoints=breakpoints,
    )
    mu1, beta1, m2, lam3 = (float(v) for v in vals)
    return ActivationMoments(mu1, beta1, m2, m2 - mu1**2, lam3)


def _link_moments(link):
    from .hermite import gaussian_expectation
    from .targets import get_link

    phi = get_link(link)
    bp = getattr(phi, "breakpoints", ())
    vals = gaussian_expectation(
        lambda g: np.stack([phi(g), phi(g) * g, phi(g) * (g * g - 1) / math.sqrt(2),
                            phi(g) ** 2, (phi(g) * g) ** 2], axis=1),
        breakpoints=bp,
    )
    mean, c1, c2, ey2, ey2g2 = (float(v) for v in vals)
    return mean, c1, c2, ey2, ey2g2


def one_step_neuron_overlap(link, eta_bar: float, delta: float, activation="relu",
                            b: float = 1.0) -> float:
    r"""Overlap of one neuron with :math:`w_\star` after one giant step, :math:`n=\delta d`.

    Chapter 6, eq. (one-step overlap). Neuron :math:`i` with :math:`a_i = b_i/\sqrt p` moves
    to :math:`w_i^1 = w_i^0+\bar\eta b_ig_i`, :math:`\bar\eta=\eta/p`, with
    :math:`g_i = \frac1n\sum_\nu y_\nu\sigma'(\langle w_i^0,x_\nu\rangle)x_\nu`. By Stein's
    lemma :math:`\mathbb E g_i \approx \mu_1c_1w_\star+\mathbb E[y]\beta_1w^0_i`, and the
    fluctuation has squared norm :math:`\mathbb E[y^2]m_2/\delta`, so

    .. math:: |\cos(w_i^1,w_\star)| \to
        \frac{\bar\eta|b|\mu_1|c_1|}{\sqrt{(1+\bar\eta b\,\mathbb E[y]\beta_1)^2
        +\bar\eta^2b^2\big(\mu_1^2c_1^2+\mathbb E[y^2]m_2/\delta\big)}},

    with :math:`c_1 = \mathbb E[\varphi(G)G]` and the moments of :func:`activation_moments`.
    It does not depend on :math:`d` (or :math:`p`): the spike is learned with :math:`n`
    of order :math:`d`. The initial overlap :math:`O(d^{-1/2})` and the output at
    initialisation (:math:`O(p^{-1/2})`) are neglected.

    Parameters
    ----------
    link : callable or str
        The single-index link :math:`\varphi` (a name from :data:`lecnotes.targets.LINKS`).
    eta_bar : float
        :math:`\eta/p > 0`.
    delta : float
        :math:`n/d > 0`.
    activation : str or pair
    b : float
        :math:`\sqrt p\,a_i` (non-zero).
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    b = float(b)
    if not np.isfinite(b) or b == 0:
        raise ValueError(f"b must be a finite non-zero number, got {b!r}")
    mo = activation_moments(activation)
    mean, c1, _, ey2, _ = _link_moments(link)
    num = eta_bar * abs(b) * mo.mu1 * abs(c1)
    den = (1 + eta_bar * b * mean * mo.beta1) ** 2 + eta_bar**2 * b**2 * (
        mo.mu1**2 * c1**2 + ey2 * mo.m2 / delta)
    return float(num / math.sqrt(den))


def leap2_neuron_overlap(link, eta_bar: float, n: int, d: int, activation="relu") -> float:
    r"""Mean squared overlap :math:`\mathbb E[\cos^2(w_i^1,w_\star)]` after one step, leap-2 link.

    Chapter 6, eq. (leap-2 overlap), for a centred link with :math:`c_1 = 0` and neurons with
    :math:`b_i=\pm1`. With :math:`m_i = \langle w_i^0,w_\star\rangle = z_i/\sqrt d`, Stein's
    lemma twice gives :math:`\langle\mathbb E g_i,w_\star\rangle\approx a\,m_i`,
    :math:`a=\sqrt2c_2\beta_1`, :math:`c_2 = \mathbb E[\varphi(G)h_2(G)]`; the fluctuation
    along :math:`w_\star` has variance :math:`\mathbb E[\varphi^2G^2]m_2/n`, the one of the
    whole gradient :math:`\mathbb E[\varphi^2]m_2\,d/n`. Hence

    .. math:: \mathbb E\cos^2 \approx \mathbb E_{z,b}\,
        \frac{\frac{z^2}d(1+\bar\eta ba)^2+\bar\eta^2\mathbb E[\varphi^2G^2]m_2/n}
             {1+\bar\eta^2\mathbb E[\varphi^2]m_2\,d/n+\bar\eta^2a^2z^2/d},

    :math:`z\sim N(0,1)`. With :math:`n=\delta d` and :math:`\bar\eta` of order one this is
    :math:`C/d` (**the step learns nothing**); with :math:`n=\delta_2d^2` and the giant-step
    rate :math:`\bar\eta=\eta_0\sqrt{n/d}` it tends to a :math:`d`-independent constant.

    Parameters
    ----------
    link : callable or str
        Centred link with vanishing first Hermite coefficient (checked).
    eta_bar : float
        :math:`\eta/p`.
    n, d : int
    activation : str or pair
    """
    from .hermite import gaussian_expectation

    eta_bar = V.positive_float(eta_bar, "eta_bar")
    n = V.positive_int(n, "n")
    d = V.positive_int(d, "d")
    mean, c1, c2, ey2, ey2g2 = _link_moments(link)
    scale = math.sqrt(ey2) if ey2 > 0 else 1.0
    if abs(mean) > 1e-8 * scale or abs(c1) > 1e-8 * scale:
        raise ValueError("leap2_neuron_overlap needs a centred link with c_1 = 0 "
                         f"(got E[phi] = {mean:.3g}, c_1 = {c1:.3g})")
    mo = activation_moments(activation)
    a = math.sqrt(2) * c2 * mo.beta1
    noise = eta_bar**2 * ey2g2 * mo.m2 / n
    base = 1 + eta_bar**2 * ey2 * mo.m2 * d / n

    def cos2(z):
        out = 0.0
        for b in (1.0, -1.0):
            out = out + 0.5 * ((z * z / d) * (1 + eta_bar * b * a) ** 2 + noise) / (
                base + eta_bar**2 * a * a * z * z / d)
        return out

    return float(gaussian_expectation(cos2))


def one_step_bulk_variance(link, eta_bar: float, delta: float, activation="relu") -> float:
    r"""Entry variance (times :math:`d`) of the bulk of :math:`W_1` (chapter 6, eq. (bulk)).

    Besides its rank-one part, the giant step moves neuron :math:`i` by
    :math:`\bar\eta b_ir_i`, :math:`r_i = \frac1n\sum_\nu y_\nu(\sigma'(\langle w_i^0,
    x_\nu\rangle)-\mu_1)x_\nu`, a nearly isotropic vector of squared norm
    :math:`\mathbb E[y^2]\mathrm{Var}\,\sigma'(G)/\delta`. For :math:`b_i=\pm1` and centred,
    light-tailed labels the bulk of :math:`W_1` is therefore that of a Gaussian matrix with
    entries of variance :math:`v/d`,

    .. math:: v = 1+\bar\eta^2\,\mathbb E[y^2]\,\mathrm{Var}\,\sigma'(G)/\delta ,

    a Marchenko-Pastur law inflated by :math:`v` (:math:`v = 1` is the bulk of :math:`W_0`).
    Heavy-tailed labels (e.g. a degree-2 link) add outliers driven by single samples.
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    mean, _, _, ey2, _ = _link_moments(link)
    if abs(mean) > 1e-8 * max(1.0, math.sqrt(ey2)):
        raise ValueError(f"the bulk formula needs centred labels (E[phi] = {mean:.3g})")
    return 1.0 + eta_bar**2 * ey2 * activation_moments(activation).var / delta


def gaussian_singular_value_edges(p: int, d: int, variance: float = 1.0):
    r"""Edges of the singular values of a p x d matrix with i.i.d. :math:`N(0,v/d)` entries.

    Chapter 6, eq. (MP): :math:`\sqrt v\,|\sqrt{p/d}\mp1|` (Marchenko & Pastur 1967). For
    :math:`W_0` (rows :math:`N(0,I_d/d)`), :math:`v = 1`.
    """
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    r = math.sqrt(p / d)
    return math.sqrt(v) * abs(r - 1), math.sqrt(v) * (r + 1)


def gaussian_singular_value_density(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Density of the :math:`\min(p,d)` non-zero singular values of a Gaussian p x d matrix.

    Chapter 6, eq. (MP). Entries :math:`N(0,v/d)`, :math:`r = p/d`. The squared singular values
    :math:`\lambda` follow the Marchenko-Pastur law with ratio
    :math:`c=\min(p,d)/\max(p,d)` and scale :math:`t = v\max(p,d)/d`,
    :math:`\rho(\lambda) = \frac{\sqrt{(\lambda_+-\lambda)(\lambda-\lambda_-)}}{2\pi c\,t\lambda}`
    on :math:`[\lambda_-,\lambda_+] = t(1\mp\sqrt c)^2`; the density of :math:`s=\sqrt\lambda`
    is :math:`2s\rho(s^2)`. Integrates to one over the singular values.
    """
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    s = V.finite_array(s, "s")
    c = min(p, d) / max(p, d)
    t = v * max(p, d) / d
    lo, hi = t * (1 - math.sqrt(c)) ** 2, t * (1 + math.sqrt(c)) ** 2
    lam = s * s
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.sqrt(np.clip((hi - lam) * (lam - lo), 0, None)) / (2 * np.pi * c * t * lam)
    return np.where((lam > lo) & (lam < hi) & (s > 0), 2 * s * rho, 0.0)


def spiked_rectangular(theta: float, p: int, d: int, variance: float = 1.0):
    r"""Top singular value and overlaps of :math:`X+\theta\,u v^\top` (chapter 6, eq. (BBP)).

    :math:`X` is p x d with i.i.d. :math:`N(0,v/d)` entries, :math:`u\in\mathbb R^p`,
    :math:`v\in\mathbb R^d` unit vectors. In units where the entries of the larger-side
    normalisation are :math:`N(0,1/\max(p,d))` (scale :math:`t^{1/2}`, :math:`t=v\max(p,d)/d`,
    :math:`c=\min(p,d)/\max(p,d)`, :math:`\tilde\theta=\theta/\sqrt t`), Benaych-Georges and
    Nadakuditi (2012) give, for :math:`\tilde\theta>c^{1/4}`,

    .. math:: s_1 = \sqrt t\,\frac{\sqrt{(1+\tilde\theta^2)(c+\tilde\theta^2)}}{\tilde\theta},\quad
        \rho_{\min}^2 = 1-\frac{c(1+\tilde\theta^2)}{\tilde\theta^2(\tilde\theta^2+c)},\quad
        \rho_{\max}^2 = 1-\frac{c+\tilde\theta^2}{\tilde\theta^2(\tilde\theta^2+1)},

    for the singular vectors on the smaller and larger side; below the threshold the top
    singular value sticks to the bulk edge and the overlaps vanish.

    Returns
    -------
    s1 : float
    rho_right2 : float
        Squared overlap of the top right singular vector (in :math:`\mathbb R^d`) with `v`.
    rho_left2 : float
        Squared overlap of the top left singular vector (in :math:`\mathbb R^p`) with `u`.
    """
    theta = V.nonneg_float(theta, "theta")
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    v = V.positive_float(variance, "variance")
    c = min(p, d) / max(p, d)
    t = v * max(p, d) / d
    th = theta / math.sqrt(t)
    if th <= c**0.25:
        return math.sqrt(t) * (1 + math.sqrt(c)), 0.0, 0.0
    s1 = math.sqrt(t) * math.sqrt((1 + th**2) * (c + th**2)) / th
    small = 1 - c * (1 + th**2) / (th**2 * (th**2 + c))
    large = 1 - (c + th**2) / (th**2 * (th**2 + 1))
    right, left = (small, large) if d <= p else (large, small)
    return float(s1), float(right), float(left)


def one_step_spike(link, eta_bar: float, delta: float, p: int, d: int, activation="relu"):
    r"""Predicted spike of :math:`W_1` after one giant step on a single-index target (chapter 6).

    The rank-one part of the update is :math:`\bar\eta\mu_1\,b\,u^\top`,
    :math:`u = \frac1n X^\top y`, of strength :math:`\theta = \bar\eta\mu_1\sqrt p\,\|u\|`
    (:math:`b_i=\pm1`), with :math:`\|u\|^2\to c_1^2+\mathbb E[y^2]/\delta`; the direction
    :math:`u/\|u\|` is the first-moment estimator of chapter 3, with
    :math:`\rho_u^2 = \delta c_1^2/(\delta c_1^2+\mathbb E[y^2])`. The bulk has variance
    :func:`one_step_bulk_variance`; :func:`spiked_rectangular` then gives the top singular value
    and the overlap of the top right singular vector with :math:`u`, and the overlap with
    :math:`w_\star` is the product of the two overlaps.

    Returns
    -------
    dict with keys ``theta``, ``s1``, ``rho_u`` (overlap of :math:`u` with :math:`w_\star`),
    ``rho`` (overlap of the top right singular vector with :math:`w_\star`), ``variance``.
    """
    eta_bar = V.positive_float(eta_bar, "eta_bar")
    delta = V.positive_float(delta, "delta")
    p = V.positive_int(p, "p")
    d = V.positive_int(d, "d")
    _, c1, _, ey2, _ = _link_moments(link)
    mo = activation_moments(activation)
    v = one_step_bulk_variance(link, eta_bar, delta, activation)
    unorm = math.sqrt(c1**2 + ey2 / delta)
    theta = eta_bar * abs(mo.mu1) * math.sqrt(p) * unorm
    s1, rho_right2, _ = spiked_rectangular(theta, p, d, v)
    rho_u = abs(c1) / unorm
    return {"theta": theta, "s1": s1, "rho_u": rho_u, "rho": math.sqrt(rho_right2) * rho_u,
            "variance": v}


@dataclass
class TwoPhaseResult:
    """Outcome of :func:`two_phase`: first layers after each step and the ridge second layer.

    Attributes
    ----------
    Ws : list of ndarray
        First layer after each step (``Ws[-1]`` is the one used for prediction).
    a : ndarray (p,)
        Second layer from ridge regression.
    offset : float
    linear : ndarray (d,)
        Constant and linear parts added back to the network output (zero unless the linear
        part of the labels was removed).
    activation, scaling
        As used for training.
    """

    Ws: list
    a: np.ndarray
    offset: float
    linear: np.ndarray
    activation: object = "relu"
    scaling: object = 1.0

    @property
    def W(self) -> np.ndarray:
        return self.Ws[-1]

    def predict(self, X) -> np.ndarray:
        """Prediction :math:`A+\\langle B,x\\rangle+f(x;W_T,\\hat a)` on the rows of ``X``."""
        X = V.finite_array(X, "X", ndim=2)
        return self.offset + X @ self.linear + forward(self.W, self.a, X, self.activation,
                                                        self.scaling)


def two_phase(W0, a0, batches: Sequence, ridge_batch, eta, lam: float, activation="relu", *,
              scaling=1.0, loss: str = "square", remove_linear: bool = False,
              chunk: int | None = None) -> TwoPhaseResult:
    r"""The two-phase procedure of Dandi et al. (chapter 6, algorithm (two-phase)).

    Phase 1: one first-layer gradient step per batch in ``batches`` (fresh batches; the same
    pair twice is a reused batch), second layer fixed at ``a0`` (:func:`multi_step`).
    Phase 2: ridge regression of the labels of ``ridge_batch`` on the features
    :math:`s\,\sigma(XW_T^\top)` (:func:`ridge_second_layer`; ``lam`` in its convention).

    With ``remove_linear=True`` the empirical constant and linear parts
    (:func:`remove_linear_part`) are removed from the labels of every batch before it is
    used, the ridge is fitted on the residual labels of ``ridge_batch``, and the constant and
    linear parts estimated on ``ridge_batch`` are added back to the prediction: the leap-2
    protocol of the paper's reference code, with every estimate taken from training data.

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


def gaussian_singular_value_cdf(s, p: int, d: int, variance: float = 1.0) -> np.ndarray:
    r"""Distribution function of :func:`gaussian_singular_value_density` (chapter 6, eq. (MP)).

    Used for the Kolmogorov-Smirnov distance between the bulk of :math:`W_1` and the
    Marchenko-Pastur law (integrated numerically on a fine grid, accurate to about 1e-6).
    """
    s = V.finite_array(s, "s")
    lo, hi = gaussian_singular_value_edges(p, d, variance)
    # the substitution s = mid + half * sin(t) removes the square-root edges
    t = np.linspace(-np.pi / 2, np.pi / 2, 20001)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    grid = mid + half * np.sin(t)
    dens = gaussian_singular_value_density(grid, p, d, variance) * half * np.cos(t)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(t))])
    cdf /= cdf[-1]
    return np.interp(s, grid, cdf, left=0.0, right=1.0)


def ridge_second_layer_path(W, X, y, lams, activation="relu", *, scaling=1.0) -> np.ndarray:
    r"""Ridge second layers for several ridges at once (chapter 6).

    The same estimator as :func:`ridge_second_layer` for every :math:`\lambda` in ``lams``
    (all > 0), from one eigendecomposition of :math:`F^\top F` (:math:`n\ge p`) or
    :math:`FF^\top` (:math:`n<p`): choosing the ridge on a validation set costs one fit.

    Returns
    -------
    ndarray (len(lams), p)
    """
    X, y = V.data_pair(X, y)
    W = V.finite_array(W, "W", ndim=2)
    if W.shape[0] < 1 or X.shape[1] != W.shape[1]:
        raise ValueError(f"W must have shape (p >= 1, {X.shape[1]}), got {W.shape}")
    lams = V.finite_array(lams, "lams", ndim=1)
    if lams.size < 1 or np.any(lams <= 0):
        raise ValueError("lams must be a non-empty sequence of positive ridges")
    F = output_scale(W.shape[0], scaling) * features(W, X, activation)
    n, p = F.shape
    if n >= p:
        evals, U = np.linalg.eigh(F.T @ F)
        proj = U.T @ (F.T @ y)
        return (U @ (proj[:, None] / (evals[:, None] + n * lams[None, :]))).T
    evals, U = np.linalg.eigh(F @ F.T)
    proj = U.T @ y
    return (F.T @ (U @ (proj[:, None] / (evals[:, None] + n * lams[None, :])))).T
