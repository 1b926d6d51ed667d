"""Graded check of chapter 11: the Bayes denoiser of a cluster assignment.

Exercise {ref}`ex-ch11-denoiser`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V

__all__ = ["check_cluster_denoiser", "CHECKS"]


def _posterior(A, B, vertices):
    logits = B @ vertices.T - 0.5 * np.einsum("ci,ij,cj->c", vertices, A, vertices)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ vertices


@graded
def check_cluster_denoiser(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch11-denoiser`: ``func(A, B)`` returns the (m, k) posterior means
    of centred one-hot vectors :math:`u_c = e_c - \mathbf 1/k` (uniform prior) given the
    channel :math:`\exp(\langle B_i, u\rangle - u^\top A u/2)`, one row of ``B`` per sample
    ({eq}`eq-ch11-denoisers`, chapter 11).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    problems = []
    cases = 3
    for _ in range(cases):
        k, m = int(rng.integers(2, 6)), int(rng.integers(5, 40))
        G = rng.standard_normal((k, k))
        A = G @ G.T / k
        B = 2.0 * rng.standard_normal((m, k))
        out, err = call_student(func, A.copy(), B.copy())
        if err:
            problems.append(err)
            return finish("cluster denoiser (chapter 11)", problems, cases)
        M = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        P = np.eye(k) - 1.0 / k
        ref = _posterior(A, B, P)
        if M.shape != ref.shape:
            hint = " (transposed?)" if M.shape == ref.shape[::-1] else ""
            problems.append(f"expected an array of shape (m, k) = {ref.shape}, got "
                            f"{M.shape}{hint}")
            return finish("cluster denoiser (chapter 11)", problems, cases)
        if np.allclose(M, ref, rtol=1e-7, atol=1e-9):
            continue
        wrong = {
            "the vectors are not centred: the prior's points are e_c - 1/k, so every row of "
            "the answer sums to zero": _posterior(A, B, np.eye(k)),
            "the quadratic term -u^T A u / 2 is missing from the posterior weights":
                _posterior(np.zeros((k, k)), B, P),
            "this is the most likely vertex (a hard assignment), not the posterior mean":
                P[np.argmax(B @ P.T - 0.5 * np.einsum("ci,ij,cj->c", P, A, P), axis=1)],
            "the sign of the field is reversed": _posterior(A, -B, P),
        }
        for message, candidate in wrong.items():
            if np.allclose(M, candidate, rtol=1e-7, atol=1e-9):
                problems.append(message)
                break
        else:
            problems.append("on hidden data the rows differ from the posterior means by up to "
                            f"{np.max(np.abs(M - ref)):.3g}")
        return finish("cluster denoiser (chapter 11)", problems, cases)
    return finish("cluster denoiser (chapter 11)", problems, cases)


CHECKS = {"ex-ch11-denoiser": check_cluster_denoiser}
"""Exercise label -> check of this chapter."""
