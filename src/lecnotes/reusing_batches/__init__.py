"""Chapter 9: Reusing batches: how gradient descent beats the information exponent.

The notebook ``lectures/09_reusing_batches.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.reusing_batches.theory` - the effective label and the two-step recursion;
* :mod:`lecnotes.reusing_batches.experiments` - the simulations and sweeps;
* :mod:`lecnotes.reusing_batches.explorer` - the figure and widget of the Explore section;
* :mod:`lecnotes.reusing_batches.sgd` - multi-pass SGD by the exact overlap chain;
* :mod:`lecnotes.reusing_batches.grading` - the graded check.
"""

from lecnotes.reusing_batches import experiments, explorer, grading, sgd, theory
from lecnotes.reusing_batches.experiments import (
    ProductSweep,
    StepRuns,
    TwoStepRuns,
    TwoStepSweep,
    gd_steps,
    log_gap,
    log_slope,
    product_two_steps,
    simulate_two_steps,
    two_step_sweep,
    two_steps,
)
from lecnotes.reusing_batches.grading import check_two_steps

__all__ = [
    "experiments",
    "explorer",
    "sgd",
    "grading",
    "check_two_steps",
    "theory",
    "two_steps",
    "TwoStepRuns",
    "simulate_two_steps",
    "TwoStepSweep",
    "two_step_sweep",
    "ProductSweep",
    "product_two_steps",
    "StepRuns",
    "gd_steps",
    "log_slope",
    "log_gap",
]

SCALE_NOTES = {}
"""What the chapter says of its claims that widen or fail at scale 2 (`make scale`,
the robustness page): measured at root 0, scales 1 and 2."""
