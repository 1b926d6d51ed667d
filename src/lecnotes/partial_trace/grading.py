"""Graded check of chapter 5: the matrix-free product with the degree-4 partial trace.

Exercise {ref}`ex-ch5-partial-trace-matvec`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V
from lecnotes.core.hermite_tensors import he4_partial_trace

__all__ = ["check_partial_trace_matvec", "CHECKS"]


@graded
def check_partial_trace_matvec(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch5-partial-trace-matvec`: ``func(X, t, v)`` returns :math:`Mv` for
    :math:`M=\frac1n\sum_it_i\sum_j\mathrm{He}_4(x_i)_{\cdot\cdot jj}`, without forming
    :math:`M` (the last instance has ``d = 2500``: a dense ``d x d`` matrix is detected by its
    memory).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """


    rng = V.generator(rng)
    problems = []
    cases = [(int(rng.integers(5, 12)), int(rng.integers(15, 40))) for _ in range(3)]
    cases += [(int(rng.integers(30, 80)), int(rng.integers(200, 600))), (2500, 40)]
    for d, n in cases:
        X = rng.standard_normal((n, d)) * rng.uniform(0.8, 1.3)  # norms away from d
        t = rng.standard_normal(n)
        v = rng.standard_normal(d)
        big = d >= 1000
        if big:
            tracemalloc.start()
        try:
            out, err = call_student(func, X.copy(), t.copy(), v.copy())
            peak = tracemalloc.get_traced_memory()[1] if big else 0
        finally:
            if big:
                tracemalloc.stop()
        if err:
            problems.append(err)
            break
        Mv = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        if Mv.shape != (d,):
            problems.append(f"expected a vector of shape (d,) = ({d},), got shape {Mv.shape}")
            break
        if not np.all(np.isfinite(Mv)):
            problems.append("the result has NaN or infinite entries")
            break
        ref = he4_partial_trace(X, t, v)
        scale = np.linalg.norm(ref)
        if np.linalg.norm(Mv - ref) <= 1e-8 * scale:
            if big and peak > 2 * d * d:  # bytes; a d x d float array takes 8 d^2
                problems.append(f"the product allocated {peak / 2**20:.0f} MB for d = {d}: it "
                                "seems to form a d x d matrix (or bigger); use two products "
                                "with X instead, O(nd) memory")
                break
            continue
        sq = np.einsum("ij,ij->i", X, X)
        Xv = X @ v

        def cand(hi, lo, X=X, t=t, Xv=Xv, n=n, v=v):
            return X.T @ (t * hi * Xv) / n - np.mean(t * lo) * v

        wrong = [
            (cand(sq - d - 4, 0 * sq), "the identity term -(|x|^2 - d - 2) delta_ab is missing"),
            (cand(sq - d - 2, sq - d - 4), "the constants are swapped: the x x^T term carries "
                                           "|x|^2 - d - 4 and the identity term |x|^2 - d - 2"),
            (cand(sq, 0 * sq), "this is the contraction of the monomial tensor x^(4): the "
                               "Hermite corrections (the terms with deltas) are missing"),
            (cand(sq - d, sq - d), "the constants 4 and 2 are missing: count the pairings of "
                                   "He_4 that involve the traced indices"),
            (n * ref, "the average over the samples is missing: divide by n"),
            (-ref, "the sign is reversed"),
            (ref / np.sqrt(24.0), "off by a factor sqrt(4!) = sqrt(24): use the unnormalised "
                                  "Hermite tensor He_4, not h_4"),
        ]
        hint = next((msg for w, msg in wrong if np.linalg.norm(Mv - w) <= 1e-6 * scale), None)
        problems.append(hint or "on a hidden instance the product is off by "
                        f"{np.linalg.norm(Mv - ref) / scale:.1%} (relative); it must be "
                        "accurate to 1e-8")
        break
    return finish("partial-trace product (chapter 5)", problems, len(cases))


CHECKS = {"ex-ch5-partial-trace-matvec": check_partial_trace_matvec}
"""Exercise label -> check of this chapter."""
