"""Graded check of chapter 0: the noise level of the first-moment estimator.

Exercise {ref}`ex-ch0-noise-level`; the check draws hidden instances from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lecnotes.book.grading import Report, diagnose_ratio, finish, graded, scalar_answer
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import get_link

__all__ = ["check_noise_level", "CHECKS"]


def _ref_noise_level(link, d):

    f = get_link(link)
    bp = getattr(f, "breakpoints", ())
    along = gaussian_expectation(lambda g: (f(g) * g) ** 2, breakpoints=bp)
    energy = gaussian_expectation(lambda g: f(g) ** 2, breakpoints=bp)
    return float(along / ((d - 1) * energy))


@graded
def check_noise_level(func: Callable, rng=None) -> Report:
    r"""Exercise {ref}`ex-ch0-noise-level`: ``func(link, d)`` returns
    :math:`\mathrm{Var}(\varphi(G)G)/((d-1)\mathbb E[\varphi(G)^2])` for links with
    :math:`c_1 = 0`.

    Parameters, returns and errors: see :func:`lecnotes.book.grading.graded`.
    """
    rng = V.generator(rng)
    cases = [("abs", int(rng.integers(50, 900))), ("quadratic", int(rng.integers(50, 900))),
             ("he4", int(rng.integers(50, 900))), ("he2", int(rng.integers(50, 900)))]
    problems = []
    for link, d in cases:
        val, err = scalar_answer(func, link, d)
        if err:
            problems.append(err)
            break
        ref = _ref_noise_level(link, d)
        if not np.isclose(val, ref, rtol=1e-6):
            hint = diagnose_ratio(val / ref, d) if ref else None
            problems.append(hint or f"the value for one hidden link is off by "
                            f"{abs(val / ref - 1):.1%} (relative); it must be accurate to 1e-6")
            break
    return finish("noise level (chapter 0)", problems, len(cases))


CHECKS = {"ex-ch0-noise-level": check_noise_level}
"""Exercise label -> check of this chapter."""
