"""Graded check of chapter 4: the top eigenvector of D_T.

Exercise {ref}`ex-ch4-top-eigenvector`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V

__all__ = ["check_top_eigenvector", "CHECKS"]


@graded
def check_top_eigenvector(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch4-top-eigenvector`: ``func(X, y, T)`` returns the unit top eigenvector
    of :math:`D_T=\frac1n\sum_iT(y_i)x_ix_i^\top` (any sign).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    problems = []
    cases = 3
    for _ in range(cases):
        d = int(rng.integers(8, 40))
        n = int(rng.integers(3, 6)) * d
        X = rng.standard_normal((n, d))
        y = X[:, 0] ** 2 + 0.1 * rng.standard_normal(n)
        level = float(rng.uniform(2.5, 6.0))

        def T(t, level=level):
            return np.minimum(t, level) - 1.0

        out, err = call_student(func, X.copy(), y.copy(), T)
        if err:
            problems.append(err)
            break
        v = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        if v.shape != (d,):
            problems.append(f"expected a vector of shape (d,) = ({d},), got shape {v.shape}")
            break
        if not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
            problems.append("the vector has NaN entries or is zero")
            break
        if abs(np.linalg.norm(v) - 1) > 1e-6:
            problems.append("the vector is not normalised to unit length")
            break
        vals, vecs = np.linalg.eigh((X * T(y)[:, None]).T @ X / n)
        if abs(v @ vecs[:, -1]) > 1 - 1e-6:
            continue
        if abs(v @ vecs[:, 0]) > 1 - 1e-6:
            problems.append("this is the eigenvector of the smallest eigenvalue (eigh sorts "
                            "eigenvalues in increasing order)")
        elif abs(v @ np.linalg.eigh(X.T @ X)[1][:, -1]) > 1 - 1e-6:
            problems.append("the labels are not used: weight each x_i x_i^T by T(y_i)")
        else:
            problems.append("on a hidden data set the vector is not the top eigenvector of D_T "
                            f"(its overlap with it is {abs(v @ vecs[:, -1]):.3f})")
        break
    return finish("top eigenvector of D_T (chapter 4)", problems, cases)


CHECKS = {"ex-ch4-top-eigenvector": check_top_eigenvector}
"""Exercise label -> check of this chapter."""
