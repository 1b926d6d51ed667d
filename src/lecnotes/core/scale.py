"""The size knob: one environment variable through which every chapter declares its sizes.

The book's statements are about limits (d to infinity at fixed ratios). Every chapter writes
its dimensions as ``scaled(d)``, and every size tied to a dimension follows from it in the
chapter's own code (``n = alpha * d``, widths, sweep grids), so that at scale ``s`` the
whole chapter grows by ``s`` while seeds and tolerances keep their rules. ``make scale``
executes the book at ``LECNOTES_SCALE=2``; the published book is scale 1, and the claims
ledger records the scale of every execution (:func:`lecnotes.book.claims.provenance`).

A chapter may cap a size where memory or the 90 s budget demands (``cap=``); it says so in
the text, and :func:`capped` tells whether a cap was hit at the current scale.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from lecnotes.core import validate as V

__all__ = ["SCALE_ENV", "scale", "scaled", "capped"]

SCALE_ENV = "LECNOTES_SCALE"
"""Environment variable holding the size factor (a positive number, default 1)."""


def scale() -> float:
    """The size factor ``$LECNOTES_SCALE``: a finite number > 0, default 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the variable is set to anything but a positive finite number.
    """
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_ENV} must be a positive number, got {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{SCALE_ENV} must be a positive finite number, got {raw!r}")
    return value


def _one(size, factor: float, cap, multiple: int) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"a size must be a positive integer, got {size!r}")
    out = max(multiple, int(round(size * factor / multiple)) * multiple)
    if cap is not None:
        out = min(out, max(int(size), cap))
    return out


def scaled(size, *, cap: int | None = None, multiple: int = 1, factor: float | None = None):
    """A size (or a grid of sizes) at the current scale: ``round(size * scale())``.

    Parameters
    ----------
    size : int or sequence of int
        The size at scale 1 (a dimension, a width, a number of samples), or a grid of them.
    cap : int, optional
        The largest size returned (a chapter's memory or time limit); never below ``size``
        itself, so scale 1 is the chapter's own choice whatever the cap.
    multiple : int, default 1
        Round to a multiple of this (an even dimension, a block size).
    factor : float, optional
        The scale to use instead of :func:`scale` (tests, the scale run's planning).

    Returns
    -------
    int or list of int
        ``size`` grown by the scale, rounded, capped; a list for a grid.
    """
    multiple = V.positive_int(multiple, "multiple")
    if cap is not None:
        cap = V.positive_int(cap, "cap")
    factor = scale() if factor is None else V.positive_float(factor, "factor")
    if isinstance(size, (list, tuple, np.ndarray)):
        return [_one(s, factor, cap, multiple) for s in np.asarray(size).tolist()]
    return _one(size, factor, cap, multiple)


def capped(size, *, cap: int, multiple: int = 1, factor: float | None = None) -> bool:
    """Whether ``scaled(size, cap=cap)`` is held back by its cap at the current scale.

    Parameters
    ----------
    size : int
        The size at scale 1.
    cap : int
        The cap passed to :func:`scaled`.
    multiple : int, default 1
        As in :func:`scaled`.
    factor : float, optional
        As in :func:`scaled`.

    Returns
    -------
    bool
    """
    free = scaled(size, multiple=multiple, factor=factor)
    return free > scaled(size, cap=cap, multiple=multiple, factor=factor)
