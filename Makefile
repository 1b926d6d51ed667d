# The two commands of the README:
#   make book   - build the HTML book into _build/html (creates .venv and installs what it needs)
#   make test   - run the whole test suite: unit tests and every lecture notebook (same)
# Instructors: make student-edition (book without solutions, _build/student/_build/html),
#              make assignments (one notebook per chapter, _build/assignments/).
# Performance: make benchmarks (prints tables, regenerates book/performance.md).
# PYTHON may name another interpreter (Python 3.11 is the tested one): make test PYTHON=python3.11
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_WORKERS ?= 2

.PHONY: book test lint clean install install-dev student-edition assignments benchmarks

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

book: install
	$(BIN)/jupyter-book build .
	@echo "Open _build/html/index.html in a browser."

test: install-dev
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

lint: install-dev
	$(BIN)/ruff check .

student-edition: install
	$(BIN)/python tools/editions.py student --out _build/student

assignments: install
	$(BIN)/python tools/editions.py assignments --out _build/assignments

benchmarks: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf _build
