"""Graded check of chapter 10: the overlap of the quadratic second stage with the feature.

Exercise {ref}`ex-ch10-feature-overlap`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, finish, graded, scalar_answer
from lecnotes.core import validate as V

__all__ = ["check_feature_overlap", "CHECKS"]


def _candidates(Z, y):
    n, r = Z.shape
    raw = (Z * y[:, None]).T @ Z / n
    A = raw - np.mean(y) * np.eye(r)
    good = abs(np.trace(A)) / (math.sqrt(r) * np.linalg.norm(A))
    wrong = {
        "the identity is not subtracted: A is (1/n) sum y_i (z_i z_i^T - I), and without the "
        "- I the mean of y enters the trace": abs(np.trace(raw)) / (math.sqrt(r) *
                                                             np.linalg.norm(raw)),
        "the normalisation: the feature h = (|z|^2 - r)/sqrt(2r) has the matrix I/sqrt(2r), "
        "so divide by sqrt(r) ||A||_F, not by r ||A||_F": abs(np.trace(A)) / (
            r * np.linalg.norm(A)),
        "use the Frobenius norm of A (the variance of z^T A z is 2 ||A||_F^2), not its "
        "spectral norm": abs(np.trace(A)) / (math.sqrt(r) * np.linalg.norm(A, 2)),
        "the overlap is the absolute value of the correlation": np.trace(A) / (
            math.sqrt(r) * np.linalg.norm(A)),
    }
    return good, wrong


@graded
def check_feature_overlap(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch10-feature-overlap`: ``func(Z, y)`` returns the overlap
    :math:`|\operatorname{tr}A|/(\sqrt r\|A\|_F)` of the learned quadratic feature with
    :math:`h`, :math:`A = \frac1n\sum_iy_i(z_iz_i^\top - I)`
    ({prf:ref}`prop-ch10-stage-two`), for ``Z`` of shape (n, r) and ``y`` of shape (n,).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    problems = []
    cases = 4
    for case in range(cases):
        r, n = int(rng.integers(3, 9)), int(rng.integers(40, 200))
        Z = rng.standard_normal((n, r))
        h = (np.sum(Z * Z, axis=1) - r) / math.sqrt(2 * r)
        shift = 2.0 if case % 2 else -1.5  # a label mean far from 0 exposes a missing - I
        y = h + 0.5 * (h * h - 1) + shift + 0.3 * rng.standard_normal(n)
        if case == 3:
            y = -y  # a negative correlation exposes a missing absolute value
        value, err = scalar_answer(func, Z.copy(), y.copy())
        if err:
            problems.append(err)
            break
        good, wrong = _candidates(Z, y)
        if math.isclose(value, good, rel_tol=1e-8, abs_tol=1e-12):
            continue
        for message, candidate in wrong.items():
            if math.isclose(value, candidate, rel_tol=1e-8, abs_tol=1e-12):
                problems.append(message)
                break
        else:
            problems.append(f"on a hidden instance (n = {n}, r = {r}) the answer is off by "
                            f"{abs(value / good - 1):.1%}")
        break
    return finish("feature overlap (chapter 10)", problems, cases)


CHECKS = {"ex-ch10-feature-overlap": check_feature_overlap}
"""Exercise label -> check of this chapter."""
