"""Shared fixtures: claims are recorded in a temporary folder, never in the book's _build."""

import pytest


@pytest.fixture(autouse=True)
def _claims_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path / "claims"))


def pytest_configure(config):
    """The test helpers of tests/ (_tools, _browser, ...) import from every test folder."""
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
