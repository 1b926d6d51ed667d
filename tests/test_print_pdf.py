"""The background print's markers (``tools/print_pdf.py``), without a browser."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from _tools import load_tool

print_pdf = load_tool("print_pdf")


def test_wait_returns_the_pdf_once_the_pending_marker_is_gone(tmp_path):
    pdf = tmp_path / "book.pdf"
    print_pdf.pending(pdf).write_text(f"{os.getpid()}\n")   # a live process

    def finish():
        pdf.write_bytes(b"%PDF-1.7\n")
        print_pdf.pending(pdf).unlink()

    timer = threading.Timer(0.3, finish)
    timer.start()
    try:
        assert print_pdf.wait(pdf, timeout=10, poll=0.05) == pdf
    finally:
        timer.cancel()


def test_wait_without_a_print_is_none_and_a_failed_print_raises(tmp_path):
    pdf = tmp_path / "book.pdf"
    assert print_pdf.wait(pdf, timeout=1) is None
    print_pdf.failed(pdf).write_text("SystemExit: Chromium did not print\n")
    with pytest.raises(RuntimeError, match="Chromium did not print"):
        print_pdf.wait(pdf, timeout=1)


def test_a_print_that_does_not_end_times_out(tmp_path):
    pdf = tmp_path / "book.pdf"
    print_pdf.pending(pdf).write_text(f"{os.getpid()}\n")
    with pytest.raises(RuntimeError, match="still printing"):
        print_pdf.wait(pdf, timeout=0.5, poll=0.05)


def test_the_marker_of_a_killed_print_counts_for_nothing(tmp_path):
    pdf = tmp_path / "book.pdf"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout
    print_pdf.pending(pdf).write_text(dead)
    assert not print_pdf.printing(pdf)
    assert print_pdf.wait(pdf, timeout=5, poll=0.05) is None     # at once: nothing to wait for
