"""The whole book as one PDF, printed by headless Chromium from the single-page HTML build.

Why this route and not LaTeX: the single-page HTML (``jupyter-book build --builder
singlehtml``) renders the same execution as the HTML book (the execution cache), with the same
numbering (Fig. 6.4, eq. (4.2), Theorem 2.1), the same MathJax and the same figures, and
Chromium is already what the page tests drive. The LaTeX route needs a TeX installation of
about a gigabyte from Debian's packages and a second rendering of every formula, figure and
proof box, whose differences from the HTML would need their own tests.

Usage (``make pdf`` and ``make pdf-print`` call it with ``--build``)::

    python tools/print_pdf.py [--build] [--html PAGE] [--out _build/pdf/book.pdf] [--background]

``--build`` first builds the single page (``jupyter-book build . --builder singlehtml``) into a
folder of its own, :data:`SINGLE_ROOT` (its own doctrees and ``jupyter_execute``, and the
execution cache of the HTML build, ``_build/.jupyter_cache``, through a link), so that it can
run while the HTML book is built; ``PAGE`` defaults to the page it writes, :data:`SINGLE_PAGE`.

It also copies the PDF into the HTML book (``_build/html/book.pdf``) when that exists, which
is where the front page links to. Network off: every host name resolves to nothing (MathJax is
served from the build, see ``book/_ext/offline_mathjax.py``).

``--background`` (``make test``) returns at once and builds and prints in a detached process,
so that the strict HTML build and the first slow tests run meanwhile (the single-page build is
one busy core for about 30 s, the print for 120-230 s; built in the foreground, the single page
left the second core idle for those 30 s). While it builds and prints, ``<out>.pending`` holds
the process's pid: the HTML build links the PDF that is coming (``book/_ext/pdf_link.py``),
and the tests that read it wait for that process to end (:func:`wait`). A failed build or
print leaves ``<out>.failed`` with the error (the build's output is in ``<out>.log``); a
killed one leaves a marker naming a dead process, which counts for nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--proxy-server=socks5://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--run-all-compositor-stages-before-draw",
]


SINGLE_ROOT = ROOT / "_build" / "pdf-src"
"""The ``--path-output`` of the single-page build: it writes into ``SINGLE_ROOT/_build``."""
SINGLE_PAGE = SINGLE_ROOT / "_build" / "singlehtml" / "book" / "intro.html"
"""The page of the root document that the single-page build writes, and that is printed."""
CACHE = ROOT / "_build" / ".jupyter_cache"
"""The execution cache of the HTML build (``tools/execute.py``, ``tools/nbval_cache.py``)."""


def build_single_page() -> None:
    """Build the single-page HTML into :data:`SINGLE_ROOT` from the HTML build's execution cache.

    The build has its own output folder, doctrees and ``jupyter_execute`` (so it may run beside
    ``jupyter-book build .``), and reads the same execution cache: myst-nb looks for it next to
    the output (``SINGLE_ROOT/_build/.jupyter_cache``), where a link to :data:`CACHE` is put.
    """
    build = SINGLE_ROOT / "_build"
    build.mkdir(parents=True, exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    link = build / ".jupyter_cache"
    if link.is_symlink() and link.resolve() != CACHE.resolve():
        link.unlink()
    elif link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    elif link.exists() and not link.is_symlink():
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(CACHE.resolve(), target_is_directory=True)
    # Jupyter Book of this interpreter (tools/editions.py does the same)
    jupyter_book = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", jupyter_book, "build", str(ROOT), "--builder",
                    "singlehtml", "--path-output", str(SINGLE_ROOT)], cwd=ROOT, check=True)


def chromium() -> str:
    """The path of a Chromium executable (Debian package ``chromium``)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("Chromium not found: apt-get install chromium")


def print_pdf(html: Path, out: Path, budget_ms: int = 120_000) -> float:
    """Print ``html`` to ``out`` (Chromium's default US Letter page, backgrounds, no header or
    footer); return seconds."""
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}",
             f"--virtual-time-budget={budget_ms}", "--no-pdf-header-footer",
             f"--print-to-pdf={out}", html.resolve().as_uri()],
            capture_output=True, text=True, timeout=900,
        )
    if proc.returncode != 0 or not out.exists() or out.stat().st_size == 0:
        raise SystemExit(f"Chromium did not print {html}: {proc.stderr[-2000:]}")
    return time.monotonic() - start


def pending(out: Path) -> Path:
    """The marker that exists while ``out`` is being printed in the background."""
    return out.with_name(out.name + ".pending")


def failed(out: Path) -> Path:
    """The file a failed background print leaves, with Chromium's message."""
    return out.with_name(out.name + ".failed")


def printing(out: Path) -> bool:
    """Whether a background print of ``out`` is under way: its marker names a live process.

    A marker left by a print that was killed (no ``finally`` ran) names a dead process and
    counts for nothing. ``book/_ext/pdf_link.py`` makes the same check.
    """
    try:
        pid = int(pending(out).read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False
    return True


def wait(out: Path, timeout: float = 900, poll: float = 1.0) -> Path | None:
    """Wait for a background print of ``out`` to end; ``out`` if it exists then, else ``None``.

    Raises ``RuntimeError`` if the print failed or did not end within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while printing(out):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the PDF was still printing after {timeout:g} s")
        time.sleep(poll)
    if failed(out).exists():
        raise RuntimeError(f"the PDF build or print failed: {failed(out).read_text()[-2000:]}")
    return out if out.exists() else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="store_true",
                    help="build the single page first (into _build/pdf-src)")
    ap.add_argument("--html", type=Path, default=SINGLE_PAGE,
                    help="the page to print (with --build, the page it builds only)")
    ap.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / "book.pdf")
    ap.add_argument("--background", action="store_true",
                    help="build (with --build) and print in a detached process; "
                         "<out>.pending exists until it ends")
    ap.add_argument("--marked", action="store_true", help=argparse.SUPPRESS)  # the child
    args = ap.parse_args(argv)
    if args.build and args.html.resolve() != SINGLE_PAGE.resolve():
        ap.error(f"--build prints the page it builds, {SINGLE_PAGE}: drop --html")
    if not args.marked:  # a new build or print: the failure of an earlier one is not its own
        failed(args.out).unlink(missing_ok=True)
    if not args.build and not args.html.exists():
        raise SystemExit(f"{args.html} is missing: build it with "
                         "`python tools/print_pdf.py --build`")
    if args.background:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.unlink(missing_ok=True)
        log = open(args.out.with_name(args.out.name + ".log"), "w")  # noqa: SIM115
        child = subprocess.Popen([sys.executable, __file__, "--html", str(args.html), "--out",
                                  str(args.out), "--marked", *(["--build"] if args.build else [])],
                                 stdout=log,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        # the child's pid: a print that is killed leaves a marker naming a dead process
        pending(args.out).write_text(f"{child.pid}\n")
        what = "building the single page and printing" if args.build else "printing"
        print(f"{what} {args.out} in the background (pid {child.pid}, log: {log.name})")
        return 0
    if args.marked:
        try:
            return _print(args)
        except BaseException as err:
            # the background output (the single-page build's, Chromium's) goes to <out>.log,
            # which no CI log shows: its end goes into the failure that the tests report
            sys.stdout.flush()
            log = args.out.with_name(args.out.name + ".log")
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            failed(args.out).write_text(f"the end of {log}:\n{tail}\n"   # the cause last:
                                        f"{type(err).__name__}: {err}\n")   # wait() shows the end
            raise
        finally:
            pending(args.out).unlink(missing_ok=True)
    return _print(args)


def _print(args) -> int:
    if args.build:
        build_single_page()
    # singlehtml writes the page of the root document (book/intro) into book/, but with links
    # relative to the output's root (_static/, _images/): print a copy placed at the root
    site_root = args.html.parent.parent if args.html.parent.name == "book" else args.html.parent
    page = site_root / "_book_single_page.html"
    shutil.copy(args.html, page)
    seconds = print_pdf(page, args.out)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB in {seconds:.0f} s")
    site = ROOT / "_build" / "html"
    if site.is_dir():
        shutil.copy(args.out, site / "book.pdf")
        print(f"copied to {site / 'book.pdf'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
