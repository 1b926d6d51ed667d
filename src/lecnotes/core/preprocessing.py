r"""Label preprocessings :math:`T(y)` of spectral estimators (chapter 4).

Named preprocessings for real phase retrieval :math:`y=\langle w_\star,x\rangle^2`
(:data:`PREPROCESSINGS`): raw labels, trimmed, trimmed and centred, the threshold-optimal
:math:`T_\delta(y)=(y-1)/(y+\sqrt{2\delta}-1)` (Mondelli & Montanari, real case) and the
overlap-optimal :math:`T(y)=1-1/y` (Luo, Alghamdi & Lu); their resolution from names, callables
or :math:`\delta`-dependent families, and the weights :math:`T(y_i)` they give.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import get_link

__all__ = [
    "G_FAR",
    "LabelLaw",
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
    "is_family",
    "resolve_family",
    "label_weights",
    "checked_values",
    "G_CUTOFF",
    "y_to_g_breakpoints",
]


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
    ``delta >= delta_min``. :func:`lecnotes.spectral.spectral_estimator` evaluates it at ``delta
    = n/d``.
    """

    name: str
    factory: Callable[[float], Preprocessing]
    latex: str = ""
    delta_min: float = 0.0

    def at(self, delta) -> Preprocessing:
        """The member :math:`T_\\delta` used at the sample ratio ``delta``.

        Parameters
        ----------
        delta : float
            :math:`n/d \\ge` ``delta_min``.

        Returns
        -------
        Preprocessing
        """
        delta = V.positive_float(delta, "delta")
        if not delta >= self.delta_min:
            raise ValueError(f"{self.name} is defined for delta >= {self.delta_min}, got {delta}")
        return self.factory(delta)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"PreprocessingFamily({self.name!r})"


def raw() -> Preprocessing:
    """The raw labels, :math:`T(y)=y` (unbounded for phase retrieval: no proportional threshold).

    See {ref}`sec-ch4-raw-labels`.

    Returns
    -------
    Preprocessing
    """
    return Preprocessing("raw", lambda y: y, r"$T(y)=y$")


def trimmed(level: float = 7.0) -> Preprocessing:
    r"""Trimmed labels :math:`T(y)=y\,\mathbb 1\{y\le t\}` (chapter 4).

    Samples with a label above the level ``t`` are discarded. The default ``t = 7`` is close to
    the level minimising the threshold for :math:`y=G^2` ({ref}`sec-ch4-preprocessings`,
    exercise {ref}`ex-ch4-trimming`).

    Parameters
    ----------
    level : float
        The level ``t > 0``.

    Returns
    -------
    Preprocessing
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
    one ({prf:ref}`lem-mean-matrix`, {ref}`sec-ch4-preprocessings`). The mean is computed by
    quadrature for ``link`` (default: phase retrieval).

    Parameters
    ----------
    level : float
        The level ``t > 0``.
    link : str or callable

    Returns
    -------
    Preprocessing
    """
    t = V.positive_float(level, "level")
    phi = get_link(link)

    bp = tuple(y_to_g_breakpoints(phi, (t,))) + tuple(getattr(phi, "breakpoints", ()))
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

    Chapter 4, {ref}`sec-ch4-preprocessings`:
    :math:`T_\delta(y)=\dfrac{y-1}{y+\sqrt{2\delta}-1}`, defined for
    :math:`\delta\ge1/2` (at :math:`\delta=1/2` it is :math:`1-1/y`; the form with
    :math:`\sqrt\delta` is the complex case). Used at its own
    :math:`\delta` it gives an outlier for every :math:`\delta>1/2=\delta_u`; a fixed member
    :math:`T_{\delta_0}` has threshold :math:`\sqrt{\delta_0/2}` (exercise
    {ref}`ex-ch4-fixed-member`).

    Parameters
    ----------
    delta : float or None
        ``None`` returns the family (a :class:`PreprocessingFamily`), a number the member.

    Returns
    -------
    PreprocessingFamily or Preprocessing
    """
    family = PreprocessingFamily(
        "mondelli-montanari", _mm, r"$(y-1)/(y+\sqrt{2\delta}-1)$", delta_min=0.5
    )
    return family if delta is None else family.at(delta)


def luo_alghamdi_lu() -> Preprocessing:
    r"""Overlap-optimal preprocessing :math:`T(y)=1-1/y` (Luo, Alghamdi & Lu; chapter 4).

    The same for every :math:`\delta`, threshold :math:`1/2`; bounded above by 1 but unbounded
    below, so :math:`\mathbb E[T(Y)]=-\infty` and the spectrum of :math:`D_T` has a long negative
    tail (which is why the dense path is used for it). See {ref}`sec-ch4-preprocessings` and
    exercise {ref}`ex-ch4-lal-top`.

    Returns
    -------
    Preprocessing
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
    """The named preprocessing ``name`` from :data:`PREPROCESSINGS` ({ref}`sec-ch4-preprocessings`).

    Parameters
    ----------
    name : str
    **kwargs
        Passed to its factory, e.g. ``level=5`` or ``delta=2``.

    Returns
    -------
    Preprocessing or PreprocessingFamily
    """
    if not isinstance(name, str) or name not in PREPROCESSINGS:
        raise ValueError(
            f"unknown preprocessing {name!r}; known: {', '.join(PREPROCESSINGS)}"
        )
    return PREPROCESSINGS[name](**kwargs)


def resolve_preprocessing(T, delta=None) -> Callable:
    """Turn ``T`` (None, a name, a callable or a family) into a callable of the labels.

    ``None`` means the raw labels; a family is evaluated at ``delta``.

    Parameters
    ----------
    T : None, str, callable or PreprocessingFamily
    delta : float, optional
        Needed for a family.

    Returns
    -------
    callable
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


def is_family(T) -> bool:
    r"""Whether ``T`` (a name or an object) is a :math:`\delta`-dependent family.

    Parameters
    ----------
    T : object
        A name from :data:`PREPROCESSINGS`, a preprocessing, a family or anything else.

    Returns
    -------
    bool
    """
    if isinstance(T, str) and T in PREPROCESSINGS:
        T = get_preprocessing(T)
    return isinstance(T, PreprocessingFamily)


def resolve_family(T) -> PreprocessingFamily:
    """The :class:`PreprocessingFamily` named or given by ``T``.

    Parameters
    ----------
    T : str or PreprocessingFamily

    Returns
    -------
    PreprocessingFamily
    """
    fam = get_preprocessing(T) if isinstance(T, str) else T
    if not isinstance(fam, PreprocessingFamily):
        raise ValueError(f"{T!r} is not a delta-dependent family of preprocessings")
    return fam


def checked_values(t, y, hint: str = "") -> np.ndarray:
    """``t = T(y)`` as a float array of ``y``'s shape (a scalar is broadcast), all finite.

    The one check of a preprocessing's output (chapters 3-5); ``hint`` is added to the
    message when ``t`` holds NaN or infinite values.

    Parameters
    ----------
    t : array_like
        The values :math:`T(y)`.
    y : ndarray
        The labels.
    hint : str

    Returns
    -------
    ndarray, shaped like ``y``.
    """
    t = np.asarray(t, dtype=float)
    if t.shape == ():
        t = np.full_like(y, float(t))
    if t.shape != y.shape:
        raise ValueError(f"T must be vectorised: T(y) has shape {t.shape}, y has {y.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("T(y) contains NaN or infinite values" + (f" ({hint})" if hint else ""))
    return t


def label_weights(y, T, delta) -> np.ndarray:
    """The weights :math:`T(y_i)` of :math:`D_T` ({eq}`eq-ch4-dt`), checked.

    Parameters
    ----------
    y : ndarray
        Labels.
    T : None, str, callable or PreprocessingFamily
    delta : float or None
        :math:`n/d`, for a family.

    Returns
    -------
    ndarray, shaped like ``y``, finite.
    """
    T = resolve_preprocessing(T, delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = T(y)
    return checked_values(t, y, "e.g. 1 - 1/y at y = 0")


G_CUTOFF = 14.0  # the quadrature's truncation of the line (Gaussian mass outside < 1e-44)
G_FAR = 1.0e4  # how far out in g the supremum of T(phi(g)) is looked for


def y_to_g_breakpoints(phi: Callable, y_breaks: Sequence[float]) -> list[float]:
    """Points g in [-cutoff, cutoff] with phi(g) equal to one of ``y_breaks`` (by bisection).

    The break points of :math:`T(\\varphi(g))` for the quadrature of the theory
    ({prf:ref}`thm-spectral-asymptotics`).

    Parameters
    ----------
    phi : callable
        The link.
    y_breaks : sequence of float
        Label values where :math:`T` jumps.

    Returns
    -------
    list of float
    """
    out: list[float] = []
    if len(y_breaks) == 0:
        return out
    grid = np.linspace(-G_CUTOFF, G_CUTOFF, 28001)
    vals = np.asarray(phi(grid), dtype=float)
    for yb in y_breaks:
        f = vals - yb
        exact = np.nonzero(f == 0)[0]
        out.extend(grid[exact].tolist())
        idx = np.nonzero(f[:-1] * f[1:] < 0)[0]
        for i in idx:
            a, b = grid[i], grid[i + 1]
            out.append(brentq(lambda g, yb=yb: float(phi(np.array([g]))[0]) - yb, a, b,
                              xtol=1e-15))
    return out


class LabelLaw:
    """The law of :math:`(G, T(Y))` for ``Y = link(G)``: values, supremum, break points.

    The expectations of the theory of chapter 4 ({prf:ref}`thm-spectral-asymptotics`).
    """

    def __init__(self, T: Callable, link, breakpoints: Sequence[float] = ()):
        if isinstance(link, (Preprocessing, PreprocessingFamily)):
            raise ValueError(
                f"link must be a link (a name of LINKS or a function of g), got the "
                f"preprocessing {getattr(link, 'name', link)!r}: the link comes first, then T "
                "(e.g. spectral_threshold('quadratic', T))"
            )
        self.phi = get_link(link)
        self.T = T
        bp = list(getattr(self.phi, "breakpoints", ()))
        bp += y_to_g_breakpoints(self.phi, tuple(getattr(T, "breakpoints", ())))
        bp += [float(b) for b in np.asarray(breakpoints, dtype=float).ravel()]
        self.breakpoints = tuple(sorted(set(bp)))
        # supremum of T(phi(g)) over the line, and whether it is finite
        near = np.linspace(-G_CUTOFF, G_CUTOFF, 56001)
        near = np.concatenate([near, np.asarray(self.breakpoints, float) + 1e-12,
                               np.asarray(self.breakpoints, float) - 1e-12])
        far = np.geomspace(G_CUTOFF, G_FAR, 2001)
        far = np.concatenate([far, -far])
        t_near = self.t(near, allow_inf=True)
        t_far = self.t(far, allow_inf=True)
        finite_near = t_near[np.isfinite(t_near)]
        if finite_near.size == 0:
            raise ValueError("T(y) is not finite anywhere on the support of Y")
        if np.any(np.isposinf(t_near)):
            self.sup, self.bounded = math.inf, False
        else:
            m_near = float(np.max(finite_near))
            med = float(np.median(self.t(np.linspace(-0.6745, 0.6745, 101), allow_inf=True)))
            scale = max(m_near - med, 1e-300)
            m_far = float(np.max(np.where(np.isnan(t_far), -np.inf, t_far)))
            self.bounded = not (m_far > m_near + 0.5 * scale)
            self.sup = max(m_near, m_far) if self.bounded else math.inf
        if self.bounded and not self.sup > 0:
            raise ValueError(
                f"sup T = {self.sup:.4g} <= 0: the preprocessed labels are never positive, so "
                "D_T has no positive spike to find"
            )
        self.scale = max(abs(self.sup), 1e-300) if self.bounded else 1.0

    def t(self, g, allow_inf=False):
        """:math:`T(\\varphi(g))`, checked (no NaN; no :math:`+\\infty` unless ``allow_inf``).

        Parameters
        ----------
        g : array_like
        allow_inf : bool

        Returns
        -------
        ndarray shaped like ``g``.
        """
        y = np.asarray(self.phi(g), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = np.asarray(self.T(y), dtype=float)
        if t.shape == ():
            t = np.full(y.shape, float(t))
        if t.shape != y.shape:
            raise ValueError(f"T must be vectorised: T(y) has shape {t.shape}, y has {y.shape}")
        if np.any(np.isnan(t)):
            raise ValueError("T(y) returned NaN on the support of Y")
        if not allow_inf and np.any(np.isposinf(t)):
            raise ValueError("T(y) returned +inf on the support of Y")
        return t

    def expect(self, f: Callable) -> np.ndarray:
        """E[f(T, G)] by adaptive quadrature in G with the break points of T(phi(G)).

        Uses :func:`lecnotes.core.hermite.gaussian_expectation`, the one Gaussian quadrature.

        Parameters
        ----------
        f : callable
            ``(t, g) -> array``, vectorised over the points ``g``.

        Returns
        -------
        ndarray
        """

        def integrand(g):
            return f(self._t_at_nodes(g), g)

        return gaussian_expectation(integrand, breakpoints=self.breakpoints, cutoff=G_CUTOFF)

    _NODE_CACHE = 8

    def _t_at_nodes(self, g: np.ndarray) -> np.ndarray:
        """:meth:`t` at quadrature nodes, remembered for the last few node sets.

        Every call of :meth:`expect` starts on the same panels (the unit cuts and the break
        points, then their halves), so the root finders of chapter 4, which call it a dozen
        times per solution, evaluate T at the same nodes each time: the values are taken
        from here (the same numbers; a node set is matched exactly, not by a hash alone).
        """
        cache = self.__dict__.setdefault("_t_cache", {})
        key = (g.shape, hash(g.tobytes()))
        hit = cache.get(key)
        if hit is not None and np.array_equal(hit[0], g):
            return hit[1]
        t = self.t(g)
        if len(cache) >= self._NODE_CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = (g.copy(), t)
        return t

    def moments(self, lam) -> np.ndarray:
        r"""E[S], E[S^2], E[S G^2], E[S^2 G^2] for :math:`S=T/(\lambda-T)`, for each lambda.

        Written as :math:`S = \lambda/(\lambda-T) - 1`, finite also where :math:`T=-\infty`.
        The expectations of {eq}`eq-ch4-psi-phi`. Near :math:`\lambda=\sup T` the integrands
        are scaled by
        :math:`w=\min(1,(\lambda-\sup T)/|\sup T|)` (so that they stay of order one and the
        absolute tolerance of the quadrature is a relative one), and scaled back.

        Parameters
        ----------
        lam : float or array_like
            Values of :math:`\lambda > \sup T`.

        Returns
        -------
        ndarray of shape ``lam.shape + (4,)``.
        """
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        if self.bounded:
            w = np.minimum(1.0, (lam - self.sup) / self.scale)
        else:
            w = np.ones_like(lam)

        def f(t, g):
            with np.errstate(divide="ignore", over="ignore"):
                s = lam[None, :] / (lam[None, :] - t[:, None]) - 1.0
            s = s * w[None, :]
            g2 = (g * g)[:, None]
            return np.stack([s, s * s, s * g2, s * s * g2], axis=-1)

        out = self.expect(f)
        return out / np.stack([w, w * w, w, w * w], axis=-1)
