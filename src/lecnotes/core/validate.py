"""Input validation, the rng convention (SPEC 7) and the book-wide seed root.

Every public function of :mod:`lecnotes` checks its input with these helpers so that a
wrong shape, sign or type fails early with a ``ValueError`` that says what was expected.
"""

from __future__ import annotations

import numbers
import os

import numpy as np


def positive_int(value, name: str, minimum: int = 1) -> int:
    """``value`` as an ``int``, after checking it is an integer >= ``minimum``.

    Parameters
    ----------
    value : int
        The value to check (a bool is refused).
    name : str
        The argument's name, for the error message.
    minimum : int, default 1
        The smallest accepted value.

    Returns
    -------
    int
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def sizes(values, name: str, minimum: int = 1, count: int = 1) -> np.ndarray:
    """A 1-d sequence of at least ``count`` integers >= ``minimum``, as an int64 array.

    The one check behind every grid of dimensions, widths, sample sizes or batch sizes that a
    sweep takes. Entries may be Python or NumPy integers, or floats of integer value (a grid
    built with ``np.geomspace(...).round()``); a bool, a string, a scalar, a NaN or a
    fractional entry is refused.

    Parameters
    ----------
    values : sequence of int
        The sizes.
    name : str
        The argument's name, for the error message.
    minimum : int, default 1
        The smallest accepted size.
    count : int, default 1
        The smallest accepted number of sizes.

    Returns
    -------
    numpy.ndarray of int64, shape (len(values),)
    """
    what = (f"{name} must be a 1-d sequence of at least {count} integer(s) >= {minimum}, "
            f"got {values!r}")
    if isinstance(values, (str, bytes)) or not np.iterable(values):
        raise ValueError(what)
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1 or arr.size < count:
        raise ValueError(what)
    out = []
    for v in arr.tolist():
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(what)
        if not isinstance(v, numbers.Integral) and not (np.isfinite(v) and float(v).is_integer()):
            raise ValueError(what)
        if v < minimum:
            raise ValueError(what)
        out.append(int(v))
    return np.asarray(out, dtype=np.int64)


def nonneg_float(value, name: str) -> float:
    """``value`` as a finite float >= 0.

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
    """
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}") from None
    if not np.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return out


def positive_float(value, name: str) -> float:
    """``value`` as a finite float > 0.

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
    """
    out = nonneg_float(value, name)
    if out == 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return out


def finite_array(a, name: str, ndim: int | None = None) -> np.ndarray:
    """``a`` as a float array, after checking its dimension and that it holds no NaN or inf.

    Parameters
    ----------
    a : array_like
        The array to check.
    name : str
        The argument's name, for the error message.
    ndim : int, optional
        The required number of dimensions (any when None).

    Returns
    -------
    numpy.ndarray
    """
    arr = np.asarray(a, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def data_pair(X, y):
    """A design matrix ``X`` (n x d) and its labels ``y`` (n,), checked, as float arrays.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The inputs, one sample a row.
    y : array_like, shape (n,)
        The labels.

    Returns
    -------
    tuple of numpy.ndarray
        ``(X, y)``.
    """
    X = finite_array(X, "X", ndim=2)
    y = finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    return X, y


SEED_ENV = "LECNOTES_SEED"
"""Environment variable holding the book-wide seed root (default 0)."""


def seed_root() -> int:
    """The book-wide seed root: ``$LECNOTES_SEED`` as a non-negative integer, default 0.

    Every integer seed the package receives is combined with this root, so that the book
    executed under another root draws independent random numbers everywhere, while root 0
    reproduces the fixed-seed book.

    Returns
    -------
    int
    """
    raw = os.environ.get(SEED_ENV, "").strip()
    if not raw:
        return 0
    try:
        root = int(raw)
    except ValueError:
        raise ValueError(f"{SEED_ENV} must be a non-negative integer, got {raw!r}") from None
    if root < 0:
        raise ValueError(f"{SEED_ENV} must be a non-negative integer, got {raw!r}")
    return root


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def seed_sequence(rng) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` behind ``rng`` (the package's rng convention).

    ``rng`` follows SPEC 7: a ``Generator`` (its own seed sequence is used), a non-negative
    integer seed or a list of them (numpy's list entropy; combined with :func:`seed_root`),
    or ``None`` (fresh entropy from the OS).

    Parameters
    ----------
    rng : numpy.random.Generator, int, list of int or None
        The random state, as above.

    Returns
    -------
    numpy.random.SeedSequence
    """
    if isinstance(rng, np.random.Generator):
        ss = rng.bit_generator.seed_seq
        if not isinstance(ss, np.random.SeedSequence):
            raise ValueError("rng is a Generator without a SeedSequence; pass an integer seed")
        return ss
    if rng is None:
        return np.random.SeedSequence()
    if _is_int(rng):
        if rng < 0:
            raise ValueError(f"an integer seed must be non-negative, got {rng}")
        root = seed_root()
        return np.random.SeedSequence(int(rng) if root == 0 else [int(rng), root])
    if isinstance(rng, (list, tuple)) and rng and all(_is_int(k) and k >= 0 for k in rng):
        root = seed_root()  # numpy's list entropy: default_rng([a, b]) at root 0
        return np.random.SeedSequence([int(k) for k in rng] + ([root] if root else []))
    raise ValueError("rng must be a numpy Generator, a non-negative integer seed (or a list of "
                     f"them) or None, got {rng!r}")


def generator(rng) -> np.random.Generator:
    """Accept a ``Generator``, an integer seed or ``None`` and return a ``Generator``.

    A ``Generator`` is returned as it is (its state is shared with the caller); an integer seed
    is combined with the book-wide :func:`seed_root`; ``None`` draws fresh entropy.

    Parameters
    ----------
    rng : numpy.random.Generator, int, list of int or None
        The random state (SPEC 7).

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(seed_sequence(rng))


def stream(rng, *keys) -> np.random.Generator:
    """An independent ``Generator`` named by non-negative integer ``keys`` below ``rng``.

    ``stream(rng, d, s)`` is the stream of size ``d`` and seed index ``s``: it depends only on
    ``rng`` and the keys, never on which other streams were drawn, so adding a size or a seed
    to a sweep leaves the draws of the others unchanged. ``rng`` is not advanced.

    Parameters
    ----------
    rng : numpy.random.Generator, int, list of int or None
        The parent random state (SPEC 7).
    *keys : int
        Non-negative integers naming the stream.

    Returns
    -------
    numpy.random.Generator
    """
    for k in keys:
        if not _is_int(k) or k < 0:
            raise ValueError(f"stream keys must be non-negative integers, got {k!r}")
    ss = seed_sequence(rng)
    child = np.random.SeedSequence(
        ss.entropy, spawn_key=tuple(ss.spawn_key) + tuple(int(k) for k in keys),
        pool_size=ss.pool_size,
    )
    return np.random.default_rng(child)


def streams(rng, count: int) -> list[np.random.Generator]:
    """``count`` independent Generators: ``[stream(rng, 0), ..., stream(rng, count - 1)]``.

    Parameters
    ----------
    rng : numpy.random.Generator, int, list of int or None
        The parent random state (SPEC 7).
    count : int
        How many streams (0 or more).

    Returns
    -------
    list of numpy.random.Generator
    """
    count = positive_int(count, "count", minimum=0)
    return [stream(rng, i) for i in range(count)]
