"""Make every "chapter N" of the prose a link to that chapter.

A reader who meets "chapter 3" in a sentence should be one click from it, in the HTML book and
in JupyterLab alike. The link is a relative Markdown link to the notebook
(``[chapter 3](03_first_moment.ipynb)``): MyST turns it into a link to the chapter's page, and
JupyterLab opens the notebook. This tool writes those links into the Markdown cells of every
lecture and into the pages of ``book/``, so that authors can keep writing plain "chapter 3".

* ``chapter 3``, ``Chapter 3's`` -> ``[chapter 3](03_first_moment.ipynb)'s``;
* ``chapters 6 and 7``, ``chapters 0-3`` -> each number a link: ``chapters [6](...) and [7](...)``;
* a mention of the chapter's own number in its own notebook, and anything inside inline code,
  math, a link, a heading or a code block, is left alone.

Usage::

    python tools/chapter_links.py          # rewrite in place
    python tools/chapter_links.py --check  # exit 1 and list the files that would change
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LECTURES = ROOT / "lectures"
PAGES = ROOT / "book"
# pages written by tools (benchmarks, robustness) or by the build: not prose an author edits
GENERATED = {"performance.md", "robustness.md", "claims-ledger.md", "reproductions.md",
             "bibliography.md"}

# regions where a mention is not prose: fenced code blocks (not MyST directives, whose body is
# prose), inline code and roles, display and inline math, existing links, headings
_PROTECTED = re.compile(
    r"^```+(?!\{)[^\n]*\n.*?^```+[ \t]*$"      # a fenced code block
    r"|`[^`\n]*`"                              # inline code, or the body of a {role}`...`
    r"|\$\$.*?\$\$"                            # display math
    r"|\$[^$\n]+\$"                            # inline math
    r"|!?\[[^\]\n]*\]\([^)\n]*\)"              # a link or an image
    r"|^#+ [^\n]*$",                           # a heading
    re.DOTALL | re.MULTILINE,
)
_NUMBER_LIST = r"\d+(?:\s*(?:,|and|or|-|–|to)\s*\d+)*"
_MENTION = re.compile(rf"\b([Cc]hapters?)(\s+)({_NUMBER_LIST})\b")


def chapter_files() -> dict[int, str]:
    """Chapter number -> notebook file name (``lectures/NN_stem.ipynb``)."""
    files = {}
    for path in sorted(LECTURES.glob("[0-9][0-9]_*.ipynb")):
        files[int(path.name[:2])] = path.name
    return files


def link_mentions(text: str, files: dict[int, str], prefix: str = "",
                  own: int | None = None) -> str:
    """``text`` with every "chapter N" outside protected regions made a link."""

    def target(n: int) -> str | None:
        return None if n == own or n not in files else prefix + files[n]

    def replace(m: re.Match) -> str:
        word, space, numbers = m.groups()
        digits = [int(c) for c in re.findall(r"\d+", numbers)]
        if word.lower() == "chapter" and len(digits) == 1:
            dest = target(digits[0])
            return f"[{m.group(0)}]({dest})" if dest else m.group(0)
        linked = re.sub(r"\d+", lambda d: (f"[{d.group(0)}]({target(int(d.group(0)))})"
                                         if target(int(d.group(0))) else d.group(0)), numbers)
        return f"{word}{space}{linked}"

    out, pos = [], 0
    for p in _PROTECTED.finditer(text):
        out.append(_MENTION.sub(replace, text[pos:p.start()]))
        out.append(p.group(0))
        pos = p.end()
    out.append(_MENTION.sub(replace, text[pos:]))
    return "".join(out)


def process_notebook(path: Path, files: dict[int, str]) -> bool:
    """Link the mentions of one lecture; return whether it changed (written in place)."""
    raw = path.read_text()
    nb = json.loads(raw)
    own = int(path.name[:2])
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = "".join(cell["source"])
        new = link_mentions(src, files, own=own)
        if new != src:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    if changed:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def process_page(path: Path, files: dict[int, str]) -> bool:
    """Link the mentions of one page of ``book/``; return whether it changed."""
    src = path.read_text()
    new = link_mentions(src, files, prefix="../lectures/")
    if new != src:
        path.write_text(new)
    return new != src


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list what would change, write nothing")
    args = ap.parse_args(argv)
    files = chapter_files()
    targets = [(p, process_notebook) for p in sorted(LECTURES.glob("[0-9][0-9]_*.ipynb"))]
    targets += [(p, process_page) for p in sorted(PAGES.glob("*.md")) if p.name not in GENERATED]
    stale = []
    for path, process in targets:
        before = path.read_bytes()
        if process(path, files):
            stale.append(path.relative_to(ROOT))
            if args.check:
                path.write_bytes(before)
    for p in stale:
        print(f"{'unlinked chapter mentions' if args.check else 'linked'}: {p}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
