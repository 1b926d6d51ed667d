"""The chapter map: which subpackage serves which lecture (the top of :mod:`lecnotes`).

Imported by tools and tests only (nothing in the package imports it). Adding a chapter adds
one line to :data:`CHAPTERS` (README, "Adding a chapter"; ``tests/test_architecture.py``
checks that every lecture of ``_toc.yml`` has its line, its subpackage and its tests).
"""

from __future__ import annotations

import importlib
from typing import NamedTuple


class Chapter(NamedTuple):
    """One lecture: its number, its notebook's stem and its subpackage of :mod:`lecnotes`."""

    number: int
    notebook: str
    subpackage: str


CHAPTERS = (
    Chapter(0, "00_setting", "setting"),
    Chapter(1, "01_mean_field_vs_ntk", "mean_field_vs_ntk"),
    Chapter(2, "02_exponents", "exponents"),
    Chapter(3, "03_first_moment", "first_moment"),
    Chapter(4, "04_spectral", "spectral"),
    Chapter(5, "05_partial_trace", "partial_trace"),
    Chapter(6, "06_giant_steps", "giant_steps"),
    Chapter(7, "07_two_steps", "two_steps"),
    Chapter(8, "08_online_sgd", "online_sgd"),
    Chapter(9, "09_reusing_batches", "reusing_batches"),
    Chapter(10, "10_hierarchical_targets", "hierarchical"),
    Chapter(11, "11_gaussian_mixtures", "mixtures"),
)
"""Every chapter, in reading order."""


def grading_modules() -> list:
    """The ``grading`` module of every chapter that has one, in reading order.

    Returns
    -------
    list of module
    """
    out = []
    for ch in CHAPTERS:
        try:
            out.append(importlib.import_module(f"lecnotes.{ch.subpackage}.grading"))
        except ModuleNotFoundError as err:
            if err.name != f"lecnotes.{ch.subpackage}.grading":
                raise
    return out


CHECKS = {label: check for module in grading_modules() for label, check in module.CHECKS.items()}
"""Exercise label -> check function, in reading order (used by the assignment builder)."""


def scale_notes() -> dict[str, str]:
    """What each chapter says of its claims that widen with scale (``make scale``).

    A chapter subpackage may define ``SCALE_NOTES``, a dict from claim label to one sentence
    (a finite-size correction it names, or a finding), shown beside the claim on the
    robustness page.

    Returns
    -------
    dict
        ``"<notebook stem>:<label>"`` -> the chapter's sentence.
    """
    out = {}
    for ch in CHAPTERS:
        module = importlib.import_module(f"lecnotes.{ch.subpackage}")
        for label, text in getattr(module, "SCALE_NOTES", {}).items():
            out[f"{ch.notebook}:{label}"] = text
    return out
