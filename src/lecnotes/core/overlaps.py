r"""Overlaps between estimates and target directions (chapters 0, 3, 6, 7).

The overlap :math:`\rho = |\langle\hat w,w_\star\rangle|/\|\hat w\|` (book, *Notation*), its
subspace version, the per-neuron overlap matrix of a first layer with the target directions
and its Gram matrix (chapter 6), and the sign-corrected mean update of a gradient step with
its alignment (chapter 7).
"""

from __future__ import annotations

import numpy as np

from lecnotes.core import validate as V

__all__ = [
    "overlap",
    "subspace_overlap",
    "unit_rows",
    "neuron_overlaps",
    "overlap_gram",
    "subspace_energy",
    "mean_update",
    "update_alignment",
]


def overlap(w_hat, w_star) -> float:
    r"""Overlap :math:`\rho = |\langle\hat w,w_\star\rangle|/(\|\hat w\|\|w_\star\|)` in [0, 1].

    Chapter 0, {prf:ref}`def-overlap`. Sign-blind, since spectral estimators are defined up
    to sign.

    Parameters
    ----------
    w_hat : array_like (d,)
        Estimate, non-zero.
    w_star : array_like (d,)
        Target direction, non-zero.

    Returns
    -------
    float
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
    gives about ``r/d``. The multi-index form of {prf:ref}`def-overlap` (chapter 0).

    Parameters
    ----------
    W_hat : array_like (r, d)
        Rows spanning the estimate.
    W_star : array_like (k, d)
        Orthonormal rows spanning the target subspace.

    Returns
    -------
    float
    """
    W_hat = V.finite_array(W_hat, "W_hat", ndim=2)
    W_star = V.finite_array(W_star, "W_star", ndim=2)
    if W_hat.shape[1] != W_star.shape[1]:
        raise ValueError(f"dimensions differ: {W_hat.shape[1]} vs {W_star.shape[1]}")
    q = _row_basis(W_hat, "W_hat", 1e-10)
    return float(np.sum((W_star @ q) ** 2) / W_star.shape[0])


def _row_basis(S, name, rtol):
    """Orthonormal basis (d, rank) of the row space of ``S`` by QR, rank cut at ``rtol``."""
    q, r = np.linalg.qr(S.T)
    keep = np.abs(np.diag(r)) > rtol * max(1.0, float(np.abs(r).max()))
    if not keep.any():
        raise ValueError(f"{name} spans the zero subspace")
    return q[:, keep]


def unit_rows(M, name):
    """The rows of ``M`` (1-d: one row) divided by their norms.

    Parameters
    ----------
    M : array_like (p, d) or (d,)
        Rows, none of them zero.
    name : str
        Name in the error messages.

    Returns
    -------
    ndarray (p, d)
    """
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

    Chapter 6, {eq}`eq-ch6-neuron-overlap`: the *overlap matrix* of Dandi et al., one row per
    neuron, one column per target direction. A 1-d ``W_star`` gives shape (p,). A random
    direction has cosines of order :math:`d^{-1/2}`; a learned one, of order one.

    Parameters
    ----------
    W : array_like (p, d)
        First layer, one neuron per row.
    W_star : array_like (k, d) or (d,)
        Target directions.

    Returns
    -------
    ndarray (p, k), or (p,) for a 1-d ``W_star``
    """
    Wn = unit_rows(W, "W")
    one = np.ndim(W_star) == 1
    Sn = unit_rows(W_star, "W_star")
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
    leap-2 target there are as many as target directions (specialisation;
    {prf:ref}`thm-ch6-leap`, chapter 6).

    Parameters
    ----------
    W : array_like (p, d)
        First layer.
    W_star : array_like (k, d)
        Target directions.

    Returns
    -------
    ndarray (k, k)
    """
    C = neuron_overlaps(W, np.atleast_2d(V.finite_array(W_star, "W_star")))
    return C.T @ C / C.shape[0]


def subspace_energy(W, W_star) -> np.ndarray:
    r"""Per-neuron fraction of norm in the target subspace, :math:`\|\Pi^\star w_i\|^2/\|w_i\|^2`.

    Chapter 6 (the quantity bounded below in Dandi et al.'s one-step theorem,
    {prf:ref}`thm-ch6-leap`, and above in their sub-leap impossibility result).

    Parameters
    ----------
    W : array_like (p, d)
        First layer.
    W_star : array_like (k, d)
        Rows spanning the subspace (orthonormalised here).

    Returns
    -------
    ndarray (p,)
    """
    Wn = unit_rows(W, "W")
    S = V.finite_array(W_star, "W_star")
    S = np.atleast_2d(S)
    if S.shape[1] != Wn.shape[1]:
        raise ValueError(f"dimensions differ: W has {Wn.shape[1]} columns, W_star {S.shape[1]}")
    return np.sum((Wn @ _row_basis(S, "W_star", 1e-12)) ** 2, axis=1)


def mean_update(W_prev, W_next, a) -> np.ndarray:
    r"""Sign-corrected mean update :math:`m = \frac1p\sum_j\mathrm{sign}(a_j)(w_j^{+}-w_j)`.

    Chapter 7, {eq}`eq-ch7-update`. Neuron :math:`j` moves by :math:`\eta a_j g_j` (its
    gradient times its second-layer weight); multiplying by the sign of :math:`a_j` before
    averaging keeps the common part of the :math:`g_j`, which a plain average would cancel.

    Parameters
    ----------
    W_prev, W_next : array_like (p, d)
        First layer before and after the step.
    a : array_like (p,)
        Second layer, not all zero.

    Returns
    -------
    ndarray (d,)
    """
    W_prev = V.finite_array(W_prev, "W_prev", ndim=2)
    W_next = V.finite_array(W_next, "W_next", ndim=2)
    a = V.finite_array(a, "a", ndim=1)
    if W_prev.shape != W_next.shape:
        raise ValueError(f"shapes differ: {W_prev.shape} vs {W_next.shape}")
    if a.shape != (W_prev.shape[0],):
        raise ValueError(f"a must have one entry per neuron ({W_prev.shape[0]})")
    if np.all(a == 0):
        raise ValueError("a is zero: the update has no sign to correct")
    return np.sign(a) @ (W_next - W_prev) / W_prev.shape[0]


def update_alignment(W_prev, W_next, a, w_star) -> float:
    r"""Overlap :math:`|\langle m,w_\star\rangle|/(\|m\|\|w_\star\|)` of the mean update (ch. 7).

    :math:`m` is :func:`mean_update` ({eq}`eq-ch7-update`). Of order one when the step learns
    :math:`w_\star`, of order :math:`d^{-1/2}` when :math:`m` is noise.

    Parameters
    ----------
    W_prev, W_next : array_like (p, d)
        First layer before and after the step.
    a : array_like (p,)
        Second layer.
    w_star : array_like (d,)
        Target direction.

    Returns
    -------
    float
    """
    return overlap(mean_update(W_prev, W_next, a), w_star)
