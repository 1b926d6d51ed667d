r"""Graded checks for the coding exercises (book tier; instructors' assignments).

One file per chapter, named after the chapter module (``grading.spectral`` grades the
exercise of chapter 4), each holding its ``check_*`` function and a ``CHECKS`` table; what
they share (the :class:`Report`, the :class:`GradingError`, calling the student's code) is in
:mod:`lecnotes.grading.base`.

Each ``check_*(func, rng=None)`` runs the student's function on instances the student does
not see, drawn from ``rng`` (fresh ones at each call by default; tests pass a seed), compares
with a reference, and reports in words what is wrong: the shape or type of the answer, a
normalisation or sign convention, or the accuracy. It never prints the expected values. A
passing check returns a :class:`Report` with ``passed=True``; a failing one raises
:class:`GradingError` (an ``AssertionError``) carrying the same report, so that an assignment
notebook stops there. The assignment notebook of a chapter (``make assignments``) calls the
check after the stub the student completes; :data:`CHECKS` maps each exercise label to it.
"""

from __future__ import annotations

from . import (
    exponents,
    first_moment,
    giant_steps,
    mean_field_vs_ntk,
    online_sgd,
    partial_trace,
    setting,
    spectral,
    two_steps,
)
from .base import GradingError, Report, runs
from .exponents import check_gen4_partner
from .first_moment import check_optimal_q
from .giant_steps import check_giant_step
from .mean_field_vs_ntk import check_relu_ntk
from .online_sgd import check_sgd_step
from .partial_trace import check_partial_trace_matvec
from .setting import check_noise_level
from .spectral import check_top_eigenvector
from .two_steps import check_self_term

__all__ = [
    "Report",
    "GradingError",
    "CHECKS",
    "runs",
    "check_noise_level",
    "check_relu_ntk",
    "check_gen4_partner",
    "check_optimal_q",
    "check_top_eigenvector",
    "check_partial_trace_matvec",
    "check_giant_step",
    "check_self_term",
    "check_sgd_step",
]

_CHAPTERS = (setting, mean_field_vs_ntk, exponents, first_moment, spectral, partial_trace,
             giant_steps, two_steps, online_sgd)

CHECKS = {label: check for module in _CHAPTERS for label, check in module.CHECKS.items()}
"""Exercise label -> check function, in reading order (used by the assignment builder)."""
