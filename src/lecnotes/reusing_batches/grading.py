"""Graded check of chapter 9: two correlation-loss steps on a reused or a fresh batch.

Exercise {ref}`ex-ch9-two-steps`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V

__all__ = ["check_two_steps", "CHECKS"]


def _step(W, X, y, c, ds):
    return W + (c / X.shape[1]) * (y[:, None] * ds(X @ W.T)).T @ X


@graded
def check_two_steps(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch9-two-steps`: ``func(W0, X1, y1, X2, y2, c, dsigma)`` returns the
    (p, d) matrix :math:`W_2` of {eq}`eq-ch9-step`: a step on :math:`(X_1, y_1)` from
    :math:`W_0`, then a step on :math:`(X_2, y_2)` from :math:`W_1`, each
    :math:`w\mapsto w + (c/d)\sum_iy_i\sigma'(\langle w,x_i\rangle)x_i` (chapter 9).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    problems = []
    acts = [lambda u: 1.0 - np.tanh(u) ** 2, lambda u: 3.0 * (u * u - 1.0) / np.sqrt(6.0)]
    cases = 2 * len(acts)
    for ds in acts:
        for reuse in (True, False):
            n, d, p = int(rng.integers(8, 30)), int(rng.integers(5, 20)), int(rng.integers(2, 6))
            X1 = rng.standard_normal((n, d))
            y1 = rng.standard_normal(n)
            X2, y2 = (X1, y1) if reuse else (rng.standard_normal((n, d)), rng.standard_normal(n))
            W0 = rng.standard_normal((p, d)) / np.sqrt(d)
            c = float(rng.uniform(0.5, 2.0))
            out, err = call_student(func, W0.copy(), X1.copy(), y1.copy(), X2.copy(),
                                    y2.copy(), c, ds)
            if err:
                problems.append(err)
                return finish("two steps (chapter 9)", problems, cases)
            M = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
            W1 = _step(W0, X1, y1, c, ds)
            ref = _step(W1, X2, y2, c, ds)
            if M.shape != ref.shape:
                hint = " (transposed?)" if M.shape == ref.shape[::-1] else ""
                problems.append(f"expected an array of shape (p, d) = {ref.shape}, got "
                                f"{M.shape}{hint}")
                return finish("two steps (chapter 9)", problems, cases)
            scale = np.abs(ref).max()
            if np.allclose(M, ref, rtol=1e-8, atol=1e-10 * scale):
                continue
            wrong = {
                "the second step uses the pre-activations of W_0: compute <w_1, x_i> after the "
                "first step (this is what makes a reused batch see more)":
                    W1 + (c / d) * (y2[:, None] * ds(X2 @ W0.T)).T @ X2,
                "the step is divided by n: the chapter's step is c/d per sample":
                    _step(_step(W0, X1, y1, c * d / n, ds), X2, y2, c * d / n, ds),
                "the sign is reversed: the correlation loss -y sigma(<w, x>) is decreased by "
                "adding y sigma'(<w, x>) x": _step(_step(W0, X1, y1, -c, ds), X2, y2, -c, ds),
                "this is W_1, one step: take the second step from W_1": W1,
                "this is the update W_2 - W_0: add W_0": ref - W0,
            }
            for message, candidate in wrong.items():
                if np.allclose(M, candidate, rtol=1e-8, atol=1e-10 * scale):
                    problems.append(message)
                    break
            else:
                rel = np.max(np.abs(M - ref)) / scale
                problems.append(f"on hidden data the entries differ from W_2 by up to {rel:.1%} "
                                "of its largest entry")
            return finish("two steps (chapter 9)", problems, cases)
    return finish("two steps (chapter 9)", problems, cases)


CHECKS = {"ex-ch9-two-steps": check_two_steps}
"""Exercise label -> check of this chapter."""
