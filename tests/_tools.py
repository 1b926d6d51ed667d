"""Import a script of ``tools/`` (not a package) in a test: ``load_tool("editions")``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str, folder: Path = ROOT / "tools"):
    """The module ``folder/name.py``; its folder is put on ``sys.path`` for its own imports."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # what dataclasses and pickling look up
    spec.loader.exec_module(module)
    return module
