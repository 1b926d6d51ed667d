"""The install cell of every lecture: ``lecnotes`` where it is missing (Colab), silence elsewhere.

A Colab session (the launch button of every chapter, ``launch_buttons.colab_url`` of
``_config.yml``) has NumPy, SciPy and Matplotlib but not the book's helper package. The first
code cell of every lecture installs it, pinned to the book's version (``version`` of
``pyproject.toml``, tag ``v<version>``) from the repository URL set in ONE place,
``repository.url`` of ``_config.yml``, when ``import lecnotes`` would fail, and does nothing,
printing nothing, otherwise (Binder, JupyterHub, a local ``.venv``, the book build).

The environment variable ``LECNOTES_SOURCE``, when set, replaces that requirement by any pip
requirement: a local checkout (``LECNOTES_SOURCE=/path/to/clone``), a wheel, another fork or tag.
The tests use it to install from the local checkout instead of the network.

This tool writes the cell; do not edit it in the notebooks by hand::

    python tools/colab_cell.py          # write or update the cell in every lecture
    python tools/colab_cell.py --check  # exit 1 if a lecture's cell disagrees with _config.yml

Then run ``python tools/cell_tags.py`` (it tags the cell ``remove-input``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
MARKER = "# Install lecnotes where it is missing (Colab); written by tools/colab_cell.py"
"""First line of the cell: how the tools find it."""


def lectures() -> list[Path]:
    """Every lecture notebook (discovered: a new chapter is picked up)."""
    return sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of ``_config.yml``: the one place the book's URL is set."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    return str(config["repository"]["url"]).rstrip("/")


def version(root: Path = ROOT) -> str:
    """The version of ``lecnotes`` (``pyproject.toml``), which is the book's version."""
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


def requirement(root: Path = ROOT) -> str:
    """The pip requirement of the book's ``lecnotes``: its tag ``v<version>`` in the repository."""
    return f"lecnotes @ git+{repository_url(root)}.git@v{version(root)}"


def source(root: Path = ROOT) -> str:
    """The code of the install cell."""
    return "\n".join([
        MARKER,
        "import importlib, importlib.util, os, subprocess, sys",
        "",
        'if importlib.util.find_spec("lecnotes") is None:',
        # laid out as ruff format leaves it at the notebooks' 88 columns
        # (tools/format_notebooks.py), so that the formatter and this tool agree
        "    _req = os.environ.get(",
        '        "LECNOTES_SOURCE",',
        f'        "{requirement(root)}",',
        "    )",
        "    subprocess.run(",
        '        [sys.executable, "-m", "pip", "install", "--quiet", _req], check=True',
        "    )",
        "    importlib.invalidate_caches()",
    ])


def is_install_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.startswith(MARKER)


def find(nb):
    """The install cell of a notebook, or None."""
    return next((c for c in nb.cells if is_install_cell(c)), None)


def apply(nb, root: Path = ROOT) -> bool:
    """Make the install cell the first code cell of ``nb``, with the current source.

    Returns True if the notebook changed. The cell's tags are left to ``tools/cell_tags.py``.
    """
    want = source(root)
    cell = find(nb)
    first = next((k for k, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
    if cell is not None and nb.cells.index(cell) == first and cell.source == want:
        return False
    if cell is not None:
        nb.cells.remove(cell)
        cell.source = want
        first = next((k for k, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
    else:
        cell = nbformat.v4.new_code_cell(want)
    nb.cells.insert(first, cell)
    return True


def problems(root: Path = ROOT) -> list[str]:
    """The lectures whose install cell is missing, misplaced or disagrees with _config.yml."""
    out = []
    for path in sorted((root / "lectures").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if apply(nb, root):
            out.append(f"{path.name}: the install cell is missing, not the first code cell, or "
                       "not the one _config.yml and pyproject.toml call for")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="the lecnotes install cell of every lecture")
    ap.add_argument("--check", action="store_true", help="report, do not write")
    args = ap.parse_args(argv)
    if args.check:
        found = problems()
        print("\n".join(found) or "every lecture's install cell agrees with _config.yml")
        return 1 if found else 0
    for path in lectures():
        nb = nbformat.read(path, as_version=4)
        if apply(nb):
            nbformat.write(nb, path)
            print("updated", path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
