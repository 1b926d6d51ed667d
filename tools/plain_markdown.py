"""The book's MyST as plain Markdown, for notebooks read where MyST does not render.

Colab and a plain Jupyter render Markdown and MathJax but no MyST: a ``{prf:theorem}`` directive
shows as a code block, ``{footcite:p}`key``` as literal text. The assignment notebooks and the
student-edition notebooks (``tools/editions.py``) are therefore written in plain Markdown:

* a directive becomes a bold heading and its body: ``**Definition 3 (Overlap).**``,
  ``**Proof.**``, ``**Exercise 12 (title).**``, ``**Note.**``; the numbers are the HTML book's
  (one counter per kind, through the chapters in the order of ``_toc.yml``);
* ``{footbibliography}`` becomes the list of the references cited before it;
* a citation becomes author-year text from ``book/references.bib``: ``{footcite:p}`a,b``` ->
  ``(Stein, 1981; Cho and Saul, 2009)``, ``{footcite:t}`a``` -> ``Stein (1981)``;
* a cross-reference becomes what the book prints: ``{prf:ref}`` -> ``Proposition 4 (title)``,
  ``{eq}`` -> ``(3)``, ``{numref}`` -> ``Fig. 12``, ``{ref}`` -> the exercise or section,
  ``{doc}`` -> the page title; a target ``(label)=`` is dropped;
* a labelled display ``$$ ... $$ (label)`` gets its number as ``\\tag{n}``, and blank lines inside
  display math are removed (a blank line ends the formula in most Markdown renderers).

The directives are found with markdown-it-py (the parser MyST itself uses, with its plugins for
dollar math, colon fences and targets): a fence's line range comes from the parser, and a
directive's body is converted recursively. Roles are rewritten outside code and math only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin

ROOT = Path(__file__).resolve().parents[1]
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:+-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
# a role, or an inline code span (left as it is)
ROLE = re.compile(r"\{(?P<name>[\w:+-]+)\}`(?P<content>[^`]*)`|(?P<code>`[^`\n]*`)")
# names of the kinds the HTML book numbers, one counter each
PROOF_KINDS = {
    "algorithm", "assumption", "axiom", "conjecture", "corollary", "criterion", "definition",
    "example", "lemma", "observation", "property", "proposition", "remark", "theorem",
}
UNNUMBERED = {"proof": "Proof"}
ADMONITIONS = {
    "note", "tip", "hint", "important", "warning", "caution", "attention", "danger", "error",
    "seealso", "admonition",
}


@functools.lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """A markdown-it parser with the MyST block syntax the book uses (one, reused)."""
    md = (MarkdownIt("commonmark")
          .use(front_matter_plugin).use(myst_block_plugin).use(colon_fence_plugin)
          .use(dollarmath_plugin, allow_labels=True, allow_space=True, allow_digits=True))
    return md.disable("inline")  # block structure only: inline tokens keep their raw text


@dataclass
class Directive:
    """One directive block: name, argument, options, body and line range [start, end)."""

    name: str
    arg: str
    options: dict
    body: str
    start: int
    end: int
    fence: str
    indent: str = ""


def split_options(content: str) -> tuple[dict, str]:
    """The ``:key: value`` option lines at the top of a directive body, and the rest."""
    lines = content.split("\n")
    options = {}
    while lines and OPTION.match(lines[0]):
        m = OPTION.match(lines.pop(0))
        options[m.group("key")] = m.group("value").strip()
    return options, "\n".join(lines).strip("\n")


def directives(text: str) -> list[Directive]:
    """Every directive fence of a MyST text that is not inside another, in order."""
    found = []
    lines = text.split("\n")
    for tok in parser().parse(text):
        if tok.type not in ("fence", "colon_fence") or tok.map is None:
            continue
        m = DIRECTIVE.match(tok.info.strip())
        if not m or (found and tok.map[0] < found[-1].end):
            continue
        options, body = split_options(tok.content)
        indent = re.match(r"^\s*", lines[tok.map[0]]).group(0)
        found.append(Directive(m.group("name"), m.group("arg").strip(), options, body,
                               tok.map[0], tok.map[1], tok.markup, indent))
    return found


# ---------------------------------------------------------------------------------------
@dataclass
class Target:
    """What a label points at, as the HTML book prints it."""

    kind: str
    number: int | None = None
    title: str = ""
    chapter: str = ""

    def text(self) -> str:
        if self.kind == "equation":
            return f"({self.number})"
        if self.kind == "figure":
            return f"Fig. {self.number}"
        if self.kind in ("section", "page"):
            return f"“{self.title}”"
        if self.number is not None:  # as the book prints a reference: "Proposition 4"
            return f"{self.kind.capitalize()} {self.number}"
        return self.kind.capitalize() + (f" ({self.title})" if self.title else "")


def _toc_lectures(root: Path) -> list[Path]:
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [ch["file"] for part in toc.get("parts", []) for ch in part.get("chapters", [])]
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").exists()]


@dataclass
class BookIndex:
    """Labels and numbers of the book's chapters, and its bibliography.

    Build it with :meth:`from_book`; it numbers definitions, theorems, ..., exercises, labelled
    equations and figures as the HTML book does: one counter per kind, through the lectures in
    the order of ``_toc.yml``.
    """

    targets: dict[str, Target] = field(default_factory=dict)
    bib: dict = field(default_factory=dict)
    root: Path = ROOT
    _name_cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_book(cls, root: Path = ROOT) -> BookIndex:
        import pybtex.database

        index = cls(root=root)
        index.bib = dict(pybtex.database.parse_file(root / "book" / "references.bib").entries)
        counters: dict[str, int] = {}

        def count(kind: str) -> int:
            counters[kind] = counters.get(kind, 0) + 1
            return counters[kind]

        for path in _toc_lectures(root):
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    fig = cell.metadata.get("mystnb", {}).get("figure", {})
                    if fig.get("name"):
                        index.targets[fig["name"]] = Target("figure", count("figure"),
                                                            chapter=path.stem)
                    continue
                index._scan(cell.source, path.stem, count)
        return index

    def _scan(self, text: str, chapter: str, count):
        """Record the targets of one MyST text, numbering them in the order of the text."""
        events = []  # (line, order, what) so that numbers follow the text
        tokens = parser().parse(text)
        for k, tok in enumerate(tokens):
            if tok.type == "myst_target":
                heading = next((t for t in tokens[k + 1:k + 3] if t.type == "inline"), None)
                title = heading.content if heading else tok.content
                events.append((tok.map[0], 0, ("section", tok.content, title)))
            elif tok.type == "math_block_label":
                events.append((tok.map[0], 0, ("equation", tok.info, None)))
        for d in directives(text):
            events.append((d.start, 1, ("directive", d, None)))
        for _, _, (what, item, title) in sorted(events, key=lambda e: (e[0], e[1])):
            if what == "section":
                self.targets[item] = Target("section", title=title, chapter=chapter)
            elif what == "equation":
                self.targets[item] = Target("equation", count("equation"), chapter=chapter)
            else:
                d, kind = item, item.name.removeprefix("prf:")
                numbered = (d.name.startswith("prf:") and kind in PROOF_KINDS) or \
                    kind == "exercise"
                number = count(kind) if numbered and "nonumber" not in d.options else None
                if d.options.get("label"):
                    self.targets[d.options["label"]] = Target(kind, number, d.arg, chapter)
                self._scan(d.body, chapter, count)

    def page_title(self, doc: str, here: Path) -> str:
        """The first heading of a book page named by a ``{doc}`` path."""
        path = (here.parent / doc).resolve() if doc.startswith(".") else self.root / doc
        for candidate in (path.with_suffix(".md"), path.with_suffix(".ipynb")):
            if candidate.exists():
                text = candidate.read_text()
                m = re.search(r"^#\s+(.+)$", text, re.M)
                return m.group(1).strip() if m else candidate.stem
        return doc

    # -- citations ------------------------------------------------------------------------
    def _names(self, key: str) -> tuple[str, str]:
        if key not in self._name_cache:
            self._name_cache[key] = self._author_year(key)
        return self._name_cache[key]

    def _author_year(self, key: str) -> tuple[str, str]:
        from pybtex.backends.plaintext import Backend
        from pybtex.richtext import Text

        entry = self.bib.get(key)
        if entry is None:
            return key, "n.d."
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [Text.from_latex(" ".join(p.last_names)).render(Backend()) for p in people]
        if not last:
            names = key
        elif len(last) == 1:
            names = last[0]
        elif len(last) == 2:
            names = f"{last[0]} and {last[1]}"
        else:
            names = f"{last[0]} et al."
        return names, entry.fields.get("year", "n.d.")

    def cite(self, keys: list[str], textual: bool) -> str:
        """Author-year text: ``(A, 2020; B and C, 2021)`` or ``A (2020) and B (2021)``."""
        parts = [self._names(k) for k in keys]
        if textual:
            return " and ".join(f"{names} ({year})" for names, year in parts)
        return "(" + "; ".join(f"{names}, {year}" for names, year in parts) + ")"

    def references(self, keys: list[str]) -> str:
        """A Markdown list of full references (pybtex's plain style), in the given order."""
        from pybtex.plugin import find_plugin

        style = find_plugin("pybtex.style.formatting", "plain")()
        entries = [self.bib[k] for k in keys if k in self.bib]
        formatted = style.format_entries(entries)
        return "\n".join("- " + " ".join(f.text.render_as("markdown").split("\n"))
                         for f in formatted)


# ---------------------------------------------------------------------------------------
class PlainMarkdown:
    """Converts the MyST of one notebook's cells to plain Markdown (see the module doc).

    Parameters
    ----------
    index : BookIndex
        The book's labels, numbers and bibliography.
    here : Path
        The notebook being converted (for relative ``{doc}`` paths and "chapter N" notes).

    ``cited`` holds the citation keys met so far (a ``{footbibliography}`` lists and clears them).
    """

    def __init__(self, index: BookIndex, here: Path):
        self.index, self.here = index, here
        self.cited: list[str] = []

    def convert(self, text: str) -> str:
        """The plain Markdown of a MyST text."""
        lines = text.split("\n")
        out: list[str] = []
        pos = 0
        for start, end, replace in self._replacements(text):  # in the order of the text, so
            out.append(self._roles_outside_code("\n".join(lines[pos:start])))  # that citations
            out.append(replace())  # are met before the reference list that follows them
            pos = end
        out.append(self._roles_outside_code("\n".join(lines[pos:])))
        joined = "\n".join(part for part in out)
        return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")

    def _replacements(self, text: str) -> list[tuple[int, int, Callable[[], str]]]:
        """(start, end, new text maker) for each block to rewrite, in order and disjoint."""
        lines = text.split("\n")
        blocks = [(d.start, d.end, functools.partial(self._directive, d))
                  for d in directives(text)]
        taken = [(s, e) for s, e, _ in blocks]
        for tok in parser().parse(text):
            if tok.map is None or any(s <= tok.map[0] < e for s, e in taken):
                continue
            if tok.type == "myst_target":
                blocks.append((tok.map[0], tok.map[1], str))
            elif tok.type in ("math_block", "math_block_label"):
                body = "\n".join(ln for ln in tok.content.split("\n") if ln.strip())
                target = self.index.targets.get(tok.info) if tok.info else None
                tag = f"\n\\tag{{{target.number}}}" if target and target.number else ""
                indent = re.match(r"^\s*", lines[tok.map[0]]).group(0)
                new = "\n".join(indent + ln for ln in f"$$\n{body}{tag}\n$$".split("\n"))
                blocks.append((tok.map[0], tok.map[1], functools.partial(str, new)))
        return sorted(blocks, key=lambda b: b[0])

    def _directive(self, d: Directive) -> str:
        kind = d.name.removeprefix("prf:")
        if d.name == "footbibliography":
            listing, self.cited = self.index.references(self.cited), []
            return listing
        body = self.convert(d.body)
        title = self._roles_outside_code(d.arg)
        if d.name in ("exercise", "solution") or d.name.startswith("prf:"):
            target = self.index.targets.get(d.options.get("label", ""))
            number = f" {target.number}" if target and target.number else ""
            if d.name == "solution":
                solved = self.index.targets.get(d.arg)
                heading = f"Solution to {solved.text()}" if solved else "Solution"
            else:
                name = UNNUMBERED.get(kind, kind.capitalize())
                heading = f"{name}{number}" + (f" ({title})" if title else "")
        elif d.name in ADMONITIONS:
            heading = title if d.name == "admonition" and title else d.name.capitalize()
        else:
            heading = d.name.capitalize() + (f" ({title})" if title else "")
        block = f"**{heading}.**\n\n{body}" if body else f"**{heading}.**"
        return "\n".join(d.indent + ln if ln else ln for ln in block.split("\n"))

    # -- roles ----------------------------------------------------------------------------
    def _roles_outside_code(self, text: str) -> str:
        """Rewrite the roles of ``text``, leaving code fences and inline code alone."""
        out, pos = [], 0
        lines = text.split("\n")
        for tok in parser().parse(text):
            if tok.type in ("fence", "code_block") and tok.map is not None:
                out.append(self._roles_inline("\n".join(lines[pos:tok.map[0]])))
                out.append("\n".join(lines[tok.map[0]:tok.map[1]]))
                pos = tok.map[1]
        out.append(self._roles_inline("\n".join(lines[pos:])))
        return "\n".join(out)

    def _roles_inline(self, text: str) -> str:
        return ROLE.sub(self._role, text)

    def _role(self, m: re.Match) -> str:
        if m.group("code"):
            return m.group("code")
        name, content = m.group("name"), m.group("content")
        explicit = re.match(r"^(?P<text>.*?)\s*<(?P<label>[^<>]+)>$", content, re.S)
        label = explicit.group("label") if explicit else content.strip()
        if name in ("footcite", "footcite:p", "cite", "cite:p", "footcite:t", "cite:t"):
            keys = [k.strip() for k in content.split(",") if k.strip()]
            self.cited += [k for k in keys if k not in self.cited]
            return self.index.cite(keys, textual=name.endswith(":t"))
        if name == "math":
            return f"${content}$"
        if explicit and explicit.group("text"):
            return explicit.group("text")
        if name == "doc":
            return f"“{self.index.page_title(label, self.here)}”"
        target = self.index.targets.get(label)
        if target is None:
            return content
        text = target.text()
        if target.chapter and target.chapter != self.here.stem and target.kind != "equation":
            text += f" (chapter {int(target.chapter[:2])})" if target.chapter[:2].isdigit() \
                else ""
        return text


def plain_notebook(nb, index: BookIndex, here: Path, skip=lambda cell: False):
    """A copy of ``nb`` with every Markdown cell (except ``skip`` ones) in plain Markdown."""
    nb = nbformat.from_dict(nb)
    conv = PlainMarkdown(index, here)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not skip(cell):
            cell.source = conv.convert(cell.source)
    return nb
