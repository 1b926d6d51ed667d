"""How sharp a claim is (DESIGN.md, *Sharpness*): its resolution, its alternative's distance,
its kind, and the words the claims ledger shows for them.

Power is not yes or no. A claim's *resolution* is its tolerance relative to its reference (for
a one-sided claim, the margin between the measured value and the bound, relative to the bound);
the *distance of its alternative* is counted in tolerances (or margins); its *kind* says what
the reference is (:data:`KINDS`). :func:`lecnotes.book.claims.claim` records all three, and
fails a two-sided claim wider than :data:`WIDE` of its reference that does not say why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["KINDS", "WIDE", "Sharpness", "sharpness", "sharpness_text", "format_number",
           "format_percent"]

RELATIONS = ("approx", "<=", ">=", "between")


def format_number(x) -> str:
    """A number (or a tuple of numbers) as the claims show it: four significant digits.

    Parameters
    ----------
    x : float, tuple of float, or None

    Returns
    -------
    str
    """
    if x is None:
        return "-"
    if isinstance(x, (tuple, list)):
        return "(" + ", ".join(format_number(v) for v in x) + ")"
    x = float(x)
    if x == 0:
        return "0"
    if math.isinf(x) or math.isnan(x):
        return str(x)
    if 1e-3 <= abs(x) < 1e4:
        return f"{x:.4g}"
    return f"{x:.3e}"


KINDS = ("limit", "finite-size", "identity", "illustration")
"""What a claim's reference is: a d -> infinity value (``limit``), a prediction or comparison at
the sizes of the experiment (``finite-size``), an exact identity or closed form checked
numerically (``identity``), or a phenomenon shown, not evidence for the theorem
(``illustration``, whose statement says why)."""

WIDE = 0.25
"""A two-sided claim whose tolerance exceeds this fraction of its reference must say why it is
still worth stating (``why_wide``)."""

_EXACT = 1e-6
"""A tolerance below this fraction of the reference (or absolute, for a zero reference) marks
an exact identity when no kind is stated."""


@dataclass(frozen=True)
class Sharpness:
    """How sharp a claim is (see :func:`sharpness`).

    Attributes
    ----------
    resolution : float or None
        Two-sided claims: the tolerance (half-width) relative to ``|reference|``. One-sided
        claims: the margin between the measured value and the bound, relative to ``|bound|``
        (negative when the claim fails). ``None`` when the reference is zero.
    absolute : float
        The same quantity, not divided by the reference.
    alt_distance : float or None
        Distance of the alternative from the reference in tolerances (two-sided), or from the
        bound in units of the measured margin (one-sided); ``None`` without an alternative.
    blunt : bool
        A two-sided claim wider than :data:`WIDE` of its reference.
    """

    resolution: float | None
    absolute: float
    alt_distance: float | None
    blunt: bool


def sharpness(relation: str, measured: float, expected, tol, alternative=None) -> Sharpness:
    """Resolution and distance of the alternative of one claim (DESIGN.md, *Sharpness*).

    Parameters
    ----------
    relation : {"approx", "<=", ">=", "between"}
    measured : float
    expected : float or (float, float)
        The reference (a bound, or an interval for ``"between"``).
    tol : float or None
        The tolerance of an ``"approx"`` claim.
    alternative : float, optional

    Returns
    -------
    Sharpness
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if relation in ("approx", "between"):
        if relation == "approx":
            centre, half = float(expected), float(tol)
        else:
            lo, hi = (float(v) for v in expected)
            centre, half = (lo + hi) / 2, (hi - lo) / 2
        resolution = half / abs(centre) if centre != 0 else None
        alt_distance = None
        if alternative is not None and half > 0:
            alt_distance = abs(float(alternative) - centre) / half
        blunt = resolution is not None and resolution > WIDE
        return Sharpness(resolution, half, alt_distance, bool(blunt))
    bound = float(expected)
    margin = (measured - bound) if relation == ">=" else (bound - measured)
    resolution = margin / abs(bound) if bound != 0 else None
    alt_distance = None
    if alternative is not None and margin != 0 and not math.isnan(margin):
        alt_distance = abs(float(alternative) - bound) / abs(margin)
    return Sharpness(resolution, margin, alt_distance, False)


def sharpness_text(rec: dict) -> str:
    """The sharpness of a recorded claim in words a reader understands, e.g. "detects a
    deviation of 5% of the reference; rejects 1.5 at 4.2 tolerances" (the ledger's column).

    Parameters
    ----------
    rec : dict
        A claim record (``lecnotes.book.claims.load_records``): ``relation``, ``measured``,
        ``expected``, ``tol``, and optionally ``alternative``, ``kind``, ``why_wide``.

    Returns
    -------
    str
    """
    rel = rec["relation"]
    s = sharpness(rel, rec["measured"], rec["expected"], rec.get("tol"), rec.get("alternative"))
    kind = rec.get("kind") or _infer_kind(rel, rec["expected"], rec.get("tol"))
    parts = []
    if rel in ("approx", "between"):
        ref = rec["expected"]
        centre = abs(float(ref) if rel == "approx" else (float(ref[0]) + float(ref[1])) / 2)
        if s.absolute <= _EXACT * max(1.0, centre):
            parts.append("exact to rounding")
        elif s.resolution is None:
            parts.append(f"detects a deviation of {format_number(s.absolute)} from 0")
        else:
            parts.append(f"detects a deviation of {format_percent(s.resolution)} of the reference")
        if s.alt_distance is not None:
            parts.append(f"rejects {format_number(rec['alternative'])} at {s.alt_distance:.3g} "
                         "tolerances")
    else:
        side = "inside" if s.absolute >= 0 else "OUTSIDE"
        where = (f"{format_percent(abs(s.resolution))} of the bound" if s.resolution is not None
                 else format_number(abs(s.absolute)))
        parts.append(f"measured {where} {side} the bound")
        if s.alt_distance is not None:
            parts.append(f"alternative {format_number(rec['alternative'])} lies "
                         f"{s.alt_distance:.3g} margins from the bound")
    text = "; ".join(parts) + f" ({kind}{'' if rec.get('kind') else ', inferred'})"
    if rec.get("why_wide"):
        text += "; wide because " + rec["why_wide"]
    return text


def format_percent(x: float) -> str:
    """A fraction as a percentage (two significant digits below 10%).

    Parameters
    ----------
    x : float

    Returns
    -------
    str
    """
    return f"{100 * x:.2g}%" if x < 0.1 else f"{100 * x:.0f}%"


def _infer_kind(relation, expected, tol) -> str:
    """``identity`` for a tolerance at rounding level, ``finite-size`` otherwise (when the
    claim does not state its kind)."""
    if relation == "approx" and tol is not None:
        if float(tol) <= _EXACT * max(1.0, abs(float(expected))):
            return "identity"
    if relation == "<=" and 0 <= float(expected) <= _EXACT:
        return "identity"
    return "finite-size"
