"""Chapter 4: Second moments: spectral estimators and their sharp thresholds.

The notebook ``lectures/04_spectral.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.spectral.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.spectral.explorer`;
* :mod:`lecnotes.spectral.grading`;
* :mod:`lecnotes.spectral.optimal_theory`;
* :mod:`lecnotes.spectral.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``spectral.theory``, ...).
"""

from lecnotes.spectral import explorer, grading, optimal_theory, theory
from lecnotes.spectral.experiments import (
    SPREAD_LIMIT,
    DavisKahanResult,
    DavisKahanSweep,
    RawLabelSweep,
    SpectralSimulation,
    SpectraResult,
    ThresholdEstimate,
    davis_kahan,
    davis_kahan_sweep,
    raw_label_sweep,
    sample_spectral_matrices,
    simulate_spectral,
    simulated_threshold,
    spectra_over_seeds,
    spectral_estimator,
    spectral_matrix,
    spectral_sweep,
    spectrum,
)
from lecnotes.spectral.grading import (
    check_top_eigenvector,
)

__all__ = [
    "experiments",
    "explorer",
    "grading",
    "optimal_theory",
    "theory",
    "SPREAD_LIMIT",
    "spectral_matrix",
    "spectral_estimator",
    "spectrum",
    "simulate_spectral",
    "davis_kahan",
    "DavisKahanResult",
    "SpectralSimulation",
    "sample_spectral_matrices",
    "SpectraResult",
    "spectra_over_seeds",
    "spectral_sweep",
    "ThresholdEstimate",
    "simulated_threshold",
    "RawLabelSweep",
    "raw_label_sweep",
    "DavisKahanSweep",
    "davis_kahan_sweep",
    "check_top_eigenvector",
]
