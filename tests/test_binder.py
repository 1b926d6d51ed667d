"""Binder equivalence: ``requirements.txt`` alone is what the lectures run on.

Binder (repo2docker) runs ``pip install -r requirements.txt`` at the repository root and starts
Jupyter in it. ``make test`` executes every lecture under nbval in the reader's virtualenv
``.venv``, which the Makefile creates from ``requirements.txt`` alone and re-creates from
scratch whenever that file changes (``tools/run_nbval.py``): that run is the Binder test. The
tests here make sure it stays one:

* ``requirements.txt`` pins every package, keeps Jupyter Book below 2 and ends with ``-e .``;
* every module a lecture imports is provided by ``requirements.txt``'s packages or their
  dependencies (checked statically, so it holds in any environment);
* the reader's virtualenv, when ``LECNOTES_READER_PYTHON`` names its interpreter (``make
  test`` does), holds nothing that ``requirements.txt`` does not bring in, so a lecture that
  silently relied on a test tool (hypothesis, pytest-xdist, ruff, jupytext) would fail there.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LECTURES = sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# Run in the environment to inspect: the closure of requirements.txt's pins under the
# installed distributions' own requirements, and every distribution installed there.
CLOSURE = r"""
import json, re, sys
from importlib import metadata
from packaging.requirements import Requirement
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
pins = [l.split("#", 1)[0].strip() for l in open(sys.argv[1]).read().splitlines()]
todo = [(norm(r.name), frozenset(r.extras))
        for r in (Requirement(p) for p in pins if p and not p.startswith("-e"))]
todo.append(("lecnotes", frozenset()))
seen, closure = set(), set()
while todo:
    name, extras = todo.pop()
    if (name, extras) in seen:
        continue
    seen.add((name, extras))
    closure.add(name)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker is None or any(req.marker.evaluate({"extra": e})
                                     for e in ("", *extras)):
            todo.append((norm(req.name), frozenset(req.extras)))
installed = sorted({norm(d.metadata["Name"]) for d in metadata.distributions()})
print(json.dumps({"closure": sorted(closure), "installed": installed}))
"""


def _closure(python: str) -> dict:
    out = subprocess.run([python, "-c", CLOSURE, str(ROOT / "requirements.txt")],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_requirements_are_pinned_and_install_the_package():
    reqs = _requirements()
    assert reqs[-1] == "-e .", "requirements.txt must end with '-e .' (Binder installs lecnotes)"
    for line in reqs[:-1]:
        assert "==" in line, f"unpinned requirement {line!r}: pin the tested version"
    book = [r for r in reqs if _norm(r.split("==")[0]) == "jupyter-book"]
    assert book and book[0].split("==")[1].startswith("1."), "Jupyter Book 1.x, not 2.x"


def _lecture_imports() -> set[str]:
    found = set()
    for path in LECTURES:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            source = "\n".join(ln for ln in cell.source.splitlines()
                               if not ln.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return found


def test_every_lecture_import_comes_from_requirements():
    closure = set(_closure(sys.executable)["closure"])
    providers = metadata.packages_distributions()
    missing = []
    for module in sorted(_lecture_imports()):
        if module in sys.stdlib_module_names or module == "lecnotes":
            continue
        dists = {_norm(d) for d in providers.get(module, [])}
        if not dists & closure:
            missing.append(f"{module} (from {sorted(dists) or 'no installed distribution'})")
    assert not missing, f"lectures import modules requirements.txt does not provide: {missing}"


@pytest.mark.skipif(not os.environ.get("LECNOTES_READER_PYTHON"),
                    reason="set LECNOTES_READER_PYTHON to the reader venv's python (make test)")
def test_reader_venv_holds_requirements_txt_alone():
    python = os.environ["LECNOTES_READER_PYTHON"]
    found = _closure(python)
    extra = sorted(set(found["installed"]) - set(found["closure"]) - {"pip", "setuptools"})
    assert not extra, f"the reader's venv holds packages requirements.txt does not bring: {extra}"
    probe = subprocess.run([python, "-c", "import lecnotes; print(lecnotes.__file__)"],
                           capture_output=True, text=True, cwd=ROOT / "lectures")
    assert probe.returncode == 0 and str(ROOT / "src") in probe.stdout, probe.stderr
