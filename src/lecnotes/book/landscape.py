r"""The landscape: where a claim sits on the book's map of sample complexities (back matter).

A claim that measures how a sample size (or a number of steps, or a time) grows with the
dimension, or that checks the exponent a theory gives, places itself on the map with the
keyword ``landscape=`` of :func:`lecnotes.book.claims.claim` (and ``claim_mean``). Its value is
a dict:

``target_class``
    One of :data:`TARGET_CLASSES`: which property of the target sets the cost.
``method``
    One of :data:`METHODS`: the estimator or training procedure.
``target``
    The target in words, with its exponent, e.g. ``"He_3, k = 3"``.
``law``
    The theory's law in ``d``, e.g. ``"d^2"``, ``"d log d"``, ``"d^(k-1)"``; a law with a
    logarithm contains ``"log"``.
``exponent``
    The theory's exponent of the counted quantity in ``d``, logarithms dropped (``d log d``
    has exponent 1); a list when one claim checks several targets at once.
``quantity``
    A key naming the computed quantity (no spaces, e.g. ``"online-sgd/he3/escape-time"``):
    the same quantity stated in two chapters carries the same key, and must be stated with
    the same law and exponent (:func:`duplicates`), so that it is computed once.
``counts`` (optional, default ``"samples"``)
    What the law counts: one of :data:`COUNTS`.
``measures`` (optional, default ``"exponent"``)
    What the claim's measured value is: one of :data:`MEASURES`. ``"exponent"``: the fitted
    exponent itself; ``"deviation"``: the largest distance of fitted exponents from the
    theory's; ``"scaling"``: a quantity at ``n = c law(d)`` over several ``d`` (stable, or
    at its limit), which checks the law without fitting an exponent.

The record stores the validated dict (:func:`check`); the back-matter page *The landscape*
(``book/_ext/landscape.py``) is generated from the records with :func:`entries` and
:func:`lecnotes.book.landscape_figure.exponent_figure`, in the same build as the ledger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lecnotes.book.landscape_places import PLACES

__all__ = [
    "TARGET_CLASSES",
    "METHODS",
    "COUNTS",
    "MEASURES",
    "check",
    "Entry",
    "entries",
    "duplicates",
    "unbacked",
]

TARGET_CLASSES = ("information exponent", "generative exponent", "leap", "hierarchical",
                  "mixture")
"""Which property of the target sets the cost (the rows of the map)."""

METHODS = (
    "kernel / random features",
    "first moment with preprocessing",
    "spectral",
    "partial trace",
    "tensor unfolding",
    "one giant step",
    "several giant steps",
    "two steps (fresh)",
    "two steps (reused)",
    "online SGD",
    "large-batch SGD",
    "smoothed SGD",
    "SGD with repetition",
    "layer-wise deep",
    "AMP",
    "low-degree bound",
)
"""The methods of the book (the columns of the map), in its reading order."""

COUNTS = ("samples", "steps", "time")
"""What a law counts: samples ``n``, gradient steps, or SGD time (samples of one pass)."""

MEASURES = ("exponent", "deviation", "scaling")
"""What the claim's measured value is (see the module docstring)."""

_REQUIRED = ("target_class", "method", "target", "law", "exponent", "quantity")
_OPTIONAL = {"counts": "samples", "measures": "exponent"}


def check(value) -> dict | None:
    """Validate the ``landscape=`` keyword of a claim.

    Parameters
    ----------
    value : dict, str, (str, str) or None
        The keyword's value (see the module docstring), or the key of a quantity of
        :data:`lecnotes.book.landscape_places.PLACES` (how the chapters place their claims:
        one line, and one statement of each quantity's law for the whole book).

    Returns
    -------
    dict or None
        A new dict with every field, defaults filled in and ``exponent`` a float or a list
        of floats; ``None`` when ``value`` is ``None``.

    Raises
    ------
    ValueError
        For a value that is not a dict, a missing or unknown field, a class, method,
        ``counts`` or ``measures`` outside its list, an empty text, a quantity key with
        spaces, or an exponent that is not a finite number (a list only with
        ``measures`` other than ``"exponent"``).
    """
    if value is None:
        return None
    if isinstance(value, (str, tuple)):
        key, *measures = (value,) if isinstance(value, str) else value
        if not isinstance(key, str) or key not in PLACES or len(measures) > 1:
            raise ValueError(f"landscape: {value!r} is not a quantity of landscape_places."
                             "PLACES (optionally with what the claim measures)")
        value = {**PLACES[key], "quantity": key,
                 **({"measures": measures[0]} if measures else {})}
    if not isinstance(value, dict):
        raise ValueError(f"landscape must be a dict, got {value!r}")
    missing = [k for k in _REQUIRED if k not in value]
    if missing:
        raise ValueError(f"landscape misses {missing}")
    unknown = sorted(set(value) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"landscape has unknown fields {unknown}")
    out = {**_OPTIONAL, **value}
    for key, allowed in (("target_class", TARGET_CLASSES), ("method", METHODS),
                         ("counts", COUNTS), ("measures", MEASURES)):
        if out[key] not in allowed:
            raise ValueError(f"landscape {key} must be one of {allowed}, got {out[key]!r}")
    for key in ("target", "law", "quantity"):
        if not isinstance(out[key], str) or not out[key].strip():
            raise ValueError(f"landscape {key} must be a non-empty string, got {out[key]!r}")
    if any(c.isspace() for c in out["quantity"]):
        raise ValueError(f"landscape quantity must be a key without spaces: {out['quantity']!r}")
    if "d" not in out["law"]:
        raise ValueError(f"landscape law must be a law in d, got {out['law']!r}")
    exp = out["exponent"]
    many = isinstance(exp, (list, tuple))
    if many and out["measures"] == "exponent":
        raise ValueError("a claim that measures one exponent has one theory exponent")
    values = list(exp) if many else [exp]
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"landscape exponent must be numbers, got {exp!r}") from None
    if not values or isinstance(exp, bool) or not all(math.isfinite(v) for v in values):
        raise ValueError(f"landscape exponent must be finite numbers, got {exp!r}")
    out["exponent"] = values if many else values[0]
    return out


@dataclass(frozen=True)
class Entry:
    """One claim on the map (what the page shows in a row).

    Attributes
    ----------
    chapter, label : str
        The claim's chapter (notebook stem) and label.
    landscape : dict
        The claim's validated ``landscape`` value.
    record : dict
        The claim's record.
    """

    chapter: str
    label: str
    landscape: dict
    record: dict

    @property
    def theory(self) -> list[float]:
        """The theory's exponents (one per target the claim checks)."""
        exp = self.landscape["exponent"]
        return list(exp) if isinstance(exp, list) else [exp]

    @property
    def log_law(self) -> bool:
        """The law carries a logarithm (``d log d``)."""
        return "log" in self.landscape["law"]

    def interval(self) -> tuple[float, float] | None:
        """The error bar of the measured exponent: ``measured +- tol`` (``approx``), the
        interval the claim accepts (``between``), or the half-line of a bound; ``None`` for
        a deviation or scaling claim.

        Returns
        -------
        (float, float) or None
        """
        if self.landscape["measures"] != "exponent":
            return None
        rec = self.record
        rel, exp = rec["relation"], rec["expected"]
        if rel == "approx":
            m, tol = float(rec["measured"]), float(rec["tol"])
            return (m - tol, m + tol)
        if rel == "between":
            return (float(exp[0]), float(exp[1]))
        return (float(exp), math.inf) if rel == ">=" else (-math.inf, float(exp))

    def agrees(self) -> bool | None:
        """Does the measured exponent agree with the theory's asymptotic exponent within the
        claim's tolerance? ``None`` for a one-sided bound (it tests a side, not a value) and
        for claims that do not measure an exponent.

        Returns
        -------
        bool or None
        """
        if self.landscape["measures"] != "exponent" or self.record["relation"] in ("<=", ">="):
            return None
        rec, theory = self.record, self.theory[0]
        if rec["relation"] == "approx":
            return abs(float(rec["measured"]) - theory) <= float(rec["tol"])
        lo, hi = (float(v) for v in rec["expected"])
        half = (hi - lo) / 2
        return abs(float(rec["measured"]) - theory) <= half


def entries(records: dict[str, list[dict]]) -> list[Entry]:
    """The claims that carry a landscape value, in chapter order.

    Parameters
    ----------
    records : dict
        ``{chapter: [claim records]}`` (:func:`lecnotes.book.claims.load_records`).

    Returns
    -------
    list of Entry
    """
    out = []
    for chapter in sorted(records):
        for rec in records[chapter]:
            if rec.get("landscape"):
                out.append(Entry(chapter, rec["label"], check(rec["landscape"]), rec))
    return out


def _stated(entry: Entry) -> tuple:
    """How an entry states its quantity: the law and the theory's exponent(s)."""
    return (entry.landscape["law"].replace(" ", ""), tuple(round(v, 9) for v in entry.theory),
            entry.landscape["counts"])


def duplicates(found: list[Entry]) -> list[str]:
    """Quantities stated in two chapters with two values (law, exponent or what is counted).

    A quantity key names one computed quantity; two chapters that state it must give the
    same law and exponent (one computation, used by both).

    Parameters
    ----------
    found : list of Entry

    Returns
    -------
    list of str
        One sentence per quantity stated differently (empty when none is).
    """
    by_key: dict[str, list[Entry]] = {}
    for e in found:
        by_key.setdefault(e.landscape["quantity"], []).append(e)
    problems = []
    for key, group in sorted(by_key.items()):
        stated = {_stated(e) for e in group}
        if len({e.chapter for e in group}) > 1 and len(stated) > 1:
            where = "; ".join(f"{e.chapter}:{e.label} states {e.landscape['law']} "
                              f"(exponent {e.landscape['exponent']}, {e.landscape['counts']})"
                              for e in group)
            problems.append(f"quantity {key!r} is stated with {len(stated)} values: {where}")
    return problems


def unbacked(found: list[Entry]) -> list[str]:
    """Map entries whose claim did not pass (an entry must be backed by a passing claim).

    Parameters
    ----------
    found : list of Entry

    Returns
    -------
    list of str
        ``"chapter:label"`` of each entry whose record did not pass.
    """
    return [f"{e.chapter}:{e.label}" for e in found if not e.record.get("passed")]
