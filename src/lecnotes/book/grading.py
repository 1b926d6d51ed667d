"""What every graded check shares: the report, the error, and calling the student's code.

A check calls the student's function through :func:`call_student` (an exception or an
unwritten stub becomes a sentence), reads a number with :func:`as_scalar`, names common
convention mistakes with :func:`diagnose_ratio`, and ends with :func:`finish`, which returns a
passing :class:`Report` or raises :class:`GradingError` carrying the failing one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["GradingError", "Report", "graded", "call_student", "as_scalar", "scalar_answer",
           "finish", "diagnose_ratio", "runs"]


class GradingError(AssertionError):
    """The student's function does not pass the check; the message says why in words."""


@dataclass
class Report:
    """Outcome of a check: what passed, and the first problem found (if any)."""

    exercise: str
    passed: bool
    instances: int
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = (f"{self.exercise}: all {self.instances} hidden instances pass"
                if self.passed else f"{self.exercise}: not yet")
        return "\n".join([head, *(f"  - {m}" for m in self.messages)])

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.passed else "#cf222e"
        items = "".join(f"<li>{m}</li>" for m in self.messages)
        verdict = f"all {self.instances} hidden instances pass" if self.passed else "not yet"
        return (f'<div style="border-left:4px solid {color};padding:0.3em 0.8em">'
                f"<strong>{self.exercise}</strong>: {verdict}<ul>{items}</ul></div>")


def call_student(func: Callable, *args):
    try:
        return func(*args), None
    except NotImplementedError:
        return None, "the function is not written yet (it raises NotImplementedError)"
    except Exception as err:  # noqa: BLE001 - any failure of the student's code is reported
        return None, f"the function raised {type(err).__name__}: {err}"


def as_scalar(value):
    arr = np.asarray(value, dtype=float) if value is not None else None
    if arr is None or arr.shape not in ((), (1,)):
        shape = None if value is None else np.shape(value)
        return None, f"expected a single number, got an object of shape {shape}"
    v = float(arr.reshape(()))
    if not np.isfinite(v):
        return None, "the function returned NaN or infinity"
    return v, None


def finish(name, problems, n):
    report = Report(name, not problems, n, problems[:3])
    if problems:
        raise GradingError(str(report))
    return report


def diagnose_ratio(ratio: float, d: int | None = None) -> str | None:
    """Name common convention mistakes from the ratio student / reference."""
    if np.isclose(ratio, -1.0, rtol=1e-3):
        return "the sign is reversed"
    if d is not None and np.isclose(ratio, (d - 1) / d, rtol=1e-4):
        return "the normalisation looks off by a factor (d-1)/d: divide by d-1, not d"
    if d is not None and np.isclose(ratio, d / (d - 1), rtol=1e-4):
        return "the normalisation looks off by a factor d/(d-1): divide by d-1, not d"
    for k, name in [(2, "2"), (np.sqrt(2), "sqrt(2)"), (np.sqrt(2 * np.pi), "sqrt(2 pi)")]:
        if np.isclose(ratio, k, rtol=1e-3) or np.isclose(ratio, 1 / k, rtol=1e-3):
            return f"off by a factor {name}: check the Hermite normalisation (He_k vs h_k)"
    return None


CHECK_SECTIONS = """
Parameters
----------
func : callable
    The student's function.
rng : numpy.random.Generator, int or None
    Draws the hidden instances (SPEC 7; ``None``, the default, draws fresh ones at each call,
    so a student cannot fit them; tests pass a seed).

Returns
-------
Report
    ``passed=True`` when every hidden instance passes.

Raises
------
GradingError
    Naming, in words, the first problem found (never the expected values).
"""


def graded(check: Callable) -> Callable:
    """Mark a ``check_*(func, rng=None)`` function: its docstring gains the shared sections.

    Parameters
    ----------
    check : callable
        A check function whose docstring says what the exercise asks.

    Returns
    -------
    callable
        The same function, its docstring completed by :data:`CHECK_SECTIONS`.
    """
    doc = inspect.cleandoc(check.__doc__ or "")
    doc = doc.replace("Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.",
                      "").rstrip()
    check.__doc__ = doc + "\n" + CHECK_SECTIONS
    return check


def scalar_answer(func: Callable, *args):
    """Call the student's function and read a single finite number from its answer.

    Parameters
    ----------
    func : callable
        The student's function.
    *args
        Its arguments.

    Returns
    -------
    value, problem : float or None, str or None
        The number, or ``None`` with a sentence saying what is wrong.
    """
    out, err = call_student(func, *args)
    if err:
        return None, err
    return as_scalar(out)


def runs(check: Callable, func: Callable, rng=None) -> Report:
    """Whether the student's function runs on the hidden instances of ``check`` at all.

    The first, smaller part of an autograder's score (``make assignments``): ``check`` is run
    with ``func`` wrapped, and this reports whether every call the check made returned, without
    raising, an answer of finite numbers. Whether the answer is *right* is the check's own
    verdict, which this ignores (one implementation of each check: nothing here knows what the
    answer should be).

    Parameters
    ----------
    check : callable
        A ``check_*(func, rng=None)`` of a chapter's ``grading`` module.
    func : callable
        The student's function.
    rng : numpy.random.Generator, int or None
        Passed to ``check`` (SPEC 7).

    Returns
    -------
    Report
        ``passed=True`` when every call returned finite numbers.

    Raises
    ------
    GradingError
        Naming what went wrong: not written yet, an exception, or NaN or infinity.
    """
    problems, calls = [], []

    def recorded(*args):
        out, err = call_student(func, *args)
        calls.append(1)
        if err is None:
            try:
                finite = bool(np.all(np.isfinite(np.asarray(out, dtype=float))))
            except (TypeError, ValueError):
                finite = False
            if not finite:
                err = "the function did not return finite numbers (NaN, infinity or not numbers)"
        if err:
            problems.append(err)
            raise _Stop
        return out

    try:
        check(recorded, rng=rng)
    except AssertionError:
        pass  # the check's verdict is another test's business
    return finish("the function runs", problems, len(calls))


class _Stop(Exception):
    """Ends a check at the first call that does not run (:func:`runs`)."""
