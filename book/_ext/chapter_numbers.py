"""Number the lectures from 0, as the text does: Fig. 6.4, Definition 2.3, eq. (4.2).

The lectures are chapters 0 to 8 (the notebooks ``lectures/00_*`` to ``08_*``, the title of each
starting with its number: ``# 6. Giant steps ...``). ``_toc.yml`` numbers the part that holds
them (``numbered: 1``), and Sphinx then prefixes every figure, equation, theorem, definition
and exercise with the chapter's number. Sphinx counts the chapters of a numbered toctree from 1,
so the chapter the text calls 0 would be 1 and every cross-reference would be off by one.

This extension does two things:

* it removes the number that a lecture's title carries in the notebook (``6. ``), which
  JupyterLab and Colab show, because Sphinx prints its own in front of the title (in the page,
  the sidebar and the previous/next links);
* once Sphinx has assigned section and figure numbers (``env-get-updated``, after the toctree
  collector), it shifts the first component of every number in the lecture documents down by
  one, so that the first lecture is chapter 0.

The shift is idempotent: it applies only while the first lecture's number is 1, so an
incremental build that keeps the numbers of unchanged documents does not shift them twice.
Nothing else of Sphinx is changed, so moving to another engine drops this file and the title
numbers stay in the notebooks.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms import SphinxTransform

LECTURE_PREFIX = "lectures/"
_TITLE_NUMBER = re.compile(r"^\d+\.\s+")


def is_lecture(docname: str) -> bool:
    """A lecture notebook's document name: ``lectures/NN_stem``."""
    return docname.startswith(LECTURE_PREFIX) and docname[len(LECTURE_PREFIX):][:2].isdigit()


def strip_title_number(text: str) -> str:
    """``"6. Giant steps"`` -> ``"Giant steps"``; any other text unchanged."""
    return _TITLE_NUMBER.sub("", text, count=1)


class StripTitleNumber(SphinxTransform):
    """Remove the leading ``N. `` of a lecture's title (Sphinx adds the chapter number)."""

    default_priority = 200   # before the title collector reads the title (doctree-read)

    def apply(self, **kwargs) -> None:
        if not is_lecture(self.env.docname):
            return
        section = next(iter(self.document.findall(nodes.section)), None)
        if section is None or not section.children or not isinstance(section[0], nodes.title):
            return
        title = section[0]
        first = next(iter(title.findall(nodes.Text)), None)
        if first is None:
            return
        new = strip_title_number(str(first))
        if new != str(first):
            first.parent.replace(first, nodes.Text(new))


def _shift(number):
    """(1, 3) -> (0, 3); () and None unchanged."""
    if not number:
        return number
    shifted = (number[0] - 1, *number[1:])
    return list(shifted) if isinstance(number, list) else shifted


def shift_numbers(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Shift the chapter component of every number in the lectures down by one."""
    lectures = sorted(d for d in env.toc_secnumbers if is_lecture(d))
    if not lectures or env.toc_secnumbers[lectures[0]].get("", (0,))[0] != 1:
        return []   # not numbered, or already shifted
    for doc in lectures:
        env.toc_secnumbers[doc] = {a: _shift(n) for a, n in env.toc_secnumbers[doc].items()}
        for figtype, numbers in env.toc_fignumbers.get(doc, {}).items():
            env.toc_fignumbers[doc][figtype] = {i: _shift(n) for i, n in numbers.items()}
        # the numbers printed in the sidebar, the page title and the previous/next links
        for node in env.tocs[doc].findall(nodes.reference):
            if node.get("secnumber"):
                node["secnumber"] = _shift(node["secnumber"])
        title = env.titles.get(doc)
        if title is not None and title.get("secnumber"):
            title["secnumber"] = _shift(title["secnumber"])
    return lectures


def setup(app: Sphinx) -> dict:
    app.add_transform(StripTitleNumber)
    app.connect("env-get-updated", shift_numbers, priority=900)   # after the toctree collector
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
