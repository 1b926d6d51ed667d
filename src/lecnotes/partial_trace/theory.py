r"""Chapter 5, the finite-size structure of the partial trace: large-``d`` sweeps and the noise.

The collapse of {prf:ref}`prop-ch5-limit` at the sizes that show it (:func:`collapse_sweep`,
single precision and chunked, so that :math:`d=384` and :math:`n=1.9\,d^2` fit in memory), the
drift of the half-point :math:`n_{1/2}/d^2` towards :math:`2\alpha_c` (:func:`drift_exponent`)
and the three ways in which the noise of :math:`M_4` differs from a Wigner matrix
(:func:`entry_variance`, :func:`noise_structure`); and the closed forms of the chapter
(:func:`interval_lambda4`, :func:`critical_alpha`, :func:`vector_contraction_limit`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation, he
from lecnotes.core.hermite_tensors import hermite_tensor
from lecnotes.core.targets import Link, get_link
from lecnotes.partial_trace.estimators import gram_upper, symmetric_from_upper

__all__ = [
    "interval_lambda4",
    "critical_alpha",
    "vector_contraction_limit",
    "tensor_contraction_errors",
    "trace_identity_errors",
    "gen3_link",
    "CollapseRun",
    "collapse_sweep",
    "DriftFit",
    "drift_exponent",
    "entry_variance",
    "NoiseStructure",
    "noise_structure",
]


class CollapseRun(NamedTuple):
    """Overlaps of the partial-trace estimator at one ``d`` (:func:`collapse_sweep`)."""

    n: np.ndarray
    rho2: np.ndarray
    value: np.ndarray


def _extreme_pair(M):
    lo_val, lo_vec = sla.eigh(M, subset_by_index=[0, 0])
    hi_val, hi_vec = sla.eigh(M, subset_by_index=[M.shape[0] - 1, M.shape[0] - 1])
    if abs(lo_val[0]) >= abs(hi_val[0]):
        return float(lo_val[0]), lo_vec[:, 0]
    return float(hi_val[0]), hi_vec[:, 0]


def _m4_stream(gen, d, ns, link, mean, chunk):
    """Yield ``(n, M_4)`` at the nested sizes ``ns``, drawing float32 data chunk by chunk."""
    acc, c, prev = np.zeros((d, d)), 0.0, 0  # upper triangle only
    for n in ns:
        while prev < n:
            m = min(chunk, n - prev)
            X = gen.standard_normal((m, d), dtype=np.float32)
            t = np.asarray(link(X[:, 0].astype(float)), dtype=float) - mean
            s = np.einsum("ij,ij->i", X, X, dtype=np.float64) - d
            w = (t * (s - 4.0)).astype(np.float32)
            acc += gram_upper(np.zeros((d, d), np.float32, order="F"), X, w)
            c += float(np.sum(t * (s - 2.0)))
            prev += m
        yield n, symmetric_from_upper(acc) / n - (c / n) * np.eye(d)


def collapse_sweep(alphas, dims, seeds, link="gen4", mean=None, rng=None,
                   chunk: int = 16384) -> dict:
    r"""Partial-trace overlaps at :math:`n=\alpha d^2` for large ``d`` (chapter 5).

    The collapse of {prf:ref}`prop-ch5-limit` ({eq}`eq-ch5-alpha-c`) at :math:`d` up to a few
    hundred. For each seed the data (:math:`w_\star=e_1`) are drawn in single precision, chunk
    by chunk, and :math:`M_4` of {eq}`eq-ch5-m4` with the labels centred by the exact mean
    ``mean`` is accumulated in double precision; the estimator is the eigenvector of the
    eigenvalue of largest modulus, as in :func:`lecnotes.partial_trace.partial_trace_estimator`.
    Nested samples: the smaller :math:`\alpha` use the first rows. Memory is
    :math:`O(\text{chunk}\cdot d + d^2)`.

    Parameters
    ----------
    alphas : array_like
        Increasing :math:`n/d^2`.
    dims : sequence of int
        Dimensions, each at most 1000.
    seeds : int or sequence of int
        Seeds per dimension (one number for all, or one per dimension).
    link : str or callable
        The link (default the :math:`k_\star=4` link of chapter 2).
    mean : float, optional
        :math:`\mathbb E[Y]` (default: by quadrature).
    rng : Generator, int or None
        Seed ``s`` of dimension ``d`` uses ``V.stream(rng, 5, d, s)``.
    chunk : int
        Rows drawn at a time.

    Returns
    -------
    dict
        ``{d: CollapseRun}`` with ``rho2`` and ``value`` of shape (seeds, len(alphas)).
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be positive and increasing")
    dims = [V.positive_int(d, "d", minimum=2) for d in dims]
    if any(d > 1000 for d in dims):
        raise ValueError("collapse_sweep forms d x d matrices: d must be <= 1000")
    per = [seeds] * len(dims) if np.ndim(seeds) == 0 else list(seeds)
    if len(per) != len(dims):
        raise ValueError("give one number of seeds, or one per dimension")
    per = [V.positive_int(s, "seeds") for s in per]
    chunk = V.positive_int(chunk, "chunk")
    phi = get_link(link)
    if mean is None:
        mean = float(gaussian_expectation(phi, breakpoints=getattr(phi, "breakpoints", ())))
    base, out = V.generator(rng), {}
    for d, k in zip(dims, per, strict=True):
        ns = np.round(alphas * d * d).astype(int)
        rho2, value = np.empty((k, ns.size)), np.empty((k, ns.size))
        for s in range(k):
            gen = V.stream(base, 5, d, s)
            for j, (_, M) in enumerate(_m4_stream(gen, d, ns, phi, mean, chunk)):
                value[s, j], vec = _extreme_pair(M)
                rho2[s, j] = vec[0] ** 2
        out[d] = CollapseRun(ns, rho2, value)
    return out


class DriftFit(NamedTuple):
    """The drift :math:`n_{1/2}/d^2-A\\propto d^{-p}` (:func:`drift_exponent`)."""

    p: float
    p_se: float
    half: dict


def drift_exponent(runs: dict, limit: float, n_boot: int = 300, rng=None) -> DriftFit:
    r"""Exponent :math:`p` of the finite-size drift :math:`n_{1/2}/d^2-A\propto d^{-p}`.

    Tests the form of the correction in {prf:ref}`prop-ch5-limit`: with the limit
    :math:`A = 2\alpha_c` of {eq}`eq-ch5-alpha-c` fixed, a least-squares fit of
    :math:`\log(n_{1/2}/d^2 - A)` against :math:`\log d`, weighted by the inverse variance of
    each point over a bootstrap of the seeds of each dimension (a point whose resampled drift
    is not positive is left out of that resample); the spread of the fitted slope over the
    resamples is its standard error.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}``, ``rho2`` of shape (seeds, len(ns)).
    limit : float
        The limit :math:`A`.
    n_boot : int
    rng : Generator, int or None

    Returns
    -------
    DriftFit
        ``p`` (a :math:`1/d` drift gives 1), its bootstrap standard error and
        ``half = {d: n_1/2 / d^2}``.
    """
    limit = float(V.finite_array(limit, "limit", ndim=0))
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    gen = V.generator(rng)
    dims = sorted(runs)
    ld = np.log(np.array(dims, float))

    def logs(rs):
        h = np.array([stats.crossing_size(*rs[d]) / d**2 for d in dims]) - limit
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(h > 0, np.log(h), np.nan)

    boots = np.array([logs({d: (ns, r[gen.integers(0, len(r), len(r))])
                            for d, (ns, r) in runs.items()}) for _ in range(n_boot)])
    var = np.nanvar(boots, axis=0, ddof=1)  # per-d variance of log(drift), over resamples

    def wls(h):
        ok = np.isfinite(h)
        w = 1 / var[ok]
        x, y = ld[ok], h[ok]
        xm, ym = np.sum(w * x) / np.sum(w), np.sum(w * y) / np.sum(w)
        return -np.sum(w * (x - xm) * (y - ym)) / np.sum(w * (x - xm) ** 2)

    p_boot = [wls(b) for b in boots if np.sum(np.isfinite(b)) >= 2]
    half = {d: stats.crossing_size(*runs[d]) / d**2 for d in dims}
    return DriftFit(float(wls(logs(runs))), float(np.std(p_boot, ddof=1)), half)


def entry_variance(d, n, link="gen4", mean=None) -> float:
    r"""Exact variance of an off-diagonal entry of :math:`M_4` away from :math:`w_\star`.

    For :math:`a\ne b`, both orthogonal to :math:`w_\star`, :math:`(M_4)_{ab}` of
    {eq}`eq-ch5-m4` is an average of :math:`n` centred terms
    :math:`T(y)(s-4)x_ax_b`; conditioning on :math:`G` and using the moments of
    :math:`\chi^2_1` (:math:`\mathbb E[(x^2-1)^3]=8`) gives

    .. math:: n\operatorname{Var}(M_4)_{ab} = 2d\,\mathbb E[T^2]
              + \mathbb E\big[T^2(G^4-2G^2+7)\big],

    about :math:`(2d+8)\mathbb E[T^2]`: the Wigner heuristic of the proof of
    {prf:ref}`prop-ch5-limit` keeps only :math:`2d\,\mathbb E[T^2]`.

    Parameters
    ----------
    d, n : int
        Dimension and sample size.
    link : str or callable
    mean : float, optional
        The centring of :math:`T(y)=y-\text{mean}` (default :math:`\mathbb E[Y]`).

    Returns
    -------
    float
    """
    d = V.positive_int(d, "d", minimum=3)
    n = V.positive_int(n, "n")
    phi = get_link(link)
    bp = getattr(phi, "breakpoints", ())
    if mean is None:
        mean = float(gaussian_expectation(phi, breakpoints=bp))
    t2 = float(gaussian_expectation(lambda g: (phi(g) - mean) ** 2, breakpoints=bp))
    t2g = float(gaussian_expectation(lambda g: (phi(g) - mean) ** 2 * (g**4 - 2 * g**2 + 7),
                                     breakpoints=bp))
    return (2 * d * t2 + t2g) / n


class NoiseStructure(NamedTuple):
    """The noise of :math:`M_4` against a Wigner matrix (:func:`noise_structure`)."""

    variance_ratio: np.ndarray
    wigner_ratio: float
    bottom: np.ndarray
    top: np.ndarray
    noise: np.ndarray | None = None
    """The minors (seeds, d - 1, d - 1) themselves."""
    n: int = 0
    """The sample size of each data set."""


def noise_structure(d, alpha, seeds, link="gen4", mean=None, rng=None) -> NoiseStructure:
    r"""Entry variance and spectral edges of the noise of :math:`M_4` (chapter 5).

    The finite-size effects behind the drift of {prf:ref}`prop-ch5-limit`. On the minor of
    :math:`M_4` ({eq}`eq-ch5-m4`) orthogonal to :math:`w_\star=e_1` (the noise alone), per
    seed: the mean square of the off-diagonal entries over :func:`entry_variance`, and the
    smallest and largest eigenvalues in units of :math:`2\sigma`,
    :math:`\sigma^2=(d-1)\,v` with :math:`v` the exact entry variance (the semicircle edges
    of a Wigner matrix with these entries are :math:`\pm1`).

    Parameters
    ----------
    d : int
        Dimension (at most 1000).
    alpha : float
        :math:`n/d^2`.
    seeds : int
    link, mean
        As in :func:`collapse_sweep`.
    rng : Generator, int or None
        Seed ``s`` uses ``V.stream(rng, 6, d, s)``.

    Returns
    -------
    NoiseStructure
        ``variance_ratio`` per seed, ``wigner_ratio`` :math:`2d\mathbb E[T^2]/(nv)` (the value
        the Wigner heuristic predicts for the ratio), ``bottom`` and ``top`` per seed, the
        minors ``noise`` (seeds, d - 1, d - 1) and the sample size ``n``.
    """
    d = V.positive_int(d, "d", minimum=3)
    if d > 1000:
        raise ValueError("noise_structure forms d x d matrices: d must be <= 1000")
    alpha = V.positive_float(alpha, "alpha")
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    bp = getattr(phi, "breakpoints", ())
    if mean is None:
        mean = float(gaussian_expectation(phi, breakpoints=bp))
    n = max(2, int(round(alpha * d * d)))
    v = entry_variance(d, n, phi, mean)
    t2 = float(gaussian_expectation(lambda g: (phi(g) - mean) ** 2, breakpoints=bp))
    base = V.generator(rng)
    ratio, bottom, top = np.empty(seeds), np.empty(seeds), np.empty(seeds)
    minors = np.empty((seeds, d - 1, d - 1))
    off = ~np.eye(d - 1, dtype=bool)
    for s in range(seeds):
        gen = V.stream(base, 6, d, s)
        M = minors[s] = next(_m4_stream(gen, d, [n], phi, mean, 16384))[1][1:, 1:]
        ratio[s] = np.mean(M[off] ** 2) / v
        ev = sla.eigvalsh(M)
        edge = 2 * np.sqrt((d - 1) * v)
        bottom[s], top[s] = ev[0] / edge, ev[-1] / edge
    return NoiseStructure(ratio, 2 * d * t2 / (n * v), bottom, top, minors, n)


def interval_lambda4(a, b) -> float:
    r""":math:`\lambda_4=\mathbb E[Y\mathrm{He}_4(G)]` for :math:`Y=\mathbb 1\{a<|G|<b\}`.

    Chapter 5 ({prf:ref}`prop-ch5-mean`):
    :math:`\lambda_4=2\int_a^b\mathrm{He}_4\gamma=2a\gamma(a)(a^2-b^2)` when
    :math:`a\gamma(a)=b\gamma(b)` (the generative-exponent-4 links of chapter 2,
    :func:`lecnotes.core.exponents.gen4_interval`); centring the labels leaves it unchanged.

    Parameters
    ----------
    a, b : float
        The interval, ``0 < a < b``.

    Returns
    -------
    float
    """
    if not 0 < a < b:
        raise ValueError(f"need 0 < a < b, got {a}, {b}")
    gamma_a = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    return 2 * a * gamma_a * (a**2 - b**2)


def critical_alpha(lambda4, mean_T2) -> float:
    r"""The critical :math:`\alpha_c=2\,\mathbb E[T^2]/\lambda_4^2` of the partial trace, chapter 5.

    With :math:`n=\alpha d^2` the squared overlap of the partial-trace estimator tends to
    :math:`\max(0,1-\alpha_c/\alpha)` ({prf:ref}`prop-ch5-limit`, {eq}`eq-ch5-alpha-c`).

    Parameters
    ----------
    lambda4, mean_T2 : float
        :math:`\lambda_4(T)=\mathbb E[T(Y)\mathrm{He}_4(G)]\ne0` and :math:`\mathbb E[T(Y)^2]`.

    Returns
    -------
    float
    """
    lambda4 = float(lambda4)
    if lambda4 == 0 or not math.isfinite(lambda4):
        raise ValueError(f"lambda4 must be finite and non-zero, got {lambda4}")
    return 2 * V.nonneg_float(mean_T2, "mean_T2") / lambda4**2


def vector_contraction_limit(beta, q):
    r"""Limit :math:`3\beta q/(3\beta q+1)` of the vector contraction's :math:`\rho^2` (chapter 5).

    {eq}`eq-ch5-vector-limit`, for :math:`n=\beta d^2` samples and
    :math:`q=\mathbb E[\zeta_3(Y)^2]` (optimal labels).

    Parameters
    ----------
    beta, q : float or array_like, float
        :math:`n/d^2`, and :math:`\mathbb E[\zeta_3(Y)^2] \ge 0`.

    Returns
    -------
    float or ndarray, shaped like ``beta``.
    """
    beta = np.asarray(beta, dtype=float)
    q = V.nonneg_float(q, "q")
    return 3 * beta * q / (3 * beta * q + 1)


def tensor_contraction_errors(x, u, kmax: int = 5) -> np.ndarray:
    r"""Errors of the contraction property of the Hermite tensors (chapter 5).

    :math:`\langle\mathrm{He}_k(x),u^{\otimes k}\rangle=\mathrm{He}_k(\langle u,x\rangle)`:

    Property 1 of {prf:ref}`lem-ch5-hermite-tensor`, checked for the tensors that the recursion
    {eq}`eq-ch5-hermite-recursion` builds (:func:`lecnotes.core.hermite_tensors.hermite_tensor`),
    each contracted ``k`` times with ``u``.

    Parameters
    ----------
    x, u : array_like (d,)
        A point and a unit vector, ``1 <= d <= 8`` (the tensors have ``d**k`` entries).
    kmax : int
        Largest degree, ``0 <= kmax <= 6``.

    Returns
    -------
    ndarray (kmax + 1,)
        The absolute errors for ``k = 0..kmax``.
    """
    x = V.finite_array(x, "x", ndim=1)
    u = V.finite_array(u, "u", ndim=1)
    if x.size == 0 or x.size > 8 or u.shape != x.shape:
        raise ValueError(f"x and u must have the same length 1..8, got {x.size}, {u.size}")
    if abs(float(u @ u) - 1.0) > 1e-9:
        raise ValueError("u must have unit norm")
    kmax = V.positive_int(kmax, "kmax", minimum=0)
    if kmax > 6:
        raise ValueError(f"kmax must be at most 6, got {kmax}")
    errs = []
    for k in range(kmax + 1):
        t = hermite_tensor(x, k)
        for _ in range(k):
            t = t @ u  # contract one index with u
        errs.append(abs(float(t) - float(he(k, x @ u))))
    return np.array(errs)


def trace_identity_errors(points) -> np.ndarray:
    r"""Relative errors of the degree-4 partial-trace identity {eq}`eq-ch5-trace-identity`.

    :math:`\sum_j\mathrm{He}_4(x)_{abjj}=(\|x\|^2-d-4)x_ax_b-(\|x\|^2-d-2)\delta_{ab}`
    ({prf:ref}`prop-ch5-degree4`), the closed form against the explicit tensor of
    :func:`lecnotes.core.hermite_tensors.hermite_tensor`.

    Parameters
    ----------
    points : sequence of array_like (m, d)
        Points in dimensions ``1 <= d <= 12``, one array per dimension.

    Returns
    -------
    ndarray
        One error per point: the largest entry deviation over ``max(1, max |closed form|)``.
    """
    if isinstance(points, np.ndarray) and points.ndim == 2:
        points = [points]
    errs = []
    for P in points:
        P = V.finite_array(P, "points", ndim=2)
        d = P.shape[1]
        if P.shape[0] == 0 or not 1 <= d <= 12:
            raise ValueError(f"points must be (m, d) arrays with m >= 1, 1 <= d <= 12, got "
                             f"{P.shape}")
        for x in P:
            explicit = np.einsum("abjj->ab", hermite_tensor(x, 4))
            s = x @ x
            closed = (s - d - 4) * np.outer(x, x) - (s - d - 2) * np.eye(d)
            errs.append(np.max(np.abs(explicit - closed)) / max(1.0, np.max(np.abs(closed))))
    return np.array(errs)


def gen3_link() -> Link:
    r"""The binary link :math:`Y=\mathbb 1\{G(G^2-2\ln2)>0\}` of generative exponent 3.

    The odd-degree example of {ref}`sec-ch5-odd-degree`: with :math:`c=\sqrt{2\ln 2}`,
    :math:`2\gamma(c)=\gamma(0)` makes :math:`\mathbb E[\zeta_1^2]=\mathbb E[\zeta_2^2]=0` and
    :math:`\mathbb E[\zeta_3^2]=4(\ln2)^2/(3\pi)`.

    Returns
    -------
    Link
        Named ``"gen3"``, with breakpoints :math:`-c, 0, c`.
    """
    c3 = np.sqrt(2 * np.log(2))
    return Link("gen3", lambda g: (g * (g * g - c3**2) > 0).astype(float),
                r"\mathbb{1}\{u(u^2-2\ln 2)>0\}", (-c3, 0.0, c3))
