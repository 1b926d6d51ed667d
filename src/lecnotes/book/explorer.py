"""The widget shared by the explorers: controls, one output, a callback that only redraws.

Every chapter's explorer is built by :func:`build_explorer` from its controls
and a *draw* function ``draw(values, fig) -> (fig, state)`` that calls the explorer's figure
function; the box keeps the controls as attributes, the last state in ``box.state`` and the
number of redraws in ``box.draws`` (what the tests look at, without a browser).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["build_explorer", "with_option"]


def with_option(options, value) -> list:
    """The sorted options of a selection control, with ``value`` added if missing.

    Parameters
    ----------
    options : sequence
        The control's values (numbers or strings of one kind).
    value
        A value that must be selectable (the setting of the static figure).

    Returns
    -------
    list
    """
    return sorted(set(options) | {value})


def build_explorer(controls: dict, draw: Callable, initial: Callable | None = None):
    """An ipywidgets box with ``controls`` and one output redrawn by ``draw``.

    Parameters
    ----------
    controls : dict
        ``{name: ipywidgets control}``; each becomes an attribute of the box, and a change of
        its value calls ``draw``.
    draw : callable
        ``draw(values, fig) -> (fig, state)`` with ``values = {name: control.value}`` and
        ``fig`` the figure of the previous draw (``None`` the first time).
    initial : callable, optional
        ``initial(fig) -> (fig, state)`` for the first draw instead of ``draw`` (the notebook
        passes the state of its static figure, so creating the widget computes nothing).

    Returns
    -------
    ipywidgets.VBox
        With the controls as attributes and ``output``, ``state``, ``draws``.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt
    from IPython.display import display

    if not controls or not callable(draw):
        raise ValueError("an explorer needs at least one control and a draw function")
    out = W.Output()
    box = W.VBox([W.HBox(list(controls.values())), out])
    box.output, box.state, box.draws = out, None, 0
    holder: dict = {}

    def update(_change=None, first=None):
        with out:
            out.clear_output(wait=True)
            with plt.ioff():
                if first is not None:
                    fig, state = first(holder.get("fig"))
                else:
                    values = {name: c.value for name, c in controls.items()}
                    fig, state = draw(values, holder.get("fig"))
            # out of pyplot's registry: the inline backend would otherwise show the figure
            # again under the next cell that draws (and myst-nb give it that cell's label)
            plt.close(fig)
            holder["fig"], box.state = fig, state
            box.draws += 1
            display(fig)

    for name, control in controls.items():
        setattr(box, name, control)
        control.observe(update, names="value")
    update(first=initial)
    return box
