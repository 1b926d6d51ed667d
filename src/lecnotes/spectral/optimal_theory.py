r"""Chapter 4: optimal preprocessings for a general link, the edge below the threshold, and the
spectral estimator as the initialisation of gradient descent.

The general forms of the optimal preprocessings through :math:`z(y)=\mathbb E[G^2\mid Y=y]`
(:func:`second_moment_z`, :func:`threshold_optimal`, :func:`overlap_optimal`), a matrix-free
sweep of the top eigenpair of :math:`D_T` at one ratio up to :math:`d` of a few thousand
(:func:`edge_sweep`), and spectral initialisation followed by gradient descent for noiseless
phase retrieval (:func:`spectral_then_descent`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from lecnotes.core import validate as V
from lecnotes.core.conditional_hermite import conditional_hermite, weak_recovery_ratio
from lecnotes.core.linalg import lanczos_start
from lecnotes.core.preprocessing import label_weights
from lecnotes.core.targets import get_link

__all__ = [
    "second_moment_z",
    "threshold_optimal",
    "overlap_optimal",
    "EdgeSweep",
    "edge_sweep",
    "DescentResult",
    "spectral_then_descent",
    "IndicatorThreshold",
    "indicator_threshold",
    "TransitionSweep",
    "indicator_sweep",
    "indicator_direct",
    "crossings",
]


def second_moment_z(link):
    r"""The function :math:`z(y)=\mathbb E[G^2\mid Y=y]=1+\sqrt2\,\zeta_2(y)` of a link.

    Chapter 4, {prf:ref}`thm-ch4-optimal-general`; :math:`\zeta_2` is the conditional Hermite
    function of chapter 2 (:func:`lecnotes.core.conditional_hermite.conditional_hermite`).

    Parameters
    ----------
    link : str or callable
        A noiseless link.

    Returns
    -------
    callable
        ``z(y)`` for array-like ``y``.
    """
    zeta2 = conditional_hermite(link, 2)
    return lambda y: 1.0 + np.sqrt(2.0) * zeta2(np.asarray(y, dtype=float))


def threshold_optimal(link, delta):
    r"""Threshold-optimal preprocessing :math:`T^\star_\delta=(z-1)/(z-1+\sqrt{\delta/\delta_u})`.

    The equality case of {prf:ref}`prop-threshold` for a general link
    ({prf:ref}`thm-ch4-optimal-general`); for phase retrieval, :math:`z(y)=y` and
    :math:`\delta_u=1/2`, it is the Mondelli-Montanari :math:`T_\delta`.

    Parameters
    ----------
    link : str or callable
    delta : float
        Sample ratio, :math:`>\delta_u` (so that the denominator stays positive).

    Returns
    -------
    callable
        ``T(y)``; where :math:`\zeta_2` is not computable (``NaN``: a label so far in the
        tail that its conditional law underflows) the limit 1 of :math:`z\to\infty`.
    """
    delta = V.positive_float(delta, "delta")
    du = weak_recovery_ratio(link)
    if not delta > du:
        raise ValueError(f"threshold_optimal needs delta > delta_u = {du:.6g}, got {delta}")
    z, c = second_moment_z(link), np.sqrt(delta / du)

    def T(y):
        zy = z(y)
        return np.where(np.isnan(zy), 1.0, (zy - 1.0) / (zy - 1.0 + c))

    return T


def overlap_optimal(link):
    r"""Overlap-optimal preprocessing :math:`T^\star=1-1/z(y)` (Luo-Alghamdi-Lu), any link.

    {prf:ref}`thm-ch4-optimal-general`; for phase retrieval it is :math:`1-1/y`.

    Parameters
    ----------
    link : str or callable

    Returns
    -------
    callable
        ``T(y)`` (``-inf`` where :math:`z(y)=0`; the limit 1 where :math:`\zeta_2` is
        ``NaN``, as in :func:`threshold_optimal`).
    """
    z = second_moment_z(link)

    def T(y):
        zy = z(y)
        with np.errstate(divide="ignore"):
            return np.where(np.isnan(zy), 1.0, 1.0 - 1.0 / zy)

    return T


class EdgeSweep(NamedTuple):
    """Top eigenpair of :math:`D_T` at one ratio over dimensions and seeds (:func:`edge_sweep`).

    Arrays of shape (seeds, len(dims)): the top eigenvalue, the squared overlap, the largest
    squared alignment :math:`\\max_i\\langle\\hat w,x_i\\rangle^2/\\|x_i\\|^2` with a single
    sample and the label of that sample.
    """

    dims: np.ndarray
    top: np.ndarray
    rho2: np.ndarray
    align: np.ndarray
    label: np.ndarray


def edge_sweep(delta, dims, seeds, T, link="quadratic", rng=None) -> EdgeSweep:
    r"""Matrix-free top eigenpair of :math:`D_T` ({eq}`eq-ch4-dt`) at one ratio, large ``d``.

    For the edge below the threshold ({prf:ref}`thm-spectral-asymptotics`): Lanczos
    (:func:`scipy.sparse.linalg.eigsh`, relative tolerance :math:`10^{-5}`) on
    :math:`v\mapsto X^\top(T(y)\odot Xv)/n` in single precision (data, weights and products
    in float32: half the memory traffic of float64, and an eigenvalue error far below the
    fluctuations it is compared with), :math:`w_\star=e_1`.

    Parameters
    ----------
    delta : float
    dims : sequence of int
    seeds : int
    T : callable
        A fixed preprocessing.
    link : str or callable
    rng : Generator, int or None
        Seed ``s`` of dimension ``d`` uses ``V.stream(rng, d, s)``.

    Returns
    -------
    EdgeSweep
    """
    delta = V.positive_float(delta, "delta")
    dims = np.array([V.positive_int(d, "d", minimum=2) for d in dims])
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    base = V.generator(rng)
    out = {k: np.empty((seeds, dims.size)) for k in ("top", "rho2", "align", "label")}
    for j, d in enumerate(dims):
        n = max(2, int(round(delta * d)))
        for s in range(seeds):
            X = V.stream(base, int(d), s).standard_normal((n, int(d)), dtype=np.float32)
            y = np.asarray(phi(X[:, 0].astype(float)), dtype=float)
            t = (label_weights(y, T, None) / n).astype(np.float32)
            op = spla.LinearOperator(
                (d, d), matvec=lambda v, X=X, t=t: X.T @ (t * (X @ v.astype(np.float32))),
                dtype=np.float32)
            val, vec = spla.eigsh(op, k=1, which="LA", tol=1e-5, ncv=40, maxiter=5000,
                                  v0=lanczos_start(int(d)).astype(np.float32))
            v = vec[:, 0].astype(float)
            # alignment with each sample, in the data's single precision (no float64 copy of X)
            a = (X @ vec[:, 0]).astype(float) ** 2 / np.einsum("ij,ij->i", X, X).astype(float)
            i = int(np.argmax(a))
            out["top"][s, j], out["rho2"][s, j] = val[0], v[0] ** 2
            out["align"][s, j], out["label"][s, j] = a[i], y[i]
    return EdgeSweep(dims, out["top"], out["rho2"], out["align"], out["label"])


class DescentResult(NamedTuple):
    """Spectral initialisation then gradient descent (:func:`spectral_then_descent`).

    ``init`` and ``final``: squared overlap of the initialisation and of the last iterate;
    ``error``: :math:`\\min_\\pm\\|w\\pm w_\\star\\|/\\|w_\\star\\|` at the last iterate; arrays
    over seeds. ``path``: the mean over seeds of the error after each step.
    """

    init: np.ndarray
    final: np.ndarray
    error: np.ndarray
    path: np.ndarray


def spectral_then_descent(d, delta, seeds, T, steps: int = 300, step: float = 0.2,
                          start: str = "spectral", rng=None) -> DescentResult:
    r"""Noiseless phase retrieval: spectral initialisation, then gradient descent.

    Chapter 4, {ref}`sec-ch4-initialisation`. Labels :math:`y_i=\langle w_\star,x_i\rangle^2`
    with :math:`w_\star=e_1`; the start is the top eigenvector of :math:`D_T` scaled to the
    norm :math:`\sqrt{\bar y}` (``start="spectral"``) or a uniformly random direction with
    the same norm (``start="random"``); then ``steps`` steps of gradient descent with step
    ``step`` on :math:`f(w)=\frac1{4n}\sum_i(\langle w,x_i\rangle^2-y_i)^2`, whose gradient is
    :math:`\frac1n\sum_i(\langle w,x_i\rangle^2-y_i)\langle w,x_i\rangle x_i`.

    Parameters
    ----------
    d : int
    delta : float
        :math:`n/d`.
    seeds : int
    T : callable
        Preprocessing of the spectral start.
    steps : int
    step : float
        Step size, in units of :math:`1/\bar y`.
    start : {"spectral", "random"}
    rng : Generator, int or None
        Seed ``s`` uses ``V.stream(rng, s)`` (the same data for both starts).

    Returns
    -------
    DescentResult
    """
    d = V.positive_int(d, "d", minimum=2)
    delta = V.positive_float(delta, "delta")
    seeds = V.positive_int(seeds, "seeds")
    steps = V.positive_int(steps, "steps")
    step = V.positive_float(step, "step")
    if start not in ("spectral", "random"):
        raise ValueError(f"start must be 'spectral' or 'random', got {start!r}")
    n = max(2, int(round(delta * d)))
    base = V.generator(rng)
    init, final, error = np.empty(seeds), np.empty(seeds), np.empty(seeds)
    path = np.zeros(steps)
    for s in range(seeds):
        gen = V.stream(base, s)
        X = gen.standard_normal((n, d))
        y = X[:, 0] ** 2
        scale = np.sqrt(np.mean(y))
        if start == "spectral":
            t = label_weights(y, T, None)
            op = spla.LinearOperator((d, d), matvec=lambda v, X=X, t=t: X.T @ (t * (X @ v)) / n,
                                     dtype=float)
            w = spla.eigsh(op, k=1, which="LA", tol=1e-8, ncv=40, v0=lanczos_start(d))[1][:, 0]
        else:
            w = gen.standard_normal(d)
        w = scale * w / np.linalg.norm(w)
        init[s] = w[0] ** 2 / (w @ w)
        eta = step / np.mean(y)
        for k in range(steps):
            u = X @ w
            w = w - eta * (X.T @ ((u * u - y) * u)) / n
            path[k] += min(np.hypot(w[0] - 1, np.linalg.norm(w[1:])),
                           np.hypot(w[0] + 1, np.linalg.norm(w[1:]))) / seeds
        final[s] = w[0] ** 2 / (w @ w)
        error[s] = min(np.hypot(w[0] - 1, np.linalg.norm(w[1:])),
                       np.hypot(w[0] + 1, np.linalg.norm(w[1:])))
    return DescentResult(init, final, error, path)


class IndicatorThreshold(NamedTuple):
    r"""Closed form of the indicator preprocessing :math:`T(y)=\mathbb 1\{y>\tau\}` (phase
    retrieval): selected fraction ``q``, spike ``ell`` of the selected rows, threshold
    ``delta_c`` :math:`=1/(q\ell^2)` ({eq}`eq-ch4-indicator-threshold`)."""

    tau: float
    q: float
    ell: float
    delta_c: float


def indicator_threshold(tau=None) -> IndicatorThreshold:
    r"""Threshold of :math:`T(y)=\mathbb 1\{y>\tau\}` for real phase retrieval, in closed form.

    Chapter 4, {eq}`eq-ch4-indicator-threshold`. With :math:`a=\sqrt\tau`, the selected rows
    (:math:`|G|>a`, a fraction :math:`q=2\bar\Phi(a)`) have covariance
    :math:`I+\ell e_1e_1^\top`, :math:`\ell=\mathbb E[G^2\mid|G|>a]-1=2a\varphi(a)/q`, so
    :math:`D_T` is :math:`q` times a spiked Wishart matrix with aspect ratio
    :math:`\gamma=1/(q\delta)`, whose BBP threshold :math:`\ell=\sqrt\gamma` gives
    :math:`\delta_c=1/(q\ell^2)`.

    Parameters
    ----------
    tau : float or None
        Level; ``None`` takes the level that minimises :math:`\delta_c` (about 2.686).

    Returns
    -------
    IndicatorThreshold
    """
    def of(a):
        q = 2.0 * norm.sf(a)
        ell = 2.0 * a * norm.pdf(a) / q
        return q, ell, 1.0 / (q * ell * ell)

    if tau is None:
        a = minimize_scalar(lambda a: of(a)[2], bounds=(0.5, 3.0), method="bounded",
                            options={"xatol": 1e-10}).x
    else:
        a = np.sqrt(V.positive_float(tau, "tau"))
    q, ell, dc = of(a)
    return IndicatorThreshold(float(a * a), float(q), float(ell), float(dc))


class TransitionSweep(NamedTuple):
    """:func:`indicator_sweep`: ``ratios`` :math:`\\delta/\\delta_c`, ``dims``, and arrays of
    shape (len(dims), seeds, len(ratios)): top eigenvalue of :math:`D_T` and squared overlap."""

    ratios: np.ndarray
    dims: np.ndarray
    top: np.ndarray
    rho2: np.ndarray


def indicator_sweep(ratios, dims, seeds, tau=None, rng=None) -> TransitionSweep:
    r"""Top eigenpair of :math:`D_T`, :math:`T=\mathbb 1\{y>\tau\}`, near its threshold, exactly.

    Chapter 4, {ref}`sec-ch4-transition`. Conditionally on the labels, the non-zero spectrum of
    :math:`nD_T=X_+^\top X_+` (the :math:`m\sim\mathrm{Bin}(n,q)` selected rows) is that of the
    :math:`m\times m` Gram matrix :math:`\|g\|^2e_1e_1^\top+ZZ^\top` after a rotation taking the
    selected :math:`G`'s to :math:`\|g\|e_1`, with :math:`ZZ^\top` a Wishart
    :math:`W_m(I,d-1)`. Its Dumitriu-Edelman bidiagonal form :math:`BB^\top`
    (:math:`B_{ii}\sim\chi_{d-i}`, :math:`B_{i+1,i}\sim\chi_{m-i}`) keeps :math:`e_1` fixed, so
    the matrix is tridiagonal and :math:`\rho^2=\|g\|^2u_1^2/\lambda` for its top eigenpair
    :math:`(\lambda,u)` ({eq}`eq-ch4-tridiagonal`). Exact in law, :math:`O(m)` memory; each
    :math:`(d,\delta,\text{seed})` is an independent data set.

    Parameters
    ----------
    ratios : array_like
        :math:`\delta/\delta_c`, positive.
    dims : sequence of int
        Dimensions (``d - 1 >= m`` is required: :math:`q\delta<1`).
    seeds : int
    tau : float or None
        As in :func:`indicator_threshold`.
    rng : Generator, int or None
        Dimension ``d`` and ratio index ``j`` draw their seeds, in order, from
        ``V.stream(rng, d, j)``.

    Returns
    -------
    TransitionSweep
    """
    ratios = V.finite_array(ratios, "ratios", ndim=1)
    if ratios.size == 0 or np.any(ratios <= 0):
        raise ValueError("ratios must be positive")
    dims = np.array([V.positive_int(d, "d", minimum=8) for d in dims])
    seeds = V.positive_int(seeds, "seeds")
    th = indicator_threshold(tau)
    base = V.generator(rng)
    top = np.empty((dims.size, seeds, ratios.size))
    rho2 = np.empty_like(top)
    for i, d in enumerate(dims):
        for j, r in enumerate(ratios):
            n = max(2, int(round(r * th.delta_c * d)))
            g = V.stream(base, int(d), j)
            for s in range(seeds):
                m = max(1, int(g.binomial(n, th.q)))
                if m > d - 1:
                    raise ValueError(f"more selected rows ({m}) than d - 1 = {d - 1}")
                g2 = np.sum(norm.isf(g.uniform(size=m) * th.q / 2) ** 2)   # |G| > a
                diag2 = g.chisquare(d - 1 - np.arange(m))
                sub2 = g.chisquare(m - 1 - np.arange(m - 1))
                main = diag2.copy()
                main[1:] += sub2
                main[0] += g2
                val, vec = sla.eigh_tridiagonal(main, np.sqrt(sub2 * diag2[:-1]), select="i",
                                                select_range=(m - 1, m - 1))
                top[i, s, j] = val[0] / n
                rho2[i, s, j] = g2 * vec[0, 0] ** 2 / val[0]
    return TransitionSweep(ratios, dims, top, rho2)


def indicator_direct(delta, d, seeds, tau=None, rng=None):
    r"""The same top eigenpair from Gaussian data (the check of :func:`indicator_sweep`).

    :math:`X\in\mathbb R^{n\times d}` with :math:`w_\star=e_1`, :math:`y=G^2`; the top eigenpair
    of :math:`D_T=X_+^\top X_+/n` through the Gram matrix of the selected rows.

    Parameters
    ----------
    delta : float
    d, seeds : int
    tau : float or None
    rng : Generator, int or None
        Seed ``s`` draws from ``V.stream(rng, s)``.

    Returns
    -------
    top, rho2 : ndarray of shape (seeds,)
    """
    delta = V.positive_float(delta, "delta")
    d = V.positive_int(d, "d", minimum=2)
    seeds = V.positive_int(seeds, "seeds")
    th = indicator_threshold(tau)
    n = max(2, int(round(delta * d)))
    base = V.generator(rng)
    top, rho2 = np.empty(seeds), np.empty(seeds)
    for s in range(seeds):
        X = V.stream(base, s).standard_normal((n, d))
        Xs = X[X[:, 0] ** 2 > th.tau]
        val, u = np.linalg.eigh(Xs @ Xs.T)
        v = Xs.T @ u[:, -1]
        top[s], rho2[s] = val[-1] / n, v[0] ** 2 / (v @ v)
    return top, rho2


def crossings(ratios, curves, n_boot: int = 400, rng=None):
    r"""Where the mean curves of successive dimensions cross, with a bootstrap error.

    Chapter 4, {ref}`sec-ch4-transition`: for finite-size scaling
    :math:`d^{1/3}\rho^2\approx F((\delta/\delta_c-1)d^{1/3})` the curves of
    :math:`d^{1/3}\rho^2` against :math:`\delta/\delta_c` of all :math:`d` cross at 1. For each
    pair of successive dimensions: the crossing of the two mean curves nearest to 1 (linear
    interpolation of their difference), and its standard deviation over bootstrap resamples
    of the seeds (resamples without a crossing are dropped and counted).

    Parameters
    ----------
    ratios : array_like, shape (k,)
    curves : array_like, shape (len(dims), seeds, k)
        Scaled values per dimension and seed.
    n_boot : int
    rng : Generator, int or None

    Returns
    -------
    cross, se, missing : ndarray of shape (len(dims) - 1,)
        Crossings, bootstrap errors, fraction of resamples with no crossing.
    """
    ratios = V.finite_array(ratios, "ratios", ndim=1)
    curves = V.finite_array(curves, "curves", ndim=3)
    if curves.shape[2] != ratios.size or curves.shape[0] < 2:
        raise ValueError("curves must have shape (>= 2 dims, seeds, len(ratios))")
    gen = V.generator(rng)

    def cross(m1, m2):
        diff = m2 - m1
        idx = np.nonzero(np.diff(np.sign(diff)) != 0)[0]
        if idx.size == 0:
            return np.nan
        xs = ratios[idx] - diff[idx] * (ratios[idx + 1] - ratios[idx]) / (diff[idx + 1] - diff[idx])
        return xs[np.argmin(np.abs(xs - 1.0))]

    k, seeds = curves.shape[0], curves.shape[1]
    out, se, miss = np.empty(k - 1), np.empty(k - 1), np.empty(k - 1)
    for i in range(k - 1):
        out[i] = cross(curves[i].mean(axis=0), curves[i + 1].mean(axis=0))
        boot = np.array([cross(curves[i][gen.integers(0, seeds, seeds)].mean(axis=0),
                               curves[i + 1][gen.integers(0, seeds, seeds)].mean(axis=0))
                         for _ in range(n_boot)])
        miss[i] = np.mean(np.isnan(boot))
        se[i] = np.nanstd(boot, ddof=1) if miss[i] < 1 else np.inf
    return out, se, miss
