# Tidal developer entry points. `make test` and `make demo` work on a fresh
# machine with Python >= 3.10, a C++17 compiler and network access to PyPI.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: install test lit pytest demo bench

# Build requirements come from pyproject.toml's [build-system] (one source of
# truth); the C++ dialects then build once, incrementally afterwards.
install:
	$(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > build-requirements.txt
	$(PIP) install -q -r build-requirements.txt
	$(PIP) install -q --no-build-isolation -e ".[test,draw]"
	rm -f build-requirements.txt

lit:
	$(PYTHON) -c "import sys, lit.main; sys.argv[0] = 'lit'; lit.main.main()" -sv test/lit

pytest:
	$(PYTHON) -m pytest -q test/py

# All tests: lit fixtures, then pytest (whose summary line closes the run).
test: install lit pytest

demo: install
	$(PYTHON) examples/demo.py

bench: install
	$(PYTHON) bench/bench_symbolic_eval.py
