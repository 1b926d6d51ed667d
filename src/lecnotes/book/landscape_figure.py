"""The figure of the landscape page: theory against measured exponent for every map entry.

Drawn at build time by ``book/_ext/landscape.py`` from the entries of
:func:`lecnotes.book.landscape.entries` (kept apart from that module so that the claim
mechanism does not import matplotlib).
"""

from __future__ import annotations

import math

from lecnotes.book import plotting
from lecnotes.book.landscape import TARGET_CLASSES, Entry

__all__ = ["exponent_figure"]

_MARKERS = {False: "o", True: "s"}
_SHORT = {"information exponent": "IE", "generative exponent": "GE", "leap": "leap",
          "hierarchical": "hier.", "mixture": "mix."}


def exponent_figure(found: list[Entry]):
    """Theory against measured exponent for every entry, grouped by target class.

    One column per entry, the entries of a target class side by side (one colour per
    class), ordered by the theory's exponent: a black dash at the theory's exponent, the
    measured exponent with the claim's error bar (a one-sided bound as an arrow from the
    bound), circles for power laws ``d^k`` and squares for laws with a logarithm
    (``d log d``); a claim that checks the law without fitting an exponent (deviation,
    scaling) is an open marker at the theory's value.

    Parameters
    ----------
    found : list of Entry

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    plotting.use_style()
    fig, ax = plt.subplots(figsize=(7.2, 4.4), layout="constrained")
    x, centres, names, classes = 0.0, [], [], []
    top = max([v for e in found for v in e.theory] + [1.0])
    for i, cls in enumerate(TARGET_CLASSES):
        colour = plotting.PALETTE[i]
        mine = sorted((e for e in found if e.landscape["target_class"] == cls),
                      key=lambda e: (min(e.theory), e.chapter, e.label))
        if not mine:
            continue
        first = x
        for e in mine:
            marker = _MARKERS[e.log_law]
            for t in e.theory:
                ax.plot(x, t, "_", ms=12, mew=2, color="#222222", zorder=3)
            iv = e.interval()
            if iv is None:
                for t in e.theory:
                    ax.plot(x, t, marker, ms=7, mfc="white", mec=colour, mew=1.6, zorder=4)
            else:
                m, (lo, hi) = float(e.record["measured"]), iv
                top = max(top, m)
                if math.isinf(lo) or math.isinf(hi):
                    bound = hi if math.isinf(lo) else lo
                    top = max(top, bound)
                    ax.annotate("", xy=(x, bound + (0.3 if math.isinf(hi) else -0.3)),
                                xytext=(x, bound), zorder=4,
                                arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.4})
                    ax.plot(x, m, marker, ms=7, color=colour, zorder=4)
                else:
                    top = max(top, hi)
                    ax.errorbar(x, m, yerr=[[max(m - lo, 0)], [max(hi - m, 0)]],
                                fmt=marker, ms=7, color=colour, capsize=3, zorder=4)
            x += 1
        centres.append((first + x - 1) / 2)
        names.append(_SHORT[cls])
        classes.append(Line2D([], [], color=colour, marker="o", ls="", label=cls))
        x += 1.5
    ax.set_xticks(centres, names)
    ax.tick_params(axis="x", length=0)
    ax.grid(axis="x", visible=False)
    ax.set_xlim(-1, x - 0.5)
    ax.set_ylim(-0.1, top + 1.6)
    ax.set_ylabel("exponent of n in d")
    ax.set_xlabel("target class (one column per claim)")
    handles = classes + [
        Line2D([], [], color="#222222", marker="_", ms=12, mew=2, ls="", label="theory"),
        Line2D([], [], color="#222222", marker="o", ls="", label="measured, law d^k"),
        Line2D([], [], color="#222222", marker="s", ls="", label="measured, law d^k log d"),
        Line2D([], [], color="#222222", marker="o", mfc="white", ls="",
               label="law checked without a fit"),
    ]
    ax.legend(handles=handles, loc="upper left", ncol=3, columnspacing=1.0)
    return fig
