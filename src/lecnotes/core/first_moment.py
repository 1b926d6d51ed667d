"""The first-moment (Stein) estimator and its overlap simulations, which chapters 0, 2 and 3 use.

With labels :math:`y_i` and a preprocessing :math:`T`, the estimator is
:math:`\\hat w = \frac1n\\sum_i T(y_i)x_i` (chapter 3, {eq}`eq-ch3-first-moment`); chapter 0 runs
it on raw labels, chapter 2 through the exact low-dimensional reduction of its overlap, and
chapter 3 (:mod:`lecnotes.first_moment`) studies the preprocessing. The optimal
preprocessing :math:`T^\\star(y)=\\mathbb E[G\\mid Y=y]` ({prf:ref}`thm-optimal-preprocessing`)
is here too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import beta

from lecnotes.core import validate as V
from lecnotes.core.overlaps import overlap
from lecnotes.core.preprocessing import checked_values
from lecnotes.core.targets import apply_link, get_link, random_unit_vector


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
    identical data. :func:`simulate_first_moment_overlaps_by_link` does the same for several
    links on the same inputs, at the cost of one.

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
    return _overlaps_of_links([link], dims, deltas, preprocessings, seeds, noise, rng)[0]


def simulate_first_moment_overlaps_by_link(
    links, dims, deltas, preprocessings, seeds: int = 5, noise: float = 0.0, rng=None
) -> dict:
    r""":func:`simulate_first_moment_overlaps` for several links at once, on the same inputs.

    The data of size ``d``, sample ratio ``delta`` and repetition ``r`` are drawn once (the
    direction, then the inputs, then the label noise, from ``stream(rng, d, r)``, as
    :func:`lecnotes.core.targets.single_index` draws them) and labelled by every link, so the
    result for each link is the one :func:`simulate_first_moment_overlaps` gives for it alone
    with the same ``rng``, number for number: the links see the same inputs, and the normal
    draws of the inputs, which are most of the cost, are made once instead of once per link.
    The inputs are drawn into one buffer, reused from one data set to the next.

    Parameters
    ----------
    links : sequence of callable or str
        The links, each at most once and hashable (they key the result).
    dims, deltas, preprocessings, seeds, noise, rng
        As in :func:`simulate_first_moment_overlaps`.

    Returns
    -------
    dict
        link -> (name -> ndarray ``(seeds, len(dims), len(deltas))`` of :math:`\rho^2`).
    """
    if isinstance(links, str | bytes) or not hasattr(links, "__iter__"):
        raise ValueError(f"links must be a sequence of links, got {links!r}")
    links = list(links)
    if not links:
        raise ValueError("links must hold at least one link")
    try:
        distinct = len(set(links)) == len(links)
    except TypeError:
        raise ValueError("links key the result: each must be hashable (a name or a "
                         "function)") from None
    if not distinct:
        raise ValueError("links must be distinct (they key the result)")
    runs = _overlaps_of_links(links, dims, deltas, preprocessings, seeds, noise, rng)
    return dict(zip(links, runs, strict=True))


def _overlaps_of_links(links, dims, deltas, preprocessings, seeds, noise, rng) -> list:
    """The loop of :func:`simulate_first_moment_overlaps_by_link`: one result per link, in
    order (no hashing, so the one-link wrapper takes any callable)."""
    dims = [V.positive_int(d, "d") for d in dims]
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if np.any(deltas <= 0):
        raise ValueError("deltas must be positive")
    seeds = V.positive_int(seeds, "seeds")
    noise = V.nonneg_float(noise, "noise")
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict of name -> callable or None")
    phis = [get_link(link) for link in links]
    shape = (seeds, len(dims), len(deltas))
    out = [{name: np.empty(shape) for name in preprocessings} for _ in links]
    sizes = [[max(1, int(round(delta * d))) for delta in deltas] for d in dims]
    buf = np.empty(max((n * d for d, ns in zip(dims, sizes, strict=True) for n in ns),
                       default=0))
    for i, d in enumerate(dims):
        for r in range(seeds):
            gen = V.stream(rng, d, r)
            for j, n in enumerate(sizes[i]):
                w = random_unit_vector(d, gen)
                X = buf[: n * d].reshape(n, d)
                gen.standard_normal(out=X)
                u = X @ w
                eps = gen.standard_normal(n) if noise > 0 else None
                for res, phi in zip(out, phis, strict=True):
                    y = apply_link(phi, u.copy())  # a link or T that writes in place
                    if eps is not None:  # changes no other link's labels
                        y = y + noise * eps
                    for name, T in preprocessings.items():
                        res[name][r, i, j] = overlap(first_moment(X, y, T), w) ** 2
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


def optimal_preprocessing(link: str, noise: float = 0.0):
    r"""The optimal preprocessing :math:`T^\star(y)=\mathbb E[G\mid Y=y]` in closed form (ch. 3).

    {prf:ref}`thm-optimal-preprocessing`, written out for four links so that it costs a few
    array operations per label (the general
    :func:`lecnotes.core.conditional_hermite.conditional_hermite`
    solves for the preimages of every label, which is slow for :math:`10^7` labels):

    * ``"relu"``: :math:`y` for :math:`y > 0` and :math:`-\sqrt{2/\pi}` at :math:`y = 0`;
    * ``"cubic"``: :math:`y^{1/3}` (an injective link reveals :math:`G`);
    * ``"sign"`` with noise :math:`\tau>0`: :math:`\sqrt{2/\pi}\tanh(y/\tau^2)`
      (exercise {ref}`ex-ch3-noisy-sign`);
    * ``"he3"``: :math:`\sum_jw_jg_j/\sum_jw_j` over the real roots :math:`g_j` of
      :math:`g^3-3g=y` (three for :math:`|y|<2`, by the trigonometric formula; one beyond),
      :math:`w_j=\gamma(g_j)/|3g_j^2-3|`.

    Parameters
    ----------
    link : {"relu", "cubic", "sign", "he3"}
        The link (noiseless except ``"sign"``, which needs ``noise > 0``).
    noise : float
        Label-noise standard deviation (only for ``"sign"``).

    Returns
    -------
    callable
        Vectorised :math:`T^\star`.
    """
    noise = V.nonneg_float(noise, "noise")
    if link == "sign":
        if noise <= 0:
            raise ValueError("the closed form for the sign needs label noise tau > 0")
        return lambda y: np.sqrt(2 / np.pi) * np.tanh(np.asarray(y, dtype=float) / noise**2)
    if noise != 0:
        raise ValueError(f"the closed form for {link!r} is for noiseless labels")
    if link == "relu":
        return lambda y: np.where(np.asarray(y) > 0, y, -np.sqrt(2 / np.pi))
    if link == "cubic":
        return np.cbrt
    if link == "he3":
        return _he3_posterior_mean
    raise ValueError(f"no closed form for the link {link!r}; use conditional_hermite")


def _he3_posterior_mean(y):
    y = np.asarray(y, dtype=float)
    inner = np.abs(y) < 2
    theta = np.arccos(np.clip(y / 2, -1, 1))[..., None] / 3 - 2 * np.pi * np.arange(3) / 3
    g3 = 2 * np.cos(theta)                                 # the three roots for |y| < 2
    w3 = np.exp(-g3**2 / 2) / np.abs(3 * g3**2 - 3)
    root = np.sqrt(np.maximum(y**2 - 4, 0))
    g1 = np.cbrt((y + root) / 2) + np.cbrt((y - root) / 2)  # the one root for |y| >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        inside = np.sum(w3 * g3, axis=-1) / np.sum(w3, axis=-1)
    return np.where(inner, inside, g1)


def raw_floor_limit(d: int, constant: float = 7.0) -> float:
    r"""Mean of :math:`(d+K-1)\rho^2/K` in the large-:math:`n` Gaussian model of the raw floor.

    Chapters 2 (the raw floor's table) and 3 (exercise ``ex-ch3-finite-size``) both quote it:
    as :math:`n\to\infty` at fixed :math:`d` the raw-label overlap is
    :math:`\rho^2 = KX/(KX+Y)` with :math:`X\sim\chi^2_1`, :math:`Y\sim\chi^2_{d-1}`
    independent, i.e. :math:`KB/(1+(K-1)B)` with :math:`B\sim\mathrm{Beta}(1/2,(d-1)/2)`;
    its mean is :math:`K/(d+K-1)` to first order and about :math:`12/d` lower (for
    :math:`K = 7`) to second. Exact by quadrature over :math:`B`.

    Parameters
    ----------
    d : int
        Dimension, at least 2.
    constant : float
        The constant :math:`K > 0`.

    Returns
    -------
    float
    """
    d = V.positive_int(d, "d", minimum=2)
    K = V.positive_float(constant, "constant")
    mean = beta(0.5, (d - 1) / 2).expect(lambda b: K * b / (1 + (K - 1) * b))
    return float(mean * (d + K - 1) / K)
