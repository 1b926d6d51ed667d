"""The display tags of the lectures' code cells: what the HTML page shows of each cell's code.

A reader of the HTML book should see the computation and its choices, not the plumbing:

* a cell whose code is only claims (``claims.claim(...)`` / ``claims.claim_mean(...)``, possibly
  in a loop) is tagged ``remove-input``: its claim block, which states the sentence, the
  measured value, the reference and the alternative, is all the page shows;
* the install cell of ``tools/colab_cell.py`` (``lecnotes`` where it is missing, as in Colab)
  is tagged ``remove-input`` too: it is plumbing, and it prints nothing where ``lecnotes`` is
  installed (the book build), so the page shows nothing of it;
* the setup cell (the imports and ``claims.start_chapter``) and every cell that draws a figure
  are tagged ``hide-input``: the code is one click away, the figure is shown.

The tags only change the HTML page; the notebook a student opens in JupyterLab or Colab shows
every cell. ``tests/test_docs.py`` checks that every lecture is tagged as this module says.

Usage::

    python tools/cell_tags.py          # tag every lecture in place
    python tools/cell_tags.py --check  # exit 1 and list the cells whose tags differ
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import colab_cell  # noqa: E402  (tools/ is not a package)

LECTURES = ROOT / "lectures"
DISPLAY_TAGS = ("remove-input", "hide-input")


def _is_claim_call(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == "claims"
            and node.value.func.attr.startswith("claim"))


def _only_claims(statements, in_loop: bool = False) -> bool:
    for s in statements:
        if _is_claim_call(s):
            continue
        if isinstance(s, ast.For) and _only_claims(s.body, True):
            continue
        if in_loop and isinstance(s, ast.Assign):  # the loop's own bookkeeping
            continue
        if in_loop and isinstance(s, ast.If) and _only_claims(s.body, True) and not s.orelse:
            continue
        return False
    return True


def claim_only(source: str) -> bool:
    """True if the cell's code consists of claims only (at top level or in loops)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: not a claim cell
        return False
    return bool(tree.body) and _only_claims(tree.body)


def draws_figure(source: str) -> bool:
    return "plt.subplots(" in source or "plt.figure(" in source


def is_setup(source: str) -> bool:
    return "claims.start_chapter(" in source


def is_install(source: str) -> bool:
    """The cell of ``tools/colab_cell.py`` that installs lecnotes where it is missing."""
    return source.startswith(colab_cell.MARKER)


def display_tag(source: str) -> str | None:
    """The display tag the cell should carry, or None."""
    if claim_only(source) or is_install(source):
        return "remove-input"
    if draws_figure(source) or is_setup(source):
        return "hide-input"
    return None


def retag(nb: dict) -> list[tuple[int, str | None, str | None]]:
    """Set the display tags of ``nb``'s code cells; return (index, old, new) for each change."""
    changes = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        tags = cell.setdefault("metadata", {}).get("tags", [])
        old = next((t for t in tags if t in DISPLAY_TAGS), None)
        new = display_tag("".join(cell["source"]))
        if old != new:
            kept = [t for t in tags if t not in DISPLAY_TAGS]
            cell["metadata"]["tags"] = kept + ([new] if new else [])
            if not cell["metadata"]["tags"]:
                del cell["metadata"]["tags"]
            changes.append((i, old, new))
    return changes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only report the differences")
    args = ap.parse_args(argv)
    differ = 0
    for path in sorted(LECTURES.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text())
        changes = retag(nb)
        for i, old, new in changes:
            print(f"{path.name} cell {i}: {old} -> {new}")
        differ += len(changes)
        if changes and not args.check:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return 1 if (args.check and differ) else 0


if __name__ == "__main__":
    sys.exit(main())
