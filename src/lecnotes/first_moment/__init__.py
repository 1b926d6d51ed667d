"""Chapter 3: Label preprocessing and first-moment (Stein) estimators.

The notebook ``lectures/03_first_moment.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.first_moment.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.first_moment.explorer`;
* :mod:`lecnotes.first_moment.grading`;
* :mod:`lecnotes.first_moment.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``first_moment.theory``, ...).
"""

from lecnotes.first_moment import explorer, grading, theory
from lecnotes.first_moment.experiments import (
    ReducedParts,
    StepComparison,
    StepSweep,
    first_moment,
    gradient_step_sweep,
    loss_preprocessing,
    preprocess,
    reduced_first_moment_overlaps,
    simulate_first_moment_overlaps,
    simulate_first_moment_overlaps_by_link,
    single_neuron_gradient,
    step_versus_estimator,
)
from lecnotes.first_moment.grading import (
    check_optimal_q,
)

__all__ = [
    "experiments",
    "explorer",
    "grading",
    "theory",
    "preprocess",
    "first_moment",
    "simulate_first_moment_overlaps",
    "simulate_first_moment_overlaps_by_link",
    "reduced_first_moment_overlaps",
    "ReducedParts",
    "loss_preprocessing",
    "single_neuron_gradient",
    "StepComparison",
    "step_versus_estimator",
    "StepSweep",
    "gradient_step_sweep",
    "check_optimal_q",
]
