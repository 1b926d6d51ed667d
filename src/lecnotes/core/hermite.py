r"""Hermite polynomials, Gaussian expectations and Hermite coefficients (chapters 0, 2, 5).

Conventions (book, *Notation*): :math:`G\sim N(0,1)`; the probabilists' Hermite polynomials
:math:`\mathrm{He}_k` satisfy :math:`\mathbb E[\mathrm{He}_j(G)\mathrm{He}_k(G)] = k!\,[j=k]`;
the normalised ones are :math:`h_k = \mathrm{He}_k/\sqrt{k!}`, an orthonormal basis of
:math:`L^2(\gamma)`. A function :math:`f\in L^2(\gamma)` expands as

.. math:: f = \sum_k c_k h_k = \sum_k \frac{\lambda_k}{k!}\mathrm{He}_k,\qquad
          c_k = \mathbb E[f(G) h_k(G)],\quad \lambda_k = \mathbb E[f(G)\mathrm{He}_k(G)]
          = \sqrt{k!}\,c_k.

Gaussian expectations are computed by adaptive Gauss-Legendre quadrature on a truncated line
(:func:`gaussian_expectation`): the panels are bisected until two rules agree, so jumps of a
discontinuous link (``sign``, indicators) are located automatically and integrated to about
1e-10; known break points can be passed to skip the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from lecnotes.core import validate as V

__all__ = [
    "hermite_polys",
    "he",
    "h",
    "as_callable",
    "eval_vectorised",
    "gauss_legendre",
    "panel_rule",
    "gaussian_expectation",
    "hermite_coefficients",
    "gauss_hermite",
    "split_gaussian_rule",
]


_SQRT_2PI = math.sqrt(2.0 * math.pi)


def hermite_polys(x, kmax: int, normalized: bool = False) -> np.ndarray:
    r"""All Hermite polynomials of degree 0..kmax at ``x`` by the three-term recurrence.

    Chapter 0, {prf:ref}`def-hermite`:
    :math:`\mathrm{He}_{k+1}(x) = x\,\mathrm{He}_k(x) - k\,\mathrm{He}_{k-1}(x)`, and for
    the normalised family :math:`h_{k+1} = (x h_k - \sqrt{k}\,h_{k-1})/\sqrt{k+1}`
    (stable: no factorials).

    Parameters
    ----------
    x : array_like
        Points, any shape.
    kmax : int
        Highest degree, ``kmax >= 0``.
    normalized : bool
        ``False`` for :math:`\mathrm{He}_k`, ``True`` for :math:`h_k`.

    Returns
    -------
    ndarray of shape ``(kmax + 1,) + x.shape``.
    """
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    x = V.finite_array(x, "x")
    out = np.empty((kmax + 1,) + x.shape)
    out[0] = 1.0
    if kmax >= 1:
        out[1] = x
    for k in range(1, kmax):
        if normalized:
            out[k + 1] = (x * out[k] - math.sqrt(k) * out[k - 1]) / math.sqrt(k + 1)
        else:
            out[k + 1] = x * out[k] - k * out[k - 1]
    return out


def he(k: int, x) -> np.ndarray:
    r"""Probabilists' Hermite polynomial :math:`\mathrm{He}_k(x)` (chapter 0).

    {prf:ref}`def-hermite`.

    Parameters
    ----------
    k : int
        Degree, ``k >= 0``.
    x : array_like
        Points, any shape.

    Returns
    -------
    ndarray shaped like ``x``
    """
    k = V.positive_int(k, "k", minimum=0)
    return hermite_polys(x, k)[k]


def h(k: int, x) -> np.ndarray:
    r"""The normalised Hermite polynomial :math:`h_k = \mathrm{He}_k/\sqrt{k!}` (chapter 0).

    {prf:ref}`def-hermite`.

    Parameters
    ----------
    k : int
        Degree, ``k >= 0``.
    x : array_like
        Points, any shape.

    Returns
    -------
    ndarray shaped like ``x``
    """
    k = V.positive_int(k, "k", minimum=0)
    return hermite_polys(x, k, normalized=True)[k]


_GL_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def gauss_legendre(m: int):
    """The ``m``-point Gauss-Legendre rule on [-1, 1] (cached; the package's one copy).

    Parameters
    ----------
    m : int
        Number of nodes.

    Returns
    -------
    (nodes, weights) : tuple of ndarray (m,)
    """
    if m not in _GL_CACHE:
        _GL_CACHE[m] = np.polynomial.legendre.leggauss(V.positive_int(m, "m"))
    return _GL_CACHE[m]


def as_callable(f, name="f") -> Callable:
    """Return ``f`` if it is callable, else raise ``ValueError`` naming it ``name``.

    Parameters
    ----------
    f : object
        The candidate function.
    name : str
        Its name in the error message.

    Returns
    -------
    callable
        ``f`` itself.
    """
    if not callable(f):
        raise ValueError(f"{name} must be a callable (vectorised in its argument), got {f!r}")
    return f


def eval_vectorised(f: Callable, x: np.ndarray) -> np.ndarray:
    """Evaluate ``f`` on a 1-d array of points and check the result.

    A 0-d result (a constant function such as ``lambda u: 1.0``) is broadcast to the points.

    Parameters
    ----------
    f : callable
        Vectorised function.
    x : ndarray (m,)
        Points.

    Returns
    -------
    ndarray
        Shape ``(m,) + value shape``, finite (``ValueError`` otherwise).
    """
    val = np.asarray(f(x), dtype=float)
    if val.shape[: 1] != x.shape:
        if val.ndim == 0:  # a constant function written as ``lambda u: 1.0``
            val = np.full(x.shape, float(val))
        else:
            raise ValueError(
                f"the function must be vectorised: called on {x.shape[0]} points it returned "
                f"shape {val.shape}"
            )
    if not np.all(np.isfinite(val)):
        raise ValueError("the function returned NaN or infinite values on the integration grid")
    return val


def panel_rule(a: np.ndarray, b: np.ndarray, m: int = 20):
    """Gauss-Legendre nodes and weights on many panels ``[a_i, b_i]``.

    Parameters
    ----------
    a, b : ndarray (p,)
        Left and right ends of the panels.
    m : int
        Nodes per panel (:func:`gauss_legendre`).

    Returns
    -------
    (nodes, weights) : tuple of ndarray (p, m)
        The rule on each panel, for the Lebesgue measure.
    """
    x, w = gauss_legendre(m)
    half = 0.5 * (b - a)
    mid = 0.5 * (b + a)
    nodes = mid[:, None] + half[:, None] * x[None, :]
    weights = half[:, None] * w[None, :]
    return nodes, weights


_MERGE_VALUES = 4096
"""Largest (components x panels) of a level whose two half-panel sets share a call of f."""


def gaussian_expectation(
    f: Callable,
    *,
    breakpoints: Sequence[float] = (),
    cutoff: float = 14.0,
    tol: float = 1e-11,
    max_depth: int = 60,
) -> np.ndarray:
    r""":math:`\mathbb E[f(G)]` for :math:`G\sim N(0,1)` by adaptive Gauss-Legendre quadrature.

    Used throughout (chapters 0-4) wherever a closed form is an expectation over one Gaussian.
    The line is cut at ``|g| <= cutoff`` (the Gaussian mass outside 14 is below 1e-44), split
    at ``breakpoints`` and into unit panels; every panel whose 20-point rule disagrees with the
    rule on its two halves by more than ``tol`` (scaled by the panel's share of the line) is
    bisected, up to ``max_depth`` times. Jumps are thus found without being announced.

    Parameters
    ----------
    f : callable
        Vectorised: called with a 1-d array of points it returns an array whose first axis
        matches (extra trailing axes are allowed and integrated component-wise).
    breakpoints : sequence of float
        Known points of non-smoothness (optional; speeds up and sharpens the integral).
    cutoff, tol, max_depth : float, float, int
        Truncation, absolute tolerance, maximal bisection depth.

    Returns
    -------
    ndarray (0-d for a scalar function) holding the expectation.
    """
    f = as_callable(f)
    cutoff = V.positive_float(cutoff, "cutoff")
    tol = V.positive_float(tol, "tol")
    max_depth = V.positive_int(max_depth, "max_depth", minimum=1)
    cuts = np.unique(
        np.concatenate(
            [
                np.arange(-math.ceil(cutoff), math.ceil(cutoff) + 1, 1.0),
                [b for b in np.asarray(breakpoints, dtype=float).ravel() if abs(b) < cutoff],
            ]
        )
    )
    cuts = cuts[(cuts >= -cutoff) & (cuts <= cutoff)]
    a, b = cuts[:-1], cuts[1:]
    total = None
    length = 2.0 * cutoff

    def integrate(a, b):
        nodes, weights = panel_rule(a, b)
        flat = nodes.ravel()
        vals = eval_vectorised(f, flat)
        dens = np.exp(-0.5 * flat**2) / _SQRT_2PI
        vals = (vals * dens.reshape((-1,) + (1,) * (vals.ndim - 1))).reshape(
            nodes.shape + vals.shape[1:]
        )
        w = weights.reshape(weights.shape + (1,) * (vals.ndim - 2))
        return np.sum(vals * w, axis=1)

    coarse = integrate(a, b)
    components = coarse[0].size
    for _depth in range(max_depth + 1):
        mid = 0.5 * (a + b)
        # both halves in one call of f when its values are few (the per-panel sums do not mix
        # panels, so the numbers are the same; otherwise one call per half, so that the memory
        # of a large vector-valued f or of a deep refinement does not double)
        if components * a.size <= _MERGE_VALUES:
            left, right = np.split(integrate(np.concatenate([a, mid]),
                                             np.concatenate([mid, b])), [a.size])
        else:
            left, right = integrate(a, mid), integrate(mid, b)
        fine = left + right
        err = np.abs(fine - coarse)
        if err.ndim > 1:
            err = err.reshape(err.shape[0], -1).max(axis=1)
        ok = err <= tol * np.maximum((b - a) / length, 1e-3)
        if _depth == max_depth:
            ok[:] = True
        acc = fine[ok].sum(axis=0)
        total = acc if total is None else total + acc
        if ok.all():
            break
        keep = ~ok
        a, b = np.concatenate([a[keep], mid[keep]]), np.concatenate([mid[keep], b[keep]])
        coarse = np.concatenate([left[keep], right[keep]])
    return np.asarray(total)


def hermite_coefficients(
    f: Callable,
    kmax: int,
    normalized: bool = True,
    *,
    breakpoints: Sequence[float] | None = None,
) -> np.ndarray:
    r"""Hermite coefficients of ``f`` up to degree ``kmax`` (chapters 0 and 2).

    The :math:`c_k` of {eq}`eq-ch0-hermite-expansion` and the :math:`\lambda_k` of
    {eq}`eq-ch2-hermite-expansion`.

    Returns :math:`c_k = \mathbb E[f(G)h_k(G)]` (``normalized=True``) or
    :math:`\lambda_k = \mathbb E[f(G)\mathrm{He}_k(G)]` (``normalized=False``) for
    ``k = 0..kmax``. Accurate to about 1e-10 for polynomials and smooth links and to better
    than 1e-8 for discontinuous ones such as ``sign`` (jumps are located by adaptive
    bisection, or taken from ``breakpoints`` / the link's ``breakpoints`` attribute).

    Parameters
    ----------
    f : callable
        Vectorised function, for instance a :class:`lecnotes.core.targets.Link` such as
        ``LINKS["relu"]`` (whose ``breakpoints`` are then used).
    kmax : int
        Highest degree, ``>= 0``.
    normalized : bool
        Which normalisation (see module docstring); exponents do not depend on it.
    breakpoints : sequence of float, optional
        Points where ``f`` jumps or kinks.

    Returns
    -------
    ndarray of shape ``(kmax + 1,)``.
    """

    link = as_callable(f)
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    if breakpoints is None:
        breakpoints = getattr(link, "breakpoints", ())

    def integrand(g):
        return eval_vectorised(link, g)[:, None] * hermite_polys(g, kmax, normalized).T

    return gaussian_expectation(integrand, breakpoints=breakpoints)


_GH_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def gauss_hermite(m: int):
    r"""The ``m``-point Gauss-Hermite rule for :math:`\mathbb E[f(G)]`, :math:`G\sim N(0,1)`.

    Nodes of :math:`\mathrm{He}_m` and weights summing to one (cached).

    Parameters
    ----------
    m : int
        Number of nodes.

    Returns
    -------
    (nodes, weights) : tuple of ndarray (m,)
    """
    if m not in _GH_CACHE:
        x, w = np.polynomial.hermite_e.hermegauss(m)
        _GH_CACHE[m] = (x, w / math.sqrt(2 * math.pi))
    return _GH_CACHE[m]


def split_gaussian_rule(m: int = 160, cutoff: float = 9.0):
    """Gauss-Legendre on [-cutoff, 0] and [0, cutoff] with the Gaussian density (kink at 0).

    Parameters
    ----------
    m : int
        Nodes on each half.
    cutoff : float
        Truncation of the line.

    Returns
    -------
    (nodes, weights) : tuple of ndarray (2m,)
        Weights include the standard Gaussian density.
    """
    x, w = gauss_legendre(m)
    xs = np.concatenate([(x - 1) * cutoff / 2, (x + 1) * cutoff / 2])
    ws = np.concatenate([w, w]) * cutoff / 2 * np.exp(-0.5 * xs**2) / math.sqrt(2 * math.pi)
    return xs, ws
