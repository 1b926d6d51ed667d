r"""Closed forms of chapter 9: the effective label of a reused batch and two steps at n = alpha d.

One neuron trained by gradient descent on the correlation loss, step :math:`\eta = c\,\alpha`
on a batch of :math:`n = \alpha d` samples ({prf:ref}`def-ch9-two-steps`). Everything here is
deterministic: the effective label function {eq}`eq-ch9-effective-label`, its Hermite
coefficients (by quadrature, and in closed form for the :math:`h_3` student,
{eq}`eq-ch9-h3-label`), and the large-:math:`d` recursion of the projections after two steps
with a reused or a fresh second batch ({prf:ref}`prop-ch9-recursion`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.polynomial import hermite_e as HE

from lecnotes.core import validate as V
from lecnotes.core.hermite import gauss_hermite

__all__ = [
    "LINKS",
    "STUDENTS",
    "check_link",
    "check_student",
    "effective_label",
    "label_coefficients",
    "h3_label_coefficients",
    "ProjectionState",
    "TwoStepTheory",
    "two_step_theory",
    "fresh_noise_floor",
    "ProductMoments",
    "product_moments",
    "product_noise_floor",
]

_S6 = math.sqrt(6.0)


def _he3(g):
    return (g**3 - 3.0 * g) / _S6


def _he2(g):
    return (g**2 - 1.0) / math.sqrt(2.0)


LINKS = {"he3": _he3, "he2": _he2}
r"""The chapter's links: :math:`h_3 = \He_3/\sqrt6` (information exponent 3, generative
exponent 1) and :math:`h_2 = \He_2/\sqrt2` (both exponents 2)."""


def _sech2(u):
    return 1.0 / np.cosh(np.clip(u, -40.0, 40.0)) ** 2


STUDENTS = {
    "tanh": (_sech2, lambda u: -2.0 * np.tanh(u) * _sech2(u)),
    "h3": (lambda u: 3.0 * (u * u - 1.0) / _S6, lambda u: 6.0 * u / _S6),
}
r"""Student activations as :math:`(\sigma', \sigma'')`: ``"tanh"`` and ``"h3"``
(:math:`\sigma = h_3`, :math:`\sigma' = 3(u^2-1)/\sqrt6`)."""


def check_link(link) -> str:
    """Validate a link name of :data:`LINKS` ({prf:ref}`def-ch9-two-steps`).

    Parameters
    ----------
    link : str
        ``"he3"`` or ``"he2"``.

    Returns
    -------
    str
    """
    if not isinstance(link, str):
        raise TypeError(f"link must be a string, one of {sorted(LINKS)}, got {link!r}")
    if link not in LINKS:
        raise ValueError(f"link must be one of {sorted(LINKS)}, got {link!r}")
    return link


def check_student(student) -> str:
    """Validate a student name of :data:`STUDENTS` ({prf:ref}`def-ch9-two-steps`).

    Parameters
    ----------
    student : str
        ``"tanh"`` or ``"h3"``.

    Returns
    -------
    str
    """
    if not isinstance(student, str):
        raise TypeError(f"student must be a string, one of {sorted(STUDENTS)}, got {student!r}")
    if student not in STUDENTS:
        raise ValueError(f"student must be one of {sorted(STUDENTS)}, got {student!r}")
    return student


def _grid(n_nodes):
    g, w = gauss_hermite(V.positive_int(n_nodes, "n_nodes", minimum=8))
    G, Z, N = np.meshgrid(g, g, g, indexing="ij")
    W = w[:, None, None] * w[None, :, None] * w[None, None, :]
    return G, Z, N, W


def _noise_var(link, student, c, alpha, n_nodes):
    G, Z, _, W = _grid(n_nodes)
    r0 = LINKS[link](G) * STUDENTS[student][0](Z)
    return c * c * alpha * float(np.sum(W * r0 * r0))


def effective_label(y, c, alpha, student="tanh", link="he3", n_nodes: int = 48,
                    reused: bool = True):
    r"""The effective label function :math:`T(y) = y\,\E_{z,\nu}[\sigma'(z + c\,y\,\sigma'(z)
    + \nu)]` of the second step on a reused batch, eq. {eq}`eq-ch9-effective-label`.

    :math:`z\sim\N(0,1)` and :math:`\nu\sim\N(0,s^2)`, :math:`s^2 = c^2\alpha\,\E[r_0^2]`, are
    independent of the label (the neuron's start is orthogonal to :math:`\wstar`).

    Parameters
    ----------
    y : array_like
        Label values.
    c : float
        Step per sample, :math:`c = \eta/\alpha > 0`.
    alpha : float
        Samples per dimension :math:`n/d > 0`.
    student : str
        A name of :data:`STUDENTS`.
    link : str
        A name of :data:`LINKS` (it sets :math:`s^2`).
    n_nodes : int
        Gauss-Hermite nodes per axis (at least 8).
    reused : bool
        ``False`` drops the own-label term: the fresh batch's :math:`y\,\E[\sigma'(z+\nu)]`.

    Returns
    -------
    ndarray shaped like ``y``
    """
    if not isinstance(reused, bool):
        raise TypeError(f"reused must be True or False, got {reused!r}")
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_student(student)
    check_link(link)
    y = V.finite_array(y, "y")
    s = math.sqrt(_noise_var(link, student, c, alpha, n_nodes))
    g, w = gauss_hermite(V.positive_int(n_nodes, "n_nodes", minimum=8))
    Z, N = np.meshgrid(g, g, indexing="ij")
    W = np.outer(w, w)
    ds = STUDENTS[student][0]
    yy = y.reshape(-1, 1, 1)
    vals = np.sum(W * ds(Z + reused * c * yy * ds(Z) + s * N), axis=(1, 2))
    return (y.reshape(-1) * vals).reshape(y.shape)


def label_coefficients(c, alpha, student="tanh", link="he3", kmax: int = 5,
                       n_nodes: int = 48, cross_talk: bool = True) -> np.ndarray:
    r"""Hermite coefficients :math:`\E[T(Y)h_k(G)]`, :math:`k = 0..k_{\max}`, of the effective
    label {eq}`eq-ch9-effective-label` with :math:`Y = \varphi(G)`, by 3-d Gauss-Hermite
    quadrature over :math:`(G, z, \nu)` ({prf:ref}`prop-ch9-effective-label`).

    Parameters
    ----------
    c, alpha, student, link, n_nodes
        As in :func:`effective_label`.
    kmax : int
        Largest degree, 1..12.
    cross_talk : bool
        ``False`` sets :math:`\nu = 0`: the per-sample label of one sample reused alone
        ([chapter 8](08_online_sgd.ipynb)'s ``reuse-first-coefficient``), the competitor that
        ignores the other samples; it does not depend on :math:`\alpha`.

    Returns
    -------
    ndarray (kmax + 1,)
        Coefficients in the normalised basis :math:`h_k = \He_k/\sqrt{k!}`.
    """
    if not isinstance(cross_talk, bool):
        raise TypeError(f"cross_talk must be True or False, got {cross_talk!r}")
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_student(student)
    check_link(link)
    kmax = V.positive_int(kmax, "kmax")
    if kmax > 12:
        raise ValueError(f"kmax must be an integer in 1..12, got {kmax}")
    G, Z, N, W = _grid(n_nodes)
    ds = STUDENTS[student][0]
    y = LINKS[link](G)
    s = math.sqrt(_noise_var(link, student, c, alpha, n_nodes)) if cross_talk else 0.0
    T = y * ds(Z + c * y * ds(Z) + s * N)
    g = G[:, 0, 0]
    out = []
    for k in range(kmax + 1):
        hk = HE.hermeval(g, [0] * k + [1]) / math.sqrt(math.factorial(k))
        out.append(float(np.sum(W * T * hk[:, None, None])))
    return np.array(out)


def h3_label_coefficients(c, alpha, link="he3") -> np.ndarray:
    r"""Exact Hermite coefficients of the effective label of the :math:`h_3` student,
    eq. {eq}`eq-ch9-h3-label`: :math:`T(y) = \tfrac{3}{\sqrt6}(s^2y + 3c^2y^3)` with
    :math:`s^2 = 3c^2\alpha`, expanded in :math:`h_k(G)` by exact polynomial algebra
    ({prf:ref}`prop-ch9-effective-label`).

    Parameters
    ----------
    c : float
        Step per sample, > 0.
    alpha : float
        Samples per dimension, > 0.
    link : str
        ``"he3"`` (degree 9, coefficients up to :math:`h_9`) or ``"he2"`` (degree 6).

    Returns
    -------
    ndarray
        Coefficients of :math:`h_0, \dots, h_{3p}` (:math:`p` the link's degree).
    """
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_link(link)
    # phi in the He basis: h_3 = He_3/sqrt(6), h_2 = He_2/sqrt(2)
    y = (np.array([0.0, 0.0, 0.0, 1.0 / _S6]) if link == "he3"
         else np.array([0.0, 0.0, 1.0 / math.sqrt(2.0)]))
    s2 = 3.0 * c * c * alpha   # c^2 alpha E[y^2] E[sigma'^2], E[sigma'(Z)^2] = 3
    y3 = HE.hermemul(HE.hermemul(y, y), y)
    T = 3.0 / _S6 * HE.hermeadd(s2 * y, 3.0 * c * c * y3)
    # He_k coefficient a_k -> h_k coefficient a_k sqrt(k!)
    return np.array([a * math.sqrt(math.factorial(k)) for k, a in enumerate(T)])


class ProjectionState(NamedTuple):
    r"""The projections of the neuron after two steps ({prf:ref}`prop-ch9-recursion`)."""

    m1: float
    r""":math:`\langle w_1, \wstar\rangle`."""
    m2: float
    r""":math:`\langle w_2, \wstar\rangle`."""
    norm1: float
    r""":math:`\|w_1\|`."""
    norm2: float
    r""":math:`\|w_2\|`."""
    overlap: float
    r""":math:`|m_2|/\|w_2\|`."""


class TwoStepTheory(NamedTuple):
    """Large-d limit of two steps, reused and fresh ({prf:ref}`prop-ch9-recursion`)."""

    reused: ProjectionState
    fresh: ProjectionState
    s2: float
    r"""Variance :math:`s^2 = c^2\alpha\E[r_0^2]` of the cross-talk :math:`\nu`."""


def two_step_theory(c, alpha, student="tanh", link="he3", n_nodes: int = 48,
                    memory: bool = True) -> TwoStepTheory:
    r"""The recursion {eq}`eq-ch9-recursion` of {prf:ref}`prop-ch9-recursion`: the projections
    :math:`m_t = \langle w_t,\wstar\rangle` and norms :math:`\|w_t\|` after two steps, reused or
    fresh second batch, in the limit :math:`d\to\infty` at fixed :math:`\alpha = n/d`, from a
    start orthogonal to :math:`\wstar`.

    Parameters
    ----------
    c, alpha, student, link, n_nodes
        As in :func:`effective_label`.
    memory : bool
        Keep the terms in :math:`\alpha^2` of :math:`\|w_2\|^2` (the batch's memory of the
        cross-talk); ``False`` drops them, the naive "preprocessed first moment" norm.

    Returns
    -------
    TwoStepTheory
    """
    if not isinstance(memory, bool):
        raise TypeError(f"memory must be True or False, got {memory!r}")
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_student(student)
    check_link(link)
    G, Z, N, W = _grid(n_nodes)
    ds, dds = STUDENTS[student]

    def E(f):
        return float(np.sum(W * f))

    y = LINKS[link](G)
    r0 = y * ds(Z)
    a1, b1, s2 = c * alpha * E(r0 * Z), c * alpha * E(r0 * G), c * c * alpha * E(r0 * r0)
    nu = math.sqrt(s2) * N
    base = Z * (1 + a1) + G * b1 + nu
    norm1 = math.sqrt((1 + a1) ** 2 + b1**2 + s2)
    states = {}
    for mode in ("reused", "fresh"):
        z1 = base + (c * r0 if mode == "reused" else 0.0)
        r1 = y * ds(z1)
        a2, b2 = c * alpha * E(r1 * Z), c * alpha * E(r1 * G)
        e_nr = s2 * E(y * dds(z1))   # E[nu r1] by Stein's lemma
        v22 = c * c * alpha * E(r1 * r1) + memory * c * c * alpha**2 * e_nr**2 / s2
        if mode == "reused":
            v12 = c * alpha * E(r1 * (c * r0 + nu))
            v22 += memory * 2 * c * alpha * e_nr * E(r0 * r1) / E(r0 * r0)
        else:
            v12 = c * alpha * e_nr
        norm2 = math.sqrt((1 + a1 + a2) ** 2 + (b1 + b2) ** 2 + s2 + 2 * v12 + v22)
        states[mode] = ProjectionState(b1, b1 + b2, norm1, norm2, abs(b1 + b2) / norm2)
    return TwoStepTheory(states["reused"], states["fresh"], s2)


def fresh_noise_floor(d, c, alpha, student="tanh", link="he3", n_nodes: int = 48) -> float:
    r"""Mean overlap :math:`\E|m_2|/\|w_2\|` after two steps with **fresh** batches when the
    link gives no drift (:math:`m_2` Gaussian of mean 0), eq. {eq}`eq-ch9-noise-floor`:
    :math:`\sqrt{2V/(\pi d)}/\|w_2\|` with
    :math:`V = 1 + c^2\alpha(\E[r_0^2G^2] + \E[r_1^2G^2])`.

    Parameters
    ----------
    d : int
        Dimension, at least 2.
    c, alpha, student, link, n_nodes
        As in :func:`effective_label`.

    Returns
    -------
    float
    """
    d = V.positive_int(d, "d", minimum=2)
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    th = two_step_theory(c, alpha, student, link, n_nodes)
    G, Z, N, W = _grid(n_nodes)
    ds = STUDENTS[student][0]
    y = LINKS[link](G)
    r0 = y * ds(Z)
    r1 = y * ds(Z + math.sqrt(th.s2) * N)
    var = 1.0 + c * c * alpha * float(np.sum(W * (r0**2 + r1**2) * G**2))
    return math.sqrt(2.0 * var / (math.pi * d)) / th.fresh.norm2


class ProductMoments(NamedTuple):
    r"""Hermite moments of the effective label of :math:`y = z_1z_2z_3`
    ({prf:ref}`prop-ch9-product`)."""

    first: float
    r"""Largest :math:`|\E[T(Y)z_i]|` over :math:`i` and both batches."""
    mixed: float
    r"""Largest :math:`|\E[T(Y)z_iz_j]|`, :math:`i\ne j`, over both batches."""
    second_reused: float
    r""":math:`\E[T(Y)h_2(z_1)]` of the reused batch."""
    second_even: float
    r""":math:`\E[Y^2h_2(z_1)] = \sqrt2`: an even :math:`T` sees the second moment."""
    third_fresh: float
    r""":math:`\E[T(Y)z_1z_2z_3]` of the fresh batch (the leap-3 moment)."""


def product_moments(c, alpha, student="tanh", n_nodes: int = 16) -> ProductMoments:
    r"""The low Hermite moments of the effective label {eq}`eq-ch9-effective-label` of the
    target :math:`y = z_1z_2z_3` ({prf:ref}`prop-ch9-product`), by Gauss-Hermite quadrature over
    :math:`(z_1, z_2, z_3)`, reused and fresh batch. :math:`\E[y^2] = 1` as for :math:`h_3`, so
    the cross-talk variance :math:`s^2` is that of the ``"he3"`` link.

    Parameters
    ----------
    c, alpha, student
        As in :func:`effective_label`.
    n_nodes : int
        Nodes per axis of :math:`z` (at least 8); :math:`T` itself uses 32 per axis.

    Returns
    -------
    ProductMoments
    """
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_student(student)
    g, w = gauss_hermite(V.positive_int(n_nodes, "n_nodes", minimum=8))
    Z1, Z2, Z3 = np.meshgrid(g, g, g, indexing="ij")
    W = w[:, None, None] * w[None, :, None] * w[None, None, :]
    y = Z1 * Z2 * Z3
    h2 = (Z1 * Z1 - 1.0) / math.sqrt(2.0)
    T = {r: effective_label(y, c, alpha, student, "he3", 32, reused=r) for r in (True, False)}

    def E(f):
        return float(np.sum(W * f))

    first = max(abs(E(T[r] * Zi)) for r in T for Zi in (Z1, Z2, Z3))
    mixed = max(abs(E(T[r] * A * B)) for r in T for A, B in ((Z1, Z2), (Z1, Z3), (Z2, Z3)))
    return ProductMoments(first, mixed, E(T[True] * h2), E(y * y * h2), E(T[False] * y))


def product_noise_floor(d, c, alpha, student="tanh", n_nodes: int = 48) -> float:
    r"""Mean overlap :math:`\E\|P_\star w_2\|/\|w_2\|` after two steps with **fresh**
    batches for :math:`y = z_1z_2z_3`, eq. {eq}`eq-ch9-product-floor`:
    :math:`2\sqrt{2/\pi}\,\sqrt{V/d}/\|w_2\|` with
    :math:`V = 1 + 3c^2\alpha(\E[\sigma'(z)^2] + \E[\sigma'(z+\nu)^2])` and the fresh norm
    of {prf:ref}`prop-ch9-recursion` (which sees the label only through
    :math:`\E[y] = 0`, :math:`\E[y^2] = 1`, as for :math:`h_3`).

    Parameters
    ----------
    d : int
        Dimension, at least 4.
    c, alpha, student, n_nodes
        As in :func:`effective_label`.

    Returns
    -------
    float
    """
    d = V.positive_int(d, "d", minimum=4)
    c = V.positive_float(c, "c")
    alpha = V.positive_float(alpha, "alpha")
    check_student(student)
    th = two_step_theory(c, alpha, student, "he3", n_nodes)
    g, w = gauss_hermite(V.positive_int(n_nodes, "n_nodes", minimum=8))
    Z, N = np.meshgrid(g, g, indexing="ij")
    W = np.outer(w, w)
    ds = STUDENTS[student][0]
    e0, e1 = float(np.sum(W * ds(Z) ** 2)), float(np.sum(W * ds(Z + math.sqrt(th.s2) * N) ** 2))
    var = 1.0 + 3.0 * c * c * alpha * (e0 + e1)   # E[z1^2 y^2] = E[z1^4] = 3
    return 2.0 * math.sqrt(2.0 / math.pi) * math.sqrt(var / d) / th.fresh.norm2
