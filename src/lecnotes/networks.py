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

Chapters 6 and 7 train the first layer alone (:func:`giant_step`, :func:`multi_step`,
:func:`giant_step_size`, :func:`remove_linear_part`) and fit the second by ridge
(:func:`ridge_second_layer`, :func:`ridge_second_layer_path`). Activations and losses live in
:mod:`lecnotes.activations`, overlap measures in :mod:`lecnotes.overlaps`, the one-step theory in
:mod:`lecnotes.giant_steps_theory`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from . import _validate as V
from .activations import get_activation, loss_and_dual

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
    "giant_step",
    "multi_step",
    "ridge_second_layer",
    "ridge_second_layer_path",
    "giant_step_size",
    "remove_linear_part",
    "linear_width_init",
]


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


def check_params(W, a, X=None):
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
    W, a, X = check_params(W, a, X)
    s = output_scale(W.shape[0], scaling)
    return s * (get_activation(activation).sigma(X @ W.T) @ a)


def loss_value(W, a, X, y, activation="relu", scaling="ntk", loss="square") -> float:
    r"""Empirical risk: :math:`\frac1{2n}\sum_i(f(x_i)-y_i)^2` or :math:`-\frac1n\sum_iy_if(x_i)`.

    Chapter 1, eq. (risk).
    """
    X, y = V.data_pair(X, y)
    return loss_and_dual(forward(W, a, X, activation, scaling), y, loss)[0]


def _grads(W, a, X, y, act, s, loss, need_a=True):
    Z = X @ W.T  # product 1
    S = act.sigma(Z)
    f = s * (S @ a)
    value, g = loss_and_dual(f, y, loss)
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
    W, a, X = check_params(W, a, X)
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

    Chapter 1, eq. (empirical NTK), without forming the Jacobian:

    .. math:: K(X,Z) = s_m^2\big[\sigma(XW^\top)\sigma(ZW^\top)^\top +
              (XZ^\top)\odot\big(\sigma'(XW^\top)\,\mathrm{diag}(a^2)\,\sigma'(ZW^\top)^\top\big)\big].

    Returns an (n_X, n_Z) array (``Z`` defaults to ``X``).
    """
    W, a, X = check_params(W, a, X)
    Z = X if Z is None else check_params(W, a, Z)[2]
    act = get_activation(activation)
    s = output_scale(W.shape[0], scaling)
    UX, UZ = X @ W.T, Z @ W.T
    K = act.sigma(UX) @ act.sigma(UZ).T
    K += (X @ Z.T) * ((act.dsigma(UX) * a**2) @ act.dsigma(UZ).T)
    return s**2 * K


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


def linear_width_init(N: int, d: int, rng=None, second_layer: str = "gaussian"):
    r"""Linear-width initialisation: :math:`w_j\sim N(0,I_d/d)`, :math:`a_j\sim N(0,1)` (chapter 7).

    Chapter 7. Gaussian second-layer weights, as in Moniri et al.: with :math:`a_j=\pm1` the
    vectors :math:`a^{\circ(k+1)}` take only two values and the second step can add at most
    one outlier (exercise). ``second_layer="sign"`` draws :math:`a_j=\pm1` instead.
    """
    N = V.positive_int(N, "N")
    d = V.positive_int(d, "d")
    if second_layer not in ("gaussian", "sign"):
        raise ValueError(f"second_layer must be 'gaussian' or 'sign', got {second_layer!r}")
    rng = V.generator(rng)
    W0 = rng.standard_normal((N, d)) / math.sqrt(d)
    if second_layer == "sign":
        return W0, rng.choice([-1.0, 1.0], size=N)
    return W0, rng.standard_normal(N)
