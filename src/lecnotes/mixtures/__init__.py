"""Chapter 11: Beyond one Gaussian: mixtures, universality and message passing.

The notebook ``lectures/11_gaussian_mixtures.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.mixtures.ridge` - the sharp asymptotics of ridge on the two mixture families;
* :mod:`lecnotes.mixtures.logistic` - the sharp asymptotics of logistic regression (any convex
  loss) on the means family, and its simulation;
* :mod:`lecnotes.mixtures.amp` - AMP, state evolution and free entropy of the sparse
  k-cluster mixture;
* :mod:`lecnotes.mixtures.information` - the information-theoretic threshold and its
  small-density limit;
* :mod:`lecnotes.mixtures.shared` - the shared-support model of the authors' code, simulated;
* :mod:`lecnotes.mixtures.thresholds` - locating the thresholds, and PCA;
* :mod:`lecnotes.mixtures.sparse` - diagonal thresholding and PCA beside AMP at small density;
* :mod:`lecnotes.mixtures.experiments` - the simulations and sweeps;
* :mod:`lecnotes.mixtures.feature_step` - one giant step of chapter 6 on mixture inputs;
* :mod:`lecnotes.mixtures.explorer` - figures and the widget of the Explore section;
* :mod:`lecnotes.mixtures.grading` - the graded check.
"""

from lecnotes.mixtures import (
    amp,
    experiments,
    explorer,
    feature_step,
    grading,
    information,
    logistic,
    ridge,
    shared,
    sparse,
    thresholds,
)
from lecnotes.mixtures.experiments import amp_sweep, ridge_sweep
from lecnotes.mixtures.grading import check_cluster_denoiser
from lecnotes.mixtures.sparse import sparse_sweep

__all__ = [
    "amp",
    "experiments",
    "explorer",
    "feature_step",
    "grading",
    "information",
    "shared",
    "logistic",
    "ridge",
    "sparse",
    "thresholds",
    "amp_sweep",
    "ridge_sweep",
    "sparse_sweep",
    "check_cluster_denoiser",
    "SCALE_NOTES",
]

SCALE_NOTES = {
    "hard-phase-informed": (
        "AMP from the informed start inside the gap (rho = 0.05, 0.9 lambda_alg) sits on "
        "the informative fixed point, which some seeds leave at finite d: at d = 400 it "
        "falls to 0 on 4 of 16 seeds (mean 0.40), at d = 800 its mean is 0.53 (16 seeds, "
        "root 0) against the state evolution's 0.596 (4000 draws per support; 0.585 with "
        "32000). The claim is made at the largest size of each scale (scale 2: 0.520 +- "
        "0.047 at d = 1600); the escapes of the uninformed start are printed beside it "
        "(root 0: 6/16, 2/16, 1/8 at d = 400, 800, 1600; scale 2: 2/16, 2/16, 0/8 at d = "
        "800, 1600, 3200)."
    ),
}
"""Claims that move away from their reference at scale 2 (``make scale``), and why."""
