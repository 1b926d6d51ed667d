"""The Colab route: the launch button and the cell that installs ``lecnotes`` where it is missing.

Fast tests: the install cell of every lecture agrees with ``_config.yml`` (the one place the
repository URL is set) and ``pyproject.toml`` (the version), it is the first code cell, it is
tagged ``remove-input``, and it is silent where ``lecnotes`` is importable. The slow test runs
the cell of chapter 0 in a fresh virtualenv that has the reader's packages but not ``lecnotes``,
installing from the local checkout (``LECNOTES_SOURCE``) instead of the network, and then the
chapter up to its first claim.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
import yaml
from _tools import ROOT, load_tool

colab_cell = load_tool("colab_cell")
LECTURES = colab_cell.lectures()


def test_config_has_a_colab_launch_button_and_one_repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    url = config["repository"]["url"]
    assert colab_cell.requirement() == f"lecnotes @ git+{url}.git@v{colab_cell.version()}"


def test_the_cell_follows_the_config(tmp_path):
    """The cell is written from _config.yml: a fork's URL changes it, and --check says so."""
    (tmp_path / "lectures").mkdir()
    for name in ["_config.yml", "pyproject.toml"]:
        (tmp_path / name).write_text((ROOT / name).read_text())
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 9. X"),
                                         nbformat.v4.new_code_cell("import numpy")])
    assert colab_cell.apply(nb, tmp_path) and not colab_cell.apply(nb, tmp_path)
    assert nb.cells[1].source == colab_cell.source(tmp_path) and len(nb.cells) == 3
    nbformat.write(nb, tmp_path / "lectures" / "09_x.ipynb")
    assert colab_cell.problems(tmp_path) == []
    config = (tmp_path / "_config.yml").read_text()
    (tmp_path / "_config.yml").write_text(config.replace(colab_cell.repository_url(),
                                                         "https://github.com/fork/book"))
    assert colab_cell.problems(tmp_path), "a changed URL must be reported"
    assert "github.com/fork/book.git@v" in colab_cell.source(tmp_path)


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_every_lecture_has_the_install_cell_first(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and code[0].source == colab_cell.source(), (
        f"{path.name}: run `python tools/colab_cell.py` (and tools/cell_tags.py)")
    assert "remove-input" in code[0].metadata.get("tags", [])


def test_the_cell_is_silent_where_lecnotes_is_importable(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(compile(colab_cell.source(), "install-cell", "exec"), {})
    assert out.getvalue() == "" and calls == []


def _reader_venv_without_lecnotes(tmp: Path, reader_python: str) -> Path:
    """A venv that sees the reader's packages (symlinked, minus lecnotes) through a .pth."""
    purelib = subprocess.run([reader_python, "-c", "import sysconfig; print(sysconfig."
                              "get_paths()['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    base = subprocess.run([reader_python, "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    shelf = tmp / "reader-packages"
    shelf.mkdir()
    for entry in Path(purelib).iterdir():
        if "lecnotes" not in entry.name.lower():
            (shelf / entry.name).symlink_to(entry)
    venv = tmp / "venv"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], capture_output=True, text=True, check=True).stdout
    (Path(own.strip()) / "_reader_packages.pth").write_text(f"{shelf}\n")
    return python


@pytest.mark.slow  # a fresh virtualenv, a pip install and a kernel: make test-slow
def test_install_cell_in_a_fresh_venv_then_the_first_claims(tmp_path, capsys):
    from nbclient import NotebookClient

    reader = os.environ.get("LECNOTES_READER_PYTHON")
    if not reader:
        pytest.skip("set LECNOTES_READER_PYTHON to the reader venv's python (make test-slow)")
    start = time.perf_counter()
    python = _reader_venv_without_lecnotes(tmp_path, reader)
    probe = subprocess.run([python, "-c", "import importlib.util as u; import numpy, ipykernel; "
                            "print(u.find_spec('lecnotes'))"], capture_output=True, text=True)
    assert probe.stdout.strip() == "None", probe.stderr  # reader's packages, not lecnotes
    # the kernel of the notebook runs in that venv
    kernels = tmp_path / "jupyter" / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh", "language": "python"}))
    # the local checkout's package, copied: setuptools builds in the source tree (build/)
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "src", checkout / "src",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ["pyproject.toml", "README.md", "LICENSE"]:
        shutil.copy(ROOT / name, checkout / name)
    path = LECTURES[0]
    nb = nbformat.read(path, as_version=4)
    first_claim = next(k for k, c in enumerate(nb.cells)
                       if c.cell_type == "code" and "claims.claim" in c.source)
    nb.cells = [c for c in nb.cells[:first_claim + 1] if c.cell_type == "code"]
    assert colab_cell.is_install_cell(nb.cells[0])
    env = {"JUPYTER_PATH": str(tmp_path / "jupyter"), "LECNOTES_SOURCE": str(checkout),
           "LECNOTES_CLAIMS_DIR": str(tmp_path / "claims"), "MPLBACKEND": "Agg",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    old = dict(os.environ)
    os.environ.update(env)
    try:
        NotebookClient(nb, kernel_name="fresh", timeout=600,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    installed = subprocess.run([python, "-c", "import lecnotes; print(lecnotes.__file__)"],
                               capture_output=True, text=True, check=True).stdout.strip()
    assert str(tmp_path / "venv") in installed, "lecnotes was installed into the fresh venv"
    assert nb.cells[0].outputs == [], "the install cell prints nothing"
    record = json.loads((tmp_path / "claims" / f"{path.stem}.json").read_text())
    claims = record["claims"]
    assert claims and all(c["passed"] for c in claims), claims
    with capsys.disabled():
        print(f"\ncolab cell: fresh venv, pip install of the checkout and {path.stem} up to its "
              f"first claim ({', '.join(c['label'] for c in claims)}: passed) in "
              f"{time.perf_counter() - start:.0f} s; lecnotes at {installed}")
