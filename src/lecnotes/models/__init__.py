"""What two or more chapters train or compare (the middle tier of :mod:`lecnotes`).

Models import :mod:`lecnotes.core` only, and every chapter may import them:

* :mod:`lecnotes.models.networks` - the two-layer network: scalings, gradients, gradient
  descent, the giant step, many steps, ridge on the features (chapters 1, 6, 7)
* :mod:`lecnotes.models.kernels` - kernel ridge, the arc-cosine / ReLU NTK, random features,
  lazy dynamics (chapter 1)
"""
