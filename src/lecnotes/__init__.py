"""lecnotes: the helper package of *Feature learning in two-layer networks*.

Three tiers with a strict import order (enforced by ``tests/test_architecture.py``).

**Foundation** (chapter-independent; each module imports only the ones above it):

* :mod:`lecnotes._validate` - input validation shared by every module
* :mod:`lecnotes.stats` - statistics over seeds: means and errors, log-log slopes, crossings
* :mod:`lecnotes.hermite` - Hermite polynomials, Gaussian quadrature, Hermite coefficients
* :mod:`lecnotes.hermite_tensors` - Hermite tensors and their partial traces, matrix-free
* :mod:`lecnotes.targets` - single- and multi-index models, the catalogue of links
* :mod:`lecnotes.label_law` - the law of a label Y = phi(G): the piece decomposition of a link
* :mod:`lecnotes.conditional_hermite` - zeta_k(y) = E[h_k(G) | Y = y] and its norms
* :mod:`lecnotes.activations` - activations, their Gaussian moments, the losses
* :mod:`lecnotes.linalg` - top eigenpairs (matrix-free Lanczos), singular pairs, one sign rule
* :mod:`lecnotes.rmt` - Marchenko-Pastur laws, the spiked rectangular model, bulk edges
* :mod:`lecnotes.preprocessing` - label preprocessings of spectral estimators
* :mod:`lecnotes.overlaps` - overlaps of estimates and neurons with target directions
* :mod:`lecnotes.networks` - two-layer networks: scalings, gradients, GD, giant steps, ridge
* :mod:`lecnotes.kernels` - kernel ridge, arc-cosine / ReLU NTK, random features, lazy dynamics

**Chapters** (one module per lecture, named after the notebook stem; ``*_theory`` holds
the closed forms; they import only the foundation and their own companion):

* chapter 0 :mod:`lecnotes.setting`; 1 :mod:`lecnotes.mean_field_vs_ntk`;
  2 :mod:`lecnotes.exponents`; 3 :mod:`lecnotes.first_moment`,
  :mod:`lecnotes.first_moment_theory`; 4 :mod:`lecnotes.spectral`,
  :mod:`lecnotes.spectral_theory`; 5 :mod:`lecnotes.partial_trace`;
  6 :mod:`lecnotes.giant_steps`, :mod:`lecnotes.giant_steps_theory`;
  7 :mod:`lecnotes.two_steps`, :mod:`lecnotes.two_steps_theory`;
  8 :mod:`lecnotes.online_sgd`, :mod:`lecnotes.online_sgd_theory`

**Book** (imported by notebooks, tests and tools only):

* :mod:`lecnotes.claims` - the claim mechanism by which the book tests itself
* :mod:`lecnotes.plotting` - the book's figure style
* :mod:`lecnotes.widgets` - interactive explorers that also leave a static figure
* :mod:`lecnotes.grading` - graded checks of the coding exercises
"""

__version__ = "0.1.0"
