"""Shared fixtures: claims are recorded in a temporary folder, never in the book's _build."""

import pytest


@pytest.fixture(autouse=True)
def _claims_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path / "claims"))
