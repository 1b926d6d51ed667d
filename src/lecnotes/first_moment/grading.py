"""Graded check of chapter 3: the optimal first-moment preprocessing for the noisy sign.

Exercise {ref}`ex-ch3-coding`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, finish, graded, scalar_answer
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation

__all__ = ["check_optimal_q", "CHECKS"]


def _ref_optimal_q(tau):

    return float(2 / np.pi * gaussian_expectation(lambda z: np.tanh((1 + tau * z) / tau**2)
                                                  ** 2))


@graded
def check_optimal_q(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch3-coding`: ``func(tau)`` returns :math:`q = \mathbb E[\mathbb E[G|Y]^2]`
    for :math:`Y = \mathrm{sign}(G) + \tau Z`.

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    taus = np.sort(rng.uniform(0.2, 3.0, size=4))
    problems = []
    for tau in taus:
        val, err = scalar_answer(func, float(tau))
        if err:
            problems.append(err)
            break
        ref = _ref_optimal_q(tau)
        if not 0 <= val <= 1:
            problems.append("q is a squared correlation and must lie in [0, 1]")
            break
        if not np.isclose(val, ref, rtol=1e-6, atol=1e-9):
            if np.isclose(val, ref * np.pi / 2, rtol=1e-4):
                problems.append("missing the factor 2/pi = E|G|^2: E[G | sign G] = sqrt(2/pi) "
                                "sign G")
            elif np.isclose(val, 2 / np.pi / (1 + tau**2), rtol=1e-4):
                problems.append("this is mu^2/E[T^2] for the raw labels T(y) = y, not for the "
                                "optimal preprocessing")
            else:
                problems.append(f"the value for one hidden noise level is off by "
                                f"{abs(val / ref - 1):.2%} (relative); it must be accurate to "
                                "1e-6")
            break
    return finish("optimal q for the noisy sign (chapter 3)", problems, len(taus))


CHECKS = {"ex-ch3-coding": check_optimal_q}
"""Exercise label -> check of this chapter."""
