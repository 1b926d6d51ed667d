r"""Second-moment spectral estimators, matrix-free (chapter 4; the Lanczos helper is reused in 5).

The spectral estimator with preprocessing :math:`T` (chapter 4, eq. (D_T)) is the top
eigenvector of

.. math:: D_T = \frac1n\sum_{i=1}^n T(y_i)\,x_ix_i^\top = \frac1n X^\top\mathrm{diag}(T(y))X,

whose mean is :math:`\mathbb E[T(Y)]\,I + \mathbb E[T(Y)\mathrm{He}_2(G)]\,w_\star w_\star^\top`.
A product :math:`D_Tv = \frac1nX^\top(T\odot Xv)` costs O(nd) and :math:`D_T` is never
formed, unless ``d`` is small (dense path: one BLAS-3 product and LAPACK).

:func:`top_eigenpair` is the reusable engine: the largest eigenpair of any symmetric operator
given by its matrix-vector product (implicitly restarted Lanczos, ARPACK, through
:func:`scipy.sparse.linalg.eigsh` on a ``LinearOperator``), with restarts and fallbacks so that
non-convergence never reaches the reader. Chapter 5 uses it with the partial-trace product
:func:`lecnotes.hermite.he4_partial_trace`.

Named preprocessings for real phase retrieval :math:`y=\langle w_\star,x\rangle^2`
(:data:`PREPROCESSINGS`): raw labels, trimmed, trimmed and centred, the threshold-optimal
:math:`T_\delta(y)=(y-1)/(y+\sqrt{2\delta}-1)` (Mondelli & Montanari, real case) and the
overlap-optimal :math:`T(y)=1-1/y` (Luo, Alghamdi & Lu).

Chapter 5 adds the estimators beyond second moments: the partial trace of the empirical
Hermite tensor (:func:`partial_trace_estimator`, matrix-free, ``k = 2, 4``), the odd-degree
vector contraction and the degree-3 unfolding (:func:`vector_contraction_estimator`,
:func:`unfolding_estimator`), a sweep over :math:`n/d^2` (:func:`simulate_partial_trace`),
and helpers that read sample complexities off simulations (:func:`crossing_size`,
:func:`scaling_exponent`, :func:`collapse_chi2`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

from . import _validate as V
from .hermite import (
    gaussian_expectation,
    he3_unfolding_gram,
    he3_vector_contraction,
    he_partial_trace,
)
from .targets import get_link

__all__ = [
    "Preprocessing",
    "PreprocessingFamily",
    "raw",
    "trimmed",
    "trimmed_centred",
    "mondelli_montanari",
    "luo_alghamdi_lu",
    "PREPROCESSINGS",
    "get_preprocessing",
    "resolve_preprocessing",
    "top_eigenpair",
    "spectral_matrix",
    "spectral_estimator",
    "spectrum",
    "simulate_spectral",
    "davis_kahan",
    "EigenInfo",
    "partial_trace_matrix",
    "partial_trace_estimator",
    "vector_contraction_estimator",
    "unfolding_estimator",
    "simulate_partial_trace",
    "simulate_overlaps",
    "crossing_size",
    "scaling_exponent",
    "collapse_chi2",
]

DENSE_MAX_D = 300
"""Below this dimension ``method="auto"`` forms D_T and calls LAPACK (faster than Lanczos)."""

DENSE_FALLBACK_MAX_D = 8000
"""Largest ``d`` for which a dense fallback is attempted (the d x d matrix takes 8 d^2 bytes)."""

SPREAD_LIMIT = 1.0e3
"""If the negative part of the spectrum reaches beyond SPREAD_LIMIT times its positive scale,
Lanczos needs of order sqrt(spread/gap) products (e.g. T = 1 - 1/y, whose most negative values
grow like n^2): ``method="auto"`` then goes dense directly."""


# =======================================================================================
# Named preprocessings
# =======================================================================================
@dataclass(frozen=True)
class Preprocessing:
    """A named, vectorised label preprocessing :math:`T:\\mathbb R\\to\\mathbb R` (chapter 4).

    Attributes
    ----------
    name : str
    func : callable
        Vectorised function of the labels.
    latex : str
        Formula for legends.
    breakpoints : tuple of float
        Label values where ``func`` jumps (the theory's quadrature splits there).
    """

    name: str
    func: Callable[[np.ndarray], np.ndarray]
    latex: str = ""
    breakpoints: tuple[float, ...] = field(default_factory=tuple)

    def __call__(self, y):
        y = np.asarray(y, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(self.func(y), dtype=float)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Preprocessing({self.name!r})"


@dataclass(frozen=True)
class PreprocessingFamily:
    """A preprocessing that depends on the sample ratio, :math:`T_\\delta` (chapter 4).

    ``family.at(delta)`` returns the :class:`Preprocessing` used at ``delta``; it is defined for
    ``delta >= delta_min``. :func:`spectral_estimator` evaluates it at ``delta = n/d``.
    """

    name: str
    factory: Callable[[float], Preprocessing]
    latex: str = ""
    delta_min: float = 0.0

    def at(self, delta) -> Preprocessing:
        delta = V.positive_float(delta, "delta")
        if not delta >= self.delta_min:
            raise ValueError(f"{self.name} is defined for delta >= {self.delta_min}, got {delta}")
        return self.factory(delta)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"PreprocessingFamily({self.name!r})"


def raw() -> Preprocessing:
    """The raw labels, :math:`T(y)=y` (unbounded for phase retrieval: no proportional threshold)."""
    return Preprocessing("raw", lambda y: y, r"$T(y)=y$")


def trimmed(level: float = 7.0) -> Preprocessing:
    r"""Trimmed labels :math:`T(y)=y\,\mathbb 1\{y\le t\}` (chapter 4).

    Samples with a label above the level ``t`` are discarded. The default ``t = 7`` is close to
    the level minimising the threshold for :math:`y=G^2` (chapter 4, table of thresholds).
    """
    t = V.positive_float(level, "level")
    return Preprocessing(
        "trimmed", lambda y: np.where(y <= t, y, 0.0), rf"$y\,1\{{y\leq {t:g}\}}$", (t,)
    )


def trimmed_centred(level: float = 7.0, link="quadratic") -> Preprocessing:
    r"""Trimmed and centred labels (chapter 4).

    :math:`T(y)=y\mathbb 1\{y\le t\}-\mathbb E[Y\mathbb 1\{Y\le t\}]`. The centring makes
    :math:`\mathbb E[T(Y)]=0`, so that
    :math:`\mathbb E[D_T]=\mathbb E[T(Y)\mathrm{He}_2(G)]\,w_\star w_\star^\top` is exactly rank
    one. The mean is computed by quadrature for ``link`` (default: phase retrieval).
    """
    t = V.positive_float(level, "level")
    phi = get_link(link)
    from .theory import _g_breakpoints  # the g where phi(g) = t

    bp = tuple(_g_breakpoints(phi, (t,))) + tuple(getattr(phi, "breakpoints", ()))
    mean = float(
        gaussian_expectation(
            lambda g: np.where(phi(g) <= t, phi(g), 0.0), breakpoints=bp
        )
    )
    return Preprocessing(
        "trimmed-centred",
        lambda y: np.where(y <= t, y, 0.0) - mean,
        rf"$y\,1\{{y\leq {t:g}\}}-{mean:.3f}$",
        (t,),
    )


def _mm(delta: float) -> Preprocessing:
    c = math.sqrt(2.0 * delta) - 1.0
    return Preprocessing(
        "mondelli-montanari",
        lambda y: (y - 1.0) / (y + c),
        rf"$(y-1)/(y+\sqrt{{2\delta}}-1)$, $\delta={delta:g}$",
    )


def mondelli_montanari(delta=None):
    r"""Threshold-optimal preprocessing for real phase retrieval (Mondelli & Montanari).

    Chapter 4, eq. (T_delta): :math:`T_\delta(y)=\dfrac{y-1}{y+\sqrt{2\delta}-1}`, defined for
    :math:`\delta\ge1/2` (at :math:`\delta=1/2` it is :math:`1-1/y`; the form with
    :math:`\sqrt\delta` is the complex case). Used at its own
    :math:`\delta` it gives an outlier for every :math:`\delta>1/2=\delta_u`; a fixed member
    :math:`T_{\delta_0}` has threshold :math:`\sqrt{\delta_0/2}` (chapter 4, exercise).

    Parameters
    ----------
    delta : float or None
        ``None`` returns the family (a :class:`PreprocessingFamily`), a number the member.
    """
    family = PreprocessingFamily(
        "mondelli-montanari", _mm, r"$(y-1)/(y+\sqrt{2\delta}-1)$", delta_min=0.5
    )
    return family if delta is None else family.at(delta)


def luo_alghamdi_lu() -> Preprocessing:
    r"""Overlap-optimal preprocessing :math:`T(y)=1-1/y` (Luo, Alghamdi & Lu; chapter 4).

    The same for every :math:`\delta`, threshold :math:`1/2`; bounded above by 1 but unbounded
    below, so :math:`\mathbb E[T(Y)]=-\infty` and the spectrum of :math:`D_T` has a long negative
    tail (which is why the dense path is used for it).
    """
    return Preprocessing("luo-alghamdi-lu", lambda y: 1.0 - 1.0 / y, r"$1-1/y$")


PREPROCESSINGS: dict[str, Callable[[], object]] = {
    "raw": raw,
    "trimmed": trimmed,
    "trimmed-centred": trimmed_centred,
    "mondelli-montanari": mondelli_montanari,
    "luo-alghamdi-lu": luo_alghamdi_lu,
}
"""Factories of the named preprocessings of chapter 4 (for phase retrieval, default levels)."""


def get_preprocessing(name: str, **kwargs):
    """The named preprocessing ``name`` from :data:`PREPROCESSINGS` (keyword arguments are
    passed to its factory, e.g. ``level=5`` or ``delta=2``)."""
    if not isinstance(name, str) or name not in PREPROCESSINGS:
        raise ValueError(
            f"unknown preprocessing {name!r}; known: {', '.join(PREPROCESSINGS)}"
        )
    return PREPROCESSINGS[name](**kwargs)


def resolve_preprocessing(T, delta=None) -> Callable:
    """Turn ``T`` (None, a name, a callable or a family) into a callable of the labels.

    ``None`` means the raw labels; a family is evaluated at ``delta``.
    """
    if T is None:
        return raw()
    if isinstance(T, str):
        T = get_preprocessing(T)
    if isinstance(T, PreprocessingFamily):
        if delta is None:
            raise ValueError(f"{T.name} depends on delta; pass delta")
        return T.at(delta)
    if not callable(T):
        raise ValueError(f"T must be None, a name, a callable or a family, got {T!r}")
    return T


def _is_family(T) -> bool:
    if isinstance(T, str) and T in PREPROCESSINGS:
        T = get_preprocessing(T)
    return isinstance(T, PreprocessingFamily)


def _weights(y, T, delta) -> np.ndarray:
    T = resolve_preprocessing(T, delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.asarray(T(y), dtype=float)
    if t.shape == ():
        t = np.full_like(y, float(t))
    if t.shape != y.shape:
        raise ValueError(f"T must be vectorised: T(y) has shape {t.shape}, y has {y.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("T(y) contains NaN or infinite values (e.g. 1 - 1/y at y = 0)")
    return t


# =======================================================================================
# The Lanczos engine
# =======================================================================================
@dataclass
class EigenInfo:
    """How :func:`top_eigenpair` got its answer.

    Attributes
    ----------
    method : str
        ``"dense"``, ``"lanczos"`` or ``"lanczos-restarted"``, or ``"...-unconverged"``.
    matvecs : int
        Number of operator applications (columns count one each).
    residual : float
        :math:`\\|Av-\\lambda v\\|` of the returned pair (computed with one extra product).
    attempts : list of str
        What was tried, in order (failures included).
    """

    method: str
    matvecs: int = 0
    residual: float = math.nan
    attempts: list = field(default_factory=list)


def _canonical_sign(v: np.ndarray) -> np.ndarray:
    i = int(np.argmax(np.abs(v)))
    return v if v[i] >= 0 else -v


def top_eigenpair(
    matvec: Callable[[np.ndarray], np.ndarray],
    d: int,
    *,
    dense_matrix: Callable[[], np.ndarray] | None = None,
    method: str = "auto",
    tol: float = 1e-8,
    ncv: int | None = None,
    maxiter: int | None = None,
    v0=None,
    rng=None,
    warn: bool = True,
):
    r"""Largest eigenvalue and its unit eigenvector of a symmetric operator (chapters 4, 5).

    The engine behind :func:`spectral_estimator` and the partial-trace estimator of chapter 5:
    implicitly restarted Lanczos (ARPACK via :func:`scipy.sparse.linalg.eigsh` on a
    ``LinearOperator``) for the top eigenpair. If ARPACK does not converge
    (:class:`~scipy.sparse.linalg.ArpackNoConvergence`: typically a cluster of nearly equal top
    eigenvalues, as below a spectral threshold) or fails, it restarts from the best Ritz
    vector asking for the top three eigenpairs jointly in a Krylov space three times larger
    (a cluster converges jointly where one member alone can stall); if that fails too it
    falls back to the dense matrix (``dense_matrix()``, or ``d`` products with the identity)
    when ``d <= DENSE_FALLBACK_MAX_D``; as a last resort it returns the best Ritz pair and
    warns with its residual. No ARPACK exception reaches the caller.

    Parameters
    ----------
    matvec : callable
        ``v -> A v`` for ``v`` of shape ``(d,)`` (and, if possible, ``(d, r)``).
    d : int
        Dimension.
    dense_matrix : callable, optional
        Returns the dense ``d x d`` matrix (faster than ``d`` products when available).
    method : {"auto", "lanczos", "dense"}
        ``"auto"`` is dense for ``d <= DENSE_MAX_D`` (when possible) and Lanczos otherwise.
    tol : float
        ARPACK relative tolerance :math:`\|Av-\theta v\|\le\mathrm{tol}\,|\theta|`.
    ncv, maxiter : int, optional
        Krylov-space size (default 20) and maximal number of ARPACK restarts (default 40) of
        the first attempt; the second uses ``3 * ncv`` and the same ``maxiter``.
    v0 : array_like, optional
        Starting vector; by default a Gaussian vector from ``rng``.
    rng : Generator, int or None
        For the starting vector (``None``: seed 0, so that results are reproducible).
    warn : bool
        Warn (``RuntimeWarning``) if only an unconverged pair could be obtained.

    Returns
    -------
    value : float
    vector : ndarray (d,), unit norm, sign fixed so that its largest entry is positive
    info : EigenInfo
    """
    d = V.positive_int(d, "d")
    if not callable(matvec):
        raise ValueError("matvec must be a callable v -> A v")
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    tol = V.positive_float(tol, "tol")
    rng = V.generator(0 if rng is None else rng)
    info = EigenInfo(method="")
    count = [0]

    def mv(v):
        v = np.asarray(v, dtype=float)
        count[0] += 1 if v.ndim == 1 else v.shape[1]
        return np.asarray(matvec(v), dtype=float)

    def mm(V_):
        V_ = np.asarray(V_, dtype=float)
        try:
            out = mv(V_)
            if out.shape == V_.shape:
                return out
        except (ValueError, TypeError):
            pass
        return np.column_stack([mv(V_[:, j]) for j in range(V_.shape[1])])

    def dense():
        A = dense_matrix() if dense_matrix is not None else mm(np.eye(d))
        A = np.asarray(A, dtype=float)
        if A.shape != (d, d):
            raise ValueError(f"dense_matrix() must return shape ({d}, {d}), got {A.shape}")
        A = 0.5 * (A + A.T)
        w, Vec = sla.eigh(A, subset_by_index=[d - 1, d - 1], driver="evr")
        return float(w[0]), Vec[:, 0]

    def finish(val, vec, label):
        vec = vec / np.linalg.norm(vec)
        r = mv(vec) - val * vec
        info.method = label
        info.residual = float(np.linalg.norm(r))
        info.matvecs = count[0]
        return float(val), _canonical_sign(vec), info

    if method == "dense" or d <= 5 or (method == "auto" and d <= DENSE_MAX_D):
        info.attempts.append("dense")
        val, vec = dense()
        return finish(val, vec, "dense")

    x0 = rng.standard_normal(d) if v0 is None else V.finite_array(v0, "v0", ndim=1)
    if x0.shape != (d,) or not np.any(x0):
        raise ValueError(f"v0 must be a non-zero vector of shape ({d},)")
    op = LinearOperator((d, d), matvec=mv, matmat=mm, dtype=float)
    # first the top eigenpair alone (fast when it is separated), then, if ARPACK stalls on
    # a near-degenerate top, the top three jointly in a larger Krylov space, from the best
    # Ritz vector; the iteration budgets keep the number of products below about 40 ncv
    ncv0 = min(d - 1, max(ncv or 20, 4))
    it0 = maxiter or 40
    best = None  # (value, vector) of the best Ritz pair seen
    plans = [(1, ncv0, it0, "lanczos"),
             (min(3, d - 2), min(d - 1, 3 * ncv0), it0, "lanczos-restarted")]
    for k, ncv_, maxiter_, label in plans:
        info.attempts.append(f"{label} (k={k}, ncv={ncv_}, maxiter={maxiter_})")
        try:
            w, Vec = eigsh(op, k=k, which="LA", ncv=ncv_, tol=tol, maxiter=maxiter_, v0=x0)
            j = int(np.argmax(w))
            return finish(w[j], Vec[:, j], label)
        except ArpackNoConvergence as err:
            info.attempts[-1] += ": no convergence"
            if err.eigenvalues is not None and len(err.eigenvalues):
                j = int(np.argmax(err.eigenvalues))
                best = (float(err.eigenvalues[j]), err.eigenvectors[:, j])
                x0 = best[1]
        except ArpackError as err:  # pragma: no cover - rare ARPACK internal errors
            info.attempts[-1] += f": {err}"
    if d <= DENSE_FALLBACK_MAX_D:
        info.attempts.append("dense fallback")
        val, vec = dense()
        return finish(val, vec, "dense-fallback")
    vec = x0 if best is None else best[1]
    vec = vec / np.linalg.norm(vec)
    val, vec, info = finish(float(vec @ mv(vec)), vec, "lanczos-unconverged")  # Rayleigh q.
    if warn:
        warnings.warn(
            f"top_eigenpair: Lanczos did not converge in dimension {d}; returning the best Ritz "
            f"pair (residual {info.residual:.2e}).",
            RuntimeWarning,
            stacklevel=2,
        )
    return val, vec, info


# =======================================================================================
# Spectral estimators
# =======================================================================================
def spectral_matrix(X, y, T=None) -> np.ndarray:
    r"""The dense matrix :math:`D_T=\frac1nX^\top\mathrm{diag}(T(y))X` (chapter 4, eq. (D_T)).

    For small ``d`` (O(nd^2) time, d^2 memory); rows are accumulated in blocks so that no
    second n x d array is allocated. ``T`` as in :func:`spectral_estimator`.
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    t = _weights(y, T, n / d)
    return _dense(X, t)


def _dense(X, t):
    n, d = X.shape
    D = np.zeros((d, d))
    step = max(1, min(n, 2**22 // max(d, 1)))
    for s in range(0, n, step):
        B = X[s: s + step]
        D += B.T @ (t[s: s + step, None] * B)
    D /= n
    return 0.5 * (D + D.T)


def _heavy(t, delta) -> bool:
    """Is the negative tail of the spectrum too long for Lanczos (see SPREAD_LIMIT)?"""
    pos = max(float(np.max(t)), 0.0)
    neg = max(-float(np.min(t)), 0.0) / delta
    return neg > SPREAD_LIMIT * max(pos, 1e-300)


def spectral_estimator(X, y, T=None, *, method: str = "auto", tol: float = 1e-8, rng=None,
                       return_info: bool = False):
    r"""Spectral estimator: top eigenvector and eigenvalue of :math:`D_T` (chapter 4).

    :math:`D_T=\frac1n\sum_iT(y_i)x_ix_i^\top`, used through the product
    :math:`v\mapsto\frac1nX^\top(T(y)\odot Xv)` (O(nd) per product, :math:`D_T` never formed)
    and :func:`top_eigenpair` (Lanczos with restarts and fallbacks). Dense path for
    ``d <= DENSE_MAX_D``, and also when the preprocessed labels have a negative tail so long
    that Krylov methods are hopeless (``SPREAD_LIMIT``; e.g. ``T(y) = 1 - 1/y``).

    Parameters
    ----------
    X : array_like (n, d)
        Inputs (rows).
    y : array_like (n,)
        Labels.
    T : None, str, callable or PreprocessingFamily
        Preprocessing; ``None`` uses the raw labels, a name is looked up in
        :data:`PREPROCESSINGS`, a family is evaluated at ``delta = n/d``.
    method : {"auto", "lanczos", "dense"}
    tol : float
        Lanczos tolerance (relative residual).
    rng : Generator, int or None
        Starting vector of Lanczos (default: seed 0, reproducible).
    return_info : bool
        Also return the :class:`EigenInfo`.

    Returns
    -------
    w_hat : ndarray (d,), unit norm (sign: largest entry positive; only the direction matters)
    top : float, the largest eigenvalue of :math:`D_T`
    info : EigenInfo, if ``return_info``
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    t = _weights(y, T, n / d)
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    if method == "auto":
        heavy = _heavy(t, n / d) and d <= DENSE_FALLBACK_MAX_D
        method = "dense" if (d <= DENSE_MAX_D or heavy) else "lanczos"

    def matvec(v):
        return X.T @ ((t[:, None] if v.ndim == 2 else t) * (X @ v)) / n

    val, vec, info = top_eigenpair(
        matvec, d, dense_matrix=lambda: _dense(X, t), method=method, tol=tol, rng=rng
    )
    return (vec, val, info) if return_info else (vec, val)


def spectrum(X, y, T=None) -> np.ndarray:
    """All eigenvalues of :math:`D_T` in increasing order (dense; for histograms, chapter 4)."""
    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"spectrum is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    t = _weights(y, T, n / d)
    return sla.eigvalsh(_dense(X, t))


def simulate_spectral(preprocessings, deltas, d, seeds, link="quadratic", rng=0):
    r"""Squared overlap and top eigenvalue of :math:`D_T` over seeds and sample ratios (chapter 4).

    For each seed one data set with :math:`n_{\max}=\max\delta\cdot d` samples is drawn
    (:math:`w_\star=e_1` by rotation invariance) and the estimators at smaller ``delta`` use
    its first :math:`n=\delta d` rows (nested samples). For a fixed preprocessing and
    ``d <= 2000`` the matrices are accumulated block by block, so the whole sweep costs one
    product of size :math:`n_{\max}d^2`; families (:math:`T_\delta`) and larger ``d`` use
    :func:`spectral_estimator` at each ``delta``.

    Parameters
    ----------
    preprocessings : dict
        ``{label: T}`` with ``T`` as in :func:`spectral_estimator`.
    deltas : array_like
        Increasing sample ratios (``n = round(delta * d)``).
    d : int
        Dimension (>= 2).
    seeds : int
        Number of independent data sets.
    link : str or callable
    rng : Generator, int or None

    Returns
    -------
    dict ``{label: {"rho2": (seeds, len(deltas)), "top": (seeds, len(deltas))}}``
    """
    if not isinstance(preprocessings, dict) or not preprocessings:
        raise ValueError("preprocessings must be a non-empty dict {label: T}")
    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if deltas.size == 0 or np.any(deltas <= 0) or np.any(np.diff(deltas) <= 0):
        raise ValueError("deltas must be positive and increasing")
    d = V.positive_int(d, "d", minimum=2)
    seeds = V.positive_int(seeds, "seeds")
    phi = get_link(link)
    rng = V.generator(rng)
    ns = np.maximum(1, np.round(deltas * d).astype(int))
    out = {k: {"rho2": np.empty((seeds, ns.size)), "top": np.empty((seeds, ns.size))}
           for k in preprocessings}
    for s in range(seeds):
        X = rng.standard_normal((ns[-1], d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for label, T in preprocessings.items():
            res = out[label]
            if not _is_family(T) and d <= 2000:
                t = _weights(y, T, None)
                heavy = _heavy(t, ns[0] / d)
                D = np.zeros((d, d))
                prev = 0
                for j, n in enumerate(ns):
                    B = X[prev:n]
                    D += B.T @ (t[prev:n, None] * B)
                    prev = n
                    A = 0.5 * (D + D.T) / n
                    top, vec, _ = top_eigenpair(
                        lambda v, A=A: A @ v, d, dense_matrix=lambda A=A: A,
                        method="dense" if heavy else "lanczos", rng=s,
                    )
                    res["rho2"][s, j] = vec[0] ** 2
                    res["top"][s, j] = top
            else:
                for j, n in enumerate(ns):
                    v, top = spectral_estimator(X[:n], y[:n], T, rng=s)
                    res["rho2"][s, j] = v[0] ** 2
                    res["top"][s, j] = top
    return out


def davis_kahan(X, y, T, w_star, link="quadratic") -> dict:
    r"""The Davis-Kahan bound against the actual overlap, on one data set (chapter 4).

    With :math:`\Delta=D_T-\mathbb E[D_T]`, :math:`\mathbb E[D_T]=\mathbb E[T]I+\beta
    w_\star w_\star^\top` (:func:`lecnotes.theory.mean_matrix_coefficients`), the
    :math:`\sin\theta` theorem gives :math:`\sin\theta\le\|\Delta\|/(\beta-\|\Delta\|)`
    for the top eigenvector when :math:`\|\Delta\|<\beta` (chapter 4, proposition
    "Davis-Kahan"), i.e. :math:`\rho^2\ge1-\|\Delta\|^2/(\beta-\|\Delta\|)^2`, and nothing
    when :math:`\|\Delta\|\ge\beta/2`. Dense (``d <= 2000``): one eigendecomposition.

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing (as in :func:`spectral_estimator`; its mean must exist)
    w_star : array (d,)
    link : str or callable, used for the population mean

    Returns
    -------
    dict with ``norm`` (:math:`\|\Delta\|_{op}`), ``beta``, ``mean_T``, ``bound`` (the lower
    bound on :math:`\rho^2`, 0 when vacuous) and ``rho2`` (the actual squared overlap).
    """
    from .theory import mean_matrix_coefficients

    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > 2000:
        raise ValueError(f"davis_kahan is dense: d must be <= 2000, got {d}")
    w = V.finite_array(w_star, "w_star", ndim=1)
    if w.shape != (d,) or not np.any(w):
        raise ValueError(f"w_star must be a non-zero vector of shape ({d},)")
    w = w / np.linalg.norm(w)
    Tc = resolve_preprocessing(T, n / d)
    mean_T, beta = mean_matrix_coefficients(Tc, link)
    D = _dense(X, _weights(y, Tc, n / d))
    ev, vec = sla.eigh(D)
    rho2 = float((vec[:, -1] @ w) ** 2)
    Delta = D - mean_T * np.eye(d) - beta * np.outer(w, w)
    dev = sla.eigvalsh(Delta)
    norm = float(max(abs(dev[0]), abs(dev[-1])))
    if 2 * norm < beta:
        bound = 1.0 - (norm / (beta - norm)) ** 2
    else:
        bound = 0.0
    return {"norm": norm, "beta": beta, "mean_T": mean_T, "bound": float(bound), "rho2": rho2}



# =======================================================================================
# Beyond second moments: partial traces of Hermite tensors (chapter 5)
# =======================================================================================
def _tensor_weights(y, T, delta) -> np.ndarray:
    """Chapter 5 default: ``T = None`` centres the labels by their sample mean."""
    if T is None:
        return y - float(np.mean(y))
    return _weights(y, T, delta)


def _check_even_k(k) -> int:
    k = V.positive_int(k, "k")
    if k not in (2, 4):
        raise ValueError(
            f"k must be 2 or 4 (the even degrees implemented), got {k}; for k = 3 use "
            "vector_contraction_estimator or unfolding_estimator"
        )
    return k


def _partial_trace_dense(X, t, k) -> np.ndarray:
    n, d = X.shape
    if k == 2:
        return _dense(X, t) - float(np.mean(t)) * np.eye(d)
    sq = np.einsum("ij,ij->i", X, X)
    M = _dense(X, t * (sq - d - 4.0))
    M -= float(np.mean(t * (sq - d - 2.0))) * np.eye(d)
    return M


def partial_trace_matrix(X, y, k: int = 4, T=None) -> np.ndarray:
    r"""The dense partial-trace matrix :math:`M_k` (chapter 5, eq. (M_k)), for small ``d``.

    :math:`M_k=\frac1n\sum_iT(y_i)\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]`; for ``k = 4``,
    :math:`M_4=\frac1n\sum_iT_i\big[(\|x_i\|^2-d-4)x_ix_i^\top-(\|x_i\|^2-d-2)I\big]`. O(nd^2)
    time, d^2 memory (use :func:`partial_trace_estimator` for large ``d``). ``T`` as there.
    """
    X, y = V.data_pair(X, y)
    k = _check_even_k(k)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"partial_trace_matrix is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    return _partial_trace_dense(X, _tensor_weights(y, T, n / d), k)


def partial_trace_estimator(X, y, k: int = 4, T=None, *, which: str = "magnitude",
                            method: str = "auto", tol: float = 1e-8, rng=None,
                            return_info: bool = False):
    r"""Partial-trace estimator: an extreme eigenvector of :math:`M_k` (chapter 5).

    :math:`M_k=\frac1n\sum_iT(y_i)\,\mathrm{He}_k(x_i)[I^{\otimes(k-2)/2}]` has mean
    :math:`\lambda_k(T)\,w_\star w_\star^\top` with
    :math:`\lambda_k(T)=\mathbb E[T(Y)\mathrm{He}_k(G)]` (chapter 5, proposition (mean of the
    partial trace)), whose sign is not known in advance: by default the eigenvector of the
    eigenvalue of largest modulus is returned. The matrix
    is never formed for large ``d``: Lanczos (:func:`top_eigenpair`) runs on the product of
    :func:`lecnotes.hermite.he_partial_trace`, two products with ``X``, O(nd) time and memory
    per product and no :math:`d^k` array. ``k = 2`` is the second-moment matrix of chapter 4
    minus :math:`\bar T I`.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    k : {2, 4}
        Even Hermite degree (the generative exponent of the link, for the best rate).
    T : None, str, callable or PreprocessingFamily
        Label preprocessing; ``None`` (default) centres the labels,
        :math:`T(y)=y-\bar y` (centring removes the variance of :math:`\mathbb E[T]` times a
        mean-zero tensor and leaves :math:`\lambda_k(T)` unchanged).
    which : {"magnitude", "top", "bottom"}
        Eigenvalue of largest modulus, largest, or smallest.
    method : {"auto", "lanczos", "dense"}
        ``"auto"`` is dense for ``d <= DENSE_MAX_D``.
    tol : float
        Lanczos tolerance.
    rng : Generator, int or None
        Starting vector of Lanczos (default seed 0).
    return_info : bool
        Also return the :class:`EigenInfo` of the chosen end of the spectrum.

    Returns
    -------
    w_hat : ndarray (d,), unit norm
    value : float, the chosen eigenvalue of :math:`M_k` (signed)
    info : EigenInfo, if ``return_info``
    """
    X, y = V.data_pair(X, y)
    k = _check_even_k(k)
    if which not in ("magnitude", "top", "bottom"):
        raise ValueError(f"which must be 'magnitude', 'top' or 'bottom', got {which!r}")
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    n, d = X.shape
    if d < 2:
        raise ValueError("the partial-trace estimator needs d >= 2")
    t = _tensor_weights(y, T, n / d)
    if method == "auto":
        method = "dense" if d <= DENSE_MAX_D else "lanczos"
    dense_cache = {}

    def dense_matrix():
        if "M" not in dense_cache:
            dense_cache["M"] = _partial_trace_dense(X, t, k)
        return dense_cache["M"]

    if method == "dense":
        w, Vec = sla.eigh(dense_matrix())
        j = {"top": d - 1, "bottom": 0}.get(which, d - 1 if abs(w[-1]) >= abs(w[0]) else 0)
        info = EigenInfo(method="dense", matvecs=0, residual=0.0, attempts=["dense"])
        out = (_canonical_sign(Vec[:, j]), float(w[j]))
        return out + (info,) if return_info else out

    results = []
    for sign in ([1.0] if which == "top" else [-1.0] if which == "bottom" else [1.0, -1.0]):
        val, vec, info = top_eigenpair(
            lambda v, s=sign: s * he_partial_trace(X, t, v, k), d,
            dense_matrix=lambda s=sign: s * dense_matrix(), method="lanczos", tol=tol, rng=rng,
        )
        results.append((sign * val, vec, info))
    val, vec, info = max(results, key=lambda r: abs(r[0]))
    return (vec, val, info) if return_info else (vec, val)


def vector_contraction_estimator(X, y, T=None):
    r"""The odd-degree (k = 3) partial trace down to a vector (chapter 5, eq. (vector trace)).

    :math:`v=\frac1n\sum_iT(y_i)(\|x_i\|^2-d-2)\,x_i`
    (:func:`lecnotes.hermite.he3_vector_contraction`), with mean :math:`\lambda_3(T)w_\star`; its
    noise has squared norm about :math:`2d^2\,\mathbb E[T^2]/n`, so it needs :math:`n` of
    order :math:`d^2`. O(nd).

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing as in :func:`partial_trace_estimator` (default: centred labels)

    Returns
    -------
    w_hat : ndarray (d,), unit norm (sign: largest entry positive)
    norm : float, the norm of ``v``
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    v = he3_vector_contraction(X, _tensor_weights(y, T, n / d))
    norm = float(np.linalg.norm(v))
    if norm == 0:
        raise ValueError("the contraction vanishes (constant preprocessed labels?)")
    return _canonical_sign(v / norm), norm


def unfolding_estimator(X, y, T=None, *, diagonal: bool = False):
    r"""Degree-3 tensor unfolding: top left singular vector of the unfolding (chapter 5).

    The empirical tensor :math:`\hat{\mathcal T}=\frac1n\sum_iT(y_i)\mathrm{He}_3(x_i)`,
    unfolded into a :math:`d\times d^2` matrix, has mean :math:`\lambda_3w_\star(w_\star\otimes
    w_\star)^\top`; its top left singular vector is the top eigenvector of the Gram matrix
    :math:`\hat{\mathcal T}_{(1)}\hat{\mathcal T}_{(1)}^\top`, computed without the terms
    ``i = j`` (:func:`lecnotes.hermite.he3_unfolding_gram`; they add a bias of norm of order
    :math:`d^2/n`). This is the spectral method of tensor PCA (Montanari-Richard; Hopkins et al.):
    it needs :math:`n` of order :math:`d^{3/2}`, against :math:`d^2` for the vector
    contraction. O(n^2 d) time; dense eigensolver (``d <= DENSE_FALLBACK_MAX_D``).

    Parameters
    ----------
    X, y : arrays (n, d), (n,)
    T : preprocessing as in :func:`partial_trace_estimator` (default: centred labels)
    diagonal : bool
        Keep the terms ``i = j`` (for comparison).

    Returns
    -------
    w_hat : ndarray (d,), unit norm
    value : float, the top eigenvalue of the Gram matrix
    """
    X, y = V.data_pair(X, y)
    n, d = X.shape
    if d > DENSE_FALLBACK_MAX_D:
        raise ValueError(f"unfolding_estimator is dense: d = {d} > {DENSE_FALLBACK_MAX_D}")
    U = he3_unfolding_gram(X, _tensor_weights(y, T, n / d), diagonal=diagonal)
    w, Vec = sla.eigh(U, subset_by_index=[d - 1, d - 1])
    return _canonical_sign(Vec[:, 0]), float(w[0])


def simulate_partial_trace(alphas, d, seeds, link="gen4", T=None, k: int = 4, rng=0) -> dict:
    r"""Overlaps of the partial-trace and second-moment estimators over seeds and n/d^2 (chapter 5).

    For each seed one data set with :math:`n_{\max}=\max\alpha\cdot d^2` samples is drawn
    (:math:`w_\star=e_1`) and the estimators at smaller :math:`\alpha=n/d^2` use its first
    :math:`n` rows (nested samples). The matrices are accumulated block by block, so the
    sweep costs about two products of size :math:`n_{\max}d^2` (four when ``T`` is ``None``:
    the sample mean of the labels changes with :math:`n`). At every :math:`n` the results are
    those of :func:`partial_trace_estimator` (``which="magnitude"``) and of the second-moment
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
    dict with arrays of shape ``(seeds, len(alphas))``: ``rho2`` (partial trace), ``value``
    (its chosen eigenvalue), ``rho2_second`` (second moment), for ``k = 4`` also
    ``rho2_raw`` (the same contraction of the *monomial* tensor,
    :math:`\frac1n\sum_iT_i\|x_i\|^2x_ix_i^\top`, chapter 5, exercise), and ``n`` (the
    sample sizes).
    """
    alphas = V.finite_array(alphas, "alphas", ndim=1)
    if alphas.size == 0 or np.any(alphas <= 0) or np.any(np.diff(alphas) <= 0):
        raise ValueError("alphas must be positive and increasing")
    d = V.positive_int(d, "d", minimum=2)
    if d > 2000:
        raise ValueError(f"simulate_partial_trace is dense: d must be <= 2000, got {d}")
    seeds = V.positive_int(seeds, "seeds")
    k = _check_even_k(k)
    if _is_family(T):
        raise ValueError("simulate_partial_trace does not accept a family T_delta")
    phi = get_link(link)
    rng = V.generator(rng)
    ns = np.maximum(2, np.round(alphas * d * d).astype(int))
    keys = ("rho2", "value", "rho2_second") + (("rho2_raw",) if k == 4 else ())
    out = {key: np.empty((seeds, ns.size)) for key in keys}
    out["n"] = ns
    eye = np.eye(d)

    def extreme(A):
        w, Vec = sla.eigh(0.5 * (A + A.T))
        j = d - 1 if abs(w[-1]) >= abs(w[0]) else 0
        return w[j], Vec[:, j]

    for s in range(seeds):
        X = rng.standard_normal((ns[-1], d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        sq = np.einsum("ij,ij->i", X, X) - d
        hi = (sq - 4.0) if k == 4 else np.ones_like(sq)  # weight of x x^T
        lo = (sq - 2.0) if k == 4 else np.ones_like(sq)  # weight of -I
        if T is None:  # M(y - ybar) = M(y) - ybar M(1): accumulate both
            cols = [y * hi, hi, y, np.ones_like(y)]
        else:
            t = _weights(y, T, None)
            cols = [t * hi, t]
        acc = [np.zeros((d, d)) for _ in cols]
        c_acc = np.zeros(2)  # sums of y * lo and lo (or t * lo)
        prev = 0
        for j, n in enumerate(ns):
            B = X[prev:n]
            for a, c in zip(acc, cols, strict=True):
                a += B.T @ (c[prev:n, None] * B)
            if T is None:
                c_acc += [np.sum(y[prev:n] * lo[prev:n]), np.sum(lo[prev:n])]
            else:
                c_acc[0] += np.sum(t[prev:n] * lo[prev:n])
            prev = n
            if T is None:
                ybar = float(np.mean(y[:n]))
                M = (acc[0] - ybar * acc[1]) / n - (c_acc[0] - ybar * c_acc[1]) / n * eye
                D = (acc[2] - ybar * acc[3]) / n
            else:
                M = acc[0] / n - c_acc[0] / n * eye
                D = acc[1] / n
            val, vec = extreme(M)
            out["value"][s, j] = val
            out["rho2"][s, j] = vec[0] ** 2
            out["rho2_second"][s, j] = extreme(D)[1][0] ** 2
            if k == 4:  # (1/n) sum T ||x||^2 x x^T = M + (d + 4) D + c I: monomials
                out["rho2_raw"][s, j] = extreme(M + (d + 4.0) * D)[1][0] ** 2
    return out


def simulate_overlaps(estimator, ns, d, seeds, link, rng=0) -> np.ndarray:
    r"""Squared overlaps of any estimator over seeds and nested sample sizes (chapter 5).

    For each seed one data set of :math:`\max n` samples is drawn with :math:`w_\star=e_1`
    (rotation invariance) and ``estimator(X[:n], y[:n])`` is evaluated for every ``n``.

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
        X = rng.standard_normal((int(ns[-1]), d))
        y = np.asarray(phi(X[:, 0]), dtype=float)
        for j, n in enumerate(ns):
            w = estimator(X[:n], y[:n])
            w = np.asarray(w[0] if isinstance(w, tuple) else w, dtype=float)
            out[s, j] = w[0] ** 2 / float(w @ w)
    return out



# ---------------------------------------------------------------------------------------
# Reading sample complexities off simulations (chapter 5)
# ---------------------------------------------------------------------------------------
def crossing_size(ns, rho2, level: float = 0.5) -> float:
    r"""Sample size at which the mean overlap curve first reaches ``level`` (chapter 5).

    Linear interpolation of the mean over seeds (first axis of ``rho2``) against
    :math:`\log n`, between the last point below ``level`` and the first point at or above
    it. ``nan`` when the curve starts above ``level`` or never reaches it.

    Parameters
    ----------
    ns : array_like (m,), increasing sample sizes
    rho2 : array_like (seeds, m) or (m,), squared overlaps
    level : float in (0, 1)

    Returns
    -------
    float
    """
    ns = V.finite_array(ns, "ns", ndim=1)
    r = V.finite_array(rho2, "rho2")
    if r.ndim == 2:
        r = r.mean(axis=0)
    if r.shape != ns.shape or ns.size < 2 or np.any(ns <= 0) or np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be positive and increasing, with one value per column of rho2")
    level = V.positive_float(level, "level")
    above = np.nonzero(r >= level)[0]
    if above.size == 0 or above[0] == 0:
        return math.nan
    j = int(above[0])
    la, lb = math.log(ns[j - 1]), math.log(ns[j])
    return math.exp(la + (level - r[j - 1]) * (lb - la) / (r[j] - r[j - 1]))


def scaling_exponent(runs: dict, level: float = 0.5, n_boot: int = 200, rng=0):
    r"""Exponent :math:`\kappa` of :math:`n_{\rm level}(d)\propto d^\kappa`, with a bootstrap error.

    Chapter 5: for each dimension the sample size at which the mean overlap reaches
    ``level`` (:func:`crossing_size`); :math:`\kappa` is the least-squares slope of
    :math:`\log n_{\rm level}` against :math:`\log d`. Its standard error is the standard
    deviation of the slope over ``n_boot`` resamplings of the seeds (with replacement,
    independently for each dimension); resamplings whose curve does not cross are dropped.

    Parameters
    ----------
    runs : dict
        ``{d: (ns, rho2)}`` with ``rho2`` of shape ``(seeds, len(ns))``; at least two ``d``.
    level : float
    n_boot : int
    rng : Generator, int or None

    Returns
    -------
    kappa : float
    se : float
    crossings : dict ``{d: n_level(d)}``
    """
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    n_boot = V.positive_int(n_boot, "n_boot", minimum=2)
    rng = V.generator(rng)
    dims = np.array(sorted(runs), dtype=float)
    data = {d: (np.asarray(runs[d][0], float), np.atleast_2d(np.asarray(runs[d][1], float)))
            for d in sorted(runs)}

    def slope(cross):
        y = np.log([cross[d] for d in sorted(runs)])
        if not np.all(np.isfinite(y)):
            return math.nan
        return float(np.polyfit(np.log(dims), y, 1)[0])

    crossings = {d: crossing_size(ns, r, level) for d, (ns, r) in data.items()}
    kappa = slope(crossings)
    boots = []
    for _ in range(n_boot):
        cross = {}
        for d, (ns, r) in data.items():
            idx = rng.integers(0, r.shape[0], r.shape[0])
            cross[d] = crossing_size(ns, r[idx], level)
        boots.append(slope(cross))
    boots = np.asarray(boots)
    boots = boots[np.isfinite(boots)]
    se = float(np.std(boots, ddof=1)) if boots.size >= 2 else math.nan
    return kappa, se, crossings


def collapse_chi2(runs: dict, scale, window=(0.2, 1.0), rtol: float = 0.02):
    r"""Do overlap curves of several dimensions agree at equal values of a scaling variable?

    Chapter 5. Points of different dimensions whose scaling variable ``scale(d, n)``
    (e.g. :math:`n/d^2`) agrees to relative tolerance ``rtol`` are compared; for each such
    group with at least two dimensions and a pooled mean overlap inside ``window``,
    :math:`Q_g=\sum_d(m_d-\bar m)^2/s_d^2` (:math:`m_d` the mean over seeds, :math:`s_d` its
    standard error, :math:`\bar m` the inverse-variance weighted mean). If the curves agree
    up to seed noise, :math:`Q=\sum_gQ_g` is approximately :math:`\chi^2` with
    :math:`\sum_g(|g|-1)` degrees of freedom.

    Parameters
    ----------
    runs : dict ``{d: (ns, rho2)}`` as in :func:`scaling_exponent`
    scale : callable ``(d, n) -> x``
    window : (float, float)
        Groups are used when their pooled mean overlap lies in this interval.
    rtol : float

    Returns
    -------
    Q : float
    dof : int
    pvalue : float, :math:`P(\chi^2_{\rm dof}\ge Q)`
    """
    from scipy.stats import chi2

    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {d: (ns, rho2)} with at least two dimensions")
    if not callable(scale):
        raise ValueError("scale must be a callable (d, n) -> x")
    rtol = V.positive_float(rtol, "rtol")
    pts = []  # (x, d, mean, se)
    for d in sorted(runs):
        ns, r = np.asarray(runs[d][0], float), np.atleast_2d(np.asarray(runs[d][1], float))
        if r.shape[0] < 2:
            raise ValueError("each run needs at least two seeds (for the standard errors)")
        m, se = r.mean(axis=0), r.std(axis=0, ddof=1) / math.sqrt(r.shape[0])
        pts += [(float(scale(d, n)), d, m[j], se[j]) for j, n in enumerate(ns)]
    pts.sort()
    groups, cur = [], [pts[0]]
    for p in pts[1:]:
        if p[0] <= cur[0][0] * (1 + rtol):
            cur.append(p)
        else:
            groups.append(cur)
            cur = [p]
    groups.append(cur)
    Q, dof = 0.0, 0
    for g in groups:
        if len({p[1] for p in g}) < 2:
            continue
        m = np.array([p[2] for p in g])
        se = np.maximum(np.array([p[3] for p in g]), 1e-12)
        if not window[0] <= m.mean() <= window[1]:
            continue
        w = 1 / se**2
        Q += float(np.sum(w * (m - np.sum(w * m) / np.sum(w)) ** 2))
        dof += len(g) - 1
    if dof == 0:
        raise ValueError("no group of points of different dimensions inside the window")
    return Q, dof, float(chi2.sf(Q, dof))
