"""lecnotes: the helper package of *Feature learning in two-layer networks*.

A chapter is a folder. The package has four tiers, and imports go one way, downwards
(``tests/test_architecture.py`` walks every import, function-level ones included):

1. :mod:`lecnotes.core` - the foundations every chapter uses: validation, the rng convention
   and the seed root, statistics over seeds, Hermite analysis, targets and links,
   activations and losses, linear algebra, random-matrix laws, preprocessings, overlaps.
2. :mod:`lecnotes.models` - what two or more chapters train or compare: the two-layer network
   and the kernels. A models tier between core and the chapters keeps core free of training
   code.
3. One subpackage per lecture, named after its subject: :mod:`~lecnotes.setting` (0),
   :mod:`~lecnotes.mean_field_vs_ntk` (1), :mod:`~lecnotes.exponents` (2),
   :mod:`~lecnotes.first_moment` (3), :mod:`~lecnotes.spectral` (4),
   :mod:`~lecnotes.partial_trace` (5), :mod:`~lecnotes.giant_steps` (6),
   :mod:`~lecnotes.two_steps` (7), :mod:`~lecnotes.online_sgd` (8). Each holds
   ``experiments`` (simulations and sweeps that return named results), ``theory`` (closed
   forms), ``explorer`` and ``grading``, and more modules where the ideas split. A chapter
   imports core and models, never another chapter: what two chapters share moves down.
4. :mod:`lecnotes.book` - claims, plotting, and the bases of the explorers and graded checks.
   It imports core only; notebooks, tests and tools import it, and within a chapter only its
   ``explorer`` and ``grading``.

:mod:`lecnotes.chapters` maps lectures to subpackages (for tools and tests). A notebook imports
its own chapter's subpackage, ``lecnotes.core`` and ``lecnotes.book``.
"""

__version__ = "0.1.0"
