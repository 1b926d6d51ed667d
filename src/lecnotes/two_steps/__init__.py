"""Chapter 7: Two steps: reused vs fresh batches in linear-width networks.

The notebook ``lectures/07_two_steps.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.two_steps.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.two_steps.explorer` - the live explorer and the chapter's static figures;
* :mod:`lecnotes.two_steps.finite`;
* :mod:`lecnotes.two_steps.finite_size` - the bulk of W_1 and the localised powers, measured;
* :mod:`lecnotes.two_steps.grading`;
* :mod:`lecnotes.two_steps.phase`;
* :mod:`lecnotes.two_steps.reuse` - the sections on the reused batch;
* :mod:`lecnotes.two_steps.studies` - one function per section of the notebook, a named result each;
* :mod:`lecnotes.two_steps.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``two_steps.theory``, ...).
"""

from lecnotes.two_steps import explorer, finite, finite_size, grading, phase, reuse, studies, theory
from lecnotes.two_steps.experiments import (
    OneStepSpikes,
    ReuseArm,
    ReuseResult,
    TaylorStrengths,
    TwoStepSpectra,
    feature_matrix,
    hermite_alignment,
    outlier_alignment,
    projected_strength,
    rank_one_ratio,
    self_term,
    simulate_one_step_spikes,
    simulate_reuse,
    simulate_two_step_counts,
    taylor_strengths,
)
from lecnotes.two_steps.grading import (
    check_self_term,
)

__all__ = [
    "experiments",
    "explorer",
    "finite",
    "finite_size",
    "grading",
    "phase",
    "reuse",
    "studies",
    "theory",
    "hermite_alignment",
    "feature_matrix",
    "projected_strength",
    "rank_one_ratio",
    "OneStepSpikes",
    "simulate_one_step_spikes",
    "TwoStepSpectra",
    "simulate_two_step_counts",
    "outlier_alignment",
    "TaylorStrengths",
    "taylor_strengths",
    "ReuseArm",
    "ReuseResult",
    "simulate_reuse",
    "self_term",
    "check_self_term",
]
