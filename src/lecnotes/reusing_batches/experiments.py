r"""Simulations of chapter 9: two gradient steps on a reused or a fresh batch at n = alpha d.

A width-:math:`p` layer of neurons with a fixed second layer :math:`a_j = 1/p` and the
correlation loss: each neuron moves by :math:`(c/d)\sum_i y_i\sigma'(\langle w_j,x_i\rangle)x_i`
({prf:ref}`def-ch9-two-steps`), independently of the others, so the layer is :math:`p` neurons
sharing one batch. :math:`\wstar = e_1` by rotation invariance. Seeds are on axis 0; the data
of size ``d`` and seed ``s`` come from ``validate.stream(rng, d, s)``, so adding a size or a
seed changes no other draw, and the batches of the smaller :math:`\alpha` are the first rows of
the largest one (nested data). A fresh batch meets the neurons only through its projections on
a few directions, so :func:`fresh_gradient` draws its gradient in distribution without the
batch.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.reusing_batches.theory import LINKS, STUDENTS, check_link, check_student

__all__ = ["two_steps", "TwoStepRuns", "simulate_two_steps", "TwoStepSweep", "two_step_sweep",
           "fresh_gradient",
           "ProductSweep", "product_two_steps", "StepRuns", "gd_steps", "log_slope", "log_gap"]


def _check_c(c):
    return V.positive_float(c, "c")


def two_steps(W0, X1, y1, X2, y2, c, student="tanh"):
    r"""Two correlation-loss steps {eq}`eq-ch9-step` of every row of ``W0``: the first on
    :math:`(X_1, y_1)`, the second on :math:`(X_2, y_2)` (pass the same batch twice to reuse it).

    Parameters
    ----------
    W0 : ndarray (p, d)
        Initial neurons.
    X1, X2 : ndarray (n, d)
        Batches (the same array twice for a reused batch).
    y1, y2 : ndarray (n,)
        Their labels.
    c : float
        Step per sample: :math:`w \mapsto w + (c/d)\sum_i y_i\sigma'(\langle w, x_i\rangle)x_i`.
    student : str
        A name of :data:`lecnotes.reusing_batches.theory.STUDENTS`.

    Returns
    -------
    W1, W2 : ndarray (p, d)
    """
    c = _check_c(c)
    ds = STUDENTS[check_student(student)][0]
    W0 = V.finite_array(W0, "W0", ndim=2)
    d = W0.shape[1]
    for name, X, y in (("X1", X1, y1), ("X2", X2, y2)):
        if np.ndim(X) != 2 or np.shape(X)[1] != d or np.shape(y) != (np.shape(X)[0],):
            raise ValueError(f"{name} must have shape (n, {d}) and its labels shape (n,)")
    W1 = W0 + (c / d) * (y1[:, None] * ds(X1 @ W0.T)).T @ X1
    W2 = W1 + (c / d) * (y2[:, None] * ds(X2 @ W1.T)).T @ X2
    return W1, W2


class TwoStepRuns(NamedTuple):
    r"""Projections after two steps, arrays (seeds, alphas, width).

    {prf:ref}`prop-ch9-recursion`.
    """

    m1: np.ndarray
    r""":math:`\langle w_1,\wstar\rangle`."""
    norm1: np.ndarray
    r""":math:`\|w_1\|`."""
    m2: dict
    r"""``{"reused", "fresh"}`` -> :math:`\langle w_2,\wstar\rangle`."""
    norm2: dict
    r"""``{"reused", "fresh"}`` -> :math:`\|w_2\|`."""

    def overlap(self, mode: str, signed: bool = False) -> np.ndarray:
        r"""Mean over neurons of :math:`|m_2|/\|w_2\|` (or :math:`m_2/\|w_2\|` if
        ``signed``), shape (seeds, alphas).

        Parameters
        ----------
        mode : str
            ``"reused"`` or ``"fresh"``.
        signed : bool
            Keep the sign of :math:`m_2` (its mean is the recursion's :math:`m_2/\|w_2\|`).

        Returns
        -------
        ndarray
        """
        if mode not in ("reused", "fresh"):
            raise ValueError(f"mode must be 'reused' or 'fresh', got {mode!r}")
        m = self.m2[mode] if signed else np.abs(self.m2[mode])
        return np.mean(m / self.norm2[mode], axis=-1)


def _draw(d, s, n, width, rng):
    """The reused batch (n, d) and the unit starts (width, d) of size d, seed s, and the
    generator that goes on to draw the fresh batches."""
    g = V.stream(rng, d, s)
    X = g.standard_normal((n, d), dtype=np.float32)
    W0 = g.standard_normal((width, d), dtype=np.float32)
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    return X, W0, g


def fresh_gradient(W, n: int, k: int, residual, g):
    r""":math:`X^\top r` for a fresh batch :math:`X` of ``n`` standard Gaussian inputs,
    independent of the neurons ``W`` (rows), drawn in distribution without forming
    :math:`X` ({prf:ref}`def-ch9-two-steps`): with :math:`Q` an orthonormal basis of the span
    of :math:`e_1,\dots,e_k` and the rows of ``W``, :math:`X = qQ^\top + Z(I-QQ^\top)` with
    :math:`q` of shape (n, dim Q) and :math:`Z` independent; the labels and pre-activations
    see only :math:`q`, and :math:`Z^\top r` has independent Gaussian rows of covariance
    :math:`r^\top r`. Cost :math:`O(n(k+p)^2 + dp(k+p))` instead of :math:`O(ndp)`.

    Parameters
    ----------
    W : ndarray (p, d)
        Neurons.
    n : int
        Batch size.
    k : int
        Coordinates the label reads (:math:`x_1,\dots,x_k`, :math:`w_{\star,i} = e_i`).
    residual : callable
        ``(C, P) -> r``: the first ``k`` coordinates ``C`` (n, k) and the pre-activations
        ``P`` = :math:`XW^\top` (n, p) to the weights ``r`` (n, p) of the samples.
    g : Generator
        The draws.

    Returns
    -------
    ndarray (p, d)
    """
    W = np.asarray(W, dtype=float)
    p, d = W.shape
    Q = np.linalg.qr(np.concatenate([np.eye(d, k), W.T], axis=1))[0]   # (d, k + p)
    q = g.standard_normal((n, Q.shape[1]))
    r = residual(q @ Q[:k].T, q @ (W @ Q).T)
    s, U = np.linalg.eigh(r.T @ r)
    E = (U * np.sqrt(np.maximum(s, 0.0))) @ g.standard_normal((p, d))   # rows ~ N(0, r^T r)
    return (r.T @ q) @ Q.T + E - (E @ Q) @ Q.T


def simulate_two_steps(d: int, alphas, seeds: int, c: float = 1.0, width: int = 8,
                       student="tanh", links=("he3",), rng=None, product: bool = False) -> dict:
    r"""Two steps on a reused and on a fresh batch ({prf:ref}`def-ch9-two-steps`) for several
    :math:`\alpha = n/d` on nested data, ``seeds`` independent runs of ``width`` neurons. The
    fresh batch of the second step, independent of the neurons, is drawn in distribution by
    :func:`fresh_gradient` (at each :math:`\alpha`, after the reused batch and the starts).

    Parameters
    ----------
    d : int
        Dimension, at least 8.
    alphas : sequence of float
        Samples per dimension (each :math:`\alpha d\ge1`).
    seeds : int
        Independent runs (axis 0).
    c : float
        Step per sample (:math:`\eta = c\,\alpha`).
    width : int
        Neurons per run, sharing the batch.
    student : str
        A name of :data:`lecnotes.reusing_batches.theory.STUDENTS`.
    links : sequence of str
        Names of :data:`lecnotes.reusing_batches.theory.LINKS`, all on the same inputs.
    rng : Generator, int or None
        Parent random state (SPEC 7).
    product : bool
        Also the leap-3 target :math:`y = z_1z_2z_3` of :func:`product_two_steps` on the same
        inputs and starts (its first-step pre-activations shared with the links).

    Returns
    -------
    dict
        link -> :class:`TwoStepRuns`; with ``product``, also ``"product"`` ->
        ``({"reused", "fresh"} -> array (seeds, alphas), start array (seeds,))``, the mean over
        neurons of :math:`\|P_\star w_2\|/\|w_2\|` and of :math:`\|P_\star w_0\|/\|w_0\|`.
    """
    d = V.positive_int(d, "d", minimum=8)
    seeds = V.positive_int(seeds, "seeds")
    width = V.positive_int(width, "width")
    c = _check_c(c)
    check_student(student)
    if isinstance(links, str) or not links:
        raise ValueError("links must be a non-empty sequence of link names")
    links = [check_link(k) for k in links]
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0):
        raise ValueError("alphas must be a non-empty sequence of positive numbers")
    ns = np.maximum(1, np.round(alphas * d).astype(int))
    shape = (seeds, alphas.size, width)
    out = {k: TwoStepRuns(np.zeros(shape), np.zeros(shape), {m: np.zeros(shape) for m in
                          ("reused", "fresh")}, {m: np.zeros(shape) for m in ("reused", "fresh")})
           for k in links}
    ds = STUDENTS[student][0]
    L, p = len(links), width
    prod = {m: np.zeros((seeds, alphas.size)) for m in ("reused", "fresh")}
    start = np.zeros(seeds)
    kp, Lp = (3 if product else 1), L * p      # coordinates the labels read; link neurons

    def residual(C, P):  # the weights y_i sigma'(<w, x_i>) of every neuron (columns)
        r = np.stack([LINKS[k](C[:, 0]) for k in links], axis=1)[:, :, None] \
            * ds(P[:, :Lp]).reshape(-1, L, p)                   # neuron (l, q): column l p + q
        return np.hstack([r.reshape(-1, Lp), np.prod(C, axis=1)[:, None] * ds(P[:, Lp:])])

    for s in range(seeds):
        X, W0, g = _draw(d, s, int(ns.max()), width, rng)
        start[s] = _span_ratio(W0)
        for j, n in enumerate(ns):
            A = X[:n]
            R0 = residual(A[:, :kp], np.tile(A @ W0.T, L + product))
            W1 = np.tile(W0, (L + product, 1)) + (c / d) * (R0.T @ A)   # the product's last
            for mode in ("reused", "fresh"):
                grad = (residual(A[:, :kp], A @ W1.T).T @ A if mode == "reused"
                        else fresh_gradient(W1, n, kp, residual, g))
                W2 = W1 + (c / d) * grad
                for i, link in enumerate(links):
                    rows = slice(i * p, (i + 1) * p)
                    out[link].m2[mode][s, j] = W2[rows, 0]
                    out[link].norm2[mode][s, j] = np.linalg.norm(W2[rows], axis=1)
                prod[mode][s, j] = _span_ratio(W2[Lp:]) if product else np.nan
            for i, link in enumerate(links):
                rows = slice(i * p, (i + 1) * p)
                out[link].m1[s, j] = W1[rows, 0]
                out[link].norm1[s, j] = np.linalg.norm(W1[rows], axis=1)
    if product:
        out["product"] = (prod, start)
    return out


def _span_ratio(W):
    r"""Mean over the rows of :math:`\|P_\star w\|/\|w\|`, :math:`P_\star` the projection on the
    first three coordinates (the span of :math:`W_\star` of the leap-3 target)."""
    return np.mean(np.linalg.norm(W[:, :3], axis=1) / np.linalg.norm(W, axis=1))


class TwoStepSweep(NamedTuple):
    """Overlaps after two steps over sizes and sample ratios ({prf:ref}`prop-ch9-recursion`)."""

    dims: np.ndarray
    alphas: np.ndarray
    overlap: dict
    r"""``(link, mode)`` -> mean-over-neurons overlap, array (seeds, dims, alphas)."""
    signed: dict
    r"""``(link, mode)`` -> mean-over-neurons signed overlap :math:`m_2/\|w_2\|`, same shape."""
    runs: dict
    r"""``(link, d)`` -> :class:`TwoStepRuns`."""
    product: ProductSweep | None = None
    r"""With ``product=True``: the leap-3 target on the same data (:class:`ProductSweep`)."""


def two_step_sweep(dims, alphas, seeds: int, c: float = 1.0, width: int = 8, student="tanh",
                   links=("he3", "he2"), rng=None, product: bool = False) -> TwoStepSweep:
    r"""{func}`simulate_two_steps` at every ``d`` of ``dims`` ({prf:ref}`prop-ch9-recursion`).

    With ``product``, also the sweep of :func:`product_two_steps` (the same arithmetic) on the
    same data: one draw of the batches serves both ({prf:ref}`prop-ch9-product`).

    Parameters
    ----------
    dims : sequence of int
        Dimensions (each at least 8).
    alphas, seeds, c, width, student, links, rng, product
        As in :func:`simulate_two_steps`.

    Returns
    -------
    TwoStepSweep
    """
    dims = np.asarray(dims)
    if dims.ndim != 1 or dims.size == 0:
        raise ValueError("dims must be a non-empty sequence of integers >= 8")
    dims = np.array([V.positive_int(int(d) if float(d) == int(d) else d, "dims", minimum=8)
                     for d in dims.tolist()])
    runs, prod = {}, []
    for d in dims:
        for link, r in simulate_two_steps(int(d), alphas, seeds, c, width, student, links,
                                          rng, product).items():
            if link == "product":
                prod.append(r)
            else:
                runs[(link, int(d))] = r
    alphas = np.asarray(alphas, dtype=float)
    psweep = None
    if product:
        over = {m: np.stack([r[0][m] for r in prod], axis=1) for m in ("reused", "fresh")}
        start = np.repeat(np.stack([r[1] for r in prod], axis=1)[:, :, None], alphas.size, 2)
        psweep = ProductSweep(dims, alphas, over, start)
    overlap = {(link, mode): np.stack([runs[(link, int(d))].overlap(mode) for d in dims], axis=1)
               for link in links for mode in ("reused", "fresh")}
    signed = {(link, mode): np.stack([runs[(link, int(d))].overlap(mode, True) for d in dims],
                                     axis=1)
              for link in links for mode in ("reused", "fresh")}
    return TwoStepSweep(dims, alphas, overlap, signed, runs, psweep)


class ProductSweep(NamedTuple):
    r"""Overlaps with :math:`\operatorname{span}(\Wstar)` after two steps on the target
    :math:`y = z_1z_2z_3` ({prf:ref}`prop-ch9-product`)."""

    dims: np.ndarray
    alphas: np.ndarray
    overlap: dict
    r"""``"reused"``, ``"fresh"`` -> mean over neurons of :math:`\|P_\star w_2\|/\|w_2\|`,
    array (seeds, dims, alphas)."""
    start: np.ndarray
    r""":math:`\|P_\star w_0\|/\|w_0\|`, the same shape: the overlap of a random start."""


def product_two_steps(dims, alphas, seeds: int, c: float = 1.0, width: int = 16,
                      student="tanh", rng=None) -> ProductSweep:
    r"""Two steps {eq}`eq-ch9-step` on a reused and on a fresh batch for the leap-3 target
    :math:`y = z_1z_2z_3`, :math:`z_i = x_i` (:math:`\Wstar = (e_1, e_2, e_3)`), on nested data
    as in :func:`simulate_two_steps`; the overlap of a neuron is
    :math:`\|P_\star w_2\|/\|w_2\|` with :math:`P_\star` the projection on the span of
    :math:`\Wstar` ({prf:ref}`prop-ch9-product`).

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    alphas : sequence of float
        Samples per dimension (each :math:`\alpha d\ge1`).
    seeds : int
        Independent runs (axis 0).
    c : float
        Step per sample.
    width : int
        Neurons per run, sharing the batch.
    student : str
        A name of :data:`lecnotes.reusing_batches.theory.STUDENTS`.
    rng : Generator, int or None
        Parent random state (SPEC 7); size ``d``, seed ``s`` draw from ``stream(rng, d, s)``.

    Returns
    -------
    ProductSweep
        The same as ``two_step_sweep(..., links=("he3",), product=True).product``, which it
        runs (the fresh batches by :func:`fresh_gradient`).
    """
    return two_step_sweep(dims, alphas, seeds, c, width, student, ("he3",), rng,
                          product=True).product


_TARGETS = {
    "he3": (1, lambda Z: LINKS["he3"](Z[:, 0])),
    "he2": (1, lambda Z: LINKS["he2"](Z[:, 0])),
    "mix": (2, lambda Z: (Z[:, 0] + LINKS["he3"](Z[:, 1])) / np.sqrt(2.0)),
    "product": (3, lambda Z: Z[:, 0] * Z[:, 1] * Z[:, 2]),
    "sign": (3, lambda Z: np.sign(Z[:, 0] * Z[:, 1] * Z[:, 2])),
}
r"""Targets of :func:`gd_steps` as (number of directions, label of the first coordinates):
:math:`h_3(z_1)`, :math:`h_2(z_1)`, the non-staircase :math:`(z_1 + h_3(z_2))/\sqrt2`,
:math:`z_1z_2z_3` and :math:`\sign(z_1z_2z_3)`, all with :math:`\E[y^2] = 1`."""


class StepRuns(NamedTuple):
    r"""Overlaps after each of T full-batch steps ({prf:ref}`def-ch9-many-steps`)."""

    dims: np.ndarray
    direction: np.ndarray
    r"""Mean over neurons of :math:`|\langle w_t, w_{\star,i}\rangle|/\|w_t\|`, array
    (seeds, dims, steps + 1, directions); index ``t`` is after ``t`` steps."""
    subspace: np.ndarray
    r"""Mean over neurons of :math:`\|P_\star w_t\|/\|w_t\|`, array (seeds, dims, steps + 1)."""


def gd_steps(dims, alpha: float, seeds: int, steps: int, target: str = "he3", c: float = 1.0,
             width: int = 16, fresh: bool = False, student="tanh", rng=None) -> StepRuns:
    r"""``steps`` full-batch correlation-loss steps {eq}`eq-ch9-step` of ``width`` neurons on
    one batch of :math:`n = \alpha d` samples used at every step (``fresh=False``, multi-pass)
    or on a new batch at every step after the first (``fresh=True``, one pass over
    ``steps * n`` samples) ({prf:ref}`def-ch9-many-steps`), :math:`w_{\star,i} = e_i`. Size
    ``d``, seed ``s`` draw from ``validate.stream(rng, d, s)``; the first batch is the same in
    both protocols, and the later fresh batches are drawn in distribution by
    :func:`fresh_gradient` (they are independent of the neurons).

    Parameters
    ----------
    dims : sequence of int
        Dimensions, each at least 8.
    alpha : float
        Samples per dimension and batch.
    seeds : int
        Independent runs (axis 0).
    steps : int
        Number of steps T, at least 1.
    target : str
        A name of :data:`_TARGETS`: ``"he3"``, ``"he2"``, ``"mix"``, ``"product"``, ``"sign"``.
    c : float
        Step per sample.
    width : int
        Neurons per run, sharing the batch.
    fresh : bool
        A new batch at every step instead of the same one.
    student : str
        A name of :data:`lecnotes.reusing_batches.theory.STUDENTS`.
    rng : Generator, int or None
        Parent random state (SPEC 7).

    Returns
    -------
    StepRuns
    """
    dims = np.asarray(dims)
    if dims.ndim != 1 or dims.size == 0:
        raise ValueError("dims must be a non-empty sequence of integers >= 8")
    dims = np.array([V.positive_int(int(d) if float(d) == int(d) else d, "dims", minimum=8)
                     for d in dims.tolist()])
    alpha = V.positive_float(alpha, "alpha")
    seeds = V.positive_int(seeds, "seeds")
    steps = V.positive_int(steps, "steps")
    width = V.positive_int(width, "width")
    c = _check_c(c)
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {sorted(_TARGETS)}, got {target!r}")
    if not isinstance(fresh, bool):
        raise TypeError(f"fresh must be True or False, got {fresh!r}")
    ds = STUDENTS[check_student(student)][0]
    k, label = _TARGETS[target]
    direction = np.zeros((seeds, dims.size, steps + 1, k))
    subspace = np.zeros((seeds, dims.size, steps + 1))
    for j, d in enumerate(dims):
        n = max(1, int(round(alpha * d)))
        for s in range(seeds):
            g = V.stream(rng, int(d), s)
            W = g.standard_normal((width, d), dtype=np.float32)
            W /= np.linalg.norm(W, axis=1, keepdims=True)
            X = g.standard_normal((n, d), dtype=np.float32)
            y = label(X)
            for t in range(steps + 1):
                norm = np.linalg.norm(W, axis=1)
                direction[s, j, t] = np.mean(np.abs(W[:, :k]) / norm[:, None], axis=0)
                subspace[s, j, t] = np.mean(np.linalg.norm(W[:, :k], axis=1) / norm)
                if t == steps:
                    break
                if fresh and t > 0:  # a new batch, drawn in distribution (fresh_gradient)
                    W = W + (c / d) * fresh_gradient(
                        W, n, k, lambda C, P: label(C)[:, None] * ds(P), g)
                    continue
                W = W + (c / d) * (y[:, None] * ds(X @ W.T)).T @ X
    return StepRuns(dims, direction, subspace)


def _log_mean_se(values):
    v = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(v) & (v > 0)) or v.ndim > 1 or (v.ndim == 1 and v.size < 2):
        raise ValueError("give a positive number or a 1-d array of at least 2 positive numbers")
    lv = np.log(v)
    if lv.ndim == 0:
        return float(lv), 0.0
    return float(lv.mean()), float(lv.std(ddof=1) / math.sqrt(lv.size))


def log_slope(dims, small, large):
    r"""The exponent of a median escape time between two sizes from independent groups
    ({prf:ref}`prop-ch9-one-pass`): the difference of the mean logs of the group medians over
    :math:`\log(d_2/d_1)`, and its standard error; the two sizes may have different numbers
    of groups.

    Parameters
    ----------
    dims : sequence of two int
        :math:`d_1 < d_2`.
    small, large : array_like
        Group medians (positive) at :math:`d_1` and :math:`d_2`, at least 2 each.

    Returns
    -------
    slope, sem : float
    """
    d1, d2 = (V.positive_int(int(d), "dims") for d in dims)
    if d2 <= d1:
        raise ValueError(f"dims must increase, got {list(dims)}")
    (a, sa), (b, sb) = _log_mean_se(small), _log_mean_se(large)
    dx = math.log(d2 / d1)
    return (b - a) / dx, math.hypot(sa, sb) / dx


def log_gap(groups, reference) -> float:
    r"""``|z|`` of the mean log of group medians against a reference
    ({prf:ref}`prop-ch9-one-pass`): the difference of the mean logs over their combined
    standard error.

    Parameters
    ----------
    groups : array_like
        Group medians (positive), at least 2.
    reference : float or array_like
        A positive number (no error), or group medians of the reference (their standard
        error is added in quadrature).

    Returns
    -------
    float
    """
    (a, sa), (b, sb) = _log_mean_se(groups), _log_mean_se(reference)
    if sa == 0.0:
        raise ValueError("groups must be an array of group medians")
    return abs(a - b) / math.hypot(sa, sb)
