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


def _fake_print(monkeypatch, tmp_path, fail=False):
    """main() without Chromium or a build: the print writes a stub PDF (or raises)."""
    monkeypatch.setattr(print_pdf, "ROOT", tmp_path)   # no copy into the real _build/html

    def fake(page, out):
        if fail:
            raise SystemExit("Chromium did not print")
        out.write_bytes(b"%PDF-1.7\n")
        return 0.0

    monkeypatch.setattr(print_pdf, "print_pdf", fake)
    page = tmp_path / "site" / "book" / "intro.html"
    page.parent.mkdir(parents=True)
    page.write_text("<html></html>")
    return page


def test_a_new_print_clears_the_failure_of_an_earlier_one(tmp_path, monkeypatch):
    page = _fake_print(monkeypatch, tmp_path)
    pdf = tmp_path / "pdf" / "book.pdf"
    pdf.parent.mkdir()
    print_pdf.failed(pdf).write_text("CalledProcessError: the build of an earlier run\n")
    assert print_pdf.main(["--html", str(page), "--out", str(pdf)]) == 0
    assert print_pdf.wait(pdf, timeout=1) == pdf


def test_a_failed_background_run_reports_the_end_of_its_log(tmp_path, monkeypatch):
    page = _fake_print(monkeypatch, tmp_path, fail=True)
    pdf = tmp_path / "pdf" / "book.pdf"
    pdf.parent.mkdir()
    pdf.with_name("book.pdf.log").write_text("WARNING: something the build said\n")
    print_pdf.pending(pdf).write_text(f"{os.getpid()}\n")
    with pytest.raises(SystemExit):   # the child (--marked) of a background run
        print_pdf.main(["--html", str(page), "--out", str(pdf), "--marked"])
    assert not print_pdf.pending(pdf).exists()
    with pytest.raises(RuntimeError, match="(?s)something the build said.*did not print"):
        print_pdf.wait(pdf, timeout=1)


def test_build_prints_only_the_page_it_builds(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(print_pdf, "build_single_page", lambda: pytest.fail("built"))
    with pytest.raises(SystemExit):
        print_pdf.main(["--build", "--html", str(tmp_path / "other.html")])
    assert "drop --html" in capsys.readouterr().err


def test_a_background_build_is_built_by_the_detached_child(tmp_path, monkeypatch):
    started = []

    class Child:
        pid = os.getpid()

    monkeypatch.setattr(print_pdf.subprocess, "Popen",
                        lambda argv, **kw: started.append(argv) or Child())
    pdf = tmp_path / "book.pdf"
    assert print_pdf.main(["--build", "--background", "--out", str(pdf)]) == 0
    (argv,) = started
    assert argv[0] == sys.executable and "--marked" in argv and "--build" in argv
    assert print_pdf.printing(pdf)                   # the marker names the child at once


@pytest.mark.parametrize("before", ["nothing", "stale link", "folder", "file", "right link"])
def test_the_single_page_build_reads_the_html_builds_cache(tmp_path, monkeypatch, before):
    root, cache = tmp_path / "pdf-src", tmp_path / "cache"
    monkeypatch.setattr(print_pdf, "SINGLE_ROOT", root)
    monkeypatch.setattr(print_pdf, "CACHE", cache)
    calls = []
    monkeypatch.setattr(print_pdf.subprocess, "run", lambda argv, **kw: calls.append(argv))
    link = root / "_build" / ".jupyter_cache"
    link.parent.mkdir(parents=True)
    if before == "stale link":
        link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    elif before == "folder":
        (link / "old").mkdir(parents=True)
    elif before == "file":
        link.write_text("")
    elif before == "right link":
        cache.mkdir()
        link.symlink_to(cache.resolve(), target_is_directory=True)
    print_pdf.build_single_page()
    assert link.is_symlink() and link.resolve() == cache.resolve()
    (argv,) = calls
    assert argv[0] == sys.executable                 # Jupyter Book of this interpreter
    assert argv[argv.index("--builder") + 1] == "singlehtml"
    assert argv[argv.index("--path-output") + 1] == str(root)
