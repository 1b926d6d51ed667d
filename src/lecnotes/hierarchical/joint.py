r"""A three-layer network trained jointly by a few giant steps on the target of
{prf:ref}`def-ch10-sight` (the "more common training procedure" beside the layer-wise
idealisation of {prf:ref}`thm-ch10-layerwise`).

The network is

.. math::

    f(x) = p_2^{-1/2}\,a^\top\sigma\big(W_2\,\sigma(W_1x + b_1) + b_2\big),

:math:`\sigma` = ReLU, rows of :math:`W_1` drawn from :math:`N(0, I_d/d)`, rows of :math:`W_2`
from :math:`N(0, I_{p_1}/p_1)` (the :math:`W_2/\sqrt{p_1}` of the form with unit-variance
entries), biases :math:`N(0, 1)`, :math:`a_j = \pm p_2^{-1/2}` fixed during the steps. Each
step is one full-batch gradient step of the square loss of the network output on a fresh
batch of :math:`n` samples, on :math:`(W_1, b_1)` and :math:`(W_2, b_2)` at once (both
gradients at the same point). The step sizes follow chapter 6's rule for a giant step, the
inverse of the scale of the output's derivative with respect to one row times
:math:`\sqrt{n/d_{\rm in}}` (for the two-layer network, :math:`\eta = \eta_0p\sqrt{n/d}`):
:math:`\eta_1 = \eta_0\sqrt{p_1p_2}\sqrt{n/d}` and :math:`\eta_2 = \eta_0p_2\sqrt{n/p_1}`. After
each step every row (weights and bias) is rescaled to its initial norm, as in chapter 6's
staircase protocol with renormalised rows, so that the next step starts from pre-activations
of order one. After the steps, :math:`a` is refitted by ridge on :math:`n` fresh samples (the
oracle ridge of :mod:`lecnotes.hierarchical.shallow`).

Everything is batched over seeds (axis 0) and matrix-free in :math:`n` (gradients and the
:math:`p_2\times p_2` moments are added up over blocks of samples).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.hierarchical import theory as T
from lecnotes.hierarchical.experiments import latent_rank
from lecnotes.hierarchical.shallow import RIDGES, ridge_path_test_errors

__all__ = ["init_network", "forward", "joint_gradients", "joint_step", "JointSweep",
           "MODES", "joint_sweep"]


def init_network(gens, d, p1, p2):
    r"""The initialisation of the module's network, one seed per generator.

    Parameters
    ----------
    gens : sequence of numpy.random.Generator
        One per seed.
    d, p1, p2 : int
        Input dimension, widths of the two hidden layers (all >= 2).

    Returns
    -------
    W1 : ndarray (S, p1, d + 1)
        First layer, bias in the last column.
    W2 : ndarray (S, p2, p1 + 1)
        Second layer, bias in the last column.
    a : ndarray (S, p2)
        Signs :math:`\pm p_2^{-1/2}`.
    """
    d, p1, p2 = (V.positive_int(v, k, minimum=2) for v, k in ((d, "d"), (p1, "p1"), (p2, "p2")))
    W1, W2, a = [], [], []
    for g in gens:
        W1.append(np.concatenate([g.standard_normal((p1, d)) / math.sqrt(d),
                                  g.standard_normal((p1, 1))], axis=1))
        W2.append(np.concatenate([g.standard_normal((p2, p1)) / math.sqrt(p1),
                                  g.standard_normal((p2, 1))], axis=1))
        a.append(g.choice([-1.0, 1.0], size=p2) / math.sqrt(p2))
    if not W1:
        raise ValueError("gens must hold at least one generator")
    return np.stack(W1), np.stack(W2), np.stack(a)


def _check(W1, W2, a, X):
    W1, W2, a, X = (np.asarray(v, float) for v in (W1, W2, a, X))
    if (W1.ndim != 3 or W2.ndim != 3 or a.ndim != 2 or X.ndim != 3
            or W2.shape[:2] != a.shape or W2.shape[2] != W1.shape[1] + 1
            or X.shape[2] != W1.shape[2] or len({W1.shape[0], W2.shape[0], X.shape[0]}) != 1):
        raise ValueError("shapes must be W1 (S, p1, d+1), W2 (S, p2, p1+1), a (S, p2), "
                         "X (S, n, d+1) with a last column of ones")
    return W1, W2, a, X


def forward(W1, W2, a, X):
    r"""The network's layers on inputs ``X`` (a last column of ones carries the biases).

    Parameters
    ----------
    W1, W2, a : ndarray
        As returned by :func:`init_network`.
    X : ndarray (S, n, d + 1)

    Returns
    -------
    f : ndarray (S, n)
        The output.
    H2 : ndarray (S, n, p2)
        The second-layer features :math:`\sigma(W_2\sigma(W_1x+b_1)+b_2)`.
    """
    W1, W2, a, X = _check(W1, W2, a, X)
    H1 = np.maximum(np.matmul(X, np.swapaxes(W1, -1, -2)), 0.0)
    H2 = np.maximum(_affine(H1, W2), 0.0)
    return np.einsum("snp,sp->sn", H2, a) / math.sqrt(a.shape[1]), H2


def _affine(H, W):
    """H W[:, :, :-1]^T + the biases W[:, :, -1] (the ones column of the layer's input)."""
    out = np.matmul(H, np.swapaxes(W[:, :, :-1], -1, -2))
    out += W[:, None, :, -1]
    return out


def joint_gradients(W1, W2, a, X, y):
    r"""Sums over the samples of the gradients of :math:`\frac12(f(x_i)-y_i)^2` with respect
    to :math:`(W_1, b_1)` and :math:`(W_2, b_2)` (back-propagation; divide by :math:`n` for
    the gradient of the empirical risk).

    Parameters
    ----------
    W1, W2, a : ndarray
        As returned by :func:`init_network`.
    X : ndarray (S, n, d + 1)
        Inputs with a last column of ones.
    y : ndarray (S, n)
        Labels.

    Returns
    -------
    g1 : ndarray (S, p1, d + 1)
    g2 : ndarray (S, p2, p1 + 1)
    """
    W1, W2, a, X = _check(W1, W2, a, X)
    y = np.asarray(y, float)
    if y.shape != X.shape[:2]:
        raise ValueError("y must have shape (S, n)")
    V1 = np.matmul(X, np.swapaxes(W1, -1, -2))
    H1 = np.maximum(V1, 0.0)
    U = _affine(H1, W2)
    f = np.einsum("snp,sp->sn", np.maximum(U, 0.0), a) / math.sqrt(a.shape[1])
    dU = (U > 0) * ((f - y)[:, :, None] * a[:, None, :] / math.sqrt(a.shape[1]))
    g2 = np.concatenate([np.matmul(np.swapaxes(dU, -1, -2), H1),
                         dU.sum(axis=1)[:, :, None]], axis=2)
    dV = (V1 > 0) * np.matmul(dU, W2[:, :, :-1])
    return np.matmul(np.swapaxes(dV, -1, -2), X), g2


def _renormalise(W, norms):
    return W * (norms / np.linalg.norm(W, axis=-1))[..., None]


def joint_step(W1, W2, a, g1, g2, n, eta0=1.0, norms=None):
    r"""One joint giant step from the gradient sums of :func:`joint_gradients` over ``n``
    samples, with :math:`\eta_1 = \eta_0\sqrt{p_1p_2}\sqrt{n/d}` and
    :math:`\eta_2 = \eta_0p_2\sqrt{n/p_1}` (chapter 6's rule layer by layer, module
    docstring), then the rows rescaled to ``norms``.

    Parameters
    ----------
    W1, W2, a : ndarray
        As returned by :func:`init_network`.
    g1, g2 : ndarray
        Gradient sums, shapes of ``W1`` and ``W2``.
    n : int
        Number of samples summed.
    eta0 : float
        :math:`\eta_0 > 0`.
    norms : pair of ndarray (S, p1), (S, p2), optional
        Row norms to restore (``None``: no rescaling).

    Returns
    -------
    W1, W2 : ndarray
    """
    W1, W2, a, _ = _check(W1, W2, a, np.zeros((W1.shape[0], 1, W1.shape[2])))
    g1, g2 = np.asarray(g1, float), np.asarray(g2, float)
    if g1.shape != W1.shape or g2.shape != W2.shape:
        raise ValueError("g1 and g2 must have the shapes of W1 and W2")
    n, eta0 = V.positive_int(n, "n"), V.positive_float(eta0, "eta0")
    p1, p2, d = W1.shape[1], W2.shape[1], W1.shape[2] - 1
    W1 = W1 - eta0 * math.sqrt(p1 * p2) * math.sqrt(n / d) * g1 / n
    W2 = W2 - eta0 * p2 * math.sqrt(n / p1) * g2 / n
    if norms is not None:
        W1, W2 = _renormalise(W1, norms[0]), _renormalise(W2, norms[1])
    return W1, W2


class JointSweep(NamedTuple):
    r"""The jointly trained three-layer network, arrays ``[seed, size, n, step]`` with step
    0 the initialisation (module docstring)."""

    dims: np.ndarray
    ranks: np.ndarray
    ns: np.ndarray
    """Samples per step (the total budget is ``(steps + 1) * n``)."""
    steps: int
    latent: np.ndarray
    r"""Stage-1 quantity: :math:`\|W_1P_\star\|_F^2/\|W_1\|_F^2` (weights only), :math:`r/d`
    in expectation at initialisation."""
    corr: np.ndarray
    r"""Stage-2 quantity: the square root of the part of :math:`\operatorname{Var}h` on the
    test points that the best (oracle-ridge) linear read-out of the second-layer features,
    fitted on the ridge batch, explains."""
    error: np.ndarray
    """Test error of the network with its last layer refitted by ridge, divided by
    :math:`\\operatorname{Var}y` (divide by ``null_errors`` for the relative error)."""
    controls: dict | None = None
    """With ``controls=True``: for ``"first"`` (:math:`W_2` frozen) and ``"second"``
    (:math:`W_1` frozen), a dict of ``latent``, ``corr`` and ``error`` ``[seed, size, n]``
    after the first step made with that layer alone, from the same initialisation, batch and
    gradient as the joint step (step 0 is the joint sweep's)."""


def _draw(gens, n, d, r, c):
    """Inputs with a ones column, labels and the feature h, every seed."""
    X = np.empty((len(gens), n, d + 1))
    X[:, :, d] = 1.0
    for k, g in enumerate(gens):
        X[k, :, :d] = g.standard_normal((n, d))
    h = T.feature(np.einsum("snj,snj->sn", X[:, :, :r], X[:, :, :r]), r)
    return X, T.link(h, c), h


def _readout(W1, W2, a, batch, test, chunk, var):
    """Oracle-ridge errors of y (normalised by var) and of h (normalised) from the features."""
    X, y, h = batch
    S, n = y.shape
    p2 = W2.shape[1]
    G, fy, fh, f1 = np.zeros((S, p2, p2)), np.zeros((S, p2)), np.zeros((S, p2)), np.zeros((S, p2))
    for s0 in range(0, n, chunk):
        F = forward(W1, W2, a, X[:, s0:s0 + chunk])[1]
        G += np.matmul(np.swapaxes(F, -1, -2), F)
        fy += np.einsum("snp,sn->sp", F, y[:, s0:s0 + chunk])
        fh += np.einsum("snp,sn->sp", F, h[:, s0:s0 + chunk])
        f1 += F.sum(axis=1)
    Ft = forward(W1, W2, a, test[0])[1]
    G /= n
    lam = np.maximum(np.einsum("spp->s", G), 1e-300)[:, None] / p2 * RIDGES[None, :]
    out = []
    for lab, lab_t, fl in ((y, test[1], fy), (h, test[2], fh)):
        m = lab.mean(axis=1)
        out.append(ridge_path_test_errors(G, (fl - m[:, None] * f1) / n, m, Ft, lab_t,
                                     lam).min(axis=-1))
    h_var = np.mean((test[2] - test[2].mean(axis=1, keepdims=True)) ** 2, axis=1)
    return out[0] / var, np.sqrt(np.clip(1 - out[1] / h_var, 0.0, 1.0))


def _latent(W1, d, r):
    """Fraction of the first layer's weight energy in the latent space, per seed."""
    w = W1[:, :, :d]
    return np.sum(w[:, :, :r] ** 2, (1, 2)) / np.sum(w**2, (1, 2))


MODES = ("joint", "first", "second")
"""Which layers a step moves: both, only :math:`(W_1, b_1)` (the second layer frozen), or only
:math:`(W_2, b_2)` (the first layer frozen)."""


def joint_sweep(dims, ns, seeds, c, steps=3, p1=128, p2=128, eta0=1.0, n_test=2000, eps=0.5,
                chunk=4096, mode="joint", controls=False, rng=None):
    r"""Joint giant steps on the three-layer network, measured after each step (module
    docstring): the first layer's latent energy, the second-layer features' correlation with
    :math:`h` and the test error ({prf:ref}`def-ch10-sight`, {prf:ref}`thm-ch10-layerwise`).

    Parameters
    ----------
    dims : array_like of int
        Input dimensions (>= 4); :math:`r` = :func:`latent_rank`.
    ns : array_like of int
        Increasing samples per step (>= 16); each step and the ridge get fresh batches.
    seeds : int
        Number of seeds.
    c : float
        Quadratic coefficient of the link.
    steps : int
        Number of joint steps (>= 1).
    p1, p2 : int
        Widths (>= 2).
    eta0 : float
        Step size in the units of :func:`joint_step`.
    n_test : int
        Test samples (streams ``(d, seed, 6)``, the test set of
        :func:`lecnotes.hierarchical.shallow.shallow_sweep` for the same ``rng``).
    eps : float
        Latent exponent.
    chunk : int
        Largest block of samples handled at once.
    mode : str
        One of :data:`MODES`: the controls that freeze one layer use the same initialisation,
        batches and step sizes as the joint steps.
    controls : bool
        Also measure, at every ``n``, the first step made with one layer frozen (``"first"``
        and ``"second"``), from the joint step's own gradient (same batch): the
        ``controls`` field of the result. Only with ``mode="joint"``.
    rng : Generator, int or None
        Parent random state: streams ``(d, seed, 6)`` test set, ``(d, seed, 12)`` the
        initialisation, ``(d, seed, 13)`` the ridge batch, ``(d, seed, 14, i, t)`` the batch
        of step ``t`` at budget ``i``.

    Returns
    -------
    JointSweep
    """
    dims = np.asarray(V.finite_array(dims, "dims", ndim=1))
    if dims.size == 0 or np.any(dims < 4) or np.any(dims != np.round(dims)):
        raise ValueError("dims must hold integers >= 4")
    dims = dims.astype(int)
    ns = V.finite_array(ns, "ns", ndim=1)
    if ns.size == 0 or np.any(ns < 16) or np.any(ns != np.round(ns)) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must hold increasing integers >= 16")
    ns = ns.astype(int)
    seeds, steps = V.positive_int(seeds, "seeds"), V.positive_int(steps, "steps")
    p1, p2 = V.positive_int(p1, "p1", minimum=2), V.positive_int(p2, "p2", minimum=2)
    eta0 = V.positive_float(eta0, "eta0")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if controls and mode != "joint":
        raise ValueError("controls needs mode='joint'")
    n_test, chunk = V.positive_int(n_test, "n_test"), V.positive_int(chunk, "chunk")
    ranks = np.array([latent_rank(int(d), eps) for d in dims])
    shape = (seeds, len(dims), len(ns), steps + 1)
    lat, corr, err = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    ctl = ({m: {k: np.zeros(shape[:3]) for k in ("latent", "corr", "error")}
            for m in MODES[1:]} if controls else None)
    for j, (d, r) in enumerate(zip(dims, ranks, strict=True)):
        d, r = int(d), int(r)
        var = T.feature_law(r, c).var
        key = lambda *k, d=d: [V.stream(rng, d, s, *k) for s in range(seeds)]  # noqa: E731
        test = _draw(key(6), n_test, d, r, c)
        W10, W20, a = init_network(key(12), d, p1, p2)
        norms = (np.linalg.norm(W10, axis=-1), np.linalg.norm(W20, axis=-1))
        ridge = _draw(key(13), int(ns[-1]), d, r, c)
        for i, n in enumerate(ns):
            n = int(n)
            batch = tuple(v[:, :n] for v in ridge)
            W1, W2 = W10, W20
            for t in range(steps + 1):
                if t > 0:
                    g1, g2 = np.zeros_like(W1), np.zeros_like(W2)
                    gens = key(14, i, t)
                    for s0 in range(0, n, chunk):
                        X, y, _ = _draw(gens, min(chunk, n - s0), d, r, c)
                        b1, b2 = joint_gradients(W1, W2, a, X, y)
                        g1 += b1 * (mode != "second")
                        g2 += b2 * (mode != "first")
                    if t == 1 and ctl is not None:
                        for m, (f1, f2) in zip(MODES[1:], ((1, 0), (0, 1)), strict=True):
                            C1, C2 = joint_step(W1, W2, a, f1 * g1, f2 * g2, n, eta0, norms)
                            q = ctl[m]
                            q["latent"][:, j, i] = _latent(C1, d, r)
                            q["error"][:, j, i], q["corr"][:, j, i] = _readout(
                                C1, C2, a, batch, test, chunk, var)
                    W1, W2 = joint_step(W1, W2, a, g1, g2, n, eta0, norms)
                lat[:, j, i, t] = _latent(W1, d, r)
                err[:, j, i, t], corr[:, j, i, t] = _readout(W1, W2, a, batch, test, chunk, var)
    return JointSweep(dims, ranks, ns, steps, lat, corr, err, ctl)
