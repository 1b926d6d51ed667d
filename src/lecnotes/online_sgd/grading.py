"""Graded check of chapter 8: one spherical SGD step for many seeds at once.

Exercise {ref}`ex-ch8-sgd-step`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable
from math import factorial, sqrt

import numpy as np

from lecnotes.book.grading import Report, call_student, finish, graded
from lecnotes.core import validate as V
from lecnotes.online_sgd.experiments import dlink, sgd_step

__all__ = ["check_sgd_step", "CHECKS"]


def _variants(W, X, y, eta, k):
    """The reference step and the steps produced by common mistakes (name -> array)."""
    Z = np.einsum("sbd,sd->sb", X, W)
    r = y * dlink(k, Z)

    def step(r, project=True, normalise=True, norm=X.shape[1], sign=1.0):
        G = sign * np.einsum("sb,sbd->sd", r, X) / norm
        if project:
            G = G - np.sum(G * W, axis=1, keepdims=True) * W
        out = W + eta * G
        return out / np.linalg.norm(out, axis=1, keepdims=True) if normalise else out

    return {
        "reference": sgd_step(W, X, y, eta, k),
        "the gradient is not projected on the tangent space of the sphere: remove its "
        "component along w before stepping": step(r, project=False),
        "the new neuron is not normalised: divide by its norm to stay on the sphere":
            step(r, normalise=False),
        "the step goes the wrong way: the correlation loss is -y sigma(w.x), so a descent "
        "step adds eta y sigma'(w.x) x": step(r, sign=-1.0),
        "the batch gradient is a sum, not a mean, over the n_b samples": step(r, norm=1),
        "the activation is He_k instead of the normalised h_k = He_k / sqrt(k!)":
            step(r * sqrt(factorial(k))),
    }


@graded
def check_sgd_step(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch8-sgd-step`: ``func(W, X, y, eta, k)`` returns the neurons after one
    spherical SGD step {eq}`eq-ch8-step` of the correlation loss with student :math:`h_k`,
    for every seed at once (``W`` of shape ``(S, d)``, ``X`` of shape ``(S, n_b, d)``).

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    cases = []
    for k in (1, 2, 3):
        S, nb = (int(v) for v in rng.integers(2, 9, size=2))
        d = int(rng.integers(10, 16))  # more coordinates than seeds: a transpose is caught
        W = rng.standard_normal((S, d))
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        X = rng.standard_normal((S, nb, d))
        y = rng.standard_normal((S, nb))
        cases.append((W, X, y, float(rng.uniform(0.2, 1.5)), k))
    problems = []
    for W, X, y, eta, k in cases:
        args = (W.copy(), X.copy(), y.copy(), eta, k)
        out, err = call_student(func, *args)
        if err:
            problems.append(err)
            break
        variants = _variants(W, X, y, eta, k)
        ref = variants.pop("reference")
        arr = None if out is None else np.asarray(out, dtype=float)
        if arr is None or arr.shape != ref.shape:
            problems.append(f"expected the new neurons, an array of shape (S, d) = {ref.shape}, "
                            f"got {None if arr is None else arr.shape}")
            break
        if not np.array_equal(args[0], W):
            problems.append("the function modifies its input W in place: return a new array")
            break
        if np.allclose(arr, ref, rtol=1e-7, atol=1e-10):
            continue
        hint = next((name for name, v in variants.items()
                     if np.allclose(arr, v, rtol=1e-6, atol=1e-10)), None)
        problems.append(hint or f"the step differs from the spherical SGD step (k = {k}) on a "
                        "hidden instance")
        break
    return finish("one spherical SGD step (chapter 8)", problems, len(cases))


CHECKS = {"ex-ch8-sgd-step": check_sgd_step}
"""Exercise label -> check of this chapter."""
