"""Chapter 5: Hermite tensors and the partial trace.

The notebook ``lectures/05_partial_trace.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.partial_trace.estimators` - the estimators beyond second moments;
* :mod:`lecnotes.partial_trace.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.partial_trace.explorer`;
* :mod:`lecnotes.partial_trace.grading`;
* :mod:`lecnotes.partial_trace.surrogate` - a spike added to given noise: what the noise explains;
* :mod:`lecnotes.partial_trace.theory` - closed forms, the large-d sweep and the noise of M_4;

The names of ``estimators``, ``experiments``, the closed forms of ``theory`` and the graded
checks are exported here; the other
modules are reached as attributes (``partial_trace.theory``, ...).
"""

from lecnotes.partial_trace import (
    estimators,
    experiments,
    explorer,
    grading,
    surrogate,
    theory,
)
from lecnotes.partial_trace.estimators import (
    VectorEstimate,
    extreme_eigenpair,
    partial_trace_estimator,
    partial_trace_matrix,
    unfolding_estimator,
    vector_contraction_estimator,
)
from lecnotes.partial_trace.experiments import (
    CollapseRatio,
    Extrapolation,
    PartialTraceSamples,
    PartialTraceSimulation,
    PowerLawIntercept,
    ScaleRun,
    collapse_ratio,
    extrapolate_threshold,
    overlap_sweep,
    partial_trace_sweep,
    power_law_intercept,
    sample_partial_trace_matrices,
    scale_run,
    simulate_overlaps,
    simulate_partial_trace,
)
from lecnotes.partial_trace.grading import (
    check_partial_trace_matvec,
)
from lecnotes.partial_trace.theory import (
    critical_alpha,
    gen3_link,
    interval_lambda4,
    tensor_contraction_errors,
    trace_identity_errors,
    vector_contraction_limit,
)

__all__ = [
    "estimators",
    "experiments",
    "surrogate",
    "explorer",
    "grading",
    "theory",
    "extreme_eigenpair",
    "partial_trace_matrix",
    "partial_trace_estimator",
    "vector_contraction_estimator",
    "unfolding_estimator",
    "simulate_partial_trace",
    "simulate_overlaps",
    "VectorEstimate",
    "PartialTraceSimulation",
    "PartialTraceSamples",
    "sample_partial_trace_matrices",
    "interval_lambda4",
    "critical_alpha",
    "vector_contraction_limit",
    "partial_trace_sweep",
    "overlap_sweep",
    "Extrapolation",
    "extrapolate_threshold",
    "CollapseRatio",
    "collapse_ratio",
    "ScaleRun",
    "scale_run",
    "PowerLawIntercept",
    "power_law_intercept",
    "tensor_contraction_errors",
    "trace_identity_errors",
    "gen3_link",
    "check_partial_trace_matvec",
]

SCALE_NOTES = {
    'drift-decays': (
        'Power at the larger sizes: at d = 96..768 the drift still decays (fitted p = '
        '0.60, against 0.80 at d = 48..384) but its bootstrap t x SE now covers 0; the '
        'effective exponent of n_1/2 rises from 1.80 to 1.90 towards the d^2 law, so the '
        'larger sizes point to the limit while resolving the drift less well.'
    ),
}
"""What the chapter says of its claims that widen or fail at scale 2 (`make scale`,
the robustness page): measured at root 0, scales 1 and 2."""
