"""Graded check of chapter 2: the partner b(a) of the generative-exponent-4 family.

Exercise {ref}`ex-ch2-partner`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, finish, graded, scalar_answer
from lecnotes.core import validate as V
from lecnotes.exponents.experiments import gen4_interval

__all__ = ["check_gen4_partner", "CHECKS"]


@graded
def check_gen4_partner(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch2-partner`: ``func(a)`` returns the :math:`b>1` with
    :math:`a e^{-a^2/2} = b e^{-b^2/2}`, for :math:`0<a<1`.

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """

    rng = V.generator(rng)
    alist = np.sort(rng.uniform(0.05, 0.95, size=5))
    problems = []
    for a in alist:
        val, err = scalar_answer(func, float(a))
        if err:
            problems.append(err)
            break
        ref = gen4_interval(float(a))[1]
        if np.isclose(val, a, rtol=1e-8):
            problems.append("this is a itself, the trivial solution: look for the root b > 1")
            break
        if val <= 1:
            problems.append("the partner must be larger than 1 (u exp(-u^2/2) peaks at u = 1)")
            break
        if abs(val - ref) > 1e-8 * max(1.0, ref):
            resid = val * np.exp(-val**2 / 2) - a * np.exp(-a**2 / 2)
            problems.append(f"not accurate enough: at one hidden a the equation is off by "
                            f"{abs(resid):.1e}; solve it to 1e-10")
            break
    return finish("partner of a (chapter 2)", problems, len(alist))


CHECKS = {"ex-ch2-partner": check_gen4_partner}
"""Exercise label -> check of this chapter."""
