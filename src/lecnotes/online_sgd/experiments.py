r"""Experiments of chapter 8: online spherical SGD of one neuron, many seeds stepped at once.

Every run is definition {prf:ref}`def-ch8-spherical-sgd`: a neuron :math:`w` on the sphere,
the target :math:`y = h_k(\langle w_\star, x\rangle)`, the student :math:`h_k(\langle w,
x\rangle)`, the correlation loss, fresh Gaussian samples at each step (or each sample seen
twice, {prf:ref}`def-ch8-reuse`). By rotation invariance :math:`w_\star = e_1`; the overlap is
the first coordinate of :math:`w`. The seeds are a leading axis: one step of all runs is two
batched matrix-vector products (matrix-free: no :math:`d\times d` object). The data of a sweep
at size ``d`` with ``S`` seeds come from the stream ``stream(rng, d, S, key)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.online_sgd.theory import check_k

__all__ = ["link", "dlink", "student_pair", "sgd_step", "init_sphere", "EscapeResult",
           "escape_runs", "overlap_chain",
           "overlap_after", "reuse_sweep", "smoothed_dlink", "smoothed_escape"]

_SQ2, _SQ6 = np.sqrt(2.0), np.sqrt(6.0)


def _link(k, z):
    if k == 1:
        return z
    if k == 2:
        return (z * z - 1) / _SQ2
    return (z * z * z - 3 * z) / _SQ6  # z * z * z: numpy's z**3 calls pow, 40x slower


def _dlink(k, z):
    if k == 1:
        return np.ones_like(z)
    if k == 2:
        return _SQ2 * z
    return (3 * z * z - 3) / _SQ6


def link(k: int, z):
    r"""The normalised Hermite link :math:`h_k` (k = 1, 2, 3) of
    {prf:ref}`def-ch8-spherical-sgd`.

    Parameters
    ----------
    k : int
        1, 2 or 3.
    z : array_like
        Finite pre-activations.

    Returns
    -------
    ndarray
    """
    return _link(check_k(k), V.finite_array(z, "z"))


def dlink(k: int, z):
    r"""The derivative :math:`h_k'` of :func:`link` ({prf:ref}`def-ch8-spherical-sgd`).

    Parameters
    ----------
    k : int
        1, 2 or 3.
    z : array_like
        Finite pre-activations.

    Returns
    -------
    ndarray
    """
    return _dlink(check_k(k), V.finite_array(z, "z"))


def student_pair(k: int, student: str = "hermite"):
    r"""The student activation and its derivative: :math:`h_k` (``"hermite"``) or
    :math:`\tanh` (``"tanh"``, the bounded student of the reuse experiment,
    {prf:ref}`def-ch8-reuse`).

    Parameters
    ----------
    k : int
        Degree of the Hermite student (ignored for ``"tanh"``).
    student : {"hermite", "tanh"}

    Returns
    -------
    tuple of two callables
    """
    k = check_k(k)
    if student == "hermite":
        return (lambda z: _link(k, np.asarray(z, dtype=float))), \
            (lambda z: _dlink(k, np.asarray(z, dtype=float)))
    if student == "tanh":
        return np.tanh, (lambda z: 1.0 - np.tanh(z) ** 2)
    raise ValueError(f"student must be 'hermite' or 'tanh', got {student!r}")


def sgd_step(W, X, y, eta, k: int, loss: str = "correlation", student: str = "hermite"):
    r"""One spherical SGD step {eq}`eq-ch8-step` for every seed at once.

    Parameters
    ----------
    W : ndarray, shape (S, d)
        Unit neurons, one per seed.
    X : ndarray, shape (S, n_b, d)
        A batch of inputs per seed.
    y : ndarray, shape (S, n_b)
        Labels.
    eta : float or ndarray of shape (S,)
        Step size(s).
    k : int
        Degree of the student activation :math:`h_k`.
    loss : {"correlation", "square"}
        Correlation loss :math:`-y\sigma(z)` or square loss :math:`(y-\sigma(z))^2/2`.
    student : {"hermite", "tanh"}
        The activation :math:`\sigma`, see :func:`student_pair`.

    Returns
    -------
    ndarray, shape (S, d)
        The new unit neurons.
    """
    W = np.asarray(W, dtype=float)
    X = np.asarray(X, dtype=float)
    if W.ndim != 2 or X.ndim != 3 or X.shape[0] != W.shape[0] or X.shape[2] != W.shape[1]:
        raise ValueError(f"need W (S, d) and X (S, n_b, d); got {W.shape} and {X.shape}")
    if np.shape(y) != X.shape[:2]:
        raise ValueError(f"y must have shape {X.shape[:2]}, got {np.shape(y)}")
    if loss not in ("correlation", "square"):
        raise ValueError(f"loss must be 'correlation' or 'square', got {loss!r}")
    if np.ndim(eta):
        if np.shape(eta) != (W.shape[0],):
            raise ValueError(f"eta must be a number or one per seed, shape ({W.shape[0]},)")
        V.finite_array(eta, "eta")
    else:
        V.positive_float(eta, "eta")
    sig, dsig = student_pair(k, student)
    if X.shape[1] == 1:                     # one sample per step: the fast path
        return _step_one(W, X[:, 0, :], np.asarray(y, dtype=float)[:, 0], eta, sig, dsig, loss)
    Z = np.matmul(X, W[:, :, None])[:, :, 0]
    if loss == "correlation":
        r = y * dsig(Z)
    elif loss == "square":
        r = (y - sig(Z)) * dsig(Z)
    else:
        raise ValueError(f"loss must be 'correlation' or 'square', got {loss!r}")
    G = np.matmul(r[:, None, :], X)[:, 0, :] / X.shape[1]   # minus the Euclidean gradient
    G -= np.sum(G * W, axis=1, keepdims=True) * W             # spherical (tangent) part
    eta = np.asarray(eta, dtype=float).reshape(-1, 1) if np.ndim(eta) else float(eta)
    W_new = W + eta * G
    return W_new / np.linalg.norm(W_new, axis=1, keepdims=True)


def _step_one(W, x, y, eta, sig, dsig, loss):
    z = np.einsum("sd,sd->s", x, W)
    r = y * dsig(z) if loss == "correlation" else (y - sig(z)) * dsig(z)
    if loss not in ("correlation", "square"):
        raise ValueError(f"loss must be 'correlation' or 'square', got {loss!r}")
    # tangent part of r x: r (x - z w); its squared norm is r^2 (|x|^2 - z^2)
    eta = np.asarray(eta, dtype=float) if np.ndim(eta) else float(eta)
    a = eta * r
    W_new = W * (1 - a * z)[:, None] + a[:, None] * x
    return W_new / np.sqrt(1 + a * a * (np.einsum("sd,sd->s", x, x) - z * z))[:, None]


def init_sphere(n_seeds: int, d: int, rng=None):
    """Uniform random unit vectors, one row per seed.

    Parameters
    ----------
    n_seeds, d : int
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (n_seeds, d)
    """
    g = V.generator(rng).standard_normal((V.positive_int(n_seeds, "n_seeds"),
                                          V.positive_int(d, "d", minimum=2)))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


class EscapeResult(NamedTuple):
    """Outcome of :func:`escape_runs` (seeds on axis 0)."""

    steps: np.ndarray       # (S,) first step with |m| >= level (inf if never)
    samples: np.ndarray     # (S,) samples used by then: steps * batch (fresh samples)
    times: np.ndarray       # (R,) recording times (steps)
    overlaps: np.ndarray    # (S, R) signed overlaps m_t at those times
    final: np.ndarray       # (S,) signed overlap at the end of the run


def escape_runs(k: int, d: int, n_seeds: int, eta, *, batch: int = 1, max_steps: int,
                level: float = 0.5, record_every: int = 0, reuse: int = 1,
                loss: str = "correlation", run_on: bool = False, student: str = "hermite",
                rng=None) -> EscapeResult:
    r"""Run {prf:ref}`def-ch8-spherical-sgd` for ``n_seeds`` independent seeds at once until
    each overlap reaches ``level`` ({prf:ref}`thm-ch8-sample-complexity`).

    Parameters
    ----------
    k : int
        Information exponent of the target :math:`h_k` (and degree of the student).
    d : int
        Dimension.
    n_seeds : int
        Independent runs, stepped together.
    eta : float
        Step size.
    batch : int
        Fresh samples per step :math:`n_b`.
    max_steps : int
        Steps at most.
    level : float
        Overlap :math:`|m|` that counts as escaped.
    record_every : int
        Record the overlaps every so many steps (0: never).
    reuse : int
        Gradient steps taken on each batch (2: each sample seen twice,
        {prf:ref}`def-ch8-reuse`); ``steps`` counts fresh batches.
    loss : {"correlation", "square"}
        See :func:`sgd_step`.
    run_on : bool
        Keep stepping after every seed has escaped (for trajectories).
    student : {"hermite", "tanh"}
        The student activation (:func:`student_pair`); the target is :math:`h_k` either way.
    rng : Generator, int or None
        Root of the streams (SPEC 7).

    Returns
    -------
    EscapeResult
    """
    k = V.positive_int(k, "k")
    d = V.positive_int(d, "d", minimum=2)
    S = V.positive_int(n_seeds, "n_seeds")
    batch = V.positive_int(batch, "batch")
    max_steps = V.positive_int(max_steps, "max_steps")
    reuse = V.positive_int(reuse, "reuse")
    eta = V.positive_float(eta, "eta")
    level = V.nonneg_float(level, "level")
    record_every = V.positive_int(record_every, "record_every", minimum=0)
    if loss not in ("correlation", "square"):
        raise ValueError(f"loss must be 'correlation' or 'square', got {loss!r}")
    student_pair(k, student)                # validates k and the name
    W = init_sphere(S, d, V.stream(rng, d, S, 0))
    data = V.stream(rng, d, S, 1)
    steps = np.full(S, np.inf)
    times, rec = [], []
    chunk = max(1, min(256, 2**16 // (S * batch * d) or 1))
    for t in range(max_steps):
        if record_every and t % record_every == 0:
            times.append(t)
            rec.append(W[:, 0].copy())
        if t % chunk == 0:
            block = data.standard_normal((chunk, S, batch, d))
            labels = _link(k, block[..., 0])
        X, y = block[t % chunk], labels[t % chunk]
        for _ in range(reuse):
            W = sgd_step(W, X, y, eta, k, loss, student)
        hit = (np.abs(W[:, 0]) >= level) & ~np.isfinite(steps)
        steps[hit] = t + 1
        if not run_on and np.all(np.isfinite(steps)):
            break
    overlaps = np.array(rec).T if rec else np.zeros((S, 0))
    return EscapeResult(steps, steps * batch, np.array(times), overlaps, W[:, 0].copy())


def overlap_after(k: int, d: int, n_seeds: int, eta: float, n_samples: int, *,
                  reuse: int = 1, loss: str = "correlation", student: str = "hermite",
                  rng=None) -> np.ndarray:
    r"""The overlaps :math:`|m|` after ``n_samples`` fresh samples (batch one), each used for
    ``reuse`` consecutive steps ({prf:ref}`def-ch8-reuse`).

    Parameters
    ----------
    k, d, n_seeds, eta
        As in :func:`escape_runs`.
    n_samples : int
        Fresh samples per run.
    reuse : int
        Steps per sample.
    loss : {"correlation", "square"}
    student : {"hermite", "tanh"}
    rng : Generator, int or None

    Returns
    -------
    ndarray, shape (n_seeds,)
    """
    n_samples = V.positive_int(n_samples, "n_samples")
    res = escape_runs(k, d, n_seeds, eta, max_steps=n_samples, level=2.0, reuse=reuse,
                      loss=loss, run_on=True, student=student, rng=rng)
    return np.abs(res.final)


def reuse_sweep(dims, n_seeds: int, c: float, tau_max: float, n_records: int = 16, *,
                rng=None) -> dict:
    r"""One pass against two visits per sample ({prf:ref}`def-ch8-reuse`) on the
    :math:`\He_3` target with the tanh student and :math:`\eta = c/d`, on the same streams.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    n_seeds : int
        Seeds per dimension (paired between the two protocols).
    c : float
        :math:`\eta d`.
    tau_max : float
        Fresh samples per run, in units of :math:`d`.
    n_records : int
        Recording times per run (evenly spaced in samples).
    rng : Generator, int or None

    Returns
    -------
    dict
        ``tau`` (recording times in samples / d, shape (R,)) and, for ``"one pass"`` and
        ``"reuse"``, signed overlaps of shape (n_dims, n_seeds, R) at those times; the
        last time is the end of the run.
    """
    c = V.positive_float(c, "c")
    tau_max = V.positive_float(tau_max, "tau_max")
    n_records = V.positive_int(n_records, "n_records")
    n_seeds = V.positive_int(n_seeds, "n_seeds")
    dims = list(np.atleast_1d(np.asarray(dims)).tolist()) if np.ndim(dims) else [dims]
    if not dims:
        raise ValueError("dims must be a non-empty sequence of integers >= 2")
    out = {"tau": np.arange(n_records + 1) * tau_max / n_records, "one pass": [], "reuse": []}
    for d in dims:
        d = V.positive_int(d, "d", minimum=2)
        n = int(round(tau_max * d))
        every = max(1, n // n_records)
        for name, reps in (("one pass", 1), ("reuse", 2)):
            r = escape_runs(3, d, n_seeds, c / d, max_steps=n, level=2.0, reuse=reps,
                            record_every=every, run_on=True, student="tanh", rng=rng)
            m = np.concatenate([r.overlaps[:, :n_records], r.final[:, None]], axis=1)
            out[name].append(m)
    for name in ("one pass", "reuse"):
        out[name] = np.array(out[name])
    return out


def smoothed_dlink(a, xx, d: int, lam: float):
    r"""Derivative in :math:`a = \langle w, x\rangle` of the smoothed activation
    :math:`\E_z[h_3(\langle u, x\rangle)]`, :math:`u = (w+\lambda z)/\sqrt{1+\lambda^2}`,
    :math:`z` uniform on the unit sphere orthogonal to :math:`w`
    ({eq}`eq-ch8-smoothed-link`, {prf:ref}`thm-ch8-smoothing`).

    Parameters
    ----------
    a : array_like
        Pre-activations :math:`\langle w, x\rangle`.
    xx : array_like
        Squared norms :math:`\lVert x\rVert^2` (broadcast against ``a``).
    d : int
        Dimension.
    lam : float
        Smoothing radius :math:`\lambda\ge0` (0: :math:`h_3'`).

    Returns
    -------
    ndarray
    """
    d = V.positive_int(d, "d", minimum=3)
    lam = V.nonneg_float(lam, "lam")
    a = V.finite_array(a, "a")
    xx = V.finite_array(xx, "xx")
    if np.any(xx < 0):
        raise ValueError("xx (squared norms) must be >= 0")
    return _smoothed(a, xx, d, lam)


def _smoothed(a, xx, d, lam):
    al = 1.0 / np.sqrt(1.0 + lam * lam)
    b = lam * lam / (d - 1)
    return (3 / _SQ6) * (al**3 * (1 - 3 * b) * a * a + al**3 * b * np.asarray(xx) - al)


def smoothed_escape(d: int, n_seeds: int, eta: float, lam: float, *, max_steps: int,
                    level: float = 0.5, rng=None) -> np.ndarray:
    r"""Online SGD on the per-sample smoothed correlation loss ({prf:ref}`thm-ch8-smoothing`)
    for the :math:`h_3` target, all seeds at once: the step {eq}`eq-ch8-step` with
    :math:`\sigma'` replaced by :func:`smoothed_dlink`.

    Parameters
    ----------
    d, n_seeds : int
    eta : float
        Step size.
    lam : float
        Smoothing radius.
    max_steps : int
    level : float
        Overlap :math:`|m|` that counts as escaped.
    rng : Generator, int or None
        Root of the streams, as in :func:`escape_runs`.

    Returns
    -------
    ndarray, shape (n_seeds,)
        Steps (= samples) to escape, ``inf`` if not within ``max_steps``.
    """
    d = V.positive_int(d, "d", minimum=3)
    S = V.positive_int(n_seeds, "n_seeds")
    eta = V.positive_float(eta, "eta")
    max_steps = V.positive_int(max_steps, "max_steps")
    lam = V.nonneg_float(lam, "lam")
    level = V.nonneg_float(level, "level")
    W = init_sphere(S, d, V.stream(rng, d, S, 0))
    data = V.stream(rng, d, S, 2)
    steps = np.full(S, np.inf)
    chunk = max(1, min(256, 2**16 // (S * d) or 1))
    for t in range(max_steps):
        if t % chunk == 0:
            block = data.standard_normal((chunk, S, d))
        x = block[t % chunk]
        a = np.einsum("sd,sd->s", x, W)
        xx = np.einsum("sd,sd->s", x, x)
        r = eta * _link(3, x[:, 0]) * _smoothed(a, xx, d, lam)
        W = W * (1 - r * a)[:, None] + r[:, None] * x
        W /= np.sqrt(1 + r * r * (xx - a * a))[:, None]
        hit = (np.abs(W[:, 0]) >= level) & ~np.isfinite(steps)
        steps[hit] = t + 1
        if np.all(np.isfinite(steps)):
            break
    return steps


def overlap_chain(k: int, d: int, n_paths: int, eta: float, *, max_steps: int,
                  level: float = 0.5, stop_fraction: float = 1.0, groups: int | None = None,
                  rng=None) -> np.ndarray:
    r"""Escape steps of the overlap's exact one-dimensional chain
    ({prf:ref}`lem-ch8-overlap-chain`), ``n_paths`` paths at once, one sample per step.

    By rotation invariance the overlap :math:`m_{t+1}` of {eq}`eq-ch8-step` depends on
    :math:`w_t` only through :math:`m_t`: with :math:`z = \langle w_t, x\rangle`,
    :math:`s` the coordinate of :math:`x` along the unit tangent towards :math:`w_\star`, and
    :math:`\chi^2_{d-2}` the squared norm of the rest,

    .. math::

        m_{t+1} = \frac{m_t + \eta\,a\,s\sqrt{1-m_t^2}}
                        {\sqrt{1 + \eta^2 a^2 (s^2 + \chi^2_{d-2})}}, \qquad
        a = h_k\big(m_t z + \sqrt{1-m_t^2}\,s\big)\,h_k'(z).

    Simulating it costs :math:`O(1)` per path and step instead of :math:`O(d)`, with the same
    law of the escape time as :func:`escape_runs` (same start: :math:`w_0` uniform).

    Parameters
    ----------
    k : int
        Information exponent (1, 2 or 3).
    d : int
        Dimension (at least 3).
    n_paths : int
        Independent paths.
    eta : float
        Step size.
    max_steps : int
        Steps at most (a path still inside by then gets ``inf``).
    level : float
        Overlap :math:`|m|` that counts as escaped.
    stop_fraction : float
        Stop once this fraction of the paths has escaped (the others get ``inf``); 1 runs
        every path out. The escaped paths' draws do not depend on it.
    groups : int, optional
        Instead of ``stop_fraction``: the paths form ``groups`` consecutive blocks of equal
        size, and the chain stops once more than half of every block has escaped, when each
        block's median escape step is final (a fraction alone can leave one block with more
        than half its paths inside, and an infinite median). The escaped paths' draws do not
        depend on it either.
    rng : Generator, int or None
        Root of the streams (SPEC 7); the paths of size ``d`` use ``stream(rng, d, n_paths)``.

    Returns
    -------
    ndarray, shape (n_paths,)
        Steps to escape.
    """
    k = V.positive_int(k, "k")
    d = V.positive_int(d, "d", minimum=3)
    n = V.positive_int(n_paths, "n_paths")
    eta = V.positive_float(eta, "eta")
    max_steps = V.positive_int(max_steps, "max_steps")
    level = V.positive_float(level, "level")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    stop_fraction = V.positive_float(stop_fraction, "stop_fraction")
    if stop_fraction > 1:
        raise ValueError(f"stop_fraction must be in (0, 1], got {stop_fraction}")
    n_stop = n - int(np.ceil(stop_fraction * n - 1e-9))       # paths left when we stop
    if groups is not None:
        groups = V.positive_int(groups, "groups")
        if n % groups:
            raise ValueError(f"groups must divide n_paths = {n}, got {groups}")
        need = n // groups // 2 + 1                            # escapes fixing a median
    sig, dsig = student_pair(k, "hermite")
    gen = V.stream(rng, d, n)
    g1 = gen.standard_normal(n)
    m = g1 / np.sqrt(g1**2 + gen.chisquare(d - 1, n))          # w_0 uniform on the sphere
    steps = np.full(n, np.inf)
    alive = np.arange(n)
    for t in range(1, max_steps + 1):
        if groups is None and alive.size <= n_stop:
            break
        mm = m[alive]
        z, s = gen.standard_normal((2, alive.size))
        tangent = np.sqrt(np.clip(1 - mm * mm, 0.0, None))
        a = _link(k, mm * z + tangent * s) * dsig(z)
        rest = gen.chisquare(d - 2, alive.size)
        mm = (mm + eta * a * s * tangent) / np.sqrt(1 + eta**2 * a * a * (s * s + rest))
        m[alive] = mm
        out = np.abs(mm) >= level
        steps[alive[out]] = t
        alive = alive[~out]
        if groups is not None and out.any() and (
                np.isfinite(steps).reshape(groups, -1).sum(1).min() >= need):
            break
    return steps
