"""Chapter 10: Hierarchical targets, and what depth buys.

The notebook ``lectures/10_hierarchical_targets.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.hierarchical.theory` - the target's moments and the stages' closed forms;
* :mod:`lecnotes.hierarchical.experiments` - the three stages and the kernel baseline;
* :mod:`lecnotes.hierarchical.shallow` - random features and the one-giant-step network on the
  same budgets;
* :mod:`lecnotes.hierarchical.matched` - the matched two-layer learner (learned subspace, then
  a polynomial ridge on the latent coordinates) and the low-degree predictor of the floor;
* :mod:`lecnotes.hierarchical.joint` - a three-layer network trained jointly by giant steps;
* :mod:`lecnotes.hierarchical.layerwise` - the layer-wise protocol run by gradient descent;
* :mod:`lecnotes.hierarchical.controls` - stage 2 given the latent space, radial and signed
  features;
* :mod:`lecnotes.hierarchical.multi_index` - a two-feature (multi-index) target and its second
  stage, the span of two quadratic forms;
* :mod:`lecnotes.hierarchical.explorer` - the figures and the widget of the Explore section;
* :mod:`lecnotes.hierarchical.grading` - the graded check;
* :mod:`lecnotes.hierarchical.numerics` - the sweeps' numerical helpers (top eigenvectors,
  ridge paths, work arrays, crossings).
"""

from lecnotes.hierarchical import (
    controls,
    experiments,
    explorer,
    grading,
    joint,
    layerwise,
    matched,
    multi_index,
    shallow,
    theory,
)
from lecnotes.hierarchical.controls import StageTwoControl, stage_two_control
from lecnotes.hierarchical.experiments import (
    DepthSweep,
    Stage1Sweep,
    Stage2Sweep,
    depth_sweep,
    feature_overlap,
    latent_rank,
    log_crossing,
    low_degree_errors,
    quadratic_feature,
    sample_sight,
    stage_one_subspace,
    stage_one_sweep,
    stage_two_sweep,
    subspace_overlap,
)
from lecnotes.hierarchical.grading import check_feature_overlap
from lecnotes.hierarchical.joint import JointSweep, joint_sweep
from lecnotes.hierarchical.layerwise import LayerwiseGD, layerwise_gd_sweep, quadratic_corr
from lecnotes.hierarchical.matched import latent_ridge_errors, welch_z
from lecnotes.hierarchical.multi_index import MightSweep, might_sweep
from lecnotes.hierarchical.shallow import (
    ShallowSweep,
    null_errors,
    rf_sweep,
    shallow_sweep,
    trend_size,
)

__all__ = [
    "controls",
    "experiments",
    "explorer",
    "grading",
    "joint",
    "layerwise",
    "matched",
    "multi_index",
    "shallow",
    "theory",
    "MightSweep",
    "might_sweep",
    "check_feature_overlap",
    "DepthSweep",
    "Stage1Sweep",
    "Stage2Sweep",
    "depth_sweep",
    "feature_overlap",
    "latent_rank",
    "log_crossing",
    "quadratic_feature",
    "sample_sight",
    "stage_one_subspace",
    "stage_one_sweep",
    "stage_two_sweep",
    "subspace_overlap",
    "ShallowSweep",
    "null_errors",
    "shallow_sweep",
    "rf_sweep",
    "trend_size",
    "JointSweep",
    "LayerwiseGD",
    "layerwise_gd_sweep",
    "quadratic_corr",
    "joint_sweep",
    "latent_ridge_errors",
    "low_degree_errors",
    "welch_z",
    "StageTwoControl",
    "stage_two_control",
]
