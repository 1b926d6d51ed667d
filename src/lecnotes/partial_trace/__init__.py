"""Chapter 5: Hermite tensors and the partial trace.

The notebook ``lectures/05_partial_trace.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.partial_trace.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.partial_trace.explorer`;
* :mod:`lecnotes.partial_trace.grading`;
* :mod:`lecnotes.partial_trace.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``partial_trace.theory``, ...).
"""

from lecnotes.partial_trace import explorer, grading, theory
from lecnotes.partial_trace.experiments import (
    Extrapolation,
    PartialTraceSamples,
    PartialTraceSimulation,
    VectorEstimate,
    critical_alpha,
    extrapolate_threshold,
    interval_lambda4,
    overlap_sweep,
    partial_trace_estimator,
    partial_trace_matrix,
    partial_trace_sweep,
    sample_partial_trace_matrices,
    simulate_overlaps,
    simulate_partial_trace,
    unfolding_estimator,
    vector_contraction_estimator,
    vector_contraction_limit,
)
from lecnotes.partial_trace.grading import (
    check_partial_trace_matvec,
)

__all__ = [
    "experiments",
    "explorer",
    "grading",
    "theory",
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
    "check_partial_trace_matvec",
]
