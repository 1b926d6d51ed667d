"""Graded check of chapter 7: the own-label part of the pre-activation shift (reused batch).

Exercise {ref}`ex-ch7-self-term`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V

__all__ = ["check_self_term", "CHECKS"]


def _ref_self_term(X, y, W0, a, eta, dsigma):
    sq = np.einsum("ij,ij->i", X, X)
    return eta * dsigma(X @ W0.T) * (y * sq / X.shape[0])[:, None] * a[None, :]


@graded
def check_self_term(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch7-self-term`: ``func(X, y, W0, a, eta, dsigma)`` returns the (n, p)
    matrix :math:`\eta\,a_j\,y_i\,\sigma'(\langle w_j^0,x_i\rangle)\,\|x_i\|^2/n`, the own-label
    part of the pre-activation shift after one correlation-loss step (chapter 7).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    problems = []
    acts = [("tanh", lambda u: 1.0 - np.tanh(u) ** 2),
            ("relu", lambda u: (u > 0).astype(float)),
            ("sin+cos", lambda u: np.cos(u) - np.sin(u))]
    cases = len(acts)
    for _name, ds in acts:
        n, d, p = (int(rng.integers(6, 30)), int(rng.integers(4, 25)), int(rng.integers(3, 12)))
        while len({n, p}) < 2:  # n != p, so that a transposed answer is detected by its shape
            p += 1
        X = rng.standard_normal((n, d)) * rng.uniform(0.5, 1.5, size=(n, 1))  # unequal norms
        y = rng.standard_normal(n)
        W0 = rng.standard_normal((p, d)) / np.sqrt(d)
        a = rng.choice([-1.0, 1.0], p) * rng.uniform(0.5, 2.0, p) / p
        eta = float(rng.uniform(0.5, 3.0)) * p
        out, err = call_student(func, X.copy(), y.copy(), W0.copy(), a.copy(), eta, ds)
        if err:
            problems.append(err)
            break
        M = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        ref = _ref_self_term(X, y, W0, a, eta, ds)
        if M.shape != ref.shape:
            hint = " (transposed?)" if M.shape == ref.shape[::-1] else ""
            problems.append(f"expected an array of shape (n, p) = {ref.shape}, got {M.shape}"
                            f"{hint}")
            break
        if not np.all(np.isfinite(M)):
            problems.append("the matrix has NaN or infinite entries")
            break
        scale = np.abs(ref).max()
        if np.allclose(M, ref, rtol=1e-8, atol=1e-10 * scale):
            continue
        sq = np.einsum("ij,ij->i", X, X)
        Z = X @ W0.T
        wrong = {
            "the factor sigma'(<w_j, x_i>) is missing: the own-label term is "
            "eta a_j y_i sigma'(z_ij) |x_i|^2 / n (dropping it is the simplification under which "
            "ReLU seems to gain nothing)": eta * (y * sq / n)[:, None] * a[None, :],
            "|x_i|^2 was replaced by d: use the actual squared norm of each sample":
                eta * ds(Z) * (y * d / n)[:, None] * a[None, :],
            "the second-layer weight a_j is missing": eta * ds(Z) * (y * sq / n)[:, None],
            "the 1/n of the empirical risk is missing": ref * n,
            "the sign is reversed: W_1 = W_0 - eta * gradient, and the gradient of the "
            "correlation loss is -(1/n) sum_k a_j y_k sigma'(z_kj) x_k": -ref,
            "this is the whole shift X (W_1 - W_0)^T, including the other samples: keep only "
            "the term k = i": eta * (X @ X.T) @ (ds(Z) * y[:, None]) * a[None, :] / n,
        }
        for message, candidate in wrong.items():
            if np.allclose(M, candidate, rtol=1e-8, atol=1e-10 * scale):
                problems.append(message)
                break
        else:
            rel = np.max(np.abs(M - ref)) / scale
            problems.append(f"on hidden data the entries differ from the own-label term by up to "
                            f"{rel:.1%} of its largest entry")
        break
    return finish("own-label term (chapter 7)", problems, cases)


CHECKS = {"ex-ch7-self-term": check_self_term}
"""Exercise label -> check of this chapter."""
