r"""Interactive explorers (ipywidgets), one per chapter whose point is a sweep (book tier).

Every explorer is split in three layers so that the static page and the live notebook show the
same thing and the logic is testable without a browser:

* a *state* function (plain, cached) that calls the chapter module's computation;
* a *figure* function (plain) that draws a state; the chapter's static figure calls it;
* the widget (:func:`lecnotes.widgets.base.build_explorer`), whose callback only calls the
  figure function.

One module per chapter: :mod:`~lecnotes.widgets.mean_field_vs_ntk` (chapter 1, the width),
:mod:`~lecnotes.widgets.first_moment` (chapter 3, the sample ratio and the preprocessing),
:mod:`~lecnotes.widgets.spectral` (chapter 4), :mod:`~lecnotes.widgets.partial_trace`
(chapter 5, :math:`n/d^2` and :math:`d`), :mod:`~lecnotes.widgets.giant_steps` (chapter 6,
:math:`n/d` and the step size) and :mod:`~lecnotes.widgets.two_steps` (chapter 7, the two
exponents). Use: ``from lecnotes import widgets; widgets.spectral_explorer()``.
"""

from . import first_moment, giant_steps, mean_field_vs_ntk, partial_trace, spectral, two_steps
from .first_moment import *  # noqa: F403
from .giant_steps import *  # noqa: F403
from .mean_field_vs_ntk import *  # noqa: F403
from .partial_trace import *  # noqa: F403
from .spectral import *  # noqa: F403
from .two_steps import *  # noqa: F403

__all__ = [*first_moment.__all__, *giant_steps.__all__, *mean_field_vs_ntk.__all__,
           *partial_trace.__all__, *spectral.__all__, *two_steps.__all__]
