r"""Chapter 5, the sweeps: overlaps over seeds, sizes and sample sizes.

The sweeps over :math:`n/d^2` of the partial trace (:func:`simulate_partial_trace`,
:func:`partial_trace_sweep`), of any estimator (:func:`simulate_overlaps`,
:func:`overlap_sweep`), the data sets that test the means (:func:`sample_partial_trace_matrices`)
and the extrapolation of the half-point (:func:`extrapolate_threshold`). The estimators are in
:mod:`lecnotes.partial_trace.estimators`, the closed forms in :mod:`lecnotes.partial_trace.theory`.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import NamedTuple

import numpy as np

from lecnotes.core import stats
from lecnotes.core import validate as V
from lecnotes.core.hermite_tensors import check_even_degree
from lecnotes.core.preprocessing import is_family, label_weights
from lecnotes.core.targets import get_link
from lecnotes.partial_trace.estimators import (
    extreme_eigenpair,
    gram_upper,
    partial_trace_estimator,
    partial_trace_matrix,
    symmetric_from_upper,
)

__all__ = [
    "PartialTraceSimulation",
    "simulate_partial_trace",
    "simulate_overlaps",
    "PartialTraceSamples",
    "sample_partial_trace_matrices",
    "partial_trace_sweep",
    "overlap_sweep",
    "Extrapolation",
    "extrapolate_threshold",
    "CollapseRatio",
    "collapse_ratio",
    "ScaleRun",
    "scale_run",
    "PowerLawIntercept",
    "power_law_intercept",
]


class PartialTraceSimulation(NamedTuple):
    """:func:`simulate_partial_trace`: sample sizes ``n`` and arrays (seeds, len(alphas)) of
    the partial trace's ``rho2`` and chosen eigenvalue ``value``, the second-moment
    estimator's ``rho2_second``, and (``k = 4``, else None) ``rho2_raw``, the same
    contraction of the monomial tensor."""

    n: np.ndarray
    rho2: np.ndarray
    value: np.ndarray
    rho2_second: np.ndarray
    rho2_raw: np.ndarray | None


def simulate_partial_trace(alphas, d, seeds, link="gen4", T=None, k: int = 4,
                           rng=None) -> PartialTraceSimulation:
    r"""Overlaps of the partial-trace and second-moment estimators over seeds and n/d^2 (chapter 5).

    The simulations compared with {prf:ref}`prop-ch5-limit` ({eq}`eq-ch5-alpha-c`). For each
    seed one data set with :math:`n_{\max}=\max\alpha\cdot d^2` samples is drawn
    (:math:`w_\star=e_1`) and the estimators at smaller :math:`\alpha=n/d^2` use its first
    :math:`n` rows (nested samples). The matrices are accumulated block by block, so the sweep
    costs about two products of size :math:`n_{\max}d^2` (four when ``T`` is ``None``: the
    sample mean of the labels changes with :math:`n`). At every :math:`n` the results are those
    of :func:`partial_trace_estimator` (``which="magnitude"``) and of the second-moment
    estimator of chapter 4 with the same labels (largest modulus too).

    Parameters
    ----------
    alphas : array_like
        Increasing values of :math:`n/d^2` (``n = round(alpha d^2)``).
    d : int
        Dimension, 2 <= d <= 2000.
    seeds : int
    link : str or callable
    T : None, str or callable
        Preprocessing (``None``: centred by the sample mean; families are not accepted).
    k : {2, 4}
    rng : Generator, int or None

    Returns
    -------
    PartialTraceSimulation
        ``rho2_raw`` (``k = 4`` only) is the same contraction of the *monomial* tensor,
        :math:`\frac1n\sum_iT_i\|x_i\|^2x_ix_i^\top` ({prf:ref}`rem-ch5-monomials`).
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be positive and increasing")
    d = V.positive_int(d, "d", minimum=2)
    if d > 2000:
        raise ValueError(f"simulate_partial_trace is dense: d must be <= 2000, got {d}")
    seeds = V.positive_int(seeds, "seeds")
    k = check_even_degree(k)
    if is_family(T):
        raise ValueError("simulate_partial_trace does not accept a family T_delta")
    phi = get_link(link)
    rng = V.generator(rng)
    ns = np.maximum(2, np.round(alphas * d * d).astype(int))
    keys = ("rho2", "value", "rho2_second") + (("rho2_raw",) if k == 4 else ())
    out = {key: np.empty((seeds, ns.size)) for key in keys}
    eye = np.eye(d)

    for s in range(seeds):
        X = V.stream(rng, s).standard_normal((ns[-1], d))  # seed s: its own stream
        y = np.asarray(phi(X[:, 0]), dtype=float)
        sq = np.einsum("ij,ij->i", X, X) - d
        hi = (sq - 4.0) if k == 4 else np.ones_like(sq)  # weight of x x^T
        lo = (sq - 2.0) if k == 4 else np.ones_like(sq)  # weight of -I
        if T is None:  # M(y - ybar) = M(y) - ybar M(1): accumulate both
            cols = [y * hi, hi, y, np.ones_like(y)]
        else:
            t = label_weights(y, T, None)
            cols = [t * hi, t]
        acc = [np.zeros((d, d), order="F") for _ in cols]  # upper triangles
        c_acc = np.zeros(2)  # sums of y * lo and lo (or t * lo)
        prev = 0
        for j, n in enumerate(ns):
            B = X[prev:n]
            acc = [gram_upper(a, B, c[prev:n]) for a, c in zip(acc, cols, strict=True)]
            if T is None:
                c_acc += [np.sum(y[prev:n] * lo[prev:n]), np.sum(lo[prev:n])]
            else:
                c_acc[0] += np.sum(t[prev:n] * lo[prev:n])
            prev = n
            sym = [symmetric_from_upper(a) for a in acc]
            if T is None:
                ybar = float(np.mean(y[:n]))
                M = (sym[0] - ybar * sym[1]) / n - (c_acc[0] - ybar * c_acc[1]) / n * eye
                D = (sym[2] - ybar * sym[3]) / n
            else:
                M = sym[0] / n - c_acc[0] / n * eye
                D = sym[1] / n
            val, vec = extreme_eigenpair(M)
            out["value"][s, j] = val
            out["rho2"][s, j] = vec[0] ** 2
            out["rho2_second"][s, j] = extreme_eigenpair(D)[1][0] ** 2
            if k == 4:  # (1/n) sum T ||x||^2 x x^T = M + (d + 4) D + c I: monomials
                out["rho2_raw"][s, j] = extreme_eigenpair(M + (d + 4.0) * D)[1][0] ** 2
    return PartialTraceSimulation(ns, out["rho2"], out["value"], out["rho2_second"],
                                  out.get("rho2_raw"))


def simulate_overlaps(estimator, ns, d, seeds, link, rng=None) -> np.ndarray:
    r"""Squared overlaps of any estimator over seeds and nested sample sizes (chapter 5).

    The sample-complexity sweeps of {ref}`sec-ch5-odd-degree`. For each seed one data set of
    :math:`\max n` samples is drawn with :math:`w_\star=e_1` (rotation invariance) and
    ``estimator(X[:n], y[:n])`` is evaluated for every ``n``.

    Parameters
    ----------
    estimator : callable
        ``(X, y) -> w`` or ``(X, y) -> (w, ...)`` (the first element is used).
    ns : array_like of int, increasing
    d : int
    seeds : int
    link : str or callable
    rng : Generator, int or None

    Returns
    -------
    ndarray (seeds, len(ns)) of :math:`\langle\hat w,e_1\rangle^2/\|\hat w\|^2`.
    """
    if not callable(estimator):
        raise ValueError("estimator must be a callable (X, y) -> w")
    ns = np.asarray(ns)
    if ns.ndim != 1 or ns.size == 0 or not np.issubdtype(ns.dtype, np.integer) \
            or np.any(ns < 1) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be a non-empty increasing array of positive integers")
    d = V.positive_int(d, "d")
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    rng = V.generator(rng)
    out = np.empty((seeds, ns.size))
    for s in range(seeds):
        X = V.stream(rng, s).standard_normal((int(ns[-1]), d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for j, n in enumerate(ns):
            w = estimator(X[:n], y[:n])
            w = np.asarray(w[0] if isinstance(w, tuple) else w, dtype=float)
            out[s, j] = w[0] ** 2 / float(w @ w)
    return out


class PartialTraceSamples(NamedTuple):
    """Arrays (reps, d, d) of :math:`M_4` (``partial_trace``) and of the moment contraction
    :math:`\\frac1n\\sum_iT_i\\|x_i\\|^2x_ix_i^\\top` (``moment``)."""

    partial_trace: np.ndarray
    moment: np.ndarray


def sample_partial_trace_matrices(d, n, reps, link="gen4", T=None, rng=None):
    r""":math:`M_4` and the moment contraction on independent data sets (chapter 5).

    Each data set has ``n`` samples in dimension ``d`` with :math:`w_\star=e_1`; the two
    matrices are formed densely (small ``d``), to test their means entry by entry:
    {prf:ref}`prop-ch5-mean` and {eq}`eq-ch5-moment-mean`.

    Parameters
    ----------
    d, n, reps : int
        Dimension, samples per data set, number of data sets.
    link : str or callable
    T : None, str or callable
        Preprocessing of :math:`M_4` (``None``: centred); the moment contraction uses ``y``.
    rng : Generator, int or None

    Returns
    -------
    PartialTraceSamples
    """
    d = V.positive_int(d, "d", minimum=2)
    n = V.positive_int(n, "n")
    reps = V.positive_int(reps, "reps")
    phi = get_link(link)
    gen = V.generator(rng)
    M, R = np.empty((reps, d, d)), np.empty((reps, d, d))
    for r in range(reps):
        X = V.stream(gen, r).standard_normal((n, d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        M[r] = partial_trace_matrix(X, y, T=T)
        R[r] = (X * (y * (X * X).sum(1))[:, None]).T @ X / n
    return PartialTraceSamples(M, R)


def partial_trace_sweep(alphas, dims, seeds, link="gen4", T=None, k: int = 4, rng=None):
    r""":func:`simulate_partial_trace` at several ``d``: the figure of {prf:ref}`prop-ch5-limit`.

    Parameters
    ----------
    alphas, dims, seeds
        Increasing :math:`n/d^2`, dimensions, number of seeds.
    link, T, k
        As in :func:`simulate_partial_trace`.
    rng : Generator, int or None
        Seed of the sweep; dimension ``d`` uses ``V.stream(rng, d)``.

    Returns
    -------
    dict
        ``{d: PartialTraceSimulation}``.
    """
    base = V.generator(rng)
    return {d: simulate_partial_trace(alphas, d, seeds, link, T, k, rng=V.stream(base, d))
            for d in dims}


def overlap_sweep(estimator, dims, factors, exponent, seeds, link, rng=None) -> dict:
    r""":func:`simulate_overlaps` at :math:`n=c\,d^{e}`, several ``d`` ({ref}`sec-ch5-odd-degree`).

    Parameters
    ----------
    estimator : callable
        ``(X, y) -> w`` or ``(X, y) -> (w, ...)``.
    dims : sequence of int
    factors, exponent : array_like, float
        :math:`c` (increasing) and :math:`e`: ``n = round(c * d**exponent)``.
    seeds : int
    link : str or callable
    rng : Generator, int or None
        Seed of the sweep; dimension ``d`` uses ``V.stream(rng, d)``.

    Returns
    -------
    dict
        ``{d: (ns, rho2)}`` with ``rho2`` of shape (seeds, len(ns)), the input of
        :func:`lecnotes.core.stats.scaling_exponent`.
    """
    factors = V.finite_array(factors, "factors", ndim=1)
    base, out = V.generator(rng), {}
    for d in dims:
        ns = np.round(factors * d**exponent).astype(int)
        out[d] = (ns, simulate_overlaps(estimator, ns, d, seeds, link, rng=V.stream(base, d)))
    return out


class Extrapolation(NamedTuple):
    """The fit :math:`n_{1/2}/d^2=A+B/d` and the bootstrap standard error ``A_se`` of ``A``
    (:func:`extrapolate_threshold`)."""

    A: float
    B: float
    A_se: float


def extrapolate_threshold(runs: dict, n_boot: int = 300, rng=None) -> Extrapolation:
    r"""Extrapolate :math:`n_{1/2}/d^2` to :math:`d\to\infty` (chapter 5).

    :math:`n_{1/2}` is the sample size at which the mean :math:`\rho^2` crosses 1/2
    (:func:`lecnotes.core.stats.crossing_size`); a least-squares fit of
    :math:`n_{1/2}/d^2=A+B/d` over the dimensions gives the limit :math:`A`, to compare with
    :math:`2\alpha_c` of {eq}`eq-ch5-alpha-c`, and a bootstrap over seeds its standard error.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}``, ``rho2`` of shape (seeds, len(ns)).
    n_boot : int
        Bootstrap resamples.
    rng : Generator, int or None

    Returns
    -------
    Extrapolation
    """
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    gen = V.generator(rng)

    def fit(rs):
        y = [stats.crossing_size(*rs[d]) / d**2 for d in sorted(rs)]
        if not np.all(np.isfinite(y)):
            return np.nan, np.nan
        return np.polyfit(1 / np.array(sorted(rs), float), y, 1)[::-1]

    boots = [fit({d: (ns, r[gen.integers(0, len(r), len(r))]) for d, (ns, r) in
                  runs.items()})[0] for _ in range(n_boot)]
    A, B = fit(runs)
    return Extrapolation(float(A), float(B), float(np.nanstd(boots, ddof=1)))


class CollapseRatio(NamedTuple):
    """:func:`collapse_ratio`: ``log_ratio`` of the chi-square per degree of freedom at equal
    :math:`n/d` over that at equal :math:`n/d^2`, and its bootstrap standard error over seeds."""

    log_ratio: float
    se: float


def _log_ratio(runs):  # chi2/dof at equal n/d over at equal n/d^2
    q1, k1, _ = stats.collapse_chi2(runs, lambda d, n: n / d)
    q2, k2, _ = stats.collapse_chi2(runs, lambda d, n: n / d**2)
    return float(np.log((q1 / k1) / (q2 / k2)))


def collapse_ratio(runs: dict, n_boot: int = 200, rng=None) -> CollapseRatio:
    r"""How much better :math:`n/d^2` collapses the overlap curves than :math:`n/d` (chapter 5).

    The scaling variable of {prf:ref}`prop-ch5-limit`: the log of the ratio of the two
    chi-square statistics per degree of freedom of :func:`lecnotes.core.stats.collapse_chi2`,
    with a bootstrap over the seeds of each dimension (resampled in the order of ``runs``).

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}``, ``rho2`` of shape (seeds, len(ns)), at least two dimensions.
    n_boot : int
        Bootstrap resamples, at least 2.
    rng : Generator, int or None

    Returns
    -------
    CollapseRatio
    """
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    gen = V.generator(rng)
    boot = [_log_ratio({d: (ns, r[gen.integers(0, len(r), len(r))])
                        for d, (ns, r) in runs.items()}) for _ in range(n_boot)]
    return CollapseRatio(_log_ratio(runs), float(np.std(boot)))


class ScaleRun(NamedTuple):
    """:func:`scale_run`: the matrix-free estimate (``vector``, ``value``, ``info``), its CPU
    time ``cpu`` (s), the ``peak`` memory it allocated (bytes, tracemalloc), the size of the
    data ``data_bytes`` and the dense solver's ``vector_dense`` (None if not asked)."""

    vector: np.ndarray
    value: float
    info: object
    cpu: float
    peak: int
    data_bytes: int
    vector_dense: np.ndarray | None


def scale_run(d, n, link="gen4", dense: bool = True, rng=None) -> ScaleRun:
    r"""Time and memory of the matrix-free partial trace at one size ({ref}`sec-ch5-scale`).

    Draws ``X`` (n, d) with :math:`w_\star=e_1` from ``rng`` and the labels of ``link``, then
    runs :func:`lecnotes.partial_trace.partial_trace_estimator` with Lanczos
    ({prf:ref}`def-ch5-partial-trace`) under ``tracemalloc``: the peak is what the estimator
    allocates beyond the data.

    Parameters
    ----------
    d, n : int
        Dimension (``2 <= d``) and samples.
    link : str or callable
    dense : bool
        Also solve densely, to compare the eigenvectors (``d <= 8000``).
    rng : Generator, int or None

    Returns
    -------
    ScaleRun
    """
    d = V.positive_int(d, "d", minimum=2)
    n = V.positive_int(n, "n")
    phi = get_link(link)
    X = V.generator(rng).standard_normal((n, d))
    y = phi(X[:, 0])
    tracemalloc.start()
    t0 = time.process_time()
    w, value, info = partial_trace_estimator(X, y, method="lanczos")
    cpu = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    w_dense = partial_trace_estimator(X, y, method="dense").vector if dense else None
    return ScaleRun(w, float(value), info, cpu, int(peak), int(X.nbytes), w_dense)


class PowerLawIntercept(NamedTuple):
    """:func:`power_law_intercept`: the best pure power law :math:`n_{1/2}=c\\,d^\\kappa`
    (``kappa``, ``log_c``) and the ``A``, ``B`` that the fit :math:`A+B/d` gives to it."""

    kappa: float
    log_c: float
    A: float
    B: float


def power_law_intercept(runs: dict) -> PowerLawIntercept:
    r"""The :math:`A` that a pure power law gives under the extrapolation :math:`A+B/d` (ch. 5).

    The competitor of the limit :math:`2\alpha_c` of {eq}`eq-ch5-alpha-c`: the half-points
    :math:`n_{1/2}(d)` (:func:`lecnotes.core.stats.crossing_size`) are fitted by a pure power
    law in log-log (as :func:`lecnotes.core.stats.scaling_exponent` does), and the values
    :math:`c\,d^{\kappa-2}` of that law at the same ``d`` are fitted by :math:`A+B/d` as in
    :func:`extrapolate_threshold`. A law :math:`d^\kappa` with :math:`\kappa<2` has no
    :math:`d^2` limit, but its :math:`A` is not 0.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}``, at least two dimensions.

    Returns
    -------
    PowerLawIntercept
    """
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    dims = np.array(sorted(runs), dtype=float)
    cross = np.array([stats.crossing_size(*runs[d]) for d in sorted(runs)])
    if not np.all(np.isfinite(cross)):
        raise ValueError("every curve of runs must reach rho^2 = 1/2")
    kappa, log_c = np.polyfit(np.log(dims), np.log(cross), 1)
    A, B = np.polyfit(1 / dims, np.exp(log_c) * dims ** (kappa - 2), 1)[::-1]
    return PowerLawIntercept(float(kappa), float(log_c), float(A), float(B))
