"""Chapter 0: The setting: single- and multi-index models, Hermite analysis, overlaps.

The notebook ``lectures/00_setting.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.setting.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.setting.figures` - the chapter's multi-panel figures;
* :mod:`lecnotes.setting.grading`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``setting.theory``, ...).
"""

from lecnotes.setting import figures, grading
from lecnotes.setting.experiments import (
    CoefficientDecayFit,
    SingleIndexReduced,
    StaircaseResult,
    SteinResult,
    coefficient_decay_fit,
    first_moment_reduced,
    quadratic_moment_sweep,
    random_direction_overlaps,
    sign_coefficients,
    staircase_reduced,
    staircase_sweep,
    stein_sweep,
)
from lecnotes.setting.grading import (
    check_noise_level,
)

__all__ = [
    "experiments",
    "figures",
    "grading",
    "random_direction_overlaps",
    "sign_coefficients",
    "SteinResult",
    "stein_sweep",
    "quadratic_moment_sweep",
    "StaircaseResult",
    "staircase_sweep",
    "staircase_reduced",
    "SingleIndexReduced",
    "first_moment_reduced",
    "CoefficientDecayFit",
    "coefficient_decay_fit",
    "check_noise_level",
]
