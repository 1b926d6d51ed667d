"""Chapter 6: Giant steps: one large-batch gradient step, many steps, staircases.

The notebook ``lectures/06_giant_steps.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.giant_steps.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.giant_steps.explorer`;
* :mod:`lecnotes.giant_steps.grading`;
* :mod:`lecnotes.giant_steps.ridge_theory`;
* :mod:`lecnotes.giant_steps.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``giant_steps.theory``, ...).
"""

from lecnotes.giant_steps import explorer, grading, ridge_theory, theory
from lecnotes.giant_steps.experiments import (
    STAIRCASE_RUNS,
    GeneralisationRuns,
    OneStepSpectra,
    OneStepSweep,
    ReferenceRuns,
    TwoDirectionSweep,
    TwoPhaseResult,
    fresh_steps,
    fresh_steps_sweep,
    generalisation_sweep,
    leap2_sweep,
    one_step_spectra,
    one_step_sweep,
    reference_sweep,
    staircase_runs,
    two_direction_sweep,
    two_phase,
)
from lecnotes.giant_steps.grading import (
    check_giant_step,
)

__all__ = [
    "experiments",
    "explorer",
    "grading",
    "ridge_theory",
    "theory",
    "TwoPhaseResult",
    "two_phase",
    "OneStepSpectra",
    "one_step_spectra",
    "OneStepSweep",
    "one_step_sweep",
    "leap2_sweep",
    "TwoDirectionSweep",
    "two_direction_sweep",
    "fresh_steps",
    "fresh_steps_sweep",
    "STAIRCASE_RUNS",
    "staircase_runs",
    "GeneralisationRuns",
    "generalisation_sweep",
    "ReferenceRuns",
    "reference_sweep",
    "check_giant_step",
]
