"""Graded check of chapter 1: the ReLU NTK in closed form.

Exercise {ref}`ex-ch1-ntk`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, diagnose_ratio, finish, graded
from lecnotes.core import validate as V
from lecnotes.models.kernels import relu_ntk

__all__ = ["check_relu_ntk", "CHECKS"]


@graded
def check_relu_ntk(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch1-ntk`: ``func(X, Z)`` returns the infinite-width ReLU NTK matrix
    :math:`\frac1{2d}k_1 + \frac12\langle x,z\rangle k_0` (shape ``(n_X, n_Z)``).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """

    rng = V.generator(rng)
    d = int(rng.integers(5, 40))
    X = rng.standard_normal((int(rng.integers(3, 6)), d))
    Z = rng.standard_normal((int(rng.integers(6, 10)), d))  # n_X != n_Z: shapes are telling
    Z[0] = 2.5 * X[0]  # parallel pair: arccos(1 + rounding) must not give NaN
    Z[1] = -X[1]  # antiparallel pair
    problems = []
    out, err = call_student(func, X, Z)
    if err:
        problems.append(err)
    else:
        K = np.asarray(out, dtype=float) if out is not None else None
        ref = relu_ntk(X, Z)
        if K is None or K.shape != ref.shape:
            shape = None if K is None else K.shape
            hint = " (transposed?)" if shape == ref.shape[::-1] else ""
            problems.append(f"expected an array of shape (n_X, n_Z) = {ref.shape}, got {shape}"
                            f"{hint}")
        elif not np.all(np.isfinite(K)):
            problems.append("the matrix has NaN entries: clip the cosine to [-1, 1] before "
                            "arccos (parallel inputs)")
        # arccos is ill-conditioned at antiparallel inputs: absolute tolerance on the scale
        elif not np.allclose(K, ref, rtol=1e-6, atol=(tol := 1e-6 * np.abs(ref).max())):
            first = 0.5 * (X @ Z.T) * (1 - np.arccos(np.clip(
                (X @ Z.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Z, axis=1)),
                -1, 1)) / np.pi)
            big = np.abs(ref) > tol
            ratio = np.median(K[big] / ref[big])
            if np.allclose(K, first, rtol=1e-6, atol=tol):
                problems.append("only the first-layer part <x,z> k_0 / 2 is there: add the "
                                "second-layer part k_1 / (2d)")
            elif np.allclose(K, ref - first, rtol=1e-6, atol=tol):
                problems.append("only the second-layer part k_1 / (2d) is there: add the "
                                "first-layer part <x,z> k_0 / 2")
            else:
                hint = diagnose_ratio(ratio)
                problems.append(hint or "the entries differ from the NTK on hidden inputs by "
                                f"up to {np.max(np.abs(K - ref) / (np.abs(ref) + 1e-12)):.1%} "
                                "(relative)")
    return finish("ReLU NTK (chapter 1)", problems, 1)


CHECKS = {"ex-ch1-ntk": check_relu_ntk}
"""Exercise label -> check of this chapter."""
