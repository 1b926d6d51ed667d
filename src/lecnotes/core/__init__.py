"""The foundations every chapter uses (the bottom tier of :mod:`lecnotes`).

Nothing here imports a model, a chapter or the book infrastructure; within ``core`` a module
imports only the ones listed before it:

* :mod:`lecnotes.core.validate` - input validation, the rng convention and the seed root
* :mod:`lecnotes.core.scale` - the size knob ``LECNOTES_SCALE`` through which chapters declare sizes
* :mod:`lecnotes.core.stats` - statistics over seeds: means and errors, log-log slopes, crossings
* :mod:`lecnotes.core.hermite` - Hermite polynomials, Gaussian quadrature, Hermite coefficients
* :mod:`lecnotes.core.hermite_tensors` - Hermite tensors and their partial traces, matrix-free
* :mod:`lecnotes.core.targets` - single- and multi-index models, the catalogue of links
* :mod:`lecnotes.core.label_law` - the law of a label Y = phi(G): the piece decomposition
* :mod:`lecnotes.core.label_inverse` - inverse branches, derivatives and atoms of the pieces
* :mod:`lecnotes.core.conditional_hermite` - zeta_k(y) = E[h_k(G) | Y = y] and its norms
* :mod:`lecnotes.core.exponents` - the information and generative exponents (chapters 2, 5)
* :mod:`lecnotes.core.activations` - activations, their Gaussian moments, the losses
* :mod:`lecnotes.core.linalg` - top eigenpairs (matrix-free Lanczos), singular pairs, signs
* :mod:`lecnotes.core.rmt` - Marchenko-Pastur laws, the spiked rectangular model, bulk edges
* :mod:`lecnotes.core.preprocessing` - label preprocessings of spectral estimators
* :mod:`lecnotes.core.overlaps` - overlaps of estimates and neurons with target directions
* :mod:`lecnotes.core.first_moment` - the first-moment (Stein) estimator (chapters 0, 2, 3)
"""
