r"""Chapter 4, the sweeps: seeds and sizes behind the notebook's figures and claims.

Each function draws its data sets from independent streams named by seed (and size) keys, so
that adding a size or a seed never changes the draws of another; the notebook keeps the
parameter choices and the claims. The estimator itself and its one-dimension simulation are
in :mod:`lecnotes.spectral.estimators`, the closed forms in :mod:`lecnotes.spectral.theory`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import ks_2samp

from lecnotes.core import rmt, stats
from lecnotes.core import validate as V
from lecnotes.core.preprocessing import get_preprocessing
from lecnotes.core.targets import get_link
from lecnotes.spectral.estimators import (
    davis_kahan,
    simulate_spectral,
    spectral_estimator,
    spectral_matrix,
    spectrum,
)

__all__ = [
    "sample_spectral_matrices",
    "SpectraResult",
    "spectra_over_seeds",
    "spectral_sweep",
    "ThresholdEstimate",
    "simulated_threshold",
    "RawLabelSweep",
    "raw_label_sweep",
    "DavisKahanSweep",
    "davis_kahan_sweep",
    "BulkDistances",
    "bulk_distances",
    "SlopeFit",
    "mean_loglog_slope",
    "inverse_d_limits",
]


def sample_spectral_matrices(d, n, reps, T=None, link="quadratic", rng=None) -> np.ndarray:
    r"""Independent copies of :math:`D_T` (chapter 4), to test its mean entry by entry.

    The check of {prf:ref}`lem-mean-matrix` ({eq}`eq-ch4-mean-matrix`).

    Each copy is :func:`spectral_matrix` on a fresh data set of ``n`` samples in dimension
    ``d`` with :math:`w_\star=e_1` (rotation invariance).

    Parameters
    ----------
    d, n, reps : int
        Dimension, samples per data set, number of data sets.
    T : None, str, callable or PreprocessingFamily
        Preprocessing, as in :func:`spectral_estimator`.
    link : str or callable
    rng : Generator, int or None
        Data set ``r`` draws from ``V.stream(rng, r)``.

    Returns
    -------
    ndarray, shape (reps, d, d)
        The matrices, data sets on axis 0.
    """
    d = V.positive_int(d, "d")
    n = V.positive_int(n, "n")
    reps = V.positive_int(reps, "reps")
    phi = get_link(link)
    gen = V.generator(rng)
    out = np.empty((reps, d, d))
    for r in range(reps):
        X = V.stream(gen, r).standard_normal((n, d))
        out[r] = spectral_matrix(X, np.asarray(phi(X[:, 0]), dtype=float), T)
    return out


class SpectraResult(NamedTuple):
    """:func:`spectra_over_seeds`: the ``deltas``, the sample sizes ``n`` and the increasing
    ``eigenvalues`` of :math:`D_T`, shape (seeds, len(deltas), d)."""

    deltas: np.ndarray
    n: np.ndarray
    eigenvalues: np.ndarray


def spectra_over_seeds(deltas, d, seeds, T=None, link="quadratic", rng=None) -> SpectraResult:
    r"""All eigenvalues of :math:`D_T` for several :math:`\delta`, nested samples (chapter 4).

    The spectra of the phase-transition figure: bulk ({prf:ref}`prop-bulk-law`) and outlier
    ({prf:ref}`thm-spectral-asymptotics`).

    For each seed one data set of :math:`\max\delta\cdot d` samples is drawn
    (:math:`w_\star=e_1`) and :func:`spectrum` is taken on its first ``int(delta * d)`` rows.

    Parameters
    ----------
    deltas : array_like
        Sample ratios.
    d, seeds : int
    T : preprocessing, as in :func:`spectral_estimator`
    link : str or callable
    rng : Generator, int or None
        Seed of the sweep; seed ``s`` draws from ``V.stream(rng, s)``.

    Returns
    -------
    SpectraResult
    """
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if deltas.size == 0 or np.any(deltas <= 0):
        raise ValueError("deltas must be positive")
    d = V.positive_int(d, "d", minimum=2)
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    ns = np.array([int(x * d) for x in deltas])
    ev = np.empty((seeds, ns.size, d))
    base = V.generator(rng)
    for s in range(seeds):
        X = V.stream(base, s).standard_normal((int(ns.max()), d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for j, n in enumerate(ns):
            ev[s, j] = spectrum(X[:n], y[:n], T)
    return SpectraResult(deltas, ns, ev)


def spectral_sweep(preprocessings, deltas, dims, seeds, link="quadratic", rng=None,
                   first_seed: int = 0) -> dict:
    r""":func:`simulate_spectral` at several dimensions (chapter 4, the overlap figure).

    Compared with {prf:ref}`thm-spectral-asymptotics` in {ref}`sec-ch4-preprocessings`.

    Parameters
    ----------
    preprocessings : dict
        ``{label: T}``; a family :math:`T_\delta` is simulated at the ``deltas`` where it is
        defined (``delta >= delta_min``).
    deltas : array_like
        Increasing sample ratios.
    dims : sequence of int
    seeds : int
    link : str or callable
    rng : Generator, int or None
        Seed of the sweep; dimension ``d`` uses the stream ``V.stream(rng, d)`` (the same data
        for every preprocessing).

    first_seed : int
        As in :func:`lecnotes.spectral.estimators.simulate_spectral`.

    Returns
    -------
    dict
        ``{d: {label: SpectralSimulation}}``.
    """
    base = V.generator(rng)
    return {d: simulate_spectral(preprocessings, deltas, d, seeds, link, rng=V.stream(base, d),
                                 first_seed=first_seed)
            for d in dims}


class ThresholdEstimate(NamedTuple):
    """A threshold read from simulations and its standard error (:func:`simulated_threshold`)."""

    estimate: float
    se: float


def simulated_threshold(deltas, rho2, curve_deltas, curve_rho2, threshold) -> ThresholdEstimate:
    r"""The theoretical threshold moved by the mean horizontal offset of simulated overlaps.

    Chapter 4, the transition claims (the threshold of {prf:ref}`prop-threshold`): at every
    simulated :math:`\delta\ge1.25\,\delta_c` where the theory curve is below 0.9, the mean
    simulated :math:`\rho^2` is read back through the increasing part of the theory curve; the
    offsets :math:`\delta-\delta_{\rm th}(\rho^2)` are averaged and added to :math:`\delta_c`.

    Parameters
    ----------
    deltas : array_like (k,)
        Simulated sample ratios.
    rho2 : array_like (seeds, k)
        Simulated squared overlaps, seeds on axis 0.
    curve_deltas, curve_rho2 : array_like (m,)
        The theory curve :math:`\rho^2(\delta)`, increasing ``curve_deltas``.
    threshold : float
        The theoretical :math:`\delta_c`.

    Returns
    -------
    ThresholdEstimate
    """
    ds = V.finite_array(deltas, "deltas", ndim=1)
    rho2 = V.finite_array(rho2, "rho2", ndim=2)
    grid = V.finite_array(curve_deltas, "curve_deltas", ndim=1)
    curve = V.finite_array(curve_rho2, "curve_rho2", ndim=1)
    keep = curve > 0  # the increasing part of the curve
    sel = (ds >= 1.25 * threshold) & (np.interp(ds, grid, curve) < 0.9)
    if not np.any(sel):
        raise ValueError("no simulated delta lies on the increasing part of the theory curve")
    offsets = ds[sel] - np.interp(rho2.mean(0)[sel], curve[keep], grid[keep])
    m, se = stats.mean_and_error(offsets)
    return ThresholdEstimate(float(threshold + m), float(se))


class RawLabelSweep(NamedTuple):
    r""":func:`raw_label_sweep`, arrays (seeds, len(dims)): squared overlaps with the raw labels
    (``raw``) and with :math:`T_\delta` (``mm``), the alignment ``loc``
    :math:`=\max_i\langle\hat w,x_i\rangle^2/\|x_i\|^2`, the top eigenvalue ``top`` of
    :math:`D_y` and the Rayleigh quotient ``heavy`` :math:`=\max_iy_i\|x_i\|^2/n` of the
    heaviest sample."""

    dims: np.ndarray
    raw: np.ndarray
    mm: np.ndarray
    loc: np.ndarray
    top: np.ndarray
    heavy: np.ndarray


def raw_label_sweep(delta, dims, seeds, rng=None) -> RawLabelSweep:
    r"""Why raw labels fail: localisation of the top eigenvector of :math:`D_y` (chapter 4).

    The experiment of {ref}`sec-ch4-raw-labels`.

    Real phase retrieval at fixed :math:`\delta`, for each dimension and seed a fresh data
    set; the raw labels against the Mondelli-Montanari :math:`T_\delta` on the same data.

    Parameters
    ----------
    delta : float
        Sample ratio (``n = int(delta * d)``).
    dims : sequence of int
    seeds : int
    rng : Generator, int or None
        Seed of the sweep; size ``d`` and seed ``s`` draw from ``V.stream(rng, d, s)``.

    Returns
    -------
    RawLabelSweep
    """
    delta = V.positive_float(delta, "delta")
    seeds = V.positive_int(seeds, "seeds")
    dims = np.asarray(dims, dtype=int)
    out = {key: np.empty((seeds, dims.size)) for key in ("raw", "mm", "loc", "top", "heavy")}
    mm = get_preprocessing("mondelli-montanari")
    base = V.generator(rng)
    for j, d in enumerate(dims):
        for s in range(seeds):
            n = int(delta * d)
            X = V.stream(base, int(d), s).standard_normal((n, int(d)))
            y = X[:, 0] ** 2
            v, top, _ = spectral_estimator(X, y)  # raw labels, T = None
            out["raw"][s, j], out["top"][s, j] = v[0] ** 2, top
            out["mm"][s, j] = spectral_estimator(X, y, mm).vector[0] ** 2
            sq = np.einsum("ij,ij->i", X, X)
            out["loc"][s, j] = np.max((X @ v) ** 2 / sq)  # alignment with one sample
            out["heavy"][s, j] = np.max(y * sq) / n  # its Rayleigh quotient
    return RawLabelSweep(dims, **out)


class DavisKahanSweep(NamedTuple):
    r""":func:`davis_kahan_sweep`: the ``deltas``, arrays (seeds, len(deltas)) ``norm``,
    ``bound``, ``rho2`` as in :class:`DavisKahanResult`, and ``beta``, ``mean_T``."""

    deltas: np.ndarray
    norm: np.ndarray
    bound: np.ndarray
    rho2: np.ndarray
    beta: float
    mean_T: float


def davis_kahan_sweep(deltas, d, seeds, T, link="quadratic", rng=None) -> DavisKahanSweep:
    r""":func:`davis_kahan` over seeds and integer sample ratios, nested samples (chapter 4).

    The figure of {prf:ref}`prop-davis-kahan`.

    Parameters
    ----------
    deltas : array_like of int
        Increasing integer sample ratios (``n = delta * d``).
    d, seeds : int
    T : preprocessing (its mean must exist)
    link : str or callable
    rng : Generator, int or None
        Seed of the sweep; seed ``s`` draws from ``V.stream(rng, s)``.

    Returns
    -------
    DavisKahanSweep
    """
    deltas = np.asarray(deltas)
    if deltas.ndim != 1 or deltas.size == 0 or not np.issubdtype(deltas.dtype, np.integer):
        raise ValueError("deltas must be a non-empty array of integers")
    d = V.positive_int(d, "d", minimum=2)
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    out = {key: np.empty((seeds, deltas.size)) for key in ("norm", "bound", "rho2")}
    e1 = np.eye(d)[0]
    base = V.generator(rng)
    for s in range(seeds):
        X = V.stream(base, s).standard_normal((int(deltas[-1]) * d, d))
        for j, delta in enumerate(deltas):
            n = int(delta) * d
            res = davis_kahan(X[:n], np.asarray(phi(X[:n, 0]), dtype=float), T, e1, link)
            for key in out:
                out[key][s, j] = getattr(res, key)
    return DavisKahanSweep(deltas, beta=res.beta, mean_T=res.mean_T, **out)


class BulkDistances(NamedTuple):
    r""":func:`bulk_distances`, each in units of :math:`1/\sqrt n`: ``limit``, the Kolmogorov
    distance of each (delta, seed) bulk to the limiting law; ``pairs``, that between the bulks
    of two seeds at the same delta, divided by :math:`\sqrt2` (two samples of one law);
    ``plain``, that to the plain Marchenko-Pastur law scaled to :math:`\mathbb E[T]`."""

    limit: np.ndarray
    pairs: np.ndarray
    plain: np.ndarray


def bulk_distances(spectra, grids, densities, mean_T) -> BulkDistances:
    r"""Kolmogorov distances of the bulk of :math:`D_T` to its limiting law (chapter 4).

    The test of {prf:ref}`prop-bulk-law`: at each sample ratio of ``grids`` the top eigenvalue
    of every seed is removed (the outlier), and the rest is compared with the limiting density,
    with the bulk of another seed (the scale of finite-size fluctuation) and with the plain
    Marchenko-Pastur law of ratio :math:`\delta` scaled to :math:`\mathbb E[T]`.

    Parameters
    ----------
    spectra : SpectraResult
        Output of :func:`spectra_over_seeds` (at least two seeds).
    grids, densities : dict
        ``{delta: array}``: the limiting density of the bulk on a grid, for the deltas of
        ``spectra.deltas`` to compare (:func:`lecnotes.spectral.theory.bulk_density`).
    mean_T : float
        :math:`\mathbb E[T(Y)] > 0`, the scale of the plain law.

    Returns
    -------
    BulkDistances
    """
    if not isinstance(spectra, SpectraResult):
        raise TypeError("spectra must be the SpectraResult of spectra_over_seeds")
    ev = spectra.eigenvalues
    if ev.shape[0] < 2:
        raise ValueError(f"spectra needs at least 2 seeds, got {ev.shape[0]}")
    if not isinstance(grids, dict) or not grids or set(grids) != set(densities):
        raise ValueError("grids and densities must be dicts with the same delta keys")
    mean_T = V.positive_float(mean_T, "mean_T")
    d = ev.shape[2]
    deltas = list(np.asarray(spectra.deltas, dtype=float))
    one, two, mp = [], [], []
    for delta in grids:
        if float(delta) not in deltas:
            raise ValueError(f"delta = {delta} of grids is not among spectra.deltas {deltas}")
        bulk = [e[:-1] for e in ev[:, deltas.index(float(delta))]]  # without the outlier
        sc = np.sqrt(delta * d)
        edges = np.array(rmt.marchenko_pastur_edges(delta)) * mean_T
        g_mp = np.linspace(*edges, 500)  # plain Marchenko-Pastur, scaled to E[T]
        d_mp = rmt.marchenko_pastur_density(g_mp / mean_T, delta) / mean_T
        one += [sc * stats.ks_distance(e, grids[delta], densities[delta]) for e in bulk]
        mp += [sc * stats.ks_distance(e, g_mp, d_mp) for e in bulk]
        two += [sc / np.sqrt(2) * ks_2samp(a, b, method="asymp").statistic
                for i, a in enumerate(bulk) for b in bulk[i + 1:]]
    return BulkDistances(np.array(one), np.array(two), np.array(mp))


class SlopeFit(NamedTuple):
    """:func:`mean_loglog_slope`: the ``slope`` and its standard error ``se``, the per-size
    ``means`` and their standard ``errors`` over seeds."""

    slope: float
    se: float
    means: np.ndarray
    errors: np.ndarray


def mean_loglog_slope(dims, values) -> SlopeFit:
    r"""Least-squares log-log slope of the mean over seeds against the size (chapter 4).

    The decay of the overlap below and at the threshold ({ref}`sec-ch4-transition`,
    {prf:ref}`prop-threshold`): with :math:`x_j=\log d_j-\overline{\log d}` and the means
    :math:`m_j` over seeds, the slope is :math:`\sum_jx_j\log m_j/\sum_jx_j^2`; its standard
    error is the delta method over independent sizes,
    :math:`(\sum_j(x_j\,\mathrm{se}_j/m_j)^2)^{1/2}/\sum_jx_j^2`.

    Parameters
    ----------
    dims : array_like, shape (m,)
        At least two distinct positive sizes.
    values : array_like, shape (seeds, m)
        Positive per-seed values (at least two seeds), seeds on axis 0.

    Returns
    -------
    SlopeFit
    """
    dims = V.finite_array(dims, "dims", ndim=1)
    values = V.finite_array(values, "values", ndim=2)
    if np.any(dims <= 0) or np.unique(dims).size < 2:
        raise ValueError("dims must hold at least two distinct positive sizes")
    if values.shape[1] != dims.size or values.shape[0] < 2:
        raise ValueError(f"values must have shape (seeds >= 2, {dims.size})")
    m, se = stats.mean_and_error(values)
    if np.any(m <= 0):
        raise ValueError("values must have positive means (a log-log fit)")
    lx = np.log(dims) - np.mean(np.log(dims))
    w = lx / np.sum(lx**2)  # least-squares slope weights
    return SlopeFit(float(w @ np.log(m)), float(np.sqrt(np.sum((w * se / m) ** 2))), m, se)


def inverse_d_limits(sims, name, deltas) -> np.ndarray:
    r"""Per-seed extrapolation of the simulated overlap to :math:`d\to\infty` (chapter 4).

    The comparison of {prf:ref}`thm-spectral-asymptotics` with simulations at finite ``d``:
    for every seed and sample ratio the squared overlaps at the dimensions of ``sims`` are
    fitted by :math:`C+B/d` (:func:`lecnotes.core.stats.inverse_d_intercepts`), and the
    intercepts :math:`C` are returned, one independent number per seed (the dimensions use
    independent streams, so pairing them by seed index is as good as any pairing).

    Parameters
    ----------
    sims : dict
        ``{d: {name: SpectralSimulation}}`` from :func:`spectral_sweep`, at least two
        dimensions with the same number of seeds.
    name : str
        The preprocessing to read.
    deltas : array_like
        Sample ratios, each simulated for ``name`` at every dimension.

    Returns
    -------
    ndarray, shape (seeds, len(deltas))
    """
    if not isinstance(sims, dict) or len(sims) < 2:
        raise ValueError("sims must be a dict {d: {name: SpectralSimulation}} with >= 2 sizes")
    if not all(name in sims[d] for d in sims):
        raise ValueError(f"preprocessing {name!r} is not simulated at every dimension")
    x = V.finite_array(deltas, "deltas", ndim=1)
    dims = sorted(sims)
    cols = []
    for d in dims:
        sim = sims[d][name]
        idx = [int(np.argmin(np.abs(sim.deltas - v))) for v in x]
        if x.size == 0 or not np.allclose(sim.deltas[idx], x):
            raise ValueError(f"deltas must be simulated for {name!r} at d = {d}")
        cols.append(sim.rho2[:, idx])
    vals = np.stack(cols, axis=1)  # (seeds, dims, deltas)
    return np.column_stack([stats.inverse_d_intercepts(dims, vals[:, :, j])
                            for j in range(x.size)])
