# Tidal developer entry points. `make test` and `make demo` work on a fresh
# machine with Python >= 3.11, a C++17 compiler and network access to PyPI.
#
# Everything installs into one Python environment, never the system's: the
# active virtualenv or conda environment if there is one, else the project's
# own `.venv` (created on first use). `make PYTHON=...` picks another.
ifneq ($(VIRTUAL_ENV)$(CONDA_PREFIX),)
PYTHON ?= python3
else
PYTHON ?= $(CURDIR)/.venv/bin/python
# The environment's scripts (tidal-opt, mlir-opt, FileCheck) come first on PATH,
# as after `source .venv/bin/activate`.
export PATH := $(CURDIR)/.venv/bin:$(PATH)
endif
PIP := $(PYTHON) -m pip

.PHONY: install install-core venv test lit pytest demo bench fuzz wheel

# Build requirements come from pyproject.toml's [build-system] (one source of
# truth); the C++ dialects then build once, incrementally afterwards.
venv:
	@if [ "$(PYTHON)" = "$(CURDIR)/.venv/bin/python" ] && [ ! -x "$(PYTHON)" ]; then \
	  echo "creating $(CURDIR)/.venv (no virtualenv or conda environment is active)"; \
	  python3 -m venv "$(CURDIR)/.venv"; \
	fi

# Tidal (editable, the C++ dialects built) with the extras in $(1).
define install_tidal
	$(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > build-requirements.txt
	$(PIP) install -q -r build-requirements.txt
	$(PIP) install -q --no-build-isolation -e ".$(1)"
	rm -f build-requirements.txt
endef

# What running Tidal needs (the demo).
install-core: venv
	$(call install_tidal,)

# Plus the test tools and what pictures need (the suite draws).
TEST_EXTRAS := [test,draw]
install: venv
	$(call install_tidal,$(TEST_EXTRAS))

lit:
	$(PYTHON) -c "import sys, lit.main; sys.argv[0] = 'lit'; lit.main.main()" -sv test/lit

# One pytest worker per core (at most 4; each holds its own JAX and XLA caches),
# the slow tests handed out as workers free up (worksteal).
PYTEST_WORKERS ?= -n auto --maxprocesses 4 --dist worksteal
pytest:
	$(PYTHON) -m pytest -q $(PYTEST_WORKERS) --durations 15 test/py

# All tests: lit fixtures, then pytest (whose summary line closes the run). The
# random-program tests draw the same programs on every run (test/py/conftest.py).
test: install lit pytest

# Fresh random programs on every pass: FUZZ_N programs for the default pipeline
# and FUZZ_N / 4 for each pass's own test, from a random seed that is printed
# (`make fuzz FUZZ_SEED=<seed>` draws the same programs again).
FUZZ_N ?= 2000
ifndef FUZZ_SEED
FUZZ_SEED := $(shell python3 -c "import random; print(random.randrange(2**31))")
endif
fuzz: install
	@echo "make fuzz: seed $(FUZZ_SEED), FUZZ_N=$(FUZZ_N) (again: make fuzz FUZZ_SEED=$(FUZZ_SEED) FUZZ_N=$(FUZZ_N))"
	HYPOTHESIS_PROFILE=fuzz $(PYTHON) -m pytest -q $(PYTEST_WORKERS) test/py/fuzz --fuzz-n $(FUZZ_N) \
	  --hypothesis-seed $(FUZZ_SEED) --durations 10
	@echo "make fuzz: seed $(FUZZ_SEED), FUZZ_N=$(FUZZ_N): passed"

demo: install-core
	$(PYTHON) examples/demo.py

# A wheel of Tidal with its dialects built (dist/): it installs into a clean
# environment with `pip install dist/tidal-*.whl`, which needs no compiler and none
# of the -dev wheels (about 1 GB of MLIR/LLVM headers and static libraries that only
# building the dialects uses).
wheel: install-core
	rm -rf dist
	$(PIP) wheel -q --no-build-isolation --no-deps -w dist .
	@ls dist/*.whl

bench: install
	$(PYTHON) bench/bench_symbolic_eval.py
