"""Chapter 1: Mean-field vs NTK (lazy) training.

The notebook ``lectures/01_mean_field_vs_ntk.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.mean_field_vs_ntk.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.mean_field_vs_ntk.budgets` - closed-form predictions of the norms a fit costs;
* :mod:`lecnotes.mean_field_vs_ntk.capacity`;
* :mod:`lecnotes.mean_field_vs_ntk.explorer`;
* :mod:`lecnotes.mean_field_vs_ntk.figures` - the chapter's multi-panel figures;
* :mod:`lecnotes.mean_field_vs_ntk.grading`;
* :mod:`lecnotes.mean_field_vs_ntk.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``mean_field_vs_ntk.theory``, ...).
"""

from lecnotes.mean_field_vs_ntk import budgets, capacity, explorer, figures, grading, theory
from lecnotes.mean_field_vs_ntk.experiments import (
    BUDGET_KEYS,
    MovementResult,
    NormBudgetResult,
    RademacherResult,
    barrier_window,
    c2_linear_fits,
    c2_scaling_exponent,
    krr_barrier_sweep,
    krr_point,
    movement_sweep,
    norm_budget_sweep,
    param_distance,
    path_norm,
    path_norm_rademacher_bound,
    rademacher_linear_sweep,
    relative_movement,
    risk_at_d_squared,
    target,
    with_seeds,
)
from lecnotes.mean_field_vs_ntk.grading import (
    check_relu_ntk,
)

__all__ = [
    "experiments",
    "budgets",
    "capacity",
    "explorer",
    "figures",
    "grading",
    "theory",
    "path_norm",
    "path_norm_rademacher_bound",
    "relative_movement",
    "param_distance",
    "target",
    "MovementResult",
    "movement_sweep",
    "RademacherResult",
    "rademacher_linear_sweep",
    "BUDGET_KEYS",
    "NormBudgetResult",
    "norm_budget_sweep",
    "krr_point",
    "krr_barrier_sweep",
    "with_seeds",
    "c2_scaling_exponent",
    "c2_linear_fits",
    "barrier_window",
    "risk_at_d_squared",
    "check_relu_ntk",
]

SCALE_NOTES = {
    'ntk-linearisation-rate': (
        'Was power, not rate: with 5 seeds the one-sided bound of 7.17 SE reached -0.474 at '
        'scale 2 (slope -0.74, SE 0.036). With 12 seeds (4.02 SE) the fitted slope is -0.71 '
        'at scale 1 and -0.73 at scale 2 (SE 0.018 and 0.017), below the bound '
        '-1/2 - 4.02 SE = -0.57 at both: the claim holds at both scales and at roots 0-5.'
    ),
}
"""What the chapter says of its claims that widen or fail at scale 2 (`make scale`,
the robustness page): measured at root 0, scales 1 and 2."""
