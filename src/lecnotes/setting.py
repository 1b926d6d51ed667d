r"""Chapter 0, the setting: single- and multi-index models, Hermite analysis, overlaps.

The chapter uses the foundation modules only (:mod:`lecnotes.targets`,
:mod:`lecnotes.hermite`, :mod:`lecnotes.overlaps`, :mod:`lecnotes.first_moment`); its seed
sweeps are written in the notebook for now. This module is where they go (issue 15, phase 2).
"""

from __future__ import annotations

__all__ = [
]



