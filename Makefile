# acl_lab: `make lab` opens the course, `make test` runs the whole suite.
# Works on a fresh Debian machine with only Python 3 installed: the venv is created in .venv
# (python3-venv is installed with apt-get if missing) and installs are guarded by stamp files
# named after a hash of pyproject.toml, so a second run installs nothing.

PY ?= python3
LAB_ARGS ?=

VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
PIP_FLAGS := -q --disable-pip-version-check

PYPROJECT_HASH := $(shell sha256sum pyproject.toml | cut -c1-16)
TEST_STAMP := $(VENV)/.stamp-test-$(PYPROJECT_HASH)
LAB_STAMP := $(VENV)/.stamp-lab-$(PYPROJECT_HASH)

# sudo only when not root
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# JupyterLab refuses to start as root without --allow-root
LAB_ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

# Environment for commands that run acl_lab
RUN_ENV := ACL_LAB_CACHE=$(CURDIR)/.cache/acl_lab MPLBACKEND=Agg

.DEFAULT_GOAL := help
.PHONY: help lab test check bench fuzz lint clean chromium bubblewrap venv speedscope cdev capi

help:
	@echo "acl_lab make targets:"
	@echo "  make lab       set everything up and open JupyterLab at notebooks/, rooted at the repository so exercises/ opens too (extra args: LAB_ARGS=...)"
	@echo "  make test      set everything up and run the whole suite: ruff, mypy, pytest"
	@echo "  make check     the fast lane: ruff, mypy and the unit tests in parallel (pytest-xdist)"
	@echo "  make bench     run the benchmarks (python -m benchmarks)"
	@echo "  make fuzz      run the stateful/fuzz tests with the long Hypothesis profile"
	@echo "  make lint      ruff and mypy only"
	@echo "  make chromium  install Debian's chromium (for browser tests) if /usr/bin/chromium is missing"
	@echo "  make bubblewrap install Debian's bubblewrap (the sandbox of acl-lab grade) if bwrap is missing"
	@echo "  make capi      build libascendcl.so (C/C++ AscendCL programs) into .cache (installs g++ and python3-dev if missing)"
	@echo "  make clean     remove .venv, caches and build artifacts"
	@echo "Variables: PY=$(PY) (interpreter used to create .venv)"

# --- environment -------------------------------------------------------------------------

venv: $(BIN)/python

$(BIN)/python:
	@echo ">> creating $(VENV) with $(PY)"
	@if ! $(PY) -m venv $(VENV); then \
		echo ">> '$(PY) -m venv' failed (python3-venv / ensurepip missing?); installing python3-venv"; \
		rm -rf $(VENV); \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv && \
		$(PY) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }; \
	fi
	@$(PIP) install $(PIP_FLAGS) --upgrade pip

# Test extra (a superset of the lab extra). Old stamps are removed so a changed
# pyproject.toml triggers exactly one reinstall.
$(TEST_STAMP): | $(BIN)/python
	@echo ">> installing acl_lab with the test extra into $(VENV)"
	@rm -f $(VENV)/.stamp-test-* $(VENV)/.stamp-lab-*
	$(PIP) install $(PIP_FLAGS) -e '.[test]'
	@touch $@ $(LAB_STAMP)

$(LAB_STAMP): | $(BIN)/python
	@echo ">> installing acl_lab with the lab extra (the course) into $(VENV)"
	@rm -f $(VENV)/.stamp-lab-*
	$(PIP) install $(PIP_FLAGS) -e '.[lab]'
	@touch $@

# --- commands ----------------------------------------------------------------------------

lab: $(LAB_STAMP)
	@mkdir -p notebooks exercises
	$(RUN_ENV) $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) \
		--LabApp.default_url=/lab/tree/notebooks $(LAB_ROOT_FLAG) $(LAB_ARGS)

# The whole suite in two phases: first everything but the tests that start whole graders and
# browsers of their own (acl-lab grade with --jobs 2 and per-notebook time limits,
# JupyterLab and Chromium) on every core (pytest-xdist; a test file stays on one worker, so
# its module fixtures are built once); then those, as two pytest runs side by side: the
# grader tests one after another in one, the browser tests in the other (its output printed
# when both are done). Not xdist for these: its workers tear a module fixture down whenever
# their queue runs dry, and the attack fixture's grading run (minutes) was made twice.
GRADER_TESTS := tests/grading/test_attacks.py tests/grading/test_integrity.py \
	tests/grading/test_grade_cli.py
BROWSER_TESTS := tests/browser
test: $(TEST_STAMP) chromium bubblewrap speedscope capi
	$(BIN)/ruff check acl_lab tests benchmarks
	$(BIN)/mypy
	$(RUN_ENV) $(BIN)/python -m pytest -n auto --dist loadfile \
		$(foreach t,$(GRADER_TESTS) $(BROWSER_TESTS),--ignore=$(t))
	@log=$$(mktemp); status=0; \
	$(RUN_ENV) $(BIN)/python -m pytest $(BROWSER_TESTS) > $$log 2>&1 & browsers=$$!; \
	echo ">> grader tests (the browser tests run beside them)"; \
	$(RUN_ENV) $(BIN)/python -m pytest $(GRADER_TESTS) || status=$$?; \
	wait $$browsers || status=$$?; \
	echo ">> browser tests"; cat $$log; rm -f $$log; exit $$status

# The fast lane: the unit tests on every core (pytest-xdist, one worker per core; a test
# file stays on one worker, so its module fixtures are built once). Left out here, and run
# by `make test` only, each for its reason (the one list of what is not xdist-safe or fast):
#   tests/browser  real Chromium and JupyterLab servers, minutes each
#   tests/e2e      whole programs, samples and the wheel build in subprocesses
#   -m e2e, slow   tests so marked elsewhere (executing every course notebook, grading
#                  every exercise through acl-lab grade, the benchmark smoke run)
#   tests/robustness/test_trace_{render,load}_fuzz.py  Hypothesis over whole traces (about
#                  a minute of CPU; `make fuzz` runs them too)
#   tests/robustness/test_trace_ceiling.py  loops of hundreds of thousands of calls under a
#                  trace limit (minutes of CPU in their module fixtures)
#   tests/grading/test_{attacks,integrity,grade_cli}.py  acl-lab grade over whole notebooks
#                  in bubblewrap sandboxes (a minute or more of setup each)
#   tests/capi/test_programs.py, tests/capi/test_toolkit.py  compile and run C++ programs
#                  with g++ and CMake
# capi is a prerequisite: libascendcl.so is built once before the workers start, so two
# workers never build it into the shared cache at the same time (tests/capi/test_headers.py
# and the %%acl_cpp magic tests still use it).
CHECK_ARGS := -n auto --dist loadfile -m "not e2e and not slow" \
	--ignore=tests/browser --ignore=tests/e2e \
	--ignore=tests/robustness/test_trace_render_fuzz.py \
	--ignore=tests/robustness/test_trace_load_fuzz.py \
	--ignore=tests/robustness/test_trace_ceiling.py \
	--ignore=tests/grading/test_attacks.py --ignore=tests/grading/test_integrity.py \
	--ignore=tests/grading/test_grade_cli.py --ignore=tests/capi/test_programs.py \
	--ignore=tests/capi/test_toolkit.py

check: $(TEST_STAMP) capi
	$(BIN)/ruff check acl_lab tests benchmarks
	$(BIN)/mypy
	$(RUN_ENV) $(BIN)/python -m pytest $(CHECK_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check acl_lab tests benchmarks
	$(BIN)/mypy

bench: $(TEST_STAMP)
	$(RUN_ENV) $(BIN)/python -m benchmarks

fuzz: $(TEST_STAMP)
	$(RUN_ENV) HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest tests -k "stateful or fuzz"

chromium:
	@if [ -x /usr/bin/chromium ]; then \
		echo ">> /usr/bin/chromium already installed"; \
	else \
		echo ">> installing Debian's chromium"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	fi

# C and C++ programs (tests/capi, acl-lab cc): g++, addr2line and nm (binutils), cmake (the
# toolkit tests build programs with CMake as the public samples do), the headers and shared
# library of the Python that runs acl_lab (python3-dev) and FFmpeg's libavcodec headers (the
# toolkit's FFmpeg-4 compatibility header is tested against them), from Debian's packages.
cdev:
	@if command -v g++ >/dev/null 2>&1 && command -v addr2line >/dev/null 2>&1 && \
		command -v nm >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 && \
		[ -f "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ] && \
		echo '#include <libavcodec/avcodec.h>' | g++ -E -x c++ - >/dev/null 2>&1; then \
		echo ">> g++, binutils, cmake, the Python headers and libavcodec-dev already installed"; \
	else \
		echo ">> installing Debian's g++, binutils, cmake, make, python3-dev and libavcodec-dev"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends g++ binutils cmake make python3-dev libavcodec-dev; \
	fi

# libascendcl.so (cffi embedding), the thin libraries over it and the CANN-shaped toolkit in
# $$ACL_LAB_CACHE/capi; rebuilt only when their sources change.
capi: $(TEST_STAMP) cdev
	@$(RUN_ENV) $(BIN)/acl-lab config --libdir --toolkit

# acl-lab grade runs each submission in a bubblewrap sandbox (Debian's bubblewrap).
bubblewrap:
	@if command -v bwrap >/dev/null 2>&1; then \
		echo ">> bwrap already installed"; \
	else \
		echo ">> installing Debian's bubblewrap"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap; \
	fi

# speedscope (npm) for the export's real-importer test, in a project-local folder; the
# version is pinned so a second run installs nothing.
SPEEDSCOPE_VERSION := 1.25.0
SPEEDSCOPE_DIR := .cache/npm
speedscope:
	@if grep -qs '"version": "$(SPEEDSCOPE_VERSION)"' $(SPEEDSCOPE_DIR)/node_modules/speedscope/package.json; then \
		echo ">> speedscope $(SPEEDSCOPE_VERSION) already installed"; \
	else \
		command -v npm >/dev/null || { $(SUDO) apt-get update && \
			$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm; }; \
		echo ">> installing speedscope $(SPEEDSCOPE_VERSION) into $(SPEEDSCOPE_DIR)"; \
		mkdir -p $(SPEEDSCOPE_DIR) && npm install --prefix $(SPEEDSCOPE_DIR) --no-audit --no-fund \
			--loglevel=error speedscope@$(SPEEDSCOPE_VERSION); \
	fi

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist \
		test-artifacts *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name .ipynb_checkpoints -type d -prune -exec rm -rf {} +
