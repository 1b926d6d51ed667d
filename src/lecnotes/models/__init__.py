"""What two or more chapters train or compare (the middle tier of :mod:`lecnotes`).

Models import :mod:`lecnotes.core` only, and every chapter may import them:

* :mod:`lecnotes.models.networks` - the two-layer network: scalings, gradients, gradient
  descent, the empirical NTK (chapters 1, 6, 7)
* :mod:`lecnotes.models.layerwise` - one layer at a time: the giant step, many steps, ridge on
  the features (chapters 6, 7)
* :mod:`lecnotes.models.kernels` - the arc-cosine / ReLU NTK and RBF kernels, random features
* :mod:`lecnotes.models.kernel_methods` - kernel ridge and gradient descent, RKHS norms,
  Rademacher complexity, the risk on a single-index target (chapter 1)
"""
