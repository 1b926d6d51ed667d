# The two commands of the README:
#   make book   - build the HTML book into _build/html (creates .venv and installs what it needs)
#   make test   - the whole test suite: lint, unit tests, every lecture under nbval, the book
#                 built with every warning an error from that same execution, and the tests of
#                 the built book and of the editions. CI (.ci/run) calls exactly this.
# The developer loop:
#   make check           - ruff and the unit tests (no notebook), under a minute
#   make chapter CH=6    - chapter 6 alone: its unit tests, then its notebook under nbval
#   make test-notebooks  - every lecture under nbval, two at a time (the reader's venv)
# Instructors: make student-edition, make assignments. Performance: make benchmarks.
# Robustness: make robustness (every lecture under ROOTS other seed roots), make scale (the book at
# scale 1 and SCALE); Dask tasks, on a LocalCluster or on $SCHEDULER; not part of make test
#
# Two virtualenvs: .venv holds requirements.txt alone (what Binder installs: the book is built
# and the lectures are tested in it), .venv-dev adds requirements-dev.txt (pytest-xdist,
# hypothesis, ruff, jupytext, otter-grader) for the unit tests and the autograders, on top
# of .venv's packages. Each is re-created from scratch when its requirements change, so neither holds anything its files
# do not ask for.
# PYTHON may name another interpreter (3.11 is the tested one): make test PYTHON=python3.11
PYTHON ?= python3
VENV ?= .venv
DEV_VENV ?= .venv-dev
BIN := $(VENV)/bin
DEV := $(DEV_VENV)/bin
JOBS ?= 2

# one BLAS / OpenMP thread per process: two workers share the two cores (kernels inherit it)
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export PIP_DISABLE_PIP_VERSION_CHECK = 1

.PHONY: book book-strict test check lint chapter test-notebooks test-slow clean install \
        install-dev student-edition assignments benchmarks robustness scale pdf pdf-print test-pdf \
        test-pages

# pip byte-compiles what it installs on one core; installed with --no-compile, a venv is compiled
# on JOBS cores instead (the same .pyc files; each install about 4 s shorter on a quiet machine:
# 21.4 -> 17.9 s and 18.5 -> 14.3 s). A file that does not compile is skipped, as pip skips it.
# The packages' own test suites (a tests/ or test/ folder below site-packages: 898 of the reader
# venv's 6,714 files), which nothing here imports, are not compiled.
compile = $(1) -m compileall -q -j $(JOBS) -x '/site-packages/(.*/)?tests?/' "$$($(1) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")" >/dev/null 2>&1 || true

# A venv with today's pip. `python -m venv` installs its bundled pip through ensurepip, which
# byte-compiles it on one core (9 s on a host of 2026-12-07), and upgrading it took 4 s more;
# the interpreter's own pip (--python, pip 22.3 or newer) puts today's pip into a venv made
# without one in 3 s; where it cannot, ensurepip does (and then the upgrade). Today's pip,
# not the interpreter's: pip 23.2 took 62 s for requirements.txt where pip 26.3 took 34 s.
# (Without ensurepip the venv holds no setuptools 65 of Python 3.11's bundle: pip installs the
# setuptools that a package asks for, today's, as in a venv of Python 3.12 or newer.)
new_venv = $(PYTHON) -m venv --without-pip $(1) && \
	{ $(PYTHON) -m pip --python $(1)/bin/python install --quiet --no-compile \
	    --upgrade pip || { $(1)/bin/python -m ensurepip --default-pip >/dev/null && \
	    $(1)/bin/python -m pip install --quiet --no-compile --upgrade pip; }; }

# Not re-created for a change of pyproject.toml: lecnotes is installed editable, and its
# dependencies there are bounds that requirements.txt pins (a change there changes both).
# Byte-compiled by a target of its own, so that make test compiles it beside the pip install of
# .venv-dev (one core each; the two in a row left one core idle for the whole install).
$(VENV)/.installed: requirements.txt
	rm -rf $(VENV) && $(call new_venv,$(VENV))
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	touch $@

$(VENV)/.compiled: $(VENV)/.installed
	$(call compile,$(BIN)/python)
	touch $@

# .venv-dev sees .venv's packages through a .pth file, so it installs only the extras of
# requirements-dev.txt (the rest is already satisfied) and runs the reader's exact versions;
# its pip is .venv's, through the same file.
$(DEV_VENV)/.installed: requirements-dev.txt $(VENV)/.installed
	rm -rf $(DEV_VENV)
	$(PYTHON) -m venv --without-pip $(DEV_VENV)
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" \
	  > "$$($(DEV)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/_reader_venv.pth"
	$(DEV)/python -m pip install --quiet --no-compile -r requirements-dev.txt
	$(call compile,$(DEV)/python)
	touch $@

install: $(VENV)/.compiled
install-dev: $(VENV)/.compiled $(DEV_VENV)/.installed

# Executes the lectures that changed (two at a time) into the execution cache, then builds.
# With Chromium installed it also prints the whole book as one PDF first (make pdf), which the
# HTML build then links from the front page and copies to _build/html/book.pdf.
book: install
	$(BIN)/python tools/execute.py --jobs $(JOBS)
	$(MAKE) --no-print-directory pdf-print
	$(BIN)/jupyter-book build .
	@echo "Open _build/html/index.html in a browser."

# The build of the test suite: every page, every warning an error. It renders the execution
# of test-notebooks (cached by tools/nbval_cache.py) and executes only what is not cached.
book-strict: install
	$(BIN)/jupyter-book build --all -W -n --keep-going .

check: install-dev
	$(DEV)/ruff check .
	$(DEV)/python tools/format_notebooks.py --check
	$(DEV)/python -m pytest -m "not slow" -n $(JOBS) --dist worksteal -q

lint: install-dev
	$(DEV)/ruff check .
	$(DEV)/python tools/format_notebooks.py --check

chapter: install install-dev
	@test -n "$(CH)" || { echo "usage: make chapter CH=6"; exit 2; }
	$(DEV)/python -m pytest -m "not slow" --chapter $(CH) -n $(JOBS) --dist worksteal -q
	$(BIN)/python tools/run_nbval.py $(CH)

test-notebooks: install
	$(BIN)/python tools/run_nbval.py --jobs $(JOBS) --cache

# the costliest test files start first (tests/conftest.py, from the last run's CPU record); each
# test's CPU seconds, its processes' included, go to _build/test-cpu.jsonl (tests/_cputime.py;
# make benchmarks shows them by file)
test-slow: install install-dev
	mkdir -p _build; if [ -f _build/test-cpu.jsonl ]; then mv _build/test-cpu.jsonl _build/test-cpu.last.jsonl; fi
	LECNOTES_READER_PYTHON=$(CURDIR)/$(BIN)/python PYTHONPATH=$(CURDIR)/tests$${PYTHONPATH:+:$$PYTHONPATH} \
	  $(DEV)/python -m pytest -m slow -n $(JOBS) --dist loadfile --no-loadscope-reorder -p _cputime -q

# The sources are byte-compiled first: CI sets PYTHONDONTWRITEBYTECODE, and each of the hundred
# or so kernels and workers of the run would otherwise compile what it imports of lecnotes again
# (0.25 s of CPU for the whole package). A file that does not compile stops the run here.
# make check reads the claims of the last execution (none on a fresh clone), so the landscape
# of the book is checked again on this execution's claims once the lectures are done.
# (Running make check beside the lectures saved the idle core of the developer's pip install
# but cost as much again in CPU: four processes on two cores, the lectures 50-60 % slower; the
# run took 779 s against 766 s, so the steps run one after the other.)
# The two virtualenvs are made by a make of JOBS jobs: the reader's is byte-compiled beside the
# pip install of the developer's.
test:
	@start=$$(date +%s); mkdir -p _build; : > _build/test-steps.log; \
	step() { printf '\n=== make test: %s (t = %ss)\n' "$$1" "$$(( $$(date +%s) - start ))" \
	  | tee -a _build/test-steps.log; }; \
	step "the two virtualenvs (make install install-dev)" && \
	  $(MAKE) --no-print-directory -j $(JOBS) install install-dev && \
	$(BIN)/python -m compileall -q -j $(JOBS) src tools tests book/_ext && \
	step "lint and unit tests (make check)" && $(MAKE) --no-print-directory check && \
	step "every lecture under nbval, in the reader's venv (make test-notebooks)" && \
	  $(MAKE) --no-print-directory test-notebooks && \
	step "the landscape against this execution's claims" && \
	  LECNOTES_REQUIRE_CLAIMS=1 $(DEV)/python -m pytest -q -p no:cacheprovider \
	    tests/book/test_landscape.py -k last_execution && \
	step "the book as one PDF from that execution, built and printed in the background (make pdf-print)" && \
	  $(MAKE) --no-print-directory pdf-print PRINT_FLAGS=--background && \
	step "the book from that execution, every warning an error (make book-strict)" && \
	  $(MAKE) --no-print-directory book-strict && \
	step "the built book, the editions, the reader's venv (make test-slow)" && \
	  $(MAKE) --no-print-directory test-slow && \
	step "all passed"

student-edition: install
	$(BIN)/python tools/editions.py student --out _build/student

# the plain assignments (in-notebook checks), then per chapter an otter-grader master notebook,
# its student notebook and its autograder (otter-grader is in .venv-dev only)
assignments: install install-dev
	$(BIN)/python tools/editions.py assignments --out _build/assignments
	$(DEV)/python tools/otter_assignments.py --out _build/assignments/otter

# ROOTS independent seed roots (1..ROOTS; the book is root 0), one Dask task per lecture and root
# (tools/sweep.py): a LocalCluster of WORKERS single-threaded workers (default: one per core),
# or the cluster at SCHEDULER=tcp://host:8786 (or a scheduler file); a re-run skips what is
# done. Writes _build/robustness/ and the page book/robustness.md.
ROOTS ?= 5
WORKERS ?=
robustness: install install-dev
	$(DEV)/python tools/robustness.py --roots $(ROOTS) $(if $(WORKERS),--workers $(WORKERS))

# The book (root 0) at scale 1 and at SCALE (LECNOTES_SCALE: every chapter's dimensions times
# SCALE), the same Dask tasks; the scale section of book/robustness.md
SCALE ?= 2
scale: install install-dev
	$(DEV)/python tools/robustness.py --scale $(SCALE) $(if $(WORKERS),--workers $(WORKERS))

# The whole book as one PDF: the single-page HTML from the same execution cache as the HTML
# book, printed by headless Chromium (tools/print_pdf.py says why not LaTeX); several minutes.
pdf: install
	$(BIN)/python tools/execute.py --jobs $(JOBS)
	$(MAKE) --no-print-directory pdf-print

# The PDF from the execution cache as it is (make test fills it with nbval's outputs): the
# single-page build (into _build/pdf-src, beside the HTML build's folders) and Chromium's print
# (about 3 minutes); without Chromium, a message only (the HTML build then links no PDF, and
# tests/test_pdf.py skips). make test builds and prints in the background
# (PRINT_FLAGS=--background): the strict build and the slow tests run meanwhile, and the tests
# that read the PDF wait for it (tools/print_pdf.py).
PRINT_FLAGS ?=
pdf-print: install
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; \
	then $(BIN)/python tools/print_pdf.py --build $(PRINT_FLAGS); \
	else echo "No Chromium: no PDF (apt-get install chromium)."; fi

test-pdf: pdf install-dev
	$(BIN)/jupyter-book build .
	$(DEV)/python -m pytest -m slow -q tests/test_pdf.py

# the built pages alone: rendering, links, layout at 1400 and 390 px, the dark theme and the
# axe-core audit, in one pass (tests/test_pages.py; part of make test-slow)
test-pages: install install-dev
	$(DEV)/python -m pytest -m slow -q tests/test_pages.py

# every lecture of _toc.yml alone on one core (time, CPU, peak memory, per-cell profile; the three
# slowest again under cProfile, by lecnotes function), the
# kernels against their BLAS bound and the CI's steps (CI_LOG=ci.log: a .ci/run log; else the
# step markers of the last make test); regenerates book/performance.md and
# benchmarks/lecture-seconds.json (LECTURE=6: re-measure one lecture, the rest from the last run)
CI_LOG ?=
LECTURE ?=
benchmarks: install
	$(BIN)/python benchmarks/run.py $(if $(CI_LOG),--ci-log $(CI_LOG)) \
	  $(if $(LECTURE),--lecture $(LECTURE),--functions)

clean:
	rm -rf _build
