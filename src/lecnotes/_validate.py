"""Input validation shared by every module (internal).

Every public function of :mod:`lecnotes` checks its input with these helpers so that a
wrong shape, sign or type fails early with a ``ValueError`` that says what was expected.
"""

from __future__ import annotations

import numbers

import numpy as np


def positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def nonneg_float(value, name: str) -> float:
    """Return ``value`` as a finite float >= 0."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}") from None
    if not np.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return out


def positive_float(value, name: str) -> float:
    """Return ``value`` as a finite float > 0."""
    out = nonneg_float(value, name)
    if out == 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return out


def finite_array(a, name: str, ndim: int | None = None) -> np.ndarray:
    """Return ``a`` as a float array, checking its dimension and that it holds no NaN/inf."""
    arr = np.asarray(a, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def data_pair(X, y):
    """Check a design matrix ``X`` (n x d) and labels ``y`` (n,) and return them as arrays."""
    X = finite_array(X, "X", ndim=2)
    y = finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    return X, y


def generator(rng) -> np.random.Generator:
    """Accept a ``Generator``, an integer seed or ``None`` and return a ``Generator``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, an integer seed or None, got {rng!r}")
