"""lecnotes: the helper package of *Feature learning in two-layer networks*.

Each module holds one idea of the book; a chapter imports what it discusses:

* :mod:`lecnotes.hermite` - Hermite polynomials, Gaussian expectations, Hermite tensors
* :mod:`lecnotes.targets` - single- and multi-index models, the catalogue of links
* :mod:`lecnotes.exponents` - information and generative exponents, E[h_k(G) | Y]
* :mod:`lecnotes.estimators` - first-moment estimators, overlaps, one gradient step as an estimator
* :mod:`lecnotes.networks` - two-layer networks: scalings, gradients, GD, giant steps
* :mod:`lecnotes.kernels` - kernel ridge, arc-cosine / ReLU NTK, random features, lazy dynamics
* :mod:`lecnotes.spectral` - second-moment and partial-trace spectral estimators (matrix-free)
* :mod:`lecnotes.theory` - closed forms: first-moment overlaps, spectral asymptotics, thresholds
* :mod:`lecnotes.claims` - the claim mechanism by which the book tests itself
* :mod:`lecnotes.plotting` - the book's figure style
* :mod:`lecnotes.widgets` - interactive explorers that also leave a static figure
* :mod:`lecnotes.grading` - graded checks of the coding exercises
"""

__version__ = "0.1.0"
