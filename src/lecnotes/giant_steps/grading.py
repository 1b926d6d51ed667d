"""Graded check of chapter 6: one giant step in two matrix products.

Exercise {ref}`ex-ch6-giant-step`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V

__all__ = ["check_giant_step", "CHECKS"]


def _giant_step_variants(W, a, X, y, eta):
    """The reference update and the updates produced by common mistakes (name -> array)."""
    p, n = W.shape[0], X.shape[0]
    Z = X @ W.T
    act, dact = np.maximum(Z, 0.0), (Z > 0).astype(float)
    inv_sqrt_p = 1 / np.sqrt(p)
    f = act @ a * inv_sqrt_p

    def step(residual, deriv=dact, scale=inv_sqrt_p, norm=n):
        M = deriv * (residual / norm)[:, None] * (a * scale)[None, :]
        return W - eta * (M.T @ X)

    return {
        "reference": step(f - y),
        "the residual f - y is replaced by -y: that is the correlation loss; the square loss "
        "keeps the network output f": step(-y),
        "the output f lacks its factor p^(-1/2)": step(act @ a - y),
        "the gradient uses ReLU itself where its derivative (the indicator Z > 0) belongs":
            step(f - y, deriv=act),
        "the sign is reversed: a gradient step goes down the gradient, W - eta * grad":
            2 * W - step(f - y),
        "a factor 1/n is missing: the risk is the mean, not the sum, over samples":
            step(f - y, norm=1),
        "the chain rule misses the factor p^(-1/2) of the output in the gradient":
            step(f - y, scale=1.0),
    }


def _diagnose_step_ratio(ratio: float, p: int, n: int) -> str:
    """Words for an update parallel to the right one but of the wrong size."""
    named = [(2.0, "twice too large: the risk carries a factor 1/2, so its derivative in f is "
                   "f - y, not 2 (f - y)"),
             (0.5, "half the right size: the derivative of (f - y)^2 / 2 in f is f - y"),
             (float(n), "n times too large: the risk is the mean over samples"),
             (1 / n, "n times too small: divide by n once, not twice"),
             (float(p), "p times too large: check the two factors p^(-1/2)"),
             (1 / p, "p times too small: the factor p^(-1/2) appears once in f and once in "
                     "the gradient, not more"),
             (np.sqrt(p), "sqrt(p) times too large: check the factors p^(-1/2)"),
             (1 / np.sqrt(p), "sqrt(p) times too small: check the factors p^(-1/2)")]
    for value, words in named:
        if np.isclose(ratio, value, rtol=1e-4):
            return "the update points the right way but is " + words
    return ("the update points the right way but has the wrong size: check the factors 1/n, "
            "p^(-1/2) and eta")


@graded
def check_giant_step(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch6-giant-step`: ``func(W, a, X, y, eta)`` returns
    :math:`W-\eta\nabla_W\hat R` for :math:`f = p^{-1/2}\mathrm{ReLU}(XW^\top)a` and
    :math:`\hat R = \frac1{2n}\sum_\nu(f(x_\nu)-y_\nu)^2` (shape ``(p, d)``).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    cases = []
    for _ in range(4):
        d, p, n = (int(v) for v in rng.choice(np.arange(5, 60), size=3, replace=False))
        n += 60  # more samples than the other sizes, and all three sizes differ
        W = rng.standard_normal((p, d)) / np.sqrt(d)
        a = rng.standard_normal(p) / np.sqrt(p)  # not symmetric: f differs from 0
        X = rng.standard_normal((n, d))
        y = X[:, 0] + 0.5 * rng.standard_normal(n)
        cases.append((W, a, X, y, float(rng.uniform(0.5, 3.0)) * p))
    problems = []
    for W, a, X, y, eta in cases:
        args = (W.copy(), a.copy(), X.copy(), y.copy(), eta)
        out, err = call_student(func, *args)
        if err:
            problems.append(err)
            break
        arr = None if out is None else np.asarray(out, dtype=float)
        variants = _giant_step_variants(W, a, X, y, eta)
        ref = variants.pop("reference")
        if arr is None or arr.shape != ref.shape:
            shape = None if arr is None else arr.shape
            hint = " (transposed?)" if shape == ref.shape[::-1] else ""
            problems.append(f"expected the updated first layer, an array of shape (p, d) = "
                            f"{ref.shape}, got {shape}{hint}")
            break
        if not np.all(np.isfinite(arr)):
            problems.append("the result contains NaN or infinity")
            break
        if not np.array_equal(args[0], W):
            problems.append("the function modifies its input W in place: return a new array")
            break
        scale = np.abs(ref - W).max()
        if np.allclose(arr, ref, rtol=1e-7, atol=1e-9 * scale):
            continue
        if np.allclose(arr, W, rtol=0, atol=1e-9 * scale):
            problems.append("the weights did not move: return W - eta * gradient")
        elif np.allclose(arr, (W - ref) / eta, rtol=1e-6, atol=1e-9 * scale / eta):
            problems.append("this is the gradient, not the updated weights W - eta * gradient")
        else:
            hint = next((name for name, v in variants.items()
                         if np.allclose(arr, v, rtol=1e-6, atol=1e-9 * np.abs(v - W).max())),
                        None)
            if hint is None:
                step, ref_step = (arr - W).ravel(), (ref - W).ravel()
                ratio = float(step @ ref_step / (ref_step @ ref_step))
                if np.allclose(step, ratio * ref_step, rtol=1e-6, atol=1e-9 * scale):
                    hint = _diagnose_step_ratio(ratio, W.shape[0], X.shape[0])
            problems.append(hint or "the update differs from a gradient step of the square loss "
                            f"by up to {np.abs(arr - ref).max() / scale:.1%} of its size on a "
                            "hidden instance")
        break
    return finish("one giant step (chapter 6)", problems, len(cases))


CHECKS = {"ex-ch6-giant-step": check_giant_step}
"""Exercise label -> check of this chapter."""
